//! Reading the user's file system: a plain directory walk, and what one path is.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::entry::{Content, Entry, Kind};
use super::SourceError;

/// What `path` is, without following a symlink; `None` when it does not exist.
pub(super) fn classify(path: &Path) -> Result<Option<Kind>, SourceError> {
    let meta = match path.symlink_metadata() {
        Ok(meta) => meta,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None)
        }
        Err(source) => {
            return Err(SourceError::Read {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let ft = meta.file_type();
    Ok(Some(if ft.is_symlink() {
        Kind::Symlink
    } else if ft.is_dir() {
        Kind::Dir
    } else if ft.is_file() {
        Kind::File {
            content: Content::WorkTree(path.to_path_buf()),
            executable: is_executable(&meta),
        }
    } else {
        Kind::Other
    }))
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &fs::Metadata) -> bool {
    false
}

/// Every path under `dir` (folders included, symlinks not followed), as `filepath.Walk`
/// in `Storage.Archive` would visit them.
pub(super) fn plain_entries(dir: &Path) -> Result<Vec<Entry>, SourceError> {
    let mut entries = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        let abs = dir.join(&rel);
        let read_err = |source| SourceError::Read {
            path: abs.clone(),
            source,
        };
        let mut names = Vec::new();
        for item in fs::read_dir(&abs).map_err(read_err)? {
            names.push(item.map_err(read_err)?.file_name());
        }
        names.sort();
        for name in names {
            let path = rel.join(&name);
            let Some(kind) = classify(&dir.join(&path))? else {
                continue; // removed while we walked
            };
            if matches!(kind, Kind::Dir) {
                pending.push(path.clone());
            }
            entries.push(Entry { path, kind });
        }
    }
    Ok(entries)
}
