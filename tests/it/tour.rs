//! The README's "60-second tour" is what the binary prints: each `console` block's commands
//! run, in order, in a git repository holding `testdata/fleet` (as the README's reader's
//! clone does), and every line the README shows is a line of that output, in order (`...`
//! marks lines left out). A commit's short hash is the one thing that differs from run to
//! run: `HEAD (0123456789ab)` is compared as `HEAD (<commit>)`.

use std::path::Path;
use std::process::Command;

use crate::common::{commit_all, copy_dir, crate_path, git};

/// The tour's console blocks: each a list of (command, the lines shown after it).
fn tour_blocks() -> Vec<Vec<(String, Vec<String>)>> {
    let readme = std::fs::read_to_string(crate_path("README.md")).unwrap();
    let start = readme.find("## A 60-second tour").expect("the tour");
    let rest = &readme[start..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let tour = &rest[..end];
    let mut blocks = Vec::new();
    for block in tour.split("```console\n").skip(1) {
        let body = &block[..block.find("```").expect("a closed block")];
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for line in body.lines() {
            if let Some(cmd) = line.strip_prefix("$ ") {
                steps.push((cmd.to_string(), Vec::new()));
            } else if let Some(step) = steps.last_mut() {
                step.1.push(line.to_string());
            }
        }
        blocks.push(steps);
    }
    blocks
}

fn normalise(line: &str) -> String {
    let re = regex::Regex::new(r"\(([0-9a-f]{12})\)").unwrap();
    re.replace_all(line.trim_end(), "(<commit>)").into_owned()
}

/// Runs `cmd` with `sh` in `dir`, fluxsim on PATH: its stdout and stderr, one text.
fn run(dir: &Path, cmd: &str) -> String {
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
        .env("COLUMNS", "80")
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

#[test]
fn the_readme_tour_shows_what_the_binary_prints() {
    let repo = tempfile::tempdir().unwrap();
    copy_dir(
        &crate_path("testdata/fleet"),
        &repo.path().join("testdata/fleet"),
    );
    git(repo.path(), &["init", "-q"]);
    commit_all(repo.path(), "the fleet");
    let blocks = tour_blocks();
    assert!(blocks.len() >= 4, "{blocks:?}");
    for steps in blocks {
        for (cmd, shown) in steps {
            let printed = run(repo.path(), &cmd);
            let printed: Vec<String> = printed.lines().map(normalise).collect();
            let mut at = 0;
            for want in shown.iter().map(|l| normalise(l)) {
                if want == "..." {
                    continue;
                }
                match printed[at..].iter().position(|l| *l == want) {
                    Some(i) => at += i + 1,
                    None => panic!(
                        "README tour, `{cmd}`: the line\n  {want}\nis not printed (after line {at}):\n{}",
                        printed.join("\n")
                    ),
                }
            }
        }
    }
}
