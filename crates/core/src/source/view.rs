//! [`SourceFs`]: a source tree as a value, the only way fluxsim reads what Flux would see.
//!
//! Every reader of a source tree (discovery, Flux's generator, the build closure, the native
//! builder, the config, the audit, the graph, the canaries) is handed a `SourceFs` and reads
//! through it; none reads the disk on its own. A `SourceFs` names its files by absolute
//! paths under its root and shows only the files and folders it was made with, which are
//! those Flux would see: a path that is not one of them, and any path that is not under the
//! root (`/etc/passwd`, `root/../x`, a path into another tree), is *not found*, whatever the
//! disk holds there. There is no fallback to the disk, so a reader cannot stray outside its
//! tree, and two trees never see each other's files.
//!
//! A tree read in place (the user's folder) is not copied: creating the files costs more than
//! rendering them (the file system's inode allocation dominates a cold render), so the value
//! reads the user's folder where it is, confined to the paths it lists. A tree copied by
//! fluxsim (a git revision) is read through the same confinement, from its own lists. Views
//! of views are values made from another value: a tree narrowed by a `spec.ignore`, one with
//! some files' contents changed in memory (canaries), one made of other trees' files (a
//! folder mapped as a source, an ArtifactGenerator's artifact). Each has a root of its own
//! (an empty temporary folder holds the name), so paths and build caches never mix them up.
//!
//! Nothing here writes under a root. A build handed to the kustomize binary, which reads the
//! disk itself, gets a real copy of what the value shows, made on first need
//! ([`SourceFs::on_disk`]).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A source tree, read only through this value (cheap to clone: clones share it).
#[derive(Clone)]
pub struct SourceFs(Arc<View>);

/// One view of a tree: its root, and what of it Flux would see.
struct View {
    /// The folder as readers name it.
    root: PathBuf,
    /// Where the bytes of the files that are neither held nor linked are: `root` itself, the
    /// folder another view of the same tree reads, or none (every file held or linked).
    disk: Option<PathBuf>,
    /// `disk` holds exactly what the view shows (a copy fluxsim made): a separate program
    /// can read it there.
    exact: bool,
    /// Files whose content is held here instead of on disk (canaries), relative to `root`.
    held: BTreeMap<PathBuf, Vec<u8>>,
    /// Files whose content is a file of another tree (a folder mapped as a source, a file an
    /// ArtifactGenerator copied), relative to `root`: read through that tree's value.
    links: BTreeMap<PathBuf, (SourceFs, PathBuf)>,
    /// Visible regular files, relative to `root`.
    files: BTreeSet<PathBuf>,
    /// Visible folders, relative to `root` (the root itself is not listed).
    dirs: BTreeSet<PathBuf>,
    /// `files` and `dirs` hashed, for lookups (filled by `SourceFs::make`): every read asks,
    /// and a B-tree search compares paths component by component.
    file_index: std::collections::HashSet<PathBuf>,
    dir_index: std::collections::HashSet<PathBuf>,
    /// The copy for builders that read the disk, once made (or why it could not be: shared,
    /// since `io::Error` is not `Clone` and every caller gets it).
    copy: OnceLock<Result<tempfile::TempDir, std::sync::Arc<io::Error>>>,
}

impl fmt::Debug for SourceFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceFs")
            .field("root", &self.0.root)
            .field("files", &self.0.files.len())
            .finish_non_exhaustive()
    }
}

pub(crate) use fluxsim_kustomize::vfs::clean;

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: not in the source", path.display()),
    )
}

/// One entry of a folder: its name, and whether it is a folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    /// The entry's name.
    pub name: OsString,
    /// Whether it is a folder.
    pub is_dir: bool,
}

impl SourceFs {
    fn make(mut view: View) -> SourceFs {
        view.file_index = view.files.iter().cloned().collect();
        view.dir_index = view.dirs.iter().cloned().collect();
        SourceFs(Arc::new(view))
    }

    /// The tree at `disk` named `root` (often the same folder), showing `files` and `dirs`
    /// (relative) of it. `exact`: the folder holds nothing else (a copy fluxsim made).
    pub(crate) fn on_folder(
        root: PathBuf,
        disk: PathBuf,
        files: BTreeSet<PathBuf>,
        dirs: BTreeSet<PathBuf>,
        exact: bool,
    ) -> SourceFs {
        SourceFs::make(View {
            root,
            disk: Some(disk),
            exact,
            held: BTreeMap::new(),
            links: BTreeMap::new(),
            files,
            dirs,
            copy: OnceLock::new(),
            file_index: std::collections::HashSet::new(),
            dir_index: std::collections::HashSet::new(),
        })
    }

    /// A tree named `root` made of other trees' files: each of `links` (relative to `root`)
    /// shows the bytes of a file of another value, and `dirs` are its folders. Nothing is
    /// copied.
    pub(crate) fn linked(
        root: PathBuf,
        links: BTreeMap<PathBuf, (SourceFs, PathBuf)>,
        dirs: BTreeSet<PathBuf>,
    ) -> SourceFs {
        SourceFs::make(View {
            root,
            disk: None,
            exact: false,
            held: BTreeMap::new(),
            files: links.keys().cloned().collect(),
            links,
            dirs,
            copy: OnceLock::new(),
            file_index: std::collections::HashSet::new(),
            dir_index: std::collections::HashSet::new(),
        })
    }

    /// A tree named `root` with nothing in it but its root folder.
    #[must_use]
    pub fn empty(root: PathBuf) -> SourceFs {
        SourceFs::linked(root, BTreeMap::new(), BTreeSet::new())
    }

    /// This tree under the name `root`, showing only `files` and `dirs` (relative) of it.
    #[must_use]
    pub(crate) fn narrowed(
        &self,
        root: PathBuf,
        files: BTreeSet<PathBuf>,
        dirs: BTreeSet<PathBuf>,
    ) -> SourceFs {
        let v = &self.0;
        let files: BTreeSet<PathBuf> = files
            .into_iter()
            .filter(|f| v.file_index.contains(f))
            .collect();
        let held = v
            .held
            .iter()
            .filter(|(p, _)| files.contains(*p))
            .map(|(p, b)| (p.clone(), b.clone()))
            .collect();
        let links = v
            .links
            .iter()
            .filter(|(p, _)| files.contains(*p))
            .map(|(p, l)| (p.clone(), l.clone()))
            .collect();
        SourceFs::make(View {
            root,
            disk: v.disk.clone(),
            exact: false,
            held,
            links,
            files,
            dirs,
            copy: OnceLock::new(),
            file_index: std::collections::HashSet::new(),
            dir_index: std::collections::HashSet::new(),
        })
    }

    /// This tree under the name `root`, with `changes` (by relative path) replacing the
    /// contents of some files (or adding files), held in memory.
    #[must_use]
    pub(crate) fn changed(&self, root: PathBuf, changes: &BTreeMap<PathBuf, Vec<u8>>) -> SourceFs {
        let v = &self.0;
        let mut files = v.files.clone();
        let mut dirs = v.dirs.clone();
        let mut held = v.held.clone();
        let mut links = v.links.clone();
        for (rel, bytes) in changes {
            let rel = clean(rel);
            dirs.extend(
                rel.ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .map(Path::to_path_buf),
            );
            links.remove(&rel);
            files.insert(rel.clone());
            held.insert(rel, bytes.clone());
        }
        SourceFs::make(View {
            root,
            disk: v.disk.clone(),
            exact: false,
            held,
            links,
            files,
            dirs,
            copy: OnceLock::new(),
            file_index: std::collections::HashSet::new(),
            dir_index: std::collections::HashSet::new(),
        })
    }

    /// The folder the tree's paths are under.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.0.root
    }

    /// `path` relative to the root, when it lies under it (lexically, `..` folded).
    fn rel(&self, path: &Path) -> Option<PathBuf> {
        clean(path)
            .strip_prefix(&self.0.root)
            .ok()
            .map(Path::to_path_buf)
    }

    /// Whether `path` lies under the root (lexically); what is there may not exist.
    #[must_use]
    pub fn contains(&self, path: &Path) -> bool {
        self.rel(path).is_some()
    }

    /// `rel` (a `spec.path`, a file fluxsim.toml names) joined under the root as Flux's
    /// `SecureJoin` joins it: `..` is clamped at the root. The tree holds no symbolic links
    /// (Flux's archive holds none), so the join is lexical.
    pub fn secure_join(&self, rel: &str) -> Result<PathBuf, super::SourceError> {
        super::secure_join::secure_join_lexical(&self.0.root, rel)
    }

    fn has_dir(&self, rel: &Path) -> bool {
        rel.as_os_str().is_empty() || self.0.dir_index.contains(rel)
    }

    /// Whether `path` is a regular file of the tree.
    #[must_use]
    pub fn is_file(&self, path: &Path) -> bool {
        self.rel(path)
            .is_some_and(|rel| self.0.file_index.contains(&rel))
    }

    /// Whether `path` is a folder of the tree (its root included).
    #[must_use]
    pub fn is_dir(&self, path: &Path) -> bool {
        self.rel(path).is_some_and(|rel| self.has_dir(&rel))
    }

    /// Whether `path` is a file or folder of the tree.
    #[must_use]
    pub fn exists(&self, path: &Path) -> bool {
        self.rel(path)
            .is_some_and(|rel| self.0.file_index.contains(&rel) || self.has_dir(&rel))
    }

    /// The bytes of the file at `path`.
    pub fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let v = &self.0;
        let Some(rel) = self.rel(path).filter(|rel| v.file_index.contains(rel)) else {
            return Err(not_found(path));
        };
        if let Some(bytes) = v.held.get(&rel) {
            return Ok(bytes.clone());
        }
        if let Some((fs, link)) = v.links.get(&rel) {
            return fs.read(link);
        }
        match &v.disk {
            Some(disk) => super::read_bounded(&disk.join(rel)),
            None => Err(not_found(path)),
        }
    }

    /// The text of the file at `path`.
    pub fn read_to_string(&self, path: &Path) -> io::Result<String> {
        String::from_utf8(self.read(path)?)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// `path` with symbolic links resolved. The tree holds none: its visible paths are their
    /// own resolution (cleaned), and anything else does not exist.
    pub fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        match self.rel(path) {
            Some(rel) if self.0.file_index.contains(&rel) || self.has_dir(&rel) => {
                Ok(self.0.root.join(rel))
            }
            _ => Err(not_found(path)),
        }
    }

    /// Every file the tree shows, relative to its root, sorted.
    pub fn file_paths(&self) -> impl Iterator<Item = &Path> {
        self.0.files.iter().map(PathBuf::as_path)
    }

    /// The entries of the folder `path`, sorted by name.
    pub fn read_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let Some(rel) = self.rel(path).filter(|rel| self.has_dir(rel)) else {
            return Err(not_found(path));
        };
        let mut out = Vec::new();
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
        children(&self.0.files, false, &mut out);
        children(&self.0.dirs, true, &mut out);
        out.sort();
        Ok(out)
    }

    /// Where the bytes of the file `rel` (relative) are on disk, when they are plainly
    /// there (not held, not another tree's).
    pub(crate) fn disk_file(&self, rel: &Path) -> Option<PathBuf> {
        let v = &self.0;
        if !v.file_index.contains(rel) || v.held.contains_key(rel) || v.links.contains_key(rel) {
            return None;
        }
        v.disk.as_ref().map(|d| d.join(rel))
    }

    /// `path` (under the root) on a disk a separate program can read: the same place in a
    /// copy of what the tree shows (made on first call, kept while the value lives), or in
    /// fluxsim's own copy when the tree is one.
    pub fn on_disk(&self, path: &Path) -> io::Result<PathBuf> {
        let v = &self.0;
        let Some(rel) = self.rel(path) else {
            return Err(not_found(path));
        };
        if let (true, Some(disk)) = (v.exact, &v.disk) {
            return Ok(disk.join(rel));
        }
        let copy = v
            .copy
            .get_or_init(|| self.copy().map_err(std::sync::Arc::new))
            .as_ref()
            .map_err(|e| io::Error::other(e.clone()))?;
        Ok(copy.path().join(rel))
    }

    fn copy(&self) -> io::Result<tempfile::TempDir> {
        let v = &self.0;
        let out = crate::scratch::tempdir(crate::scratch::Kind::Source)?;
        for d in &v.dirs {
            std::fs::create_dir_all(out.path().join(d))?;
        }
        for f in &v.files {
            let target = out.path().join(f);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            match self.disk_file(f) {
                Some(from) => std::fs::copy(from, target).map(|_| ())?,
                None => std::fs::write(target, self.read(&v.root.join(f))?)?,
            }
        }
        Ok(out)
    }
}

/// What the native builder reads of a source: the same calls, confined the same way.
impl fluxsim_kustomize::vfs::SourceFiles for SourceFs {
    fn root(&self) -> &Path {
        SourceFs::root(self)
    }
    fn contains(&self, path: &Path) -> bool {
        SourceFs::contains(self, path)
    }
    fn is_file(&self, path: &Path) -> bool {
        SourceFs::is_file(self, path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        SourceFs::is_dir(self, path)
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        SourceFs::read(self, path)
    }
    fn read_to_string(&self, path: &Path) -> io::Result<String> {
        SourceFs::read_to_string(self, path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        SourceFs::canonicalize(self, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(top.join("root/a/b")).unwrap();
        std::fs::write(top.join("root/a/b/seen.yaml"), "x").unwrap();
        std::fs::write(top.join("root/a/hidden.yaml"), "y").unwrap();
        std::fs::create_dir_all(top.join("root/gone")).unwrap();
        std::fs::write(top.join("outside.yaml"), "secret").unwrap();
        (tmp, top)
    }

    fn view_of(root: &Path) -> SourceFs {
        let files = BTreeSet::from([PathBuf::from("a/b/seen.yaml")]);
        let dirs = BTreeSet::from([PathBuf::from("a"), PathBuf::from("a/b")]);
        SourceFs::on_folder(root.to_path_buf(), root.to_path_buf(), files, dirs, false)
    }

    #[test]
    fn a_view_shows_only_its_files_and_folders_and_copies_them_for_binaries() {
        let (_tmp, top) = folder();
        let root = top.join("root");
        let fs = view_of(&root);
        assert!(fs.is_file(&root.join("a/b/seen.yaml")));
        assert!(fs.is_file(&root.join("a/./b/../b/seen.yaml")));
        assert!(!fs.is_file(&root.join("a/hidden.yaml")));
        assert!(fs.read_to_string(&root.join("a/hidden.yaml")).is_err());
        assert!(!fs.is_dir(&root.join("gone")));
        assert!(fs.is_dir(&root));
        let names: Vec<_> = fs.read_dir(&root.join("a")).unwrap();
        assert_eq!(
            names,
            vec![DirEntry {
                name: "b".into(),
                is_dir: true
            }]
        );
        assert!(fs.canonicalize(&root.join("gone")).is_err());
        let copy = fs.on_disk(&root.join("a/b")).unwrap();
        assert_eq!(
            std::fs::read_to_string(copy.join("seen.yaml")).unwrap(),
            "x"
        );
        assert!(!copy.join("../hidden.yaml").exists());
    }

    // The value is the whole file system of a reader: nothing outside its root is found,
    // whatever the disk holds there (fluxcd/pkg kustomize/filesys/fs_secure.go refuses
    // every path outside the artifact root).
    #[test]
    fn a_source_fs_refuses_every_path_outside_its_root_even_when_the_file_exists() {
        let (_tmp, top) = folder();
        let root = top.join("root");
        let fs = view_of(&root);
        let other_root = top.join("other");
        std::fs::create_dir_all(&other_root).unwrap();
        std::fs::write(other_root.join("x.yaml"), "other").unwrap();
        let other = SourceFs::on_folder(
            other_root.clone(),
            other_root.clone(),
            BTreeSet::from([PathBuf::from("x.yaml")]),
            BTreeSet::new(),
            false,
        );
        assert_eq!(
            other.read_to_string(&other_root.join("x.yaml")).unwrap(),
            "other"
        );
        // On disk, every one of these paths is a file (`/etc/passwd` where the system has it).
        assert!(top.join("outside.yaml").is_file() && other_root.join("x.yaml").is_file());
        for path in [
            PathBuf::from("/etc/passwd"),
            root.join("../outside.yaml"),
            root.join("a/b/../../../outside.yaml"),
            top.join("outside.yaml"),
            other_root.join("x.yaml"),
            PathBuf::from("a/b/seen.yaml"),
        ] {
            assert!(fs.read(&path).is_err(), "{}", path.display());
            assert!(!fs.is_file(&path), "{}", path.display());
            assert!(!fs.exists(&path), "{}", path.display());
            assert!(fs.canonicalize(&path).is_err(), "{}", path.display());
            assert!(fs.on_disk(&path).is_err(), "{}", path.display());
        }
        for dir in [top.clone(), PathBuf::from("/etc"), other_root] {
            assert!(!fs.is_dir(&dir), "{}", dir.display());
            assert!(fs.read_dir(&dir).is_err(), "{}", dir.display());
        }
    }

    #[test]
    fn derived_views_read_through_the_value_they_come_from() {
        let (_tmp, top) = folder();
        let root = top.join("root");
        let fs = view_of(&root);
        let changed = fs.changed(
            top.join("changed"),
            &BTreeMap::from([(PathBuf::from("a/b/seen.yaml"), b"new".to_vec())]),
        );
        assert_eq!(
            changed
                .read_to_string(&top.join("changed/a/b/seen.yaml"))
                .unwrap(),
            "new"
        );
        // The original is untouched, and the changed view does not answer for its root.
        assert_eq!(fs.read_to_string(&root.join("a/b/seen.yaml")).unwrap(), "x");
        assert!(changed.read(&root.join("a/b/seen.yaml")).is_err());
        let linked = SourceFs::linked(
            top.join("linked"),
            BTreeMap::from([(
                PathBuf::from("s.yaml"),
                (changed.clone(), top.join("changed/a/b/seen.yaml")),
            )]),
            BTreeSet::new(),
        );
        assert_eq!(
            linked.read_to_string(&top.join("linked/s.yaml")).unwrap(),
            "new"
        );
        let narrowed = linked.narrowed(top.join("narrowed"), BTreeSet::new(), BTreeSet::new());
        assert!(!narrowed.is_file(&top.join("narrowed/s.yaml")));
        // A link into a file its tree does not show is not found either.
        let stray = SourceFs::linked(
            top.join("stray"),
            BTreeMap::from([(
                PathBuf::from("s.yaml"),
                (fs.clone(), root.join("a/hidden.yaml")),
            )]),
            BTreeSet::new(),
        );
        assert!(stray.read(&top.join("stray/s.yaml")).is_err());
    }

    // fluxcd/pkg kustomize/filesys/fs_secure.go: every path is asserted to be inside root.
    #[test]
    fn a_source_refuses_paths_outside_the_root_as_flux_secure_fs_does() {
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        let root = top.join("repo");
        std::fs::create_dir_all(root.join("app")).unwrap();
        std::fs::write(root.join("app/in.yaml"), "in").unwrap();
        std::fs::write(top.join("secret.txt"), "token").unwrap();
        // A symbolic link that leaves the root is not in the source at all (never archived).
        #[cfg(unix)]
        std::os::unix::fs::symlink(top.join("secret.txt"), root.join("app/link")).unwrap();
        let tree =
            crate::source::in_place(&root, &crate::source::SourceOptions::default()).unwrap();
        let vfs = fluxsim_kustomize::vfs::Vfs::source(tree.fs().clone());
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
        assert!(vfs.read(std::path::Path::new("/etc/passwd")).is_err());
        assert!(!vfs.is_file(std::path::Path::new("/etc/passwd")));
        #[cfg(unix)]
        {
            assert!(vfs.read(&root.join("app/link")).is_err());
            assert!(!vfs.is_file(&root.join("app/link")));
        }
        // Nothing under: only what is held exists.
        assert!(fluxsim_kustomize::vfs::Vfs::memory()
            .read(&root.join("app/in.yaml"))
            .is_err());
        // Unconfined, the same read goes through (a plain kustomize build).
        assert_eq!(
            fluxsim_kustomize::vfs::Vfs::disk().read(&escape).unwrap(),
            b"token"
        );
    }
}
