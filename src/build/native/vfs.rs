//! What the native builder reads: the disk (as `source::view` shows it), with some files
//! held in memory instead.
//!
//! fluxsim's generated kustomization file (Flux's generator output) and the substituted
//! objects it prints again (`reconcile::reprint`) exist only in memory. The kustomize binary
//! needs them on disk — a symbolic-link overlay of the tree, or a temporary folder — and
//! making those costs more than the build itself; the native builder reads them from here
//! instead, so an overlay is made only when a build is handed to the binary.

use std::collections::BTreeMap;

use crate::source::view::{self, clean};
use std::path::{Path, PathBuf};

/// The disk, with in-memory files laid over it. Paths are absolute and lexically clean.
#[derive(Debug, Default, Clone)]
pub struct Vfs {
    files: BTreeMap<PathBuf, String>,
}

impl Vfs {
    /// The disk alone.
    #[must_use]
    pub fn disk() -> Self {
        Vfs::default()
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
        self.held(path).is_some() || view::is_file(path)
    }

    /// Whether `path` is a folder, on disk or holding in-memory files.
    #[must_use]
    pub fn is_dir(&self, path: &Path) -> bool {
        view::is_dir(path) || self.holds_dir(path)
    }

    /// The text of the file at `path`.
    pub fn read_to_string(&self, path: &Path) -> std::io::Result<String> {
        match self.held(path) {
            Some(text) => Ok(text.clone()),
            None => view::read_to_string(path),
        }
    }

    /// The bytes of the file at `path`.
    pub fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        match self.held(path) {
            Some(text) => Ok(text.clone().into_bytes()),
            None => view::read(path),
        }
    }

    /// `path` with symbolic links resolved, as kustomize's loader roots are; an in-memory
    /// folder or file that is not on disk is taken as it is written (it has no links).
    pub fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        match view::canonicalize(path) {
            Ok(p) => Ok(p),
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
}
