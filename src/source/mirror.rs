//! Mirrors: copies of a work tree kept in the cache folder between runs and brought up to
//! date in place, so that a run writes only the files that changed since the last one.
//!
//! Making a copy costs one file creation per file, which is most of a warm run's time on a
//! large repository; reading a file's metadata costs little. So each mirrored file is recorded
//! with the stamp (size, times, inode, mode) of the user's file it was copied from, the stamp
//! of the copy, and its SHA-256:
//! - a user file whose stamp is unchanged is not read again, as git's index does; a stamp
//!   less than [`RACY_NS`] older than the scan that recorded it is not trusted (a change within
//!   the file system's clock tick would not show in it), as git treats "racily clean" entries;
//! - a copy whose stamp is not the one recorded (changed, removed, replaced) is written again,
//!   and a folder whose stamp changed is listed and cleared of what the mirror does not hold:
//!   a mirror altered outside fluxsim is repaired, never trusted;
//! - the record carries the SHA-256 of its body, like the build store's entries: a record that
//!   does not match throws the mirror away, and it is made again.
//!
//! One run uses a mirror at a time: it is claimed by renaming its folder to a name of the
//! run's own, and given back by renaming it again, so two runs never share one (the second
//! makes a copy of its own). A claim left behind by a run that died is removed by a later run
//! once that process is gone.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tempfile::TempDir;

use super::{sha256_hex, Content, Digests, Plan, SourceError, SourceOptions};

const MAGIC: &str = "fluxsim-tree-mirror v1";

/// How much older than the scan that recorded it a stamp must be to be trusted.
pub(super) const RACY_NS: i64 = 2_000_000_000;

/// What the file system says about a file or folder: when any of it differs, so may the
/// content. `ctime` and `ino` cannot be set back by a program, so a file changed in any way
/// shows a new stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    size: u64,
    mtime: i64,
    ctime: i64,
    ino: u64,
    dev: u64,
    mode: u32,
}

impl Stamp {
    /// The stamp of `meta` (`None` where the platform has no inode numbers and change times).
    #[cfg(unix)]
    #[allow(clippy::unnecessary_wraps, reason = "`None` on other platforms")]
    pub(crate) fn of(meta: &fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        let ns = |s: i64, n: i64| s.saturating_mul(1_000_000_000).saturating_add(n);
        Some(Stamp {
            size: meta.size(),
            mtime: ns(meta.mtime(), meta.mtime_nsec()),
            ctime: ns(meta.ctime(), meta.ctime_nsec()),
            ino: meta.ino(),
            dev: meta.dev(),
            mode: meta.mode(),
        })
    }

    /// The stamp of `meta` (`None` where the platform has no inode numbers and change times).
    #[cfg(not(unix))]
    pub(crate) fn of(_meta: &fs::Metadata) -> Option<Stamp> {
        None
    }

    /// Too close to `scanned` (or after it) for an unchanged stamp to prove unchanged content.
    fn racy(&self, scanned: i64) -> bool {
        self.mtime.max(self.ctime) >= scanned.saturating_sub(RACY_NS)
    }

    /// The permission bits.
    fn permissions(&self) -> u32 {
        self.mode & 0o7777
    }
}

/// Now, in nanoseconds since the epoch (the clock file stamps are read against).
pub(super) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// One mirrored file.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileRecord {
    /// The user's file when it was copied.
    user: Stamp,
    /// The content's SHA-256.
    sha256: String,
    /// The copy, as written.
    copy: Stamp,
}

/// What a mirror holds, as recorded when it was given back.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Index {
    /// When the scan that recorded the user files' stamps began (see [`Stamp::racy`]).
    scanned: i64,
    /// The files, by `/`-separated relative path.
    files: BTreeMap<String, FileRecord>,
    /// The folders (the root is the empty path), with their stamps.
    folders: BTreeMap<String, Stamp>,
}

/// Why a mirror could not be brought up to date.
pub(super) enum SyncError {
    /// A user's file could not be read: the same error a fresh copy would give.
    User(SourceError),
    /// The mirror could not be written: a fresh copy is made instead.
    Mirror,
}

impl From<io::Error> for SyncError {
    fn from(_: io::Error) -> Self {
        SyncError::Mirror
    }
}

/// A mirror claimed by this run: its folder is renamed back to the mirror's place when the
/// tree is dropped, with a record of what it holds, or removed when it was not brought up
/// to date.
#[derive(Debug)]
pub(crate) struct Claim {
    dir: Option<TempDir>,
    root: PathBuf,
    home: PathBuf,
    old: Option<Index>,
    new: Option<Index>,
}

impl Claim {
    /// Claims the mirror of `dir` read with `opts` from `cache_dir`, or starts an empty one
    /// when there is none to take (none yet, or another run holds it). `None` when the cache
    /// folder cannot be used.
    pub(super) fn take(cache_dir: &Path, dir: &Path, opts: &SourceOptions) -> Option<Claim> {
        if cfg!(not(unix)) {
            return None;
        }
        let canonical = dir.canonicalize().ok()?;
        let key = sha256_hex(
            format!(
                "{MAGIC}\0{}\0{}\0{:?}",
                canonical.display(),
                opts.include_untracked,
                opts.spec_ignore
            )
            .as_bytes(),
        );
        let trees = cache_dir.join("trees");
        fs::create_dir_all(&trees).ok()?;
        let home = trees.join(&key);
        let claim = tempfile::Builder::new()
            .prefix(&format!("{key}.{}.", std::process::id()))
            .tempdir_in(&trees)
            .ok()?;
        // Renaming a folder onto an empty one replaces it, atomically: one run wins.
        let old = if fs::rename(&home, claim.path()).is_ok() {
            read_index(claim.path())
        } else {
            remove_dead_claims(&trees, &key);
            None
        };
        let root = claim.path().join("root");
        if old.is_none() {
            // Without a sound record nothing in the folder can be trusted.
            let _ = fs::remove_dir_all(&root);
            fs::create_dir(&root).ok()?;
        }
        Some(Claim {
            dir: Some(claim),
            root,
            home,
            old,
            new: None,
        })
    }

    /// The folder the tree is in.
    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    /// Makes the mirror hold exactly what `plan` says, writing only what differs, and gives
    /// the digest of every file. `scanned` is when the user's files began to be looked at.
    pub(super) fn sync(&mut self, plan: &Plan, scanned: i64) -> Result<Digests, SyncError> {
        let old = self.old.take().unwrap_or_default();
        let want = Wanted::of(plan).ok_or(SyncError::Mirror)?;
        let mut sync = Sync {
            root: &self.root,
            old: &old,
            new: Index {
                scanned,
                ..Index::default()
            },
            touched: BTreeSet::new(),
        };
        sync.remove_unwanted(&want)?;
        let folder_stamps = sync.make_folders(&want)?;
        let digests = sync.copy_files(&want)?;
        sync.clear_folders(&want, folder_stamps)?;
        self.new = Some(sync.new);
        Ok(digests)
    }
}

/// What the mirror must hold, by `/`-separated relative path.
struct Wanted<'p> {
    /// Every folder, the root (the empty path) included.
    folders: BTreeSet<String>,
    files: BTreeMap<String, (&'p Path, &'p Content)>,
}

impl<'p> Wanted<'p> {
    /// `None` when a path is not UTF-8: the record could not name it exactly.
    fn of(plan: &'p Plan) -> Option<Wanted<'p>> {
        let utf8 = |p: &Path| p.to_str().map(|s| s.replace('\\', "/"));
        let mut folders = BTreeSet::from([String::new()]);
        let mut files = BTreeMap::new();
        for folder in &plan.folders {
            folders.insert(utf8(folder)?);
        }
        for (path, content, _) in &plan.copies {
            for a in path.ancestors().skip(1) {
                folders.insert(utf8(a)?);
            }
            files.insert(utf8(path)?, (path.as_path(), content));
        }
        Some(Wanted { folders, files })
    }

    fn holds(&self, rel: &str) -> bool {
        self.files.contains_key(rel) || self.folders.contains(rel)
    }
}

/// One bringing up to date of a mirror.
struct Sync<'a> {
    root: &'a Path,
    old: &'a Index,
    new: Index,
    /// Folders whose entries this run changed: their stamps are read again at the end.
    touched: BTreeSet<String>,
}

/// The folder holding `rel` (the empty path for the root).
fn parent(rel: &str) -> String {
    rel.rsplit_once('/').map_or("", |(p, _)| p).to_string()
}

impl Sync<'_> {
    /// Removes the folders (with what is in them) and the files the mirror no longer holds.
    fn remove_unwanted(&mut self, want: &Wanted<'_>) -> io::Result<()> {
        let folders = self
            .old
            .folders
            .keys()
            .filter(|f| !want.folders.contains(*f));
        let files = self
            .old
            .files
            .keys()
            .filter(|f| !want.files.contains_key(*f));
        for rel in folders.chain(files) {
            remove_any(&self.root.join(rel))?;
            self.touched.insert(parent(rel));
        }
        Ok(())
    }

    /// Makes the folders that are missing, parents first, and reads every folder's stamp
    /// (`None` for one made now).
    fn make_folders<'w>(
        &mut self,
        want: &'w Wanted<'_>,
    ) -> io::Result<BTreeMap<&'w str, Option<Stamp>>> {
        let mut stamps = BTreeMap::new();
        for f in &want.folders {
            let p = self.root.join(f);
            let existing = match fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => Stamp::of(&m),
                Ok(_) => {
                    remove_any(&p)?;
                    None
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
            if existing.is_none() {
                fs::create_dir(&p)?;
                self.touched.insert(parent(f));
                self.touched.insert(f.clone());
            }
            stamps.insert(f.as_str(), existing);
        }
        Ok(stamps)
    }

    /// Copies each file whose copy is missing, changed or not known to match the user's.
    fn copy_files(&mut self, want: &Wanted<'_>) -> Result<Digests, SyncError> {
        let mut digests = Digests::new();
        for (rel, (path, content)) in &want.files {
            let Content::WorkTree(abs, Some(user)) = content else {
                return Err(SyncError::Mirror);
            };
            let target = self.root.join(path);
            let copy_now = match fs::symlink_metadata(&target) {
                Ok(m) if m.is_file() => Stamp::of(&m),
                Ok(_) => {
                    remove_any(&target)?;
                    None
                }
                Err(_) => None,
            };
            let prev = self.old.files.get(rel).filter(|r| Some(r.copy) == copy_now);
            if let Some(r) = prev.filter(|r| r.user == *user && !user.racy(self.old.scanned)) {
                digests.insert(rel.clone(), r.sha256.clone());
                self.new.files.insert(rel.clone(), r.clone());
                continue;
            }
            let bytes = fs::read(abs).map_err(|source| {
                SyncError::User(SourceError::Read {
                    path: abs.clone(),
                    source,
                })
            })?;
            let sha256 = sha256_hex(&bytes);
            let same =
                prev.filter(|r| r.sha256 == sha256 && r.copy.permissions() == user.permissions());
            let copy = if let Some(r) = same {
                r.copy
            } else {
                if copy_now.is_none() {
                    self.touched.insert(parent(rel));
                }
                // As `fs::copy` makes a fresh copy: the bytes, and the user's permissions.
                fs::write(&target, &bytes)?;
                set_permissions(&target, user.permissions())?;
                Stamp::of(&fs::symlink_metadata(&target)?).ok_or(SyncError::Mirror)?
            };
            digests.insert(rel.clone(), sha256.clone());
            let record = FileRecord {
                user: *user,
                sha256,
                copy,
            };
            self.new.files.insert(rel.clone(), record);
        }
        Ok(digests)
    }

    /// Lists each folder changed since it was recorded (by this run or by someone else),
    /// removes anything the mirror does not hold, and records every folder's stamp.
    fn clear_folders(
        &mut self,
        want: &Wanted<'_>,
        stamps: BTreeMap<&str, Option<Stamp>>,
    ) -> Result<(), SyncError> {
        for (f, stamp) in stamps {
            let unchanged = !self.touched.contains(f)
                && stamp.is_some()
                && self.old.folders.get(f) == stamp.as_ref();
            let stamp = if let (true, Some(stamp)) = (unchanged, stamp) {
                stamp
            } else {
                let p = self.root.join(f);
                for entry in fs::read_dir(&p)? {
                    let entry = entry?;
                    let child = entry.file_name().to_str().map(|n| {
                        if f.is_empty() {
                            n.to_string()
                        } else {
                            format!("{f}/{n}")
                        }
                    });
                    if !child.is_some_and(|c| want.holds(&c)) {
                        remove_any(&entry.path())?;
                    }
                }
                Stamp::of(&fs::symlink_metadata(&p)?).ok_or(SyncError::Mirror)?
            };
            self.new.folders.insert(f.to_string(), stamp);
        }
        Ok(())
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let Some(dir) = self.dir.take() else {
            return;
        };
        // Not brought up to date: the folder is removed with the temporary directory.
        let Some(index) = self.new.take() else {
            return;
        };
        if write_index(dir.path(), &index).is_ok() && fs::rename(dir.path(), &self.home).is_ok() {
            let _ = dir.keep();
        }
    }
}

/// The record in `dir`, when it is sound.
fn read_index(dir: &Path) -> Option<Index> {
    let text = fs::read_to_string(dir.join("index")).ok()?;
    let (header, body) = text.split_once('\n')?;
    let (magic, sha) = header.rsplit_once(' ')?;
    if magic != MAGIC || sha != sha256_hex(body.as_bytes()) {
        return None;
    }
    serde_json::from_str(body).ok()
}

fn write_index(dir: &Path, index: &Index) -> io::Result<()> {
    let body = serde_json::to_string(index).map_err(io::Error::other)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    write!(tmp, "{MAGIC} {}\n{body}", sha256_hex(body.as_bytes()))?;
    tmp.persist(dir.join("index")).map_err(|e| e.error)?;
    Ok(())
}

/// Removes a file or a folder with everything in it; gone already is fine.
fn remove_any(path: &Path) -> io::Result<()> {
    let r = match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    };
    match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
}

#[cfg(unix)]
fn set_permissions(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_permissions(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

/// Removes the claims on `key`'s mirror left by runs whose process is gone (where the system
/// says which processes exist: `/proc`).
fn remove_dead_claims(trees: &Path, key: &str) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(trees) else {
        return;
    };
    let own = std::process::id().to_string();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(key))
            .and_then(|n| n.strip_prefix('.'))
            .and_then(|n| n.split('.').next())
        else {
            continue;
        };
        if pid != own && pid.bytes().all(|b| b.is_ascii_digit()) && !proc.join(pid).exists() {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{materialize, materialize_mirrored_at, SourceOptions, Tree};
    use super::*;
    use crate::testutil::tree;
    use std::os::unix::fs::PermissionsExt;

    const HOUR: i64 = 3600 * 1_000_000_000;

    /// Every file and folder under `root`: path, then content and permissions (files) or
    /// nothing (folders).
    fn listing(root: &Path) -> BTreeMap<String, Option<(Vec<u8>, u32)>> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Option<(Vec<u8>, u32)>>) {
            for e in fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                let meta = fs::symlink_metadata(&p).unwrap();
                if meta.is_dir() {
                    out.insert(rel, None);
                    walk(root, &p, out);
                } else {
                    let mode = meta.permissions().mode() & 0o7777;
                    out.insert(rel, Some((fs::read(&p).unwrap(), mode)));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(root, root, &mut out);
        out
    }

    /// The mirror of `dir`, checked against a fresh copy of the same directory.
    fn mirrored(dir: &Path, cache: &Path, scanned: i64) -> Tree {
        let opts = SourceOptions::default();
        let tree = materialize_mirrored_at(dir, &opts, cache, scanned).unwrap();
        let fresh = materialize(dir, &opts).unwrap();
        assert_eq!(listing(tree.root()), listing(fresh.root()));
        assert_eq!(tree.files(), fresh.files());
        assert_eq!(tree.folders(), fresh.folders());
        assert_eq!(tree.digests(), fresh.digests());
        tree
    }

    /// The mirrors and claims in `cache`.
    fn homes(cache: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(cache.join("trees"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn stamp(path: &Path) -> Stamp {
        Stamp::of(&fs::symlink_metadata(path).unwrap()).unwrap()
    }

    fn repo() -> tempfile::TempDir {
        tree(&[
            ("a.yaml", "kind: A\n"),
            ("sub/b.yaml", "kind: B\n"),
            ("sub/deep/c.yaml", "kind: C\n"),
            ("logo.png", "not copied"),
        ])
    }

    #[test]
    fn a_mirror_is_kept_and_unchanged_files_are_not_written_again() {
        let (repo, cache) = (repo(), tempfile::tempdir().unwrap());
        // Recorded as if scanned an hour from now: every stamp is old enough to trust.
        let first = mirrored(repo.path(), cache.path(), now() + HOUR);
        let before = stamp(&first.root().join("sub/b.yaml"));
        drop(first);
        assert_eq!(homes(cache.path()).len(), 1, "given back, under one name");
        let second = mirrored(repo.path(), cache.path(), now());
        assert_eq!(stamp(&second.root().join("sub/b.yaml")), before);
    }

    #[test]
    fn the_mirror_follows_edits_additions_removals_and_modes() {
        let (repo, cache) = (repo(), tempfile::tempdir().unwrap());
        let r = repo.path();
        drop(mirrored(r, cache.path(), now() + HOUR));
        fs::write(r.join("a.yaml"), "kind: Changed\n").unwrap();
        fs::remove_dir_all(r.join("sub/deep")).unwrap();
        fs::create_dir_all(r.join("new/empty")).unwrap();
        fs::write(r.join("new/d.yaml"), "kind: D\n").unwrap();
        fs::set_permissions(r.join("sub/b.yaml"), fs::Permissions::from_mode(0o755)).unwrap();
        drop(mirrored(r, cache.path(), now() + HOUR));
        // A file replaced by a folder, and a folder by a file.
        fs::remove_file(r.join("a.yaml")).unwrap();
        fs::create_dir(r.join("a.yaml")).unwrap();
        fs::write(r.join("a.yaml/e.yaml"), "kind: E\n").unwrap();
        fs::remove_dir_all(r.join("new")).unwrap();
        fs::write(r.join("new"), "kind: F\n").unwrap();
        drop(mirrored(r, cache.path(), now()));
    }

    // A change that keeps the size and puts the modification time back still changes the
    // change time, which no program can set.
    #[test]
    fn an_edit_that_keeps_size_and_modification_time_is_seen() {
        let (repo, cache) = (repo(), tempfile::tempdir().unwrap());
        let file = repo.path().join("sub/b.yaml");
        let mtime = fs::metadata(&file).unwrap().modified().unwrap();
        drop(mirrored(repo.path(), cache.path(), now() + HOUR));
        fs::write(&file, "kind: X\n").unwrap();
        fs::File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let tree = mirrored(repo.path(), cache.path(), now());
        assert_eq!(
            fs::read(tree.root().join("sub/b.yaml")).unwrap(),
            b"kind: X\n"
        );
    }

    #[test]
    fn a_mirror_altered_outside_fluxsim_is_repaired() {
        let (repo, cache) = (repo(), tempfile::tempdir().unwrap());
        drop(mirrored(repo.path(), cache.path(), now() + HOUR));
        let home = cache.path().join("trees").join(&homes(cache.path())[0]);
        let root = home.join("root");
        fs::write(root.join("a.yaml"), "kind: Tampered\n").unwrap();
        fs::remove_file(root.join("sub/b.yaml")).unwrap();
        fs::write(root.join("sub/deep/stray.yaml"), "kind: Stray\n").unwrap();
        fs::create_dir_all(root.join("stray/dir")).unwrap();
        fs::write(root.join("stray/dir/x.yaml"), "kind: Stray\n").unwrap();
        // `mirrored` checks the result against a fresh copy.
        drop(mirrored(repo.path(), cache.path(), now()));
    }

    #[test]
    fn a_corrupt_mirror_record_is_never_trusted() {
        let (repo, cache) = (repo(), tempfile::tempdir().unwrap());
        drop(mirrored(repo.path(), cache.path(), now() + HOUR));
        let home = cache.path().join("trees").join(&homes(cache.path())[0]);
        // A record that still reads, but says another digest for a file: were it believed,
        // the file (whose stamps match) would not be read and its digest would be wrong.
        let index = fs::read_to_string(home.join("index")).unwrap();
        let digest = sha256_hex(b"kind: A\n");
        assert!(index.contains(&digest));
        fs::write(home.join("index"), index.replace(&digest, &"0".repeat(64))).unwrap();
        // `mirrored` checks the digests against a fresh copy's.
        drop(mirrored(repo.path(), cache.path(), now()));
    }

    #[test]
    fn a_mirror_in_use_is_not_shared() {
        let (repo, cache) = (repo(), tempfile::tempdir().unwrap());
        drop(mirrored(repo.path(), cache.path(), now()));
        let first = mirrored(repo.path(), cache.path(), now());
        let second = mirrored(repo.path(), cache.path(), now());
        assert_ne!(first.root(), second.root());
        drop(first);
        drop(second);
        assert_eq!(homes(cache.path()).len(), 1, "{:?}", homes(cache.path()));
    }

    #[test]
    fn a_claim_left_by_a_run_that_died_is_removed() {
        let (repo, cache) = (repo(), tempfile::tempdir().unwrap());
        drop(mirrored(repo.path(), cache.path(), now()));
        let name = homes(cache.path()).remove(0);
        let trees = cache.path().join("trees");
        // No process has this id (above the kernel's maximum).
        let dead = format!("{name}.4294967295.abc");
        fs::rename(trees.join(&name), trees.join(&dead)).unwrap();
        drop(mirrored(repo.path(), cache.path(), now()));
        assert_eq!(homes(cache.path()), vec![name]);
    }

    #[test]
    fn a_cache_folder_inside_the_tree_holds_no_mirror() {
        let repo = repo();
        let cache = repo.path().join(".cache");
        fs::create_dir(&cache).unwrap();
        let tree = mirrored(repo.path(), &cache, now());
        assert!(!tree.root().starts_with(&cache));
        assert!(!cache.join("trees").exists());
    }

    #[test]
    fn a_stamp_from_the_last_seconds_before_a_scan_is_racy() {
        let s = |t: i64| Stamp {
            size: 1,
            mtime: t,
            ctime: t,
            ino: 1,
            dev: 1,
            mode: 0o100_644,
        };
        let scanned = 100 * RACY_NS;
        assert!(s(scanned).racy(scanned));
        assert!(s(scanned - RACY_NS / 2).racy(scanned));
        assert!(!s(scanned - RACY_NS - 1).racy(scanned));
    }
}
