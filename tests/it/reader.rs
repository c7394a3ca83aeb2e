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
    // `11/11 artifacts identical` is right; `expected in 1 artifacts` is not.
    assert!(
        !text.contains(" 1 artifacts") && !text.contains("(1 artifacts"),
        "{text}"
    );
    // `3 changes planted in head (2 cluster overlays, 1 shared file)`: the parts sum.
    let flat = text.replace("\n  ", " ");
    let note = flat.find(" planted in head (").expect(text);
    let total: usize = flat[..note].rsplit(' ').nth(1).unwrap().parse().unwrap();
    let parts = &flat[note + " planted in head (".len()..];
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

/// The shared canaries of a proof's JSON, each with how many artifacts it was expected in.
fn shared_canaries(json: &serde_json::Value) -> Vec<usize> {
    json["canaries"]["canaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["scope"] == "shared")
        .map(|c| c["expected"].as_array().unwrap().len())
        .collect()
}

/// The fleet's proof: its counts add up, and its shared canary sits in a file that two
/// artifacts or more read.
#[test]
fn a_proofs_canary_counts_add_up_on_the_fleet_and_its_shared_canary_is_read_twice() {
    let repo = repo_from("testdata/fleet");
    let out = run(repo.path(), &["prove", "--base", "HEAD", "--wide"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = run(repo.path(), &["prove", "--base", "HEAD", "-o", "json"]).json();
    let clusters = json["diff"]["clusters"]
        .as_array()
        .or_else(|| json["clusters"].as_array())
        .map_or(0, Vec::len);
    assert_canary_counts_add_up(&out.stdout, clusters);
    let shared = shared_canaries(&json);
    assert_eq!(shared.len(), 1, "{json:#}");
    assert!(shared.iter().all(|n| *n >= 2), "{shared:?}: {json:#}");
    assert!(json["canaries"].get("noSharedFile").is_none(), "{json:#}");
}

/// A repository where every file feeds one Kustomization has no shared file: no shared
/// canary is planted, and the proof says so (in its text and its JSON).
#[test]
fn a_proof_without_a_file_two_artifacts_read_says_it_planted_no_shared_canary() {
    let repo = repo_from("testdata/rename");
    let out = run(repo.path(), &["prove", "--base", "HEAD", "--wide"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout.replace("\n  ", " ").contains(
            "No shared canary: no file of the repository is read by two artifacts or more."
        ),
        "{}",
        out.stdout
    );
    assert_canary_counts_add_up(&out.stdout, 1);
    let json = run(repo.path(), &["prove", "--base", "HEAD", "-o", "json"]).json();
    assert!(shared_canaries(&json).is_empty(), "{json:#}");
    assert_eq!(json["canaries"]["noSharedFile"], true, "{json:#}");
    // The prove report of its own (the line diff) lists it with the canaries.
    let lines = run(
        repo.path(),
        &["prove", "--base", "HEAD", "--wide", "--diff-style", "lines"],
    );
    assert!(
        lines
            .stdout
            .replace("\n    ", " ")
            .contains("no shared canary: no file of the repository"),
        "{}",
        lines.stdout
    );
}

/// The shared canaries of the ResourceSet fixture's proof sit in files two artifacts read.
#[test]
fn a_resourceset_proofs_shared_canary_is_in_a_file_two_artifacts_read() {
    let repo = repo_from("testdata/resourcesets");
    let json = run(
        repo.path(),
        &["prove", "--base", "HEAD", "--allow-blind", "-o", "json"],
    )
    .json();
    let shared = shared_canaries(&json);
    assert!(shared.iter().all(|n| *n >= 2), "{shared:?}: {json:#}");
    assert_eq!(
        shared.is_empty(),
        json["canaries"]["noSharedFile"] == true,
        "{json:#}"
    );
}

/// `render` and `audit` count a repository with ResourceSets alike: the Kustomizations and
/// the ResourceSets' entries apart, each as many as the render's JSON has.
#[test]
fn render_and_audit_count_kustomizations_and_resourcesets_alike() {
    let repo = repo_from("testdata/resourcesets");
    let json = run(repo.path(), &["render", "-o", "json"]).json();
    let entries: Vec<&serde_json::Value> = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["kustomizations"].as_array().unwrap())
        .collect();
    let rsets = entries
        .iter()
        .filter(|k| k["resourceSet"].is_object())
        .count();
    let ks = entries.len() - rsets;
    assert!(rsets > 0 && ks > 0, "{json:#}");
    let counts = format!("{ks} Kustomizations and {rsets} ResourceSets");
    let render = run(repo.path(), &["render"]);
    assert!(
        render
            .stdout
            .contains(&format!("/{ks} Kustomizations rendered"))
            && render
                .stdout
                .contains(&format!("/{rsets} ResourceSets rendered")),
        "{}",
        render.stdout
    );
    assert!(
        render.stdout.contains(&format!(": {counts}\n")),
        "{}",
        render.stdout
    );
    let audit = run(repo.path(), &["audit", "--wide"]);
    assert!(
        audit.stdout.contains(&format!(" in {counts} of 1 cluster")),
        "{}",
        audit.stdout
    );
    // What `diff` takes from base is counted against the Kustomizations alone.
    let diff = run(repo.path(), &["diff", "--base", "HEAD"]);
    assert!(
        diff.stdout
            .replace("\n  ", " ")
            .contains(&format!(" of {ks} Kustomizations taken from base")),
        "{}",
        diff.stdout
    );
}
