//! What the native builder reads: a source tree (its [`SourceFs`]), with some files held in
//! memory over it.
//!
//! fluxsim's generated kustomization file (Flux's generator output) and the substituted
//! objects it prints again (`postbuild::reprint`) exist only in memory. The kustomize binary
//! needs them on disk — a temporary folder — and making those costs more than the build
//! itself; the native builder reads them from here instead, so a folder is made only when a
//! build is handed to the binary.
//!
//! A `Vfs` made for a Flux source reads nothing but that source's value, and is *confined* to
//! its root, as kustomize-controller builds on `securefs.MakeFsOnDiskSecure(root)` (fluxcd/pkg
//! `kustomize/filesys/fs_secure.go`): a read of a path that lies outside the root fails with
//! Flux's `fs-security-constraint` error, and such a path neither exists nor is a file or
//! folder. The value holds no symbolic links (Flux's archive holds none), so none can lead
//! out. This is what keeps a pull request from rendering `/etc/passwd` or
//! `/proc/self/environ` into an artifact.
//!
//! Only a build of a plain folder that is no Flux source ([`Vfs::disk`]: `kustomize build
//! DIR` of the `build_native` API) reads the machine's disk, unconfined, as the kustomize
//! binary itself does under `LoadRestrictionsNone`.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// A source tree as the native builder reads it: what source-controller archived, under
/// one root, read only through these calls (fluxsim-core's `SourceFs` is one). Paths are
/// absolute; one outside the root is in no source.
pub trait SourceFiles: std::fmt::Debug + Send + Sync {
    /// The root every path of the source lies under.
    fn root(&self) -> &Path;
    /// Whether `path` lies in or below the root (whether or not anything is there).
    fn contains(&self, path: &Path) -> bool;
    /// Whether `path` is a file of the source.
    fn is_file(&self, path: &Path) -> bool;
    /// Whether `path` is a folder of the source.
    fn is_dir(&self, path: &Path) -> bool;
    /// The bytes of the file at `path`.
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
    /// The text of the file at `path`.
    fn read_to_string(&self, path: &Path) -> std::io::Result<String>;
    /// `path` with symbolic links resolved, if it is in the source.
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf>;
}

/// `path` without `.` and with `..` folded into its parent, lexically (as Go's
/// `filepath.Clean`).
#[must_use]
pub fn clean(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// What lies under the in-memory files.
#[derive(Debug, Clone)]
enum Under {
    /// Nothing: only the in-memory files exist.
    Nothing,
    /// The machine's disk: unconfined (`None`: a folder that is no Flux source, as the
    /// `build_native` API's caller names it), or confined to a folder of fluxsim's own.
    Disk(Option<PathBuf>),
    /// A source tree, confined to its root.
    Source(Arc<dyn SourceFiles>),
}

/// In-memory files laid over a source tree (or over nothing, or the machine's disk). Paths
/// are absolute and lexically clean.
#[derive(Debug, Clone)]
pub struct Vfs {
    files: BTreeMap<PathBuf, String>,
    under: Under,
}

impl Vfs {
    /// The machine's disk alone, unconfined: for a plain `kustomize build` of a folder that
    /// is no Flux source (`kustomize` itself reads anywhere under `LoadRestrictionsNone`).
    #[must_use]
    pub fn disk() -> Self {
        Vfs {
            files: BTreeMap::new(),
            under: Under::Disk(None),
        }
    }

    /// The folder `dir` of the disk (one fluxsim wrote), confined to it: a read of a path
    /// outside fails as Flux's secure file system fails it.
    #[must_use]
    pub fn folder(dir: &Path) -> Self {
        let root = std::fs::canonicalize(dir).unwrap_or_else(|_| clean(&absolute(dir)));
        Vfs {
            files: BTreeMap::new(),
            under: Under::Disk(Some(root)),
        }
    }

    /// Nothing but the files inserted.
    #[must_use]
    pub fn memory() -> Self {
        Vfs {
            files: BTreeMap::new(),
            under: Under::Nothing,
        }
    }

    /// The source tree `fs`, confined to its root as Flux's secure file system is.
    #[must_use]
    pub fn source(fs: impl SourceFiles + 'static) -> Self {
        Vfs {
            files: BTreeMap::new(),
            under: Under::Source(Arc::new(fs)),
        }
    }

    /// Whether a read of `path` stays in the source root (always, off a source).
    fn allows(&self, path: &Path) -> bool {
        match &self.under {
            Under::Source(fs) => fs.contains(&absolute(path)),
            Under::Disk(Some(root)) => clean(&absolute(path)).starts_with(root),
            Under::Nothing | Under::Disk(None) => true,
        }
    }

    /// Flux's error for a read outside the root.
    fn constraint(&self, op: &str, path: &Path) -> std::io::Error {
        let root = match &self.under {
            Under::Source(fs) => fs.root(),
            Under::Disk(Some(root)) => root,
            Under::Nothing | Under::Disk(None) => Path::new("/"),
        };
        let path = clean(&absolute(path));
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "fs-security-constraint {op} {p}: path '{p}' is not in or below '{r}'",
                p = path.display(),
                r = root.display()
            ),
        )
    }

    /// `Ok` when a read of `path` is allowed, Flux's error otherwise.
    fn check(&self, op: &str, path: &Path) -> std::io::Result<()> {
        if self.allows(path) {
            Ok(())
        } else {
            Err(self.constraint(op, path))
        }
    }

    /// Adds (or replaces) the file at `path` with `content`. A relative `path` is taken
    /// from the current directory; a folder of what lies under is named by its resolved
    /// path, as the builder names the folders it reads.
    pub fn insert(&mut self, path: &Path, content: impl Into<String>) {
        let path = clean(&absolute(path));
        let resolved = path
            .parent()
            .zip(path.file_name())
            .and_then(|(dir, name)| self.canonical_under(dir).map(|d| d.join(name)));
        self.files.insert(resolved.unwrap_or(path), content.into());
    }

    /// `path` resolved by what lies under the in-memory files, if it exists there.
    fn canonical_under(&self, path: &Path) -> Option<PathBuf> {
        match &self.under {
            Under::Nothing => None,
            Under::Disk(_) => std::fs::canonicalize(path).ok(),
            Under::Source(fs) => fs.canonicalize(path).ok(),
        }
    }

    /// The in-memory file at `path`, if any.
    fn held(&self, path: &Path) -> Option<&String> {
        if self.files.is_empty() {
            return None;
        }
        self.files.get(&clean(&absolute(path)))
    }

    /// Whether some in-memory file lies under the folder `path`.
    fn holds_dir(&self, path: &Path) -> bool {
        if self.files.is_empty() {
            return false;
        }
        let dir = clean(&absolute(path));
        self.files
            .range(dir.clone()..)
            .find(|(f, _)| **f != dir)
            .is_some_and(|(f, _)| f.starts_with(&dir))
    }

    /// Whether `path` is a file, in memory or under.
    #[must_use]
    pub fn is_file(&self, path: &Path) -> bool {
        self.held(path).is_some()
            || match &self.under {
                Under::Nothing => false,
                Under::Disk(_) => self.allows(path) && path.is_file(),
                Under::Source(fs) => fs.is_file(&absolute(path)),
            }
    }

    /// Whether `path` is a folder, under or holding in-memory files.
    #[must_use]
    pub fn is_dir(&self, path: &Path) -> bool {
        let under = match &self.under {
            Under::Nothing => false,
            Under::Disk(_) => self.allows(path) && path.is_dir(),
            Under::Source(fs) => fs.is_dir(&absolute(path)),
        };
        under || self.holds_dir(path)
    }

    /// The text of the file at `path`.
    pub fn read_to_string(&self, path: &Path) -> std::io::Result<String> {
        if let Some(text) = self.held(path) {
            return Ok(text.clone());
        }
        self.check("read", path)?;
        match &self.under {
            Under::Nothing => Err(not_found(path)),
            Under::Disk(_) => String::from_utf8(crate::bounded::read_bounded(path)?)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
            Under::Source(fs) => fs.read_to_string(&absolute(path)),
        }
    }

    /// The bytes of the file at `path`.
    pub fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        if let Some(text) = self.held(path) {
            return Ok(text.clone().into_bytes());
        }
        self.check("read", path)?;
        match &self.under {
            Under::Nothing => Err(not_found(path)),
            Under::Disk(_) => crate::bounded::read_bounded(path),
            Under::Source(fs) => fs.read(&absolute(path)),
        }
    }

    /// `path` with symbolic links resolved, as kustomize's loader roots are; an in-memory
    /// folder or file that is not under is taken as it is written (it has no links).
    pub fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        if self.held(path).is_none() && !self.holds_dir(path) {
            self.check("abs", path)?;
        }
        let under = match &self.under {
            Under::Nothing => Err(not_found(path)),
            Under::Disk(_) => std::fs::canonicalize(path),
            Under::Source(fs) => fs.canonicalize(&absolute(path)),
        };
        match under {
            Ok(p) if self.allows(&p) => Ok(p),
            Ok(p) => Err(self.constraint("abs", &p)),
            Err(e) => {
                if self.held(path).is_some() || self.holds_dir(path) {
                    Ok(clean(&absolute(path)))
                } else {
                    Err(e)
                }
            }
        }
    }
}

fn not_found(path: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| path.to_path_buf(), |d| d.join(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_memory_files_shadow_the_disk_and_make_their_folders_exist() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::write(dir.join("kustomization.yaml"), "on disk").unwrap();
        let mut vfs = Vfs::disk();
        vfs.insert(&dir.join("./sub/../kustomization.yaml"), "in memory");
        vfs.insert(&dir.join("virtual/a.yaml"), "a");
        assert_eq!(
            vfs.read_to_string(&dir.join("kustomization.yaml")).unwrap(),
            "in memory"
        );
        assert!(vfs.is_dir(&dir.join("virtual")));
        assert!(!vfs.is_dir(&dir.join("virtual/a.yaml")));
        assert!(vfs.is_file(&dir.join("virtual/a.yaml")));
        assert!(!vfs.is_file(&dir.join("virtual")));
        assert_eq!(
            vfs.canonicalize(&dir.join("virtual/../virtual")).unwrap(),
            dir.join("virtual")
        );
        assert!(vfs.canonicalize(&dir.join("nowhere")).is_err());
        assert!(!Vfs::disk().is_file(&dir.join("virtual/a.yaml")));
    }
}
