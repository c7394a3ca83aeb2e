//! The docs' examples are what the binary prints. An example is a fenced block that follows
//! a comment `<!-- example: COMMAND -->` in a page of `docs/`: COMMAND runs with `sh` in a
//! git repository holding a copy of `testdata/` (committed, as a reader's clone has it),
//! fluxsim on PATH, and every line of the block is a line of what it prints, in order
//! (a line `...`, indented or not, marks lines left out, a leading `$ ` line is the command shown). A commit's short
//! hash is compared as `(<commit>)`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{commit_all, copy_dir, crate_path, git};

/// (page, command, the block's lines) of every example.
fn examples() -> Vec<(PathBuf, String, Vec<String>)> {
    let mut pages = Vec::new();
    for dir in ["docs", "docs/commands"] {
        for e in std::fs::read_dir(crate_path(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            }
        }
    }
    pages.sort();
    let mut out = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for part in text.split("<!-- example: ").skip(1) {
            let (cmd, rest) = part.split_once(" -->").expect("a closed example comment");
            let rest = rest.trim_start();
            let (_, body) = rest
                .strip_prefix("```")
                .and_then(|r| r.split_once('\n'))
                .unwrap_or_else(|| {
                    panic!("{}: `{cmd}` is not followed by a block", page.display())
                });
            let block = &body[..body.find("```").expect("a closed block")];
            let lines = block
                .lines()
                .filter(|l| !l.starts_with("$ "))
                .map(str::to_string)
                .collect();
            out.push((page.clone(), cmd.to_string(), lines));
        }
    }
    out
}

/// `line` as compared: trailing blanks gone, a commit's short hash in parentheses as
/// `(<commit>)`.
pub(crate) fn normalise(line: &str) -> String {
    let re = regex::Regex::new(r"\(([0-9a-f]{12})\)").unwrap();
    re.replace_all(line.trim_end(), "(<commit>)").into_owned()
}

/// Runs `cmd` with `sh` in `dir`, fluxsim on PATH, offline, with a cache of its own: its
/// stdout and stderr, one text.
pub(crate) fn run(dir: &Path, cmd: &str) -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_fluxsim")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .env("PATH", path)
        .env("FLUXSIM_CACHE_DIR", cache.path())
        .env("FLUXSIM_NETWORK", "none")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether every line of `shown` (a line `...`, indented or not, stands for lines left out)
/// is a line of `printed`, in order; else which is not.
pub(crate) fn shows(printed: &[String], shown: &[String]) -> Result<(), String> {
    let mut at = 0;
    for want in shown.iter().map(|l| normalise(l)) {
        if want.trim() == "..." {
            continue;
        }
        match printed[at..].iter().position(|l| *l == want) {
            Some(i) => at += i + 1,
            None => {
                return Err(format!(
                    "the line\n  {want}\nis not printed (after line {at}):\n{}",
                    printed.join("\n")
                ))
            }
        }
    }
    Ok(())
}

#[test]
fn the_docs_examples_show_what_the_binary_prints() {
    let all = examples();
    assert!(all.len() >= 6, "{all:?}");
    let mut wrong = Vec::new();
    for (page, cmd, shown) in all {
        let repo = tempfile::tempdir().unwrap();
        copy_dir(&crate_path("testdata"), &repo.path().join("testdata"));
        git(repo.path(), &["init", "-q"]);
        commit_all(repo.path(), "testdata");
        let printed: Vec<String> = run(repo.path(), &cmd).lines().map(normalise).collect();
        if let Err(e) = shows(&printed, &shown) {
            wrong.push(format!("{}: `{cmd}`: {e}", page.display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
