//! `render --out DIR`: one YAML file per rendered Kustomization and a `SHA256SUMS`, put in
//! place whole or not at all, in a folder that fluxsim wrote or that holds nothing.
//!
//! The output folder is often named by a CI script or by hand next to the repository, so a
//! mistake (`--out .`, `--out ~`) must never cost the user a file: fluxsim replaces a folder
//! only when every file in it is one that an earlier `--out` listed in its marker file.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::render::RepoRender;
use crate::report::escape::{path_segment, path_segments};

/// The marker fluxsim writes into every output folder: a fixed first line, then the paths
/// of the files it wrote there, one a line.
pub const MARKER: &str = ".fluxsim-output";
const MARKER_HEADER: &str =
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

/// The render's files: `<cluster>/<namespace>/<name>.yaml` per rendered Kustomization, as
/// `present` shows them (Secrets masked unless shown). A file's digest is that of its
/// bytes, so `sha256sum -c` accepts `SHA256SUMS`; it is the artifact's own when nothing in
/// it is masked or left out.
#[must_use]
pub fn artifact_files<'a>(
    r: &'a RepoRender,
    present: &crate::report::mask::Presentation,
) -> Vec<OutFile<'a>> {
    r.clusters
        .iter()
        .flat_map(|c| {
            c.kustomizations.iter().filter_map(move |k| {
                k.artifact.as_ref().map(|a| {
                    let bytes = present.artifact_text(a);
                    let sha256 = match &bytes {
                        std::borrow::Cow::Borrowed(_) => {
                            std::borrow::Cow::Borrowed(a.sha256.as_str())
                        }
                        std::borrow::Cow::Owned(t) => {
                            std::borrow::Cow::Owned(crate::artifact::sha256_hex(t.as_bytes()))
                        }
                    };
                    // Names are the repository's: none may leave DIR (`..`). The cluster and
                    // namespace are one folder each; a name's `/` make folders (a Helm
                    // release's entry is `<kustomization>/helm/<namespace>/<name>`).
                    OutFile {
                        rel: format!(
                            "{}/{}/{}.yaml",
                            path_segment(&c.name),
                            path_segment(&k.kustomization.id.namespace),
                            path_segments(&k.kustomization.id.name)
                        ),
                        bytes,
                        sha256,
                    }
                })
            })
        })
        .collect()
}

/// Writes the render's files under DIR (see [`write_files`]).
pub fn write_out(
    r: &RepoRender,
    dir: &Path,
    source_root: &Path,
    present: &crate::report::mask::Presentation,
) -> Result<(), OutError> {
    write_files(&artifact_files(r, present), dir, source_root)
}

/// Writes `files`, a `DIR/SHA256SUMS` that `sha256sum -c` accepts and the marker into a
/// staging folder beside DIR, then moves it into place. DIR is replaced only when it is
/// absent, empty, or holds nothing but the files its marker lists; it may not be
/// `source_root` or a folder above it.
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
    check_replaceable(dir).map_err(refuse)?;

    for prefix in [STAGING_PREFIX, ASIDE_PREFIX] {
        crate::scratch::sweep_stale(parent, prefix, MARKER);
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
    let result = written.and_then(|()| swap_into_place(&staging, dir, &own));
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    crate::scratch::release(&staging);
    result
}

/// Writes the output into `staging`: the marker first (so that a run killed half-way leaves
/// a folder the next run recognises), then the files, then the marker's full list.
fn write_staging(files: &[OutFile<'_>], staging: &Path) -> Result<(), OutError> {
    let write = |rel: &str, bytes: &[u8]| {
        let path = staging.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(io_at(p))?;
        }
        std::fs::write(&path, bytes).map_err(io_at(&path))
    };
    write(MARKER, format!("{MARKER_HEADER}\n").as_bytes())?;
    let mut sums = String::new();
    let mut listed = vec!["SHA256SUMS".to_string()];
    for f in files {
        write(&f.rel, f.bytes.as_bytes())?;
        let _ = writeln!(sums, "{}  {}", f.sha256, f.rel);
        listed.push(f.rel.clone());
    }
    write("SHA256SUMS", sums.as_bytes())?;
    listed.sort();
    let marker = listed
        .iter()
        .fold(format!("{MARKER_HEADER}\n"), |mut m, f| {
            let _ = writeln!(m, "{f}");
            m
        });
    write(MARKER, marker.as_bytes())
}

/// Moves an existing DIR aside, the staging folder into its place, then removes the old
/// output; a signal waits until the two moves are done.
fn swap_into_place(
    staging: &Path,
    dir: &Path,
    own: &dyn Fn(&str) -> Result<PathBuf, OutError>,
) -> Result<(), OutError> {
    let old = if std::fs::symlink_metadata(dir).is_ok() {
        let aside = own(ASIDE_PREFIX)?;
        std::fs::remove_dir(&aside).map_err(io_at(&aside))?;
        Some(aside)
    } else {
        None
    };
    crate::scratch::uninterrupted(|| {
        if let Some(aside) = &old {
            std::fs::rename(dir, aside).map_err(io_at(dir))?;
            crate::scratch::hold(aside);
        }
        std::fs::rename(staging, dir).map_err(io_at(dir))
    })?;
    if let Some(aside) = old {
        let removed = std::fs::remove_dir_all(&aside).map_err(io_at(&aside));
        crate::scratch::release(&aside);
        removed?;
    }
    Ok(())
}

/// `Ok` when DIR may be replaced: it does not exist, or is a real folder (not a symbolic
/// link) that is empty or holds only the files its marker lists (and their folders).
fn check_replaceable(dir: &Path) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    if meta.file_type().is_symlink() {
        return Err("it is a symbolic link".into());
    }
    if !meta.is_dir() {
        return Err("it is not a folder".into());
    }
    let mut entries = Vec::new();
    list_entries(dir, dir, &mut entries).map_err(|e| e.to_string())?;
    if entries.is_empty() {
        return Ok(());
    }
    let Ok(marker) = std::fs::read_to_string(dir.join(MARKER)) else {
        return Err(format!(
            "it is not empty and fluxsim did not write it (it has no `{MARKER}`)"
        ));
    };
    let mut lines = marker.lines();
    if lines.next() != Some(MARKER_HEADER) {
        return Err(format!("its `{MARKER}` is not one fluxsim wrote"));
    }
    let listed: BTreeSet<&str> = lines.collect();
    let folders: BTreeSet<&str> = listed
        .iter()
        .flat_map(|f| {
            f.match_indices('/')
                .map(|(i, _)| &f[..i])
                .collect::<Vec<_>>()
        })
        .collect();
    for (rel, kind) in &entries {
        let ours = match kind {
            Entry::File => rel == MARKER || listed.contains(rel.as_str()),
            Entry::Folder => folders.contains(rel.as_str()),
            Entry::Other => false,
        };
        if !ours {
            return Err(format!("it holds `{rel}`, which fluxsim did not write"));
        }
    }
    Ok(())
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

    #[test]
    fn out_sweeps_the_staging_folder_a_killed_run_left() {
        let tmp = tempfile::tempdir().unwrap();
        // A staging folder named after a process that cannot exist, marked as fluxsim's.
        let stale = tmp.path().join(".fluxsim-out-4194305-abc");
        std::fs::create_dir_all(stale.join("dev/flux-system")).unwrap();
        std::fs::write(stale.join(MARKER), format!("{MARKER_HEADER}\n")).unwrap();
        std::fs::write(stale.join("dev/flux-system/apps.yaml"), "x").unwrap();
        // A folder of the same shape without the marker is not fluxsim's.
        let foreign = tmp.path().join(".fluxsim-old-4194305-abc");
        std::fs::create_dir(&foreign).unwrap();
        write_files(&[], &tmp.path().join("out"), Path::new("/nonexistent")).unwrap();
        assert!(!stale.exists());
        assert!(foreign.exists());
    }
}
