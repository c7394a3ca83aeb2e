//! `render --out DIR`: one YAML file per rendered Kustomization and a `SHA256SUMS`, put in
//! place whole or not at all, in a folder that fluxsim wrote or that holds nothing.
//!
//! The output folder is often named by a CI script or by hand next to the repository, so a
//! mistake (`--out .`, `--out ~`) must never cost the user a file: fluxsim replaces a folder
//! only when every file in it is one that an earlier `--out` listed in its marker file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::model::{
    is_release, is_resourceset_entry, ClusterRender, KustomizationRender, RepoRender,
};
use crate::report::escape::path_segment;

fluxsim_core::message_error! {
    /// Why `--out` refuses a folder, in words (`OutError::Refused` names the folder).
    pub struct Refusal;
}

/// The marker fluxsim writes into every output folder: [`MARKER_HEADER`], then one line per
/// file it wrote there: its SHA-256, its size in bytes and its path under the folder.
pub const MARKER: &str = ".fluxsim-output";
/// The marker's first line: who wrote the folder, and the format of the lines that follow.
const MARKER_HEADER: &str = "fluxsim render --out, marker format 2: fluxsim wrote the files \
     below (SHA-256, bytes, path) and removes only them";
/// The first line of the markers fluxsim wrote before format 2 (paths only).
const MARKER_HEADER_1: &str =
    "fluxsim render --out: fluxsim wrote this folder and replaces it whole; its files:";
/// Names of the folders fluxsim makes beside DIR while it writes (then the process id).
const STAGING_PREFIX: &str = ".fluxsim-out-";
const ASIDE_PREFIX: &str = ".fluxsim-old-";

/// Why `--out` was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum OutError {
    /// DIR holds something fluxsim did not write, or is the repository.
    #[error("refusing to write `{dir}`: {why}")]
    Refused { dir: PathBuf, why: String },
    /// The file system said no.
    #[error("writing `{path}`: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> OutError + '_ {
    move |source| OutError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One file of the output: its path under DIR, its bytes and their SHA-256.
#[derive(Debug)]
pub struct OutFile<'a> {
    pub rel: String,
    pub bytes: std::borrow::Cow<'a, str>,
    pub sha256: std::borrow::Cow<'a, str>,
}

/// An entry of the render that `--out` could not write (its name cannot be a file name on
/// this system), and why; the other entries are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `<cluster>/<namespace>/<name>` of the entry, as reports name it.
    pub entry: String,
    /// Why, in words.
    pub why: String,
}

/// The longest file or folder name most file systems take (`NAME_MAX`), in bytes.
const NAME_MAX: usize = 255;

/// How many synthetic entries deep (a ResourceSet's entry's HelmRelease ...) a path is
/// followed up to its Kustomization.
const MAX_ENTRY_DEPTH: usize = 64;

/// One segment of a path from a part of an entry's id: the name the repository declares,
/// as [`path_segment`] writes it (`/` as `%2F`, `..` as `%2E%2E`, ...).
fn part_segment(part: &str) -> String {
    path_segment(&fluxsim_core::flux::id_unsegment(part)).into_owned()
}

/// The path under DIR of entry `k` of cluster `c`: `<cluster>/<namespace>/<name>.yaml`,
/// where a declared Kustomization's name is one segment (a `/` in it is `%2F`, leading
/// too) and a synthetic entry's is its parent's path, then a folder per part of what
/// follows (`rset/<namespace>/<name>`, `helm/<namespace>/<name>`).
#[must_use]
pub fn entry_path(c: &ClusterRender, k: &KustomizationRender) -> String {
    format!(
        "{}/{}/{}.yaml",
        path_segment(&c.name),
        part_segment(&k.kustomization.id.namespace),
        name_path(c, k, 0)
    )
}

/// The name part of [`entry_path`].
fn name_path(c: &ClusterRender, k: &KustomizationRender, depth: usize) -> String {
    let name = &k.kustomization.id.name;
    if !is_resourceset_entry(k) && !is_release(k) {
        return part_segment(name);
    }
    let parent = k
        .parent
        .as_ref()
        .filter(|_| depth < MAX_ENTRY_DEPTH)
        .and_then(|p| c.kustomizations.iter().find(|x| &x.kustomization.id == p));
    // The parts after the parent's name hold no `/` of their own (`flux::entry_part`).
    let (head, rest) =
        match parent.and_then(|p| Some((p, name.strip_prefix(&p.kustomization.id.name)?))) {
            Some((p, rest)) => (Some(name_path(c, p, depth + 1)), rest),
            None => (None, name.as_str()),
        };
    head.into_iter()
        .chain(rest.split('/').filter(|p| !p.is_empty()).map(part_segment))
        .collect::<Vec<_>>()
        .join("/")
}

/// Why `rel` (made by [`entry_path`]) cannot be written, if it cannot: a part longer than
/// the file system takes, or not a plain relative path.
fn unwritable(rel: &str) -> Option<String> {
    if let Some(long) = rel.split('/').find(|p| p.len() > NAME_MAX) {
        return Some(format!(
            "its file name would be {} bytes, more than the {NAME_MAX} a file system takes",
            long.len()
        ));
    }
    check_rel(rel).err().map(|e| {
        format!(
            "`{}` is not a plain relative file name{e}",
            rel.escape_debug()
        )
    })
}

/// The render's files: `<cluster>/<namespace>/<name>.yaml` per rendered entry (see
/// [`entry_path`]), as `present` shows them (Secrets masked unless shown), and the entries
/// whose name cannot be a file name (each skipped alone). A file's digest is that of its
/// bytes, so `sha256sum -c` accepts `SHA256SUMS`; it is the artifact's own when nothing in
/// it is masked or left out.
#[must_use]
pub fn artifact_files<'a>(
    r: &'a RepoRender,
    present: &crate::mask::Presentation,
) -> (Vec<OutFile<'a>>, Vec<Skipped>) {
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for c in &r.clusters {
        for k in &c.kustomizations {
            let Some(a) = k.artifact.as_ref() else {
                continue;
            };
            let id = &k.kustomization.id;
            let rel = entry_path(c, k);
            if let Some(why) = unwritable(&rel) {
                skipped.push(Skipped {
                    entry: format!("{}/{id}", c.name),
                    why,
                });
                continue;
            }
            let bytes = present.artifact_text(a);
            let sha256 = match &bytes {
                std::borrow::Cow::Borrowed(_) => std::borrow::Cow::Borrowed(a.sha256.as_str()),
                std::borrow::Cow::Owned(t) => {
                    std::borrow::Cow::Owned(crate::artifact::sha256_hex(t.as_bytes()))
                }
            };
            files.push(OutFile { rel, bytes, sha256 });
        }
    }
    (files, skipped)
}

/// Writes the render's files under DIR (see [`write_files`]); the entries it skipped, each
/// for its name (see [`artifact_files`]).
pub fn write_out(
    r: &RepoRender,
    dir: &Path,
    source_root: &Path,
    present: &crate::mask::Presentation,
) -> Result<Vec<Skipped>, OutError> {
    let (files, skipped) = artifact_files(r, present);
    write_files(&files, dir, source_root)?;
    Ok(skipped)
}

/// Writes `files`, a `DIR/SHA256SUMS` that `sha256sum -c` accepts and the marker into a
/// staging folder beside DIR, then moves it into place. DIR is replaced only when it is
/// absent, empty, or provably fluxsim's (see [`check_owned`]); it may not be `source_root`
/// or a folder above it.
pub fn write_files(files: &[OutFile<'_>], dir: &Path, source_root: &Path) -> Result<(), OutError> {
    let refuse = |why: String| OutError::Refused {
        dir: dir.to_path_buf(),
        why,
    };
    // `.`, `..` and `a/..` have no last component to name: their absolute form has.
    let dir_abs = if std::fs::symlink_metadata(dir).is_ok_and(|m| !m.is_symlink()) {
        std::fs::canonicalize(dir).map_err(io_at(dir))?
    } else {
        std::path::absolute(dir).map_err(io_at(dir))?
    };
    let (Some(parent), Some(_)) = (dir_abs.parent(), dir_abs.file_name()) else {
        return Err(refuse("it does not name a folder".into()));
    };
    // A file name that is not a plain relative path (a Kustomization named `../../x`, which
    // the API server would refuse) would be written outside DIR.
    if let Some(f) = files.iter().find(|f| check_rel(&f.rel).is_err()) {
        return Err(refuse(format!(
            "`{}` is not a plain relative file name{}",
            f.rel.escape_debug(),
            check_rel(&f.rel)
                .err()
                .map(String::from)
                .unwrap_or_default()
        )));
    }
    std::fs::create_dir_all(parent).map_err(io_at(parent))?;
    let dir = dir_abs.as_path();
    if let (Ok(root), Ok(parent_abs)) = (
        std::fs::canonicalize(source_root),
        std::fs::canonicalize(parent),
    ) {
        if root.starts_with(parent_abs.join(dir.file_name().unwrap_or_default())) {
            return Err(refuse(format!(
                "the repository being rendered (`{}`) is in it",
                source_root.display()
            )));
        }
    }
    let old = check_replaceable(dir).map_err(|e| refuse(e.into()))?;

    for prefix in [STAGING_PREFIX, ASIDE_PREFIX] {
        crate::scratch::sweep_stale(parent, prefix, &|stale| {
            // What is not provably fluxsim's is left where it is.
            if let Ok(listed) = check_owned(stale, Whole::No) {
                let _ = remove_owned(stale, &listed);
            }
        });
    }
    let own = |prefix: &str| {
        tempfile::Builder::new()
            .prefix(&format!("{prefix}{}-", std::process::id()))
            .tempdir_in(parent)
            .map(tempfile::TempDir::keep)
            .map_err(io_at(parent))
    };
    let staging = own(STAGING_PREFIX)?;
    crate::scratch::hold(&staging);
    let written = write_staging(files, &staging);
    let result = written.and_then(|()| swap_into_place(&staging, dir, old.as_ref(), &own));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    crate::scratch::release(&staging);
    result
}

/// One file a marker lists.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    sha256: String,
    size: u64,
}

/// The marker's text for `listed` (path to file).
fn marker_text(listed: &BTreeMap<String, Listed>) -> String {
    listed
        .iter()
        .fold(format!("{MARKER_HEADER}\n"), |mut m, (rel, f)| {
            let _ = writeln!(m, "{} {} {rel}", f.sha256, f.size);
            m
        })
}

/// Writes the output into `staging`: the marker first, listing every file about to be
/// written (so that a run killed half-way leaves a folder the next run can prove its own),
/// then the files.
fn write_staging(files: &[OutFile<'_>], staging: &Path) -> Result<(), OutError> {
    let write = |rel: &str, bytes: &[u8]| {
        let path = staging.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io_at(p))?;
        }
        std::fs::write(&path, bytes).map_err(io_at(&path))
    };
    let mut sums = String::new();
    let mut listed = BTreeMap::new();
    for f in files {
        let _ = writeln!(sums, "{}  {}", f.sha256, f.rel);
        listed.insert(
            f.rel.clone(),
            Listed {
                sha256: f.sha256.to_string(),
                size: f.bytes.len() as u64,
            },
        );
    }
    listed.insert(
        "SHA256SUMS".to_string(),
        Listed {
            sha256: crate::artifact::sha256_hex(sums.as_bytes()),
            size: sums.len() as u64,
        },
    );
    write(MARKER, marker_text(&listed).as_bytes())?;
    for f in files {
        write(&f.rel, f.bytes.as_bytes())?;
    }
    write("SHA256SUMS", sums.as_bytes())
}

/// Moves an existing DIR aside, the staging folder into its place, then removes the old
/// output (`old`: the files its marker lists); a signal waits until the two moves are done.
fn swap_into_place(
    staging: &Path,
    dir: &Path,
    old: Option<&BTreeMap<String, Listed>>,
    own: &dyn Fn(&str) -> Result<PathBuf, OutError>,
) -> Result<(), OutError> {
    let aside = if std::fs::symlink_metadata(dir).is_ok() {
        let aside = own(ASIDE_PREFIX)?;
        std::fs::remove_dir(&aside).map_err(io_at(&aside))?;
        Some(aside)
    } else {
        None
    };
    crate::scratch::uninterrupted(|| {
        if let Some(aside) = &aside {
            std::fs::rename(dir, aside).map_err(io_at(dir))?;
            crate::scratch::hold(aside);
        }
        std::fs::rename(staging, dir).map_err(io_at(dir))
    })?;
    if let Some(aside) = aside {
        let removed = remove_owned(&aside, old.unwrap_or(&BTreeMap::new()));
        crate::scratch::release(&aside);
        removed.map_err(io_at(&aside))?;
    }
    Ok(())
}

/// The files DIR's marker lists when DIR may be replaced: it does not exist (`None`), or is
/// a real folder (not a symbolic link) that is empty or provably fluxsim's whole output
/// ([`check_owned`]).
fn check_replaceable(dir: &Path) -> Result<Option<BTreeMap<String, Listed>>, Refusal> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string().into()),
    };
    if meta.file_type().is_symlink() {
        return Err("it is a symbolic link".into());
    }
    if !meta.is_dir() {
        return Err("it is not a folder".into());
    }
    if std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .next()
        .is_none()
    {
        return Ok(Some(BTreeMap::new()));
    }
    check_owned(dir, Whole::Yes).map(Some)
}

/// Whether a folder must hold every byte its marker lists: an output put in place does; a
/// staging folder a killed run left may miss files or have the last one cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whole {
    Yes,
    No,
}

/// The files `dir`'s marker lists, when `dir` is provably what fluxsim wrote: its marker
/// reads (format 2), lists only plain relative paths, and every entry of `dir` is the marker,
/// a listed file with the size and digest listed (or, unless `whole`, a shorter start of
/// it), or a folder on the way to one; no entry is a symbolic link; and git tracks nothing
/// in it (a folder of a repository is never fluxsim's to remove, whatever its marker says).
/// Otherwise why not, in words that follow "refusing to write `DIR`: ".
fn check_owned(dir: &Path, whole: Whole) -> Result<BTreeMap<String, Listed>, Refusal> {
    // First, so that nothing of a repository's folder is even read.
    match crate::source::git::tracks_anything_in(dir) {
        Ok(false) => {}
        Ok(true) => {
            return Err(
                "git tracks files in it: it is a folder of a repository, not one fluxsim wrote"
                    .into(),
            )
        }
        Err(e) => {
            return Err(format!(
                "it is in a git work tree and git could not say whether it tracks files in it: \
                 {e}"
            )
            .into())
        }
    }
    let marker_path = dir.join(MARKER);
    match std::fs::symlink_metadata(&marker_path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(format!("its `{MARKER}` is not a plain file").into()),
        Err(_) => {
            return Err(format!(
                "it is not empty and fluxsim did not write it (it has no `{MARKER}`)"
            )
            .into())
        }
    }
    let text = std::fs::read_to_string(&marker_path)
        .map_err(|e| format!("its `{MARKER}` cannot be read: {e}"))?;
    let listed = parse_marker(&text).map_err(|e| format!("its `{MARKER}` {e}"))?;
    let folders: BTreeSet<&str> = listed
        .keys()
        .flat_map(|f| f.match_indices('/').map(|(i, _)| &f[..i]))
        .collect();
    let mut entries = Vec::new();
    list_entries(dir, dir, &mut entries).map_err(|e| e.to_string())?;
    for (rel, kind) in &entries {
        match kind {
            Entry::File if rel == MARKER => {}
            Entry::File => {
                let Some(want) = listed.get(rel) else {
                    return Err(format!("it holds `{rel}`, which fluxsim did not write").into());
                };
                check_file(&dir.join(rel), want, whole).map_err(|why| format!("`{rel}` {why}"))?;
            }
            Entry::Folder if folders.contains(rel.as_str()) => {}
            Entry::Folder => {
                return Err(format!("it holds `{rel}/`, which fluxsim did not write").into());
            }
            Entry::Other => {
                return Err(format!(
                    "it holds `{rel}`, a symbolic link or special file, which fluxsim never \
                     writes"
                )
                .into());
            }
        }
    }
    Ok(listed)
}

/// Whether the file at `path` is the one the marker lists (`want`): its size and digest, or
/// (unless `whole`) a shorter start of it.
fn check_file(path: &Path, want: &Listed, whole: Whole) -> Result<(), Refusal> {
    let size = std::fs::symlink_metadata(path)
        .map_err(|e| e.to_string())?
        .len();
    if whole == Whole::No && size < want.size {
        return Ok(());
    }
    if size != want.size {
        return Err(format!(
            "has {size} bytes, not the {} fluxsim wrote: it was changed since",
            want.size
        )
        .into());
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if crate::artifact::sha256_hex(&bytes) != want.sha256 {
        return Err("is not the file fluxsim wrote: it was changed since".into());
    }
    Ok(())
}

/// The files a marker lists, by path; why the text is not a marker fluxsim writes.
fn parse_marker(text: &str) -> Result<BTreeMap<String, Listed>, Refusal> {
    let Some(body) = text.strip_suffix('\n') else {
        return Err("is cut short".into());
    };
    let mut lines = body.split('\n');
    match lines.next() {
        Some(MARKER_HEADER) => {}
        Some(MARKER_HEADER_1) => {
            return Err(
                "was written by an earlier fluxsim (marker format 1, which lists no digests): \
                 remove the folder by hand if it is yours"
                    .into(),
            )
        }
        _ => return Err("is not one fluxsim wrote".into()),
    }
    let mut listed = BTreeMap::new();
    for line in lines {
        let bad = |why: &str| {
            Refusal(format!(
                "has a line that is not `SHA256 BYTES PATH` ({why}): `{}`",
                line.escape_debug()
            ))
        };
        let mut fields = line.splitn(3, ' ');
        let (Some(sha256), Some(size), Some(rel)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(bad("too few fields"));
        };
        let hex = sha256.len() == 64
            && sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(bad("not a SHA-256"));
        }
        let size = size.parse::<u64>().map_err(|_| bad("not a size"))?;
        check_rel(rel).map_err(|why| bad(&why))?;
        if rel == MARKER {
            return Err(bad("the marker itself"));
        }
        let f = Listed {
            sha256: sha256.to_string(),
            size,
        };
        if listed.insert(rel.to_string(), f).is_some() {
            return Err(bad("listed twice"));
        }
    }
    Ok(listed)
}

/// `Ok` when `rel` is a plain relative path, `/`-separated: no empty, `.` or `..` part, no
/// leading `/`, no `\`, no control character (a line break would end a marker line).
fn check_rel(rel: &str) -> Result<(), Refusal> {
    if rel.chars().any(char::is_control) {
        return Err(": a control character".into());
    }
    if rel.contains('\\') {
        return Err(": a `\\`".into());
    }
    if rel.split('/').any(|p| matches!(p, "" | "." | "..")) {
        return Err(": an empty, `.` or `..` part".into());
    }
    Ok(())
}

/// Removes from `dir` the files `listed` names, then the folders on their way, the marker
/// and `dir` itself: only ever what fluxsim wrote. Anything else found there (put in after
/// the check) stays, and `dir` with it: the removal of a folder that is not empty fails.
fn remove_owned(dir: &Path, listed: &BTreeMap<String, Listed>) -> io::Result<()> {
    let gone_ok = |r: io::Result<()>| match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    for rel in listed.keys() {
        gone_ok(std::fs::remove_file(dir.join(rel)))?;
    }
    let mut folders: Vec<&str> = listed
        .keys()
        .flat_map(|f| f.match_indices('/').map(|(i, _)| &f[..i]))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    // Deepest first: a folder is removed after what is in it.
    folders.sort_by_key(|f| std::cmp::Reverse(f.matches('/').count()));
    for f in folders {
        gone_ok(std::fs::remove_dir(dir.join(f)))?;
    }
    gone_ok(std::fs::remove_file(dir.join(MARKER)))?;
    std::fs::remove_dir(dir)
}

#[derive(Debug, PartialEq)]
enum Entry {
    File,
    Folder,
    /// A symbolic link, a socket, a device: never something `--out` wrote.
    Other,
}

/// Every entry under `dir`, `/`-separated relative to `top`, without following links.
fn list_entries(top: &Path, dir: &Path, out: &mut Vec<(String, Entry)>) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = path
            .strip_prefix(top)
            .map_err(io::Error::other)?
            .to_string_lossy()
            .replace('\\', "/");
        let t = entry.file_type()?;
        if t.is_dir() {
            out.push((rel, Entry::Folder));
            list_entries(top, &path, out)?;
        } else if t.is_file() {
            out.push((rel, Entry::File));
        } else {
            out.push((rel, Entry::Other));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> Vec<String> {
        let mut e = Vec::new();
        list_entries(dir, dir, &mut e).unwrap();
        let mut names: Vec<String> = e.into_iter().map(|(n, _)| n).collect();
        names.sort();
        names
    }

    #[test]
    fn out_refuses_a_folder_with_a_sha256sums_that_fluxsim_did_not_write() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("release");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("SHA256SUMS"), "abc  app.tar.gz\n").unwrap();
        std::fs::write(dir.join("app.tar.gz"), "x").unwrap();
        let e = write_files(&[], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("fluxsim did not write it"), "{e}");
        assert_eq!(files(&dir), ["SHA256SUMS", "app.tar.gz"]);
    }

    #[test]
    fn out_refuses_its_own_folder_once_a_foreign_file_is_added() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        write_files(&[], &dir, Path::new("/nonexistent")).unwrap();
        assert_eq!(files(&dir), [MARKER, "SHA256SUMS"]);
        std::fs::create_dir(dir.join("notes")).unwrap();
        std::fs::write(dir.join("notes/todo.txt"), "mine").unwrap();
        let e = write_files(&[], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("`notes"), "{e}");
        assert!(dir.join("notes/todo.txt").is_file());
    }

    #[test]
    fn out_replaces_what_it_wrote_and_leaves_no_staging_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        write_files(&[], &dir, Path::new("/nonexistent")).unwrap();
        write_files(&[], &dir, Path::new("/nonexistent")).unwrap();
        assert_eq!(
            files(tmp.path()),
            ["out", "out/.fluxsim-output", "out/SHA256SUMS"]
        );
    }

    #[test]
    fn out_refuses_a_symbolic_link_and_the_repository_and_its_parents() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        for dir in [repo.clone(), tmp.path().to_path_buf()] {
            let e = write_files(&[], &dir, &repo).unwrap_err();
            assert!(e.to_string().contains("repository being rendered"), "{e}");
        }
        #[cfg(unix)]
        {
            let target = tmp.path().join("target");
            std::fs::create_dir(&target).unwrap();
            std::os::unix::fs::symlink(&target, tmp.path().join("link")).unwrap();
            let e = write_files(&[], &tmp.path().join("link"), &repo).unwrap_err();
            assert!(e.to_string().contains("symbolic link"), "{e}");
        }
    }

    /// Writes `files` (path, content) into `dir` with a marker that lists them as fluxsim
    /// lists what it writes.
    fn plant(dir: &Path, files: &[(&str, &str)]) {
        let mut listed = BTreeMap::new();
        for (rel, text) in files {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
            listed.insert(
                (*rel).to_string(),
                Listed {
                    sha256: crate::artifact::sha256_hex(text.as_bytes()),
                    size: text.len() as u64,
                },
            );
        }
        std::fs::write(dir.join(MARKER), marker_text(&listed)).unwrap();
    }

    fn out_file(rel: &str, text: &'static str) -> OutFile<'static> {
        OutFile {
            rel: rel.to_string(),
            bytes: text.into(),
            sha256: crate::artifact::sha256_hex(text.as_bytes()).into(),
        }
    }

    #[test]
    fn out_marker_lists_each_file_with_its_digest_and_size() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let f = out_file("dev/flux-system/apps.yaml", "kind: A\n");
        write_files(&[f], &dir, Path::new("/nonexistent")).unwrap();
        let marker = std::fs::read_to_string(dir.join(MARKER)).unwrap();
        let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
        let apps = crate::artifact::sha256_hex(b"kind: A\n");
        assert_eq!(
            marker,
            format!(
                "{MARKER_HEADER}\n{} {} SHA256SUMS\n{apps} 8 dev/flux-system/apps.yaml\n",
                crate::artifact::sha256_hex(sums.as_bytes()),
                sums.len()
            )
        );
        assert_eq!(parse_marker(&marker).unwrap().len(), 2);
    }

    #[test]
    fn out_sweeps_the_staging_folder_a_killed_run_left() {
        let tmp = tempfile::tempdir().unwrap();
        // A staging folder named after a process that cannot exist, marked as fluxsim's: one
        // file written, the next cut short, the last not written yet.
        let stale = tmp.path().join(".fluxsim-out-4194305-abc");
        std::fs::create_dir(&stale).unwrap();
        plant(
            &stale,
            &[
                ("dev/flux-system/apps.yaml", "kind: A\n"),
                ("dev/flux-system/infra.yaml", "kind: B\n"),
                ("SHA256SUMS", "sums\n"),
            ],
        );
        std::fs::write(stale.join("dev/flux-system/infra.yaml"), "ki").unwrap();
        std::fs::remove_file(stale.join("SHA256SUMS")).unwrap();
        // A folder of the same shape without the marker is not fluxsim's.
        let foreign = tmp.path().join(".fluxsim-old-4194305-abc");
        std::fs::create_dir(&foreign).unwrap();
        write_files(&[], &tmp.path().join("out"), Path::new("/nonexistent")).unwrap();
        assert!(!stale.exists());
        assert!(foreign.exists());
    }

    #[test]
    fn out_refuses_a_marker_listing_a_path_out_of_its_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let precious = tmp.path().join("x");
        std::fs::write(&precious, "precious").unwrap();
        let digest = crate::artifact::sha256_hex(b"precious");
        let hostile = format!("{MARKER_HEADER}\n{digest} 8 ../x\n");
        // As the output folder to replace.
        let dir = tmp.path().join("out");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(MARKER), &hostile).unwrap();
        let e = write_files(&[], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("`..` part"), "{e}");
        assert!(e.to_string().contains(&dir.display().to_string()), "{e}");
        // As a staging folder a dead run left.
        let stale = tmp.path().join(".fluxsim-out-4194305-abc");
        std::fs::create_dir(&stale).unwrap();
        std::fs::write(stale.join(MARKER), &hostile).unwrap();
        write_files(&[], &tmp.path().join("other"), Path::new("/nonexistent")).unwrap();
        assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious");
        assert!(stale.join(MARKER).is_file());
    }

    #[test]
    fn out_refuses_a_marked_folder_holding_a_file_its_marker_does_not_list() {
        let tmp = tempfile::tempdir().unwrap();
        for dir in [
            tmp.path().join("out"),
            tmp.path().join(".fluxsim-out-4194305-abc"),
        ] {
            std::fs::create_dir(&dir).unwrap();
            plant(&dir, &[("dev/flux-system/apps.yaml", "kind: A\n")]);
            std::fs::write(dir.join("dev/flux-system/notes.md"), "mine").unwrap();
        }
        let dir = tmp.path().join("out");
        let e = write_files(&[], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(
            e.to_string()
                .contains("holds `dev/flux-system/notes.md`, which fluxsim did not write"),
            "{e}"
        );
        write_files(&[], &tmp.path().join("other"), Path::new("/nonexistent")).unwrap();
        for dir in [
            tmp.path().join("out"),
            tmp.path().join(".fluxsim-out-4194305-abc"),
        ] {
            assert!(dir.join("dev/flux-system/notes.md").is_file(), "{dir:?}");
            assert!(dir.join("dev/flux-system/apps.yaml").is_file(), "{dir:?}");
        }
    }

    #[test]
    fn out_refuses_a_file_changed_since_fluxsim_wrote_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let f = out_file("dev/flux-system/apps.yaml", "kind: A\n");
        write_files(&[f], &dir, Path::new("/nonexistent")).unwrap();
        std::fs::write(dir.join("dev/flux-system/apps.yaml"), "kind: B\n").unwrap();
        let e = write_files(&[], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("changed since"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.join("dev/flux-system/apps.yaml")).unwrap(),
            "kind: B\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn out_refuses_a_marked_folder_holding_a_symbolic_link() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("apps.yaml"), "kind: A\n").unwrap();
        for dir in [
            tmp.path().join("out"),
            tmp.path().join(".fluxsim-out-4194305-abc"),
        ] {
            std::fs::create_dir(&dir).unwrap();
            // The marker lists the file the link's folder holds.
            plant(&dir, &[("dev/apps.yaml", "kind: A\n")]);
            std::fs::remove_dir_all(dir.join("dev")).unwrap();
            std::os::unix::fs::symlink(&elsewhere, dir.join("dev")).unwrap();
        }
        let e = write_files(&[], &tmp.path().join("out"), Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        write_files(&[], &tmp.path().join("other"), Path::new("/nonexistent")).unwrap();
        assert!(elsewhere.join("apps.yaml").is_file());
        assert!(tmp.path().join(".fluxsim-out-4194305-abc/dev").is_symlink());
    }

    #[test]
    fn out_refuses_a_marker_of_an_earlier_format_and_one_cut_short() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("SHA256SUMS"), "").unwrap();
        std::fs::write(dir.join(MARKER), format!("{MARKER_HEADER_1}\nSHA256SUMS\n")).unwrap();
        let e = write_files(&[], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("marker format 1"), "{e}");
        std::fs::write(dir.join(MARKER), MARKER_HEADER).unwrap();
        let e = write_files(&[], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(e.to_string().contains("cut short"), "{e}");
        assert!(dir.join("SHA256SUMS").is_file());
    }

    #[test]
    fn out_refuses_a_file_name_that_leaves_its_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/out");
        // A Kustomization named `../../../escaped` (which the API server would refuse).
        let f = out_file("dev/flux-system/../../../escaped.yaml", "kind: A\n");
        let e = write_files(&[f], &dir, Path::new("/nonexistent")).unwrap_err();
        assert!(
            e.to_string().contains("not a plain relative file name"),
            "{e}"
        );
        assert!(!tmp.path().join("escaped.yaml").exists());
        assert!(!tmp.path().join("a/escaped.yaml").exists());
    }
}
