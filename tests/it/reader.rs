//! The review as a reviewer reads it (issue 43): counts that add up, the new failure first,
//! names a person would use. Each through the binary.

use std::fs;
use std::path::Path;

use crate::common::{fluxsim_in, repo_from};

fn run(repo: &Path, args: &[&str]) -> crate::common::Output {
    fluxsim_in(Some(repo), args)
}

fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} does not contain {from:?}");
    fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// A proof's title leads with what head broke (dev's `web`, which rendered in base) and counts
/// what did not render in base either (`broken`, failing in both clusters and revisions)
/// apart; the review's Markdown title says the same.
#[test]
fn the_proof_title_leads_with_the_new_failure_and_counts_both_revision_failures_apart() {
    let repo = repo_from("testdata/notcompared/fails-in-both");
    edit(
        repo.path(),
        "clusters/dev/apps.yaml",
        "path: ./apps/web",
        "path: ./apps/gone",
    );
    let out = run(
        repo.path(),
        &["prove", "--expect", "any", "--base", "HEAD", "--wide"],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    // The review's text (the default) and the line diff's say it first.
    // The review's text wraps at 80 columns: its title read as one line.
    let title = out.stdout.replace("\n  ", " ");
    let title = title.lines().nth(1).unwrap();
    assert!(
        title.starts_with(
            "FAIL: 1 Kustomization changes in 1 of 2 clusters; the proof fails: head breaks 1 \
             Kustomization (dev:flux-system/web); blind to 2 more that did not render in base"
        ),
        "{}",
        out.stdout
    );
    let lines = run(
        repo.path(),
        &[
            "prove",
            "--expect",
            "any",
            "--base",
            "HEAD",
            "--wide",
            "--diff-style",
            "lines",
        ],
    );
    assert!(
        lines.stdout.starts_with(
            "prove: FAIL: head breaks 1 Kustomization (dev:flux-system/web); blind to 2 more \
             that did not render in base (--allow-blind to accept)"
        ),
        "{}",
        lines.stdout
    );
    let md = run(
        repo.path(),
        &[
            "prove", "--expect", "any", "--base", "HEAD", "-o", "markdown",
        ],
    );
    let title = md.stdout.lines().next().unwrap();
    assert!(
        title.contains(
            "the proof fails: head breaks 1 Kustomization (dev:flux-system/web); blind to 2 \
             more that did not render in base (`--allow-blind` to accept)"
        ),
        "{title}"
    );
}

/// Without a new failure the title is as before: every blind Kustomization counted once.
#[test]
fn a_proof_blind_only_to_old_failures_counts_them_together() {
    let repo = repo_from("testdata/notcompared/fails-in-both");
    let out = run(
        repo.path(),
        &["prove", "--base", "HEAD", "--wide", "--diff-style", "lines"],
    );
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.starts_with(
            "prove: FAIL: blind to 2 Kustomizations that did not render (--allow-blind to \
             accept)"
        ),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("head breaks"), "{}", out.stdout);
}

/// The failures listed under the title put what head broke first, in the review's text and
/// in the line diff's.
#[test]
fn the_failure_list_puts_what_head_broke_first() {
    let repo = repo_from("testdata/notcompared/fails-in-both");
    edit(
        repo.path(),
        "clusters/dev/apps.yaml",
        "path: ./apps/web",
        "path: ./apps/gone",
    );
    for style in [&[][..], &["--diff-style", "lines"][..]] {
        let mut args = vec!["diff", "--base", "HEAD", "--wide"];
        args.extend_from_slice(style);
        let out = run(repo.path(), &args);
        let web = out.stdout.find("flux-system/web").expect(&out.stdout);
        let broken = out.stdout.find("flux-system/broken").expect(&out.stdout);
        assert!(web < broken, "{style:?}: {}", out.stdout);
    }
}

/// Every count a proof prints adds up: `Canaries (N)` heads N canaries (the per-cluster lines
/// have their own heading, one per cluster), the canary note's parts sum to its total (a
/// ResourceSet template's canary counted too), one artifact is singular.
fn assert_canary_counts_add_up(text: &str, clusters: usize) {
    let section = |title: &str| -> (usize, usize) {
        let at = text.find(&format!("\n{title} (")).expect(text);
        let rest = &text[at + title.len() + 3..];
        let n: usize = rest[..rest.find(')').unwrap()].parse().unwrap();
        let items = rest
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty())
            .filter(|l| l.starts_with("  - "))
            .count();
        (n, items)
    };
    let (n, items) = section("Canaries");
    assert_eq!(n, items, "{text}");
    assert_eq!(n, text.matches("  - canary ").count(), "{text}");
    assert_eq!(section("Clusters"), (clusters, clusters), "{text}");
    assert!(!text.contains("1 artifacts"), "{text}");
    // `3 changes planted in head (2 cluster overlays, 1 shared file)`: the parts sum.
    let flat = text.replace("\n  ", " ");
    let note = flat.find("changes planted in head (").expect(text);
    let total: usize = flat[..note].rsplit(' ').nth(1).unwrap().parse().unwrap();
    let parts = &flat[note + "changes planted in head (".len()..];
    let parts = &parts[..parts.find(')').unwrap()];
    let sum: usize = parts
        .split(", ")
        .map(|p| {
            p.trim()
                .split(' ')
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .sum();
    assert_eq!((total, sum), (n, n), "{parts}: {text}");
}

#[test]
fn a_proofs_canary_counts_add_up() {
    let repo = repo_from("testdata/notcompared/fails-in-both");
    let out = run(
        repo.path(),
        &["prove", "--base", "HEAD", "--allow-blind", "--wide"],
    );
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("expected in 1 artifact\n"),
        "{}",
        out.stdout
    );
    assert_canary_counts_add_up(&out.stdout, 2);
}

/// With ResourceSets a template canary is planted too, and counted among the parts.
#[test]
fn a_proofs_canary_counts_add_up_with_a_resourceset_template_canary() {
    let repo = repo_from("testdata/resourcesets");
    let out = run(
        repo.path(),
        &["prove", "--base", "HEAD", "--allow-blind", "--wide"],
    );
    let flat = out.stdout.replace("\n  ", " ");
    assert!(flat.contains("1 ResourceSet template)"), "{}", out.stdout);
    let clusters = flat.matches("\n== cluster ").count().max(1);
    assert_canary_counts_add_up(&out.stdout, clusters);
}
