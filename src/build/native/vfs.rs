//! What the native builder reads: the disk (as `source::view` shows it), with some files
//! held in memory instead.
//!
//! fluxsim's generated kustomization file (Flux's generator output) and the substituted
//! objects it prints again (`reconcile::reprint`) exist only in memory. The kustomize binary
//! needs them on disk — a symbolic-link overlay of the tree, or a temporary folder — and
//! making those costs more than the build itself; the native builder reads them from here
//! instead, so an overlay is made only when a build is handed to the binary.
//!
//! A `Vfs` made for a Flux source is *confined* to the source root, as kustomize-controller
//! builds on `securefs.MakeFsOnDiskSecure(root)` (fluxcd/pkg `kustomize/filesys/fs_secure.go`):
//! a read of a path that lies outside the root, lexically or through a symbolic link, fails
//! with Flux's `fs-security-constraint` error, and such a path neither exists nor is a file
//! or folder. This is what keeps a pull request from rendering `/etc/passwd` or
//! `/proc/self/environ` into an artifact.

use std::collections::BTreeMap;

use crate::source::view::{self, clean};
use std::path::{Path, PathBuf};

/// The disk, with in-memory files laid over it. Paths are absolute and lexically clean.
#[derive(Debug, Default, Clone)]
pub struct Vfs {
    files: BTreeMap<PathBuf, String>,
    /// The folder every disk read must stay in (resolved), when confined.
    root: Option<PathBuf>,
}

impl Vfs {
    /// The disk alone, unconfined: for a plain `kustomize build` of a folder that is no
    /// Flux source (`kustomize` itself reads anywhere under `LoadRestrictionsNone`).
    #[must_use]
    pub fn disk() -> Self {
        Vfs::default()
    }

    /// The disk confined to the source root `root`, as Flux's secure file system is.
    #[must_use]
    pub fn confined(root: &Path) -> Self {
        let root = clean(&absolute(root));
        let root = view::canonicalize(&root).unwrap_or(root);
        Vfs {
            files: BTreeMap::new(),
            root: Some(root),
        }
    }

    /// Whether a disk read of `path` stays in the root: lexically, and, off a viewed tree
    /// (which holds no symbolic links), once links are resolved (fs_secure.go isSecurePath:
    /// an existing path is judged by its resolved folder, a missing one by its own).
    fn allows(&self, path: &Path) -> bool {
        let Some(root) = &self.root else {
            return true;
        };
        let path = clean(&absolute(path));
        if !path.starts_with(root) {
            return false;
        }
        if view::is_viewed(&path) {
            return true;
        }
        match std::fs::canonicalize(&path) {
            Ok(resolved) => resolved.starts_with(root),
            Err(_) => true,
        }
    }

    /// Flux's error for a read outside the root.
    fn constraint(&self, op: &str, path: &Path) -> std::io::Error {
        let root = self.root.as_deref().unwrap_or(Path::new("/"));
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

    /// `Ok` when a disk read of `path` is allowed, Flux's error otherwise.
    fn check(&self, op: &str, path: &Path) -> std::io::Result<()> {
        if self.allows(path) {
            Ok(())
        } else {
            Err(self.constraint(op, path))
        }
    }

    /// Adds (or replaces) the file at `path` with `content`. A relative `path` is taken
    /// from the current directory; a folder on disk is named by its resolved path, as the
    /// builder names the folders it reads.
    pub fn insert(&mut self, path: &Path, content: impl Into<String>) {
        let path = clean(&absolute(path));
        let resolved = path
            .parent()
            .zip(path.file_name())
            .and_then(|(dir, name)| view::canonicalize(dir).ok().map(|d| d.join(name)));
        self.files.insert(resolved.unwrap_or(path), content.into());
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

    /// Whether `path` is a file, in memory or on disk.
    #[must_use]
    pub fn is_file(&self, path: &Path) -> bool {
        self.held(path).is_some() || (self.allows(path) && view::is_file(path))
    }

    /// Whether `path` is a folder, on disk or holding in-memory files.
    #[must_use]
    pub fn is_dir(&self, path: &Path) -> bool {
        (self.allows(path) && view::is_dir(path)) || self.holds_dir(path)
    }

    /// The text of the file at `path`.
    pub fn read_to_string(&self, path: &Path) -> std::io::Result<String> {
        if let Some(text) = self.held(path) {
            return Ok(text.clone());
        }
        self.check("read", path)?;
        view::read_to_string(path)
    }

    /// The bytes of the file at `path`.
    pub fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        if let Some(text) = self.held(path) {
            return Ok(text.clone().into_bytes());
        }
        self.check("read", path)?;
        view::read(path)
    }

    /// `path` with symbolic links resolved, as kustomize's loader roots are; an in-memory
    /// folder or file that is not on disk is taken as it is written (it has no links).
    pub fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        if self.held(path).is_none() && !self.holds_dir(path) {
            self.check("abs", path)?;
        }
        match view::canonicalize(path) {
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

    // fluxcd/pkg kustomize/filesys/fs_secure.go: every path is asserted to be inside root.
    #[test]
    fn a_confined_disk_refuses_paths_outside_the_root_as_flux_secure_fs_does() {
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        let root = top.join("repo");
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::write(root.join("app/in.yaml"), "in").unwrap();
        std::fs::write(top.join("secret.txt"), "token").unwrap();
        let vfs = Vfs::confined(&root);
        assert_eq!(vfs.read_to_string(&root.join("app/in.yaml")).unwrap(), "in");
        let escape = root.join("app/../../secret.txt");
        let err = vfs.read(&escape).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "fs-security-constraint read {s}: path '{s}' is not in or below '{r}'",
                s = top.join("secret.txt").display(),
                r = root.display()
            )
        );
        assert!(!vfs.is_file(&escape));
        assert!(!vfs.is_dir(&top));
        assert!(vfs.canonicalize(&top).is_err());
        assert!(vfs.read(Path::new("/etc/passwd")).is_err());
        // A symbolic link that leaves the root is judged by where it leads.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(top.join("secret.txt"), root.join("app/link")).unwrap();
            assert!(vfs.read(&root.join("app/link")).is_err());
            assert!(!vfs.is_file(&root.join("app/link")));
        }
        // Unconfined, the same read goes through (a plain kustomize build).
        assert_eq!(Vfs::disk().read(&escape).unwrap(), b"token");
    }
}
