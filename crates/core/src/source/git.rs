//! The `git` command line, read-only: which files a work tree tracks, and the files of a
//! revision. Nothing here writes to the work tree, the index or the object database.

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;

use super::SourceError;

/// Variables that would point git somewhere other than `dir`.
const GIT_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
];

/// Settings given on every git command line, where they win over the repository's own
/// `.git/config` (and what it includes): a repository fluxsim reads may come from anyone,
/// and none of the programs its configuration names may run. `core.fsmonitor` is run by
/// `ls-files` and `rev-parse` as they read the index; hooks, external diffs and textconv
/// drivers are not run by the commands used here, and are switched off all the same so
/// that a command added later cannot run them; no transport may start (a partial clone's
/// lazy fetch would run `core.sshCommand` and friends), git only reads what is on disk.
/// The user's global and system configuration are theirs and stay in force.
const SAFE_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "diff.external=",
    "protocol.allow=never",
];

/// A `git -C dir ARGS` command that reads `dir`'s repository and runs nothing its
/// configuration names (see [`SAFE_CONFIG`]); every git command fluxsim runs is made here.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir);
    for setting in SAFE_CONFIG {
        cmd.arg("-c").arg(setting);
    }
    // `--no-pager` too: a pager is a program the configuration names.
    cmd.arg("--no-pager").args(args);
    for var in GIT_ENV {
        cmd.env_remove(var);
    }
    // Never take optional locks (e.g. an index refresh): we only read.
    cmd.env("GIT_OPTIONAL_LOCKS", "0");
    // Never ask anyone anything, never fetch a missing object.
    cmd.env("GIT_TERMINAL_PROMPT", "0");
    cmd.env("GIT_NO_LAZY_FETCH", "1");
    cmd
}

fn spawn_error(dir: &Path, source: io::Error) -> SourceError {
    SourceError::GitMissing {
        dir: dir.to_path_buf(),
        source,
    }
}

/// Runs git; `Ok(Err(stderr))` when it ran and failed.
fn try_run(dir: &Path, args: &[&str]) -> Result<Result<Vec<u8>, String>, SourceError> {
    let out = command(dir, args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| spawn_error(dir, e))?;
    if out.status.success() {
        Ok(Ok(out.stdout))
    } else {
        Ok(Err(String::from_utf8_lossy(&out.stderr).trim().to_owned()))
    }
}

fn run(dir: &Path, args: &[&str]) -> Result<Vec<u8>, SourceError> {
    try_run(dir, args)?.map_err(|stderr| SourceError::Git {
        dir: dir.to_path_buf(),
        command: args.join(" "),
        stderr,
    })
}

/// Whether `dir` is in a git work tree. Git is only asked (and so only needed) when a
/// `.git` entry exists in `dir` or above it.
pub(crate) fn in_work_tree(dir: &Path) -> Result<bool, SourceError> {
    let abs = dir.canonicalize().map_err(|source| SourceError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    if !abs
        .ancestors()
        .any(|a| a.join(".git").symlink_metadata().is_ok())
    {
        return Ok(false);
    }
    match try_run(dir, &["rev-parse", "--is-inside-work-tree"])? {
        Ok(out) => Ok(out.trim_ascii() == b"true"),
        // A `.git` that git does not recognise: treat the folder as plain files, as an
        // archive of it would be.
        Err(stderr) if stderr.contains("not a git repository") => Ok(false),
        Err(stderr) => Err(SourceError::Git {
            dir: dir.to_path_buf(),
            command: "rev-parse --is-inside-work-tree".to_owned(),
            stderr,
        }),
    }
}

/// Whether git tracks a file at or under the folder `dir`, in whatever work tree holds it:
/// what fluxsim must never remove, however its content looks. `false` without asking git
/// when no `.git` is in `dir` or above it, and when git says `dir` is in no repository.
pub fn tracks_anything_in(dir: &Path) -> Result<bool, SourceError> {
    let abs = dir.canonicalize().map_err(|source| SourceError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    if !abs
        .ancestors()
        .any(|a| a.join(".git").symlink_metadata().is_ok())
    {
        return Ok(false);
    }
    match try_run(&abs, &["ls-files", "-z", "--", "."])? {
        Ok(out) => Ok(!out.is_empty()),
        Err(stderr) if stderr.contains("not a git repository") => Ok(false),
        Err(stderr) => Err(SourceError::Git {
            dir: abs,
            command: "ls-files -z -- .".to_owned(),
            stderr,
        }),
    }
}

/// Splits `-z` output into relative paths, refusing anything that is not a plain relative
/// path (so nothing can be written outside the copy).
fn split_paths(dir: &Path, out: &[u8]) -> Result<Vec<PathBuf>, SourceError> {
    let mut paths = Vec::new();
    for raw in out.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let path = bytes_to_path(raw);
        let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain || path.as_os_str().is_empty() {
            return Err(SourceError::UnsafePath {
                dir: dir.to_path_buf(),
                path: String::from_utf8_lossy(raw).into_owned(),
            });
        }
        paths.push(path);
    }
    Ok(paths)
}

#[cfg(unix)]
fn bytes_to_path(raw: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(OsStr::from_bytes(raw))
}

#[cfg(not(unix))]
fn bytes_to_path(raw: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(raw).into_owned())
}

/// `git ls-files -z` in `dir`: tracked paths under `dir`, relative to it.
pub(crate) fn tracked(dir: &Path) -> Result<Vec<PathBuf>, SourceError> {
    let out = run(dir, &["ls-files", "-z"])?;
    let mut paths = split_paths(dir, &out)?;
    // A conflicted path is listed once per stage.
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// `git ls-files -z --others --exclude-standard` in `dir`: untracked, not git-ignored
/// paths (a nested repository shows as its folder).
pub(crate) fn untracked(dir: &Path) -> Result<Vec<PathBuf>, SourceError> {
    let out = run(dir, &["ls-files", "-z", "--others", "--exclude-standard"])?;
    split_paths(dir, &out)
}

/// One entry of `git ls-tree -r`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeEntry {
    pub(crate) path: PathBuf,
    pub(crate) mode: String,
    pub(crate) oid: String,
}

/// A revision resolved for `dir`: the commit and the entries of `dir`'s folder in it.
pub(crate) struct Revision {
    pub(crate) commit: String,
    pub(crate) entries: Vec<TreeEntry>,
}

/// Resolves `rev` and lists the files of `dir`'s folder at that commit, relative to it.
pub(crate) fn revision(dir: &Path, rev: &str) -> Result<Revision, SourceError> {
    let not_a_revision = || SourceError::NotARevision {
        dir: dir.to_path_buf(),
        rev: rev.to_owned(),
    };
    let prefix = match try_run(dir, &["rev-parse", "--show-prefix"])? {
        Ok(out) => String::from_utf8_lossy(out.trim_ascii_end()).into_owned(),
        Err(stderr) if stderr.contains("not a git repository") => {
            return Err(SourceError::NotAGitRepository {
                dir: dir.to_path_buf(),
            })
        }
        Err(stderr) => {
            return Err(SourceError::Git {
                dir: dir.to_path_buf(),
                command: "rev-parse --show-prefix".to_owned(),
                stderr,
            })
        }
    };
    // A leading `-` would be read as an option.
    if rev.is_empty() || rev.starts_with('-') || rev.contains('\0') {
        return Err(not_a_revision());
    }
    let spec = format!("{rev}^{{commit}}");
    let commit = match try_run(dir, &["rev-parse", "--verify", "--quiet", &spec])? {
        Ok(out) => String::from_utf8_lossy(out.trim_ascii()).into_owned(),
        Err(_) => return Err(not_a_revision()),
    };
    let folder = prefix.trim_end_matches('/');
    let tree = format!("{commit}:{folder}");
    let kind = try_run(dir, &["cat-file", "-t", &tree])?;
    if kind.as_deref().map(<[u8]>::trim_ascii) != Ok(b"tree".as_slice()) {
        return Err(SourceError::PathNotInRevision {
            dir: dir.to_path_buf(),
            rev: rev.to_owned(),
            path: folder.to_owned(),
        });
    }
    let entries = list_tree(dir, &tree)?;
    Ok(Revision { commit, entries })
}

/// The files of the tree `tree` (an id, or `commit:folder`), relative to it, sorted
/// (`git ls-tree -r -z --full-tree`).
pub(crate) fn list_tree(dir: &Path, tree: &str) -> Result<Vec<TreeEntry>, SourceError> {
    let out = run(dir, &["ls-tree", "-r", "-z", "--full-tree", tree])?;
    let mut entries = Vec::new();
    for raw in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let bad = || SourceError::Git {
            dir: dir.to_path_buf(),
            command: format!("ls-tree -r -z --full-tree {tree}"),
            stderr: format!("unexpected line `{}`", String::from_utf8_lossy(raw)),
        };
        let tab = raw.iter().position(|&b| b == b'\t').ok_or_else(bad)?;
        let meta = String::from_utf8_lossy(&raw[..tab]).into_owned();
        let mut fields = meta.split(' ');
        let (Some(mode), Some(_kind), Some(oid)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(bad());
        };
        let path = split_paths(dir, &raw[tab + 1..])?.pop().ok_or_else(bad)?;
        entries.push(TreeEntry {
            path,
            mode: mode.to_owned(),
            oid: oid.to_owned(),
        });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}

/// The object ids of the files `paths` (relative to `dir`) as their bytes are, with no
/// filter or line-ending conversion (`git hash-object --no-filters --stdin-paths`), in order.
pub(crate) fn hash_files(dir: &Path, paths: &[&str]) -> Result<Vec<String>, SourceError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let failed = |stderr: String| SourceError::Git {
        dir: dir.to_path_buf(),
        command: "hash-object --no-filters --stdin-paths".to_owned(),
        stderr,
    };
    let mut child = command(dir, &["hash-object", "--no-filters", "--stdin-paths"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| spawn_error(dir, e))?;
    let Some(mut stdin) = child.stdin.take() else {
        return Err(failed("no pipe to git".to_owned()));
    };
    let mut input = paths.join("\n");
    input.push('\n');
    // Write from another thread so a full stdout pipe cannot deadlock us.
    let writer = thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| spawn_error(dir, e))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
}

/// Streams the contents of `oids` (in order) from one `git cat-file --batch`.
pub(crate) fn for_each_blob(
    dir: &Path,
    oids: &[&str],
    mut each: impl FnMut(usize, Vec<u8>) -> Result<(), SourceError>,
) -> Result<(), SourceError> {
    if oids.is_empty() {
        return Ok(());
    }
    let failed = |stderr: String| SourceError::Git {
        dir: dir.to_path_buf(),
        command: "cat-file --batch".to_owned(),
        stderr,
    };
    let mut child = command(dir, &["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| spawn_error(dir, e))?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(failed("no pipes to git".to_owned()));
    };
    let mut input = oids.join("\n");
    input.push('\n');
    // Write from another thread so a full stdout pipe cannot deadlock us.
    let writer = thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut out = BufReader::new(stdout);
    let mut result = Ok(());
    for (i, oid) in oids.iter().enumerate() {
        let mut header = String::new();
        if let Err(e) = out.read_line(&mut header) {
            result = Err(failed(e.to_string()));
            break;
        }
        let mut fields = header.split_whitespace();
        let size = match (fields.next(), fields.next(), fields.next()) {
            (Some(_), Some("blob"), Some(size)) => size.parse::<usize>().ok(),
            _ => None,
        };
        let Some(size) = size else {
            result = Err(failed(format!("object `{oid}`: `{}`", header.trim())));
            break;
        };
        // The same bound as a file of a work tree (`source::read_bounded`).
        if size as u64 > super::MAX_FILE_BYTES {
            result = Err(failed(format!(
                "object `{oid}` is {size} bytes, larger than fluxsim's bound of {} MiB per file",
                super::MAX_FILE_BYTES >> 20
            )));
            break;
        }
        let mut body = vec![0; size];
        let mut newline = [0u8; 1];
        if let Err(e) = out
            .read_exact(&mut body)
            .and_then(|()| out.read_exact(&mut newline))
        {
            result = Err(failed(e.to_string()));
            break;
        }
        result = each(i, body);
        if result.is_err() {
            break;
        }
    }
    drop(out);
    let _ = writer.join();
    let _ = child.wait();
    result
}

/// For `dir` in a work tree: the commit `rev` names, the id of the tree of `dir`'s folder in
/// it, and that of `dir`'s folder at HEAD, from one `git rev-parse`; `None` when `dir` is in
/// no work tree or they do not all resolve.
pub(crate) fn resolve_with_head(
    dir: &Path,
    rev: &str,
) -> Result<Option<(String, String, String)>, SourceError> {
    if rev.is_empty() || rev.starts_with('-') || rev.contains('\0') {
        return Ok(None);
    }
    let commit = format!("{rev}^{{commit}}");
    let tree = format!("{commit}:./");
    let args = [
        "rev-parse",
        "--is-inside-work-tree",
        &commit,
        &tree,
        "HEAD^{commit}:./",
    ];
    let Ok(out) = try_run(dir, &args)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&out);
    let ids: Vec<&str> = text.lines().collect();
    let is_id = |s: &str| matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit());
    Ok(match ids.as_slice() {
        ["true", c, t, h] if is_id(c) && is_id(t) && is_id(h) => {
            Some(((*c).to_owned(), (*t).to_owned(), (*h).to_owned()))
        }
        _ => None,
    })
}

/// The commit `rev` names and the id of the tree of `dir`'s folder in it, from one
/// `git rev-parse`; `None` when they do not resolve (reading the revision says why).
pub(crate) fn resolve(dir: &Path, rev: &str) -> Result<Option<(String, String)>, SourceError> {
    // A leading `-` would be read as an option.
    if rev.is_empty() || rev.starts_with('-') || rev.contains('\0') {
        return Ok(None);
    }
    // `./` is relative to the folder git runs in (`-C dir`).
    let commit = format!("{rev}^{{commit}}");
    let tree = format!("{commit}:./");
    let Ok(out) = try_run(dir, &["rev-parse", &commit, &tree])? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&out);
    let ids: Vec<&str> = text.lines().collect();
    let is_id = |s: &str| matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit());
    Ok(match ids.as_slice() {
        [c, t] if is_id(c) && is_id(t) => Some(((*c).to_owned(), (*t).to_owned())),
        _ => None,
    })
}
