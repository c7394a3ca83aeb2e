//! `SecureJoin` from `cyphar/filepath-securejoin` (`join.go`), which kustomize-controller
//! applies to `spec.path` (`securejoin.SecureJoin(tmpDir, obj.Spec.Path)` in
//! `internal/controller/kustomization_controller.go`): the path is resolved as if the root
//! were `/`, so `..` stops at the root and symlinks are followed inside it.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::SourceError;

/// `consts.MaxSymlinkLimit` in filepath-securejoin.
const MAX_SYMLINK_LIMIT: usize = 255;

/// Joins `rel` under `root` the way Flux's `SecureJoin` does: `../` segments are clamped at
/// the root, `./x`, `x` and `/x` are the same, and symlinks are resolved within `root`, on
/// disk. A path that does not exist is still joined (kustomize-controller then stats it).
pub fn secure_join(root: &Path, rel: &str) -> Result<PathBuf, SourceError> {
    join_with(root, rel, |full| {
        let meta = match full.symlink_metadata() {
            Ok(meta) => meta,
            // Missing components (and ENOTDIR) are taken as plain names, as SecureJoin does.
            Err(e) if is_not_exist(&e) => return Ok(None),
            Err(source) => {
                return Err(SourceError::Read {
                    path: full.to_path_buf(),
                    source,
                })
            }
        };
        if !meta.file_type().is_symlink() {
            return Ok(None);
        }
        std::fs::read_link(full)
            .map(Some)
            .map_err(|source| SourceError::Read {
                path: full.to_path_buf(),
                source,
            })
    })
}

/// [`secure_join`] in a tree that holds no symbolic links (a [`super::SourceFs`]: Flux's
/// archive holds none): lexical.
pub(crate) fn secure_join_lexical(root: &Path, rel: &str) -> Result<PathBuf, SourceError> {
    join_with(root, rel, |_| Ok(None))
}

/// SecureJoin's walk; `read_link` gives the target of a path that is a symbolic link.
fn join_with(
    root: &Path,
    rel: &str,
    mut read_link: impl FnMut(&Path) -> Result<Option<PathBuf>, SourceError>,
) -> Result<PathBuf, SourceError> {
    if root.components().any(|c| c == Component::ParentDir) {
        return Err(SourceError::UnsafeRoot {
            root: root.to_path_buf(),
        });
    }
    let mut current: Vec<OsString> = Vec::new();
    let mut remaining: Vec<OsString> = split(rel.as_bytes());
    remaining.reverse();
    let mut links = 0;
    while let Some(part) = remaining.pop() {
        if part.is_empty() || part == "." {
            continue;
        }
        if part == ".." {
            // Lexical: everything in `current` is already known not to be a symlink.
            current.pop();
            continue;
        }
        current.push(part);
        let full = join(root, &current);
        let Some(dest) = read_link(&full)? else {
            continue;
        };
        links += 1;
        if links > MAX_SYMLINK_LIMIT {
            return Err(SourceError::SymlinkLoop {
                root: root.to_path_buf(),
                path: rel.to_owned(),
            });
        }
        current.pop();
        // An absolute target restarts from the root.
        if dest.is_absolute() {
            current.clear();
        }
        let mut parts = split(dest.as_os_str().as_encoded_bytes());
        parts.reverse();
        remaining.extend(parts);
    }
    Ok(join(root, &current))
}

fn join(root: &Path, parts: &[OsString]) -> PathBuf {
    // filepath.Join cleans the root too (`/tmp/x/` and `/tmp/./x` become `/tmp/x`).
    let mut out: PathBuf = root.components().collect();
    out.extend(parts);
    out
}

fn split(bytes: &[u8]) -> Vec<OsString> {
    bytes.split(|&b| b == b'/').map(os_string).collect()
}

#[cfg(unix)]
fn os_string(raw: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(raw).to_os_string()
}

#[cfg(not(unix))]
fn os_string(raw: &[u8]) -> OsString {
    OsString::from(String::from_utf8_lossy(raw).into_owned())
}

fn is_not_exist(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // filepath-securejoin join.go: `..` at the root stays at the root.
    #[test]
    fn parent_segments_are_clamped_at_the_root() {
        let root = Path::new("/nonexistent-fluxsim-root");
        assert_eq!(secure_join(root, "../../etc").unwrap(), root.join("etc"));
        assert_eq!(secure_join(root, "a/../../b").unwrap(), root.join("b"));
        assert_eq!(secure_join(root, "..").unwrap(), root);
    }

    #[test]
    fn dot_slash_plain_and_absolute_paths_are_the_same() {
        let root = Path::new("/nonexistent-fluxsim-root");
        let want = root.join("clusters/dev");
        assert_eq!(secure_join(root, "./clusters/dev").unwrap(), want);
        assert_eq!(secure_join(root, "clusters/dev").unwrap(), want);
        assert_eq!(secure_join(root, "/clusters/dev/").unwrap(), want);
        assert_eq!(secure_join(root, "clusters//./dev").unwrap(), want);
        assert_eq!(secure_join(root, "").unwrap(), root);
        assert_eq!(secure_join(root, "./").unwrap(), root);
    }

    #[test]
    fn a_root_with_parent_segments_is_refused() {
        let err = secure_join(Path::new("/tmp/../etc"), "x").unwrap_err();
        assert!(matches!(err, SourceError::UnsafeRoot { .. }));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_resolve_inside_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::os::unix::fs::symlink("/real", root.join("abs")).unwrap();
        std::os::unix::fs::symlink("../../../..", root.join("real/up")).unwrap();
        assert_eq!(secure_join(root, "abs/sub").unwrap(), root.join("real/sub"));
        assert_eq!(secure_join(root, "real/up/etc").unwrap(), root.join("etc"));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_loop_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("loop", tmp.path().join("loop")).unwrap();
        let err = secure_join(tmp.path(), "loop/x").unwrap_err();
        assert!(matches!(err, SourceError::SymlinkLoop { .. }));
    }
}
