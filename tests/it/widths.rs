//! The default text of every command that reports leads with its verdict and fits 80
//! columns, on repositories of every shape (`testdata/shapes`, the example fleet, broken
//! ones); `--wide` keeps rows on one line and `--verbose` adds how the work was done.

use std::path::Path;

use crate::common::{commit_all, fluxsim_in, repo_from};

/// The commands that report on one revision, from the clap definition: those that take
/// `--fail-on`, but for `diff` and `prove` (they take `--diff-style`), checked on a change below.
fn reports() -> Vec<String> {
    use crate::common::has_arg;
    crate::common::subcommands()
        .iter()
        .filter(|c| has_arg(c, "fail_on") && !has_arg(c, "diff_style"))
        .map(|c| c.get_name().to_string())
        .collect()
}

const SHAPES: [&str; 12] = [
    "testdata/fleet",
    // Many findings alike: the quiet report's grouped entries and "and N more" fit too.
    "testdata/noisy",
    "testdata/shapes/env-overlays",
    "testdata/shapes/oci-fleet",
    "testdata/shapes/bootstrap-helmfile",
    "testdata/bad/bad-kustomization-yaml",
    "testdata/bad/missing-path",
    "testdata/bad/external-sources",
    "testdata/graph/crds",
    "testdata/graph/cycle",
    "testdata/network/child-url",
    "testdata/network/hidden",
];

/// Every line of `out` at most 80 columns (characters: fluxsim prints no wide ones of its
/// own), and the first line the command's verdict.
fn fits(what: &str, command: &str, out: &crate::common::Output) {
    assert!(out.code <= 1, "{what}: {}", out.stderr);
    for line in out.stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "{what}: a line of {} columns:\n{line}\n\n{}",
            line.chars().count(),
            out.stdout
        );
    }
    let first = out.stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("{command}: ")),
        "{what}: the verdict first, not {first:?}"
    );
}

/// The review's text (`diff` and `prove` by default, `--diff-style semantic`): at most 80
/// columns a line, the revisions first and the verdict right after them.
fn fits_review(what: &str, command: &str, out: &crate::common::Output) {
    assert!(out.code <= 1, "{what}: {}", out.stderr);
    for line in out.stdout.lines() {
        assert!(
            line.chars().count() <= 80,
            "{what}: a line of {} columns:\n{line}\n\n{}",
            line.chars().count(),
            out.stdout
        );
    }
    let mut lines = out.stdout.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("fluxsim {command}: ")),
        "{what}: the revisions first, not {first:?}"
    );
    let second = lines.next().unwrap_or_default();
    assert!(
        !second.trim().is_empty(),
        "{what}: then the verdict\n{}",
        out.stdout
    );
}

#[test]
fn every_report_fits_80_columns_and_leads_with_its_verdict() {
    for shape in SHAPES {
        let repo = repo_from(shape);
        for c in reports() {
            let c = c.as_str();
            let out = fluxsim_in(Some(repo.path()), &[c]);
            fits(&format!("{c} on {shape}"), c, &out);
        }
    }
}

fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file}: {from}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn diffs_fit_80_columns_and_say_their_counts_first_and_last() {
    let repo = repo_from("testdata/fleet");
    edit(
        repo.path(),
        "clusters/prod/cluster-vars.yaml",
        "WEB_REPLICAS: \"3\"",
        "WEB_REPLICAS: \"4\"",
    );
    // The review's text, the default.
    let review = fluxsim_in(Some(repo.path()), &["diff", "--base", "HEAD"]);
    fits_review("diff", "diff", &review);
    assert!(
        review.stdout.starts_with("fluxsim diff: HEAD ("),
        "{}",
        review.stdout
    );
    let review = fluxsim_in(
        Some(repo.path()),
        &["prove", "--base", "HEAD", "--expect", "changed"],
    );
    fits_review("prove", "prove", &review);
    // The unified diffs: the counts first and last.
    let diff = fluxsim_in(
        Some(repo.path()),
        &["diff", "--diff-style", "lines", "--base", "HEAD"],
    );
    fits("diff", "diff", &diff);
    assert!(
        diff.stdout
            .starts_with("diff: 2 of 22 artifacts changed, 20 identical\nbase HEAD ("),
        "{}",
        diff.stdout
    );
    assert!(
        diff.stdout
            .ends_with("result: changed (2 of 22 artifacts changed, 20 identical)\n"),
        "{}",
        diff.stdout
    );
    // prove leads with its own verdict, not the diff's.
    let prove = fluxsim_in(
        Some(repo.path()),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--expect",
            "changed",
        ],
    );
    fits("prove", "prove", &prove);
    assert!(
        prove
            .stdout
            .starts_with("prove: PASS: 2 of 22 artifacts changed, 20 identical; canaries"),
        "{}",
        prove.stdout
    );
    assert!(!prove.stdout.contains("fluxsim diff:"), "{}", prove.stdout);
    commit_all(repo.path(), "scale web");
    let images = fluxsim_in(
        Some(repo.path()),
        &["images", "--diff", "--base", "HEAD~1", "--head", "HEAD"],
    );
    fits("images --diff", "images", &images);
    // A parent that fails in head: its error wrapped too.
    edit(
        repo.path(),
        "clusters/base/apps.yaml",
        "interval: ",
        "interval: [",
    );
    for args in [
        &["diff", "--base", "HEAD"][..],
        &["prove", "--base", "HEAD", "--expect", "any"],
    ] {
        let out = fluxsim_in(Some(repo.path()), args);
        fits_review(&format!("{args:?} on a failing parent"), args[0], &out);
        let mut lines = args.to_vec();
        lines.extend(["--diff-style", "lines"]);
        let out = fluxsim_in(Some(repo.path()), &lines);
        fits(&format!("{lines:?} on a failing parent"), args[0], &out);
    }
}

#[test]
fn wide_keeps_each_row_on_one_line_and_verbose_says_how() {
    let repo = repo_from("testdata/fleet");
    let wide = fluxsim_in(Some(repo.path()), &["render", "--wide"]);
    assert!(
        wide.stdout.contains(
            "dev      flux-system/apps-helm            ./apps/helm            3        yes    rendered  341cb315d240"
        ),
        "{}",
        wide.stdout
    );
    let plain = fluxsim_in(Some(repo.path()), &["render"]);
    assert!(!plain.stdout.contains("builds"), "{}", plain.stdout);
    let verbose = fluxsim_in(Some(repo.path()), &["render", "--verbose"]);
    assert!(
        verbose
            .stdout
            .contains("2 clusters, 18/18 Kustomizations rendered, "),
        "{}",
        verbose.stdout
    );
    // The audit's per-Kustomization counts only with --verbose.
    let audit = fluxsim_in(Some(repo.path()), &["audit"]);
    assert!(!audit.stdout.contains("hazards=0"), "{}", audit.stdout);
    let audit = fluxsim_in(Some(repo.path()), &["audit", "--verbose"]);
    assert!(
        audit
            .stdout
            .contains("  path=./apps/vms files=3 defined=13 referenced=8 hazards=0"),
        "{}",
        audit.stdout
    );
}
