//! Reading a source tree in place.
//!
//! A render of a folder on disk used to copy everything Flux would see into a temporary
//! folder first. Creating those files costs more than rendering them (the file system's
//! inode allocation dominates a cold render). A tree can instead be *viewed* in place: the
//! user's folder is read where it is, and only the paths the copy would have held are
//! visible. Every reader of a source tree (discovery, Flux's generator, the build closure,
//! the native builder, the audit) goes through the functions here, which apply that
//! visibility to paths under a viewed root and read the disk plainly elsewhere.
//!
//! Nothing here writes under a viewed root. A build handed to the kustomize binary, which
//! reads the disk itself, gets a real copy made on first need ([`on_disk`]).
//!
//! The registry is process-wide because the readers are many and far apart; a view is
//! registered while its `Tree` lives.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock, RwLock};

/// One viewed tree: the folder, and what of it Flux would see.
#[derive(Debug)]
pub(crate) struct View {
    /// The folder as readers name it, with symbolic links resolved.
    pub(crate) root: PathBuf,
    /// Where the bytes are: `root` itself, or the folder another view of the same tree
    /// reads (a view with changed files has a name of its own).
    disk: PathBuf,
    /// Files whose content is held here instead of on disk (canaries), relative to `root`.
    overrides: BTreeMap<PathBuf, Vec<u8>>,
    /// Files whose content is another file's, read through the views (a folder of another
    /// tree, a file an ArtifactGenerator copied), relative to `root`.
    links: BTreeMap<PathBuf, PathBuf>,
    /// Visible regular files, relative to `root`.
    files: BTreeSet<PathBuf>,
    /// Visible folders, relative to `root` (the root itself is not listed).
    dirs: BTreeSet<PathBuf>,
    /// The copy for builders that read the disk, once made.
    copy: OnceLock<Result<tempfile::TempDir, String>>,
}

static VIEWS: RwLock<Vec<Arc<View>>> = RwLock::new(Vec::new());

/// Keeps a view registered; unregisters it when dropped.
#[derive(Debug)]
pub(crate) struct Registration(Arc<View>);

impl Drop for Registration {
    fn drop(&mut self) {
        let mut views = VIEWS
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        views.retain(|v| !Arc::ptr_eq(v, &self.0));
    }
}

/// Registers the tree at `disk` under the name `root` (a folder of its own, so that views
/// with different contents never share a name), with `overrides` replacing some files.
pub(crate) fn register_at(
    root: PathBuf,
    disk: PathBuf,
    mut files: BTreeSet<PathBuf>,
    dirs: BTreeSet<PathBuf>,
    overrides: BTreeMap<PathBuf, Vec<u8>>,
) -> Registration {
    files.extend(overrides.keys().cloned());
    register(View {
        root,
        disk,
        overrides,
        links: BTreeMap::new(),
        files,
        dirs,
        copy: OnceLock::new(),
    })
}

/// Registers under the name `root` a tree made of other files: each of `links` (relative to
/// `root`) shows the bytes of the file it names, read through the views, and `dirs` are its
/// folders. Nothing is copied.
pub(crate) fn register_linked(
    root: PathBuf,
    links: BTreeMap<PathBuf, PathBuf>,
    dirs: BTreeSet<PathBuf>,
) -> Registration {
    register(View {
        disk: root.clone(),
        root,
        overrides: BTreeMap::new(),
        files: links.keys().cloned().collect(),
        links,
        dirs,
        copy: OnceLock::new(),
    })
}

fn register(view: View) -> Registration {
    let view = Arc::new(view);
    VIEWS
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(view.clone());
    Registration(view)
}

impl Registration {
    /// Registers under the name `root` the same tree as this view (its disk, its changed
    /// files) showing only `files` and `dirs` of it.
    pub(crate) fn narrowed(
        &self,
        root: PathBuf,
        files: BTreeSet<PathBuf>,
        dirs: BTreeSet<PathBuf>,
    ) -> Registration {
        let overrides = self
            .0
            .overrides
            .iter()
            .filter(|(p, _)| files.contains(*p))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect();
        let links = self
            .0
            .links
            .iter()
            .filter(|(p, _)| files.contains(*p))
            .map(|(p, l)| (p.clone(), l.clone()))
            .collect();
        register(View {
            root,
            disk: self.0.disk.clone(),
            overrides,
            links,
            files,
            dirs,
            copy: OnceLock::new(),
        })
    }
}

/// `path` without `.` and with `..` folded into its parent, lexically (as Go's
/// `filepath.Clean`).
pub(crate) fn clean(path: &Path) -> PathBuf {
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

/// The view `path` lies in, and `path` relative to its root.
fn lookup(path: &Path) -> Option<(Arc<View>, PathBuf)> {
    let views = VIEWS
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if views.is_empty() {
        return None;
    }
    let path = clean(path);
    views.iter().find_map(|v| {
        path.strip_prefix(&v.root)
            .ok()
            .map(|rel| (v.clone(), rel.to_path_buf()))
    })
}

impl View {
    fn is_dir(&self, rel: &Path) -> bool {
        rel.as_os_str().is_empty() || self.dirs.contains(rel)
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: not in the source", path.display()),
    )
}

/// Whether `path` is a regular file (following links off a viewed tree).
#[must_use]
pub fn is_file(path: &Path) -> bool {
    match lookup(path) {
        Some((v, rel)) => v.files.contains(&rel),
        None => path.is_file(),
    }
}

/// Whether `path` is a folder (following links off a viewed tree).
#[must_use]
pub fn is_dir(path: &Path) -> bool {
    match lookup(path) {
        Some((v, rel)) => v.is_dir(&rel),
        None => path.is_dir(),
    }
}

/// Whether `path` exists.
#[must_use]
pub fn exists(path: &Path) -> bool {
    match lookup(path) {
        Some((v, rel)) => v.files.contains(&rel) || v.is_dir(&rel),
        None => path.exists(),
    }
}

/// Whether `path` lies in a viewed tree (which holds no symbolic links).
#[must_use]
pub fn is_viewed(path: &Path) -> bool {
    lookup(path).is_some()
}

/// The bytes of the file at `path`.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    match lookup(path) {
        Some((v, rel)) if !v.files.contains(&rel) => Err(not_found(path)),
        Some((v, rel)) => match (v.overrides.get(&rel), v.links.get(&rel)) {
            (Some(bytes), _) => Ok(bytes.clone()),
            (None, Some(link)) => read(link),
            (None, None) => std::fs::read(v.disk.join(rel)),
        },
        None => std::fs::read(path),
    }
}

/// The text of the file at `path`.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    match lookup(path) {
        None => std::fs::read_to_string(path),
        Some(_) => String::from_utf8(read(path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e)),
    }
}

/// `path` with symbolic links resolved. A viewed tree holds none: its visible paths are
/// their own resolution, and anything else does not exist.
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    match lookup(path) {
        Some((v, rel)) if v.files.contains(&rel) || v.is_dir(&rel) => Ok(v.root.join(rel)),
        Some(_) => Err(not_found(path)),
        None => std::fs::canonicalize(path),
    }
}

/// One entry of a folder: its name, and whether it is a folder (links followed).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    /// The entry's name.
    pub name: OsString,
    /// Whether it is a folder.
    pub is_dir: bool,
}

/// The entries of the folder `path`, sorted by name.
pub fn read_dir(path: &Path) -> io::Result<Vec<DirEntry>> {
    let mut out = Vec::new();
    match lookup(path) {
        Some((v, rel)) => {
            if !v.is_dir(&rel) {
                return Err(not_found(path));
            }
            let children = |set: &BTreeSet<PathBuf>, is_dir: bool, out: &mut Vec<DirEntry>| {
                for p in set.range(rel.clone()..) {
                    if !p.starts_with(&rel) {
                        break;
                    }
                    if p.parent() == Some(rel.as_path()) {
                        if let Some(name) = p.file_name() {
                            out.push(DirEntry {
                                name: name.to_os_string(),
                                is_dir,
                            });
                        }
                    }
                }
            };
            children(&v.files, false, &mut out);
            children(&v.dirs, true, &mut out);
        }
        None => {
            for entry in std::fs::read_dir(path)? {
                let entry = entry?;
                out.push(DirEntry {
                    is_dir: entry.path().is_dir(),
                    name: entry.file_name(),
                });
            }
        }
    }
    out.sort();
    Ok(out)
}

/// `path` on a disk a separate program can read: under a viewed root, the same place in a
/// copy of what the view shows (made on first call, kept while the view lives); elsewhere,
/// `path` itself.
pub fn on_disk(path: &Path) -> io::Result<PathBuf> {
    let Some((v, rel)) = lookup(path) else {
        return Ok(path.to_path_buf());
    };
    let copy = v
        .copy
        .get_or_init(|| copy_view(&v).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| io::Error::other(e.clone()))?;
    Ok(copy.path().join(rel))
}

fn copy_view(v: &View) -> io::Result<tempfile::TempDir> {
    let out = crate::scratch::tempdir(crate::scratch::Kind::Source)?;
    for d in &v.dirs {
        std::fs::create_dir_all(out.path().join(d))?;
    }
    for f in &v.files {
        match (v.overrides.get(f), v.links.get(f)) {
            (Some(bytes), _) => std::fs::write(out.path().join(f), bytes)?,
            (None, Some(link)) => std::fs::write(out.path().join(f), read(link)?)?,
            (None, None) => std::fs::copy(v.disk.join(f), out.path().join(f)).map(|_| ())?,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_shows_only_its_files_and_folders_and_copies_them_for_binaries() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/seen.yaml"), "x").unwrap();
        std::fs::write(root.join("a/hidden.yaml"), "y").unwrap();
        std::fs::create_dir_all(root.join("gone")).unwrap();
        let files = BTreeSet::from([PathBuf::from("a/b/seen.yaml")]);
        let dirs = BTreeSet::from([PathBuf::from("a"), PathBuf::from("a/b")]);
        let reg = register_at(root.clone(), root.clone(), files, dirs, BTreeMap::new());
        assert!(is_file(&root.join("a/b/seen.yaml")));
        assert!(is_file(&root.join("a/./b/../b/seen.yaml")));
        assert!(!is_file(&root.join("a/hidden.yaml")));
        assert!(read_to_string(&root.join("a/hidden.yaml")).is_err());
        assert!(!is_dir(&root.join("gone")));
        assert!(is_dir(&root));
        let names: Vec<_> = read_dir(&root.join("a")).unwrap();
        assert_eq!(
            names,
            vec![DirEntry {
                name: "b".into(),
                is_dir: true
            }]
        );
        assert!(canonicalize(&root.join("gone")).is_err());
        let copy = on_disk(&root.join("a/b")).unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.join("seen.yaml")).unwrap(),
            "x"
        );
        assert!(!copy.join("../hidden.yaml").exists());
        drop(reg);
        // Unregistered, the disk shows everything again.
        assert!(is_file(&root.join("a/hidden.yaml")));
    }
}
