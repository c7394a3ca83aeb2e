//! The README's "60-second tour" is what the binary prints: each `console` block's commands
//! run, in order, in a git repository holding `testdata/fleet` (as the README's reader's
//! clone does), and every line the README shows is a line of that output, in order (`...`
//! marks lines left out). A commit's short hash is the one thing that differs from run to
//! run: `HEAD (0123456789ab)` is compared as `HEAD (<commit>)`.

use crate::common::{commit_all, copy_dir, crate_path, git};
use crate::docs_examples::{normalise, run, shows};

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
            let printed: Vec<String> = run(repo.path(), &cmd).lines().map(normalise).collect();
            if let Err(e) = shows(&printed, &shown) {
                panic!("README tour, `{cmd}`: {e}");
            }
        }
    }
}
