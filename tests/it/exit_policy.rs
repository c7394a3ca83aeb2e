//! One exit policy (`docs/commands/README.md`, "Exit status"): every command that finds
//! something takes `--fail-on LEVEL` with the default `error`; 1 is "found something at or
//! above it", 2 "could not run", whatever the level.

use std::fs;
use std::path::Path;

use crate::common::{crate_path, fluxsim, fluxsim_in, repo_from};

fn run(repo: &Path, args: &[&str]) -> crate::common::Output {
    fluxsim_in(Some(repo), args)
}

fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// The commands of the table in docs/commands/README.md, in its order.
fn table_commands() -> Vec<String> {
    let page = fs::read_to_string(crate_path("docs/commands/README.md")).unwrap();
    let table = page
        .split("| command | error | warning | info |")
        .nth(1)
        .expect("docs/commands/README.md has the --fail-on table");
    table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| {
            let cell = l.split('|').nth(1)?.trim();
            Some(cell.trim_matches('`').to_string())
        })
        .collect()
}

#[test]
fn every_command_that_finds_something_takes_fail_on_with_the_default_error() {
    let commands = table_commands();
    assert_eq!(
        commands,
        ["render", "diff", "prove", "compare", "audit", "graph", "validate", "images"],
        "the table lists every command that finds something"
    );
    for c in &commands {
        let help = fluxsim(&[c, "--help"]);
        assert_eq!(help.code, 0, "{c}: {}", help.stderr);
        let at = help
            .stdout
            .find("--fail-on <LEVEL>")
            .unwrap_or_else(|| panic!("`{c} --help` has no --fail-on:\n{}", help.stdout));
        let entry = &help.stdout[at..];
        let entry = &entry[..entry.find("\n  -").unwrap_or(entry.len())];
        assert!(
            entry.contains("[default: error]"),
            "`{c} --help`: --fail-on defaults to error: {entry}"
        );
        for level in ["info", "warning", "error", "never"] {
            assert!(entry.contains(level), "{c}: --fail-on {level}: {entry}");
        }
    }
}

// A pull request that changes something is the normal case: it passes by default, and
// fails only when asked (`--fail-on info`).
#[test]
fn a_change_is_info_diff_fails_on_it_only_with_fail_on_info() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/cluster-vars.yaml",
        "WEB_REPLICAS: \"3\"",
        "WEB_REPLICAS: \"4\"",
    );
    let status = |level: &str| run(repo.path(), &["diff", "--base", "HEAD", "--fail-on", level]);
    let default = run(repo.path(), &["diff", "--base", "HEAD"]);
    assert_eq!(default.code, 0, "{}{}", default.stdout, default.stderr);
    assert!(default.stdout.contains("changed"), "{}", default.stdout);
    assert_eq!(status("warning").code, 0);
    assert_eq!(status("info").code, 1);
    assert_eq!(status("never").code, 0);
}

#[test]
fn clusters_that_differ_beyond_values_are_info_for_compare() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/kustomization.yaml",
        "patches:\n",
        "patches:\n  - target:\n      kind: Kustomization\n      name: apps-wave-2\n    patch: |\n      - op: replace\n        path: /spec/wait\n        value: false\n",
    );
    let default = run(repo.path(), &["compare"]);
    assert_eq!(default.code, 0, "{}{}", default.stdout, default.stderr);
    assert!(default.stdout.contains("differ"), "{}", default.stdout);
    let info = run(repo.path(), &["compare", "--fail-on", "info"]);
    assert_eq!(info.code, 1, "{}", info.stdout);
}

#[test]
fn a_failed_render_is_an_error_for_render_audit_images_and_validate() {
    let repo = repo_from("testdata/bad/missing-path");
    for c in ["render", "audit", "images", "validate"] {
        let out = run(repo.path(), &[c]);
        assert_eq!(out.code, 1, "{c}: {}{}", out.stdout, out.stderr);
        let never = run(repo.path(), &[c, "--fail-on", "never"]);
        assert_eq!(never.code, 0, "{c} --fail-on never: {}", never.stderr);
    }
}

#[test]
fn an_external_kustomization_is_info_for_render() {
    let repo = repo_from("testdata/bad/external-sources");
    assert_eq!(run(repo.path(), &["render"]).code, 0);
    assert_eq!(
        run(repo.path(), &["render", "--fail-on", "warning"]).code,
        0
    );
    assert_eq!(run(repo.path(), &["render", "--fail-on", "info"]).code, 1);
}

#[test]
fn a_graph_warning_fails_only_with_fail_on_warning() {
    // A root that reads vars only it applies, with no bootstrap step the repository shows:
    // FS208 as a warning (the bootstrap that makes the root is presumed to apply them).
    let repo = repo_from("testdata/graph/script-bootstrap");
    let taskfile = repo.path().join("Taskfile.yaml");
    let text = std::fs::read_to_string(&taskfile).unwrap();
    let kept: String = text
        .split_inclusive('\n')
        .filter(|l| !l.contains("/flux/vars/"))
        .collect();
    std::fs::write(&taskfile, kept).unwrap();
    crate::common::commit_all(repo.path(), "the Taskfile applies no vars");
    let default = run(repo.path(), &["graph"]);
    assert_eq!(default.code, 0, "{}{}", default.stdout, default.stderr);
    assert!(
        default.stdout.contains("warning[FS208]"),
        "{}",
        default.stdout
    );
    assert_eq!(run(repo.path(), &["graph", "--fail-on", "warning"]).code, 1);
}

#[test]
fn could_not_run_is_2_whatever_fail_on_says() {
    for c in ["render", "audit", "graph", "images", "compare", "validate"] {
        let out = fluxsim(&[c, "/nonexistent/fluxsim-repo", "--fail-on", "never"]);
        assert_eq!(out.code, 2, "{c}: {}", out.stderr);
    }
}

#[test]
fn a_schema_error_is_an_error_for_validate_and_render_validate() {
    // testdata/validate/fleet: objects the API server rejects (FS301 errors).
    let repo = repo_from("testdata/validate/fleet");
    for args in [&["validate"][..], &["render", "--validate"]] {
        let out = run(repo.path(), args);
        assert_eq!(out.code, 1, "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(
            out.stdout.contains("error[FS301]"),
            "{args:?}: {}",
            out.stdout
        );
        let mut never = args.to_vec();
        never.extend(["--fail-on", "never"]);
        let out = run(repo.path(), &never);
        assert_eq!(out.code, 0, "{never:?}: {}", out.stderr);
    }
    // Without --validate, render does not look at schemas.
    assert_eq!(run(repo.path(), &["render"]).code, 0);
}
