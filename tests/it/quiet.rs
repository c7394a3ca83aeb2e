//! Quiet text reports (`report::quiet`) on `testdata/noisy`, a repository that makes many
//! findings of few kinds: the text lists errors and warnings, a finding alike in several
//! clusters once, at most 20 entries a rule, and counts info; `--verbose` lists every
//! finding; JSON keeps every finding; the exit level counts what the text leaves out; the
//! same note on several Kustomizations is said once per cluster; the apply hazards one
//! component's change brings are one per cluster, at the component's file.

use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{fluxsim, fluxsim_in, repo_from};

fn noisy() -> &'static tempfile::TempDir {
    static REPO: OnceLock<tempfile::TempDir> = OnceLock::new();
    REPO.get_or_init(|| repo_from("testdata/noisy"))
}

fn dir() -> &'static str {
    noisy().path().to_str().unwrap()
}

fn count(findings: &Value, rule: &str, severity: &str) -> usize {
    findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule && f["severity"] == severity)
        .count()
}

#[test]
fn audit_text_lists_no_info_and_counts_it_and_verbose_lists_it() {
    let text = fluxsim(&["audit", dir()]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    let json = fluxsim(&["audit", dir(), "-o", "json"]).json();
    let info = json["counts"]["info"].as_u64().unwrap();
    assert!(info >= 10, "{json:#}");
    assert!(!text.stdout.contains("info["), "{}", text.stdout);
    assert!(
        text.stdout
            .ends_with(&format!("{info} info: `--verbose` lists them\n")),
        "{}",
        text.stdout
    );
    let verbose = fluxsim(&["audit", dir(), "--verbose"]);
    assert_eq!(
        verbose.stdout.matches("info[").count() as u64,
        info,
        "{}",
        verbose.stdout
    );
    assert!(
        !verbose.stdout.contains("--verbose` lists"),
        "{}",
        verbose.stdout
    );
}

#[test]
fn a_finding_of_every_cluster_is_one_entry_naming_them_and_a_rule_lists_twenty() {
    let text = fluxsim(&["audit", dir()]).stdout;
    // 24 Kustomizations x 3 clusters: 24 entries, each naming the three clusters, 20 listed.
    assert_eq!(text.matches("warning[FS106]").count(), 20, "{text}");
    assert_eq!(
        text.matches("(clusters dev, lab, prod; flux-system/app-")
            .count(),
        20,
        "{text}"
    );
    assert!(
        text.contains("and 12 more FS106 findings (--verbose, or -o json)\n"),
        "{text}"
    );
    assert!(!text.contains("flux-system/app-21"), "{text}");
    let verbose = fluxsim(&["audit", dir(), "--verbose"]).stdout;
    assert_eq!(verbose.matches("warning[FS106]").count(), 72, "{verbose}");
}

#[test]
fn json_and_sarif_keep_every_finding_and_the_exit_level_counts_them() {
    let json = fluxsim(&["audit", dir(), "-o", "json"]).json();
    assert_eq!(count(&json["findings"], "FS106", "warning"), 72);
    assert_eq!(json["counts"]["warning"], 72);
    let sarif = fluxsim(&["audit", dir(), "-o", "sarif"]).json();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(
        results.iter().filter(|r| r["ruleId"] == "FS106").count(),
        72
    );
    // What the text leaves out still sets the exit status.
    let r = fluxsim(&["audit", dir(), "--fail-on", "info"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let r = fluxsim(&["audit", dir(), "--fail-on", "warning"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
}

#[test]
fn graph_says_a_kustomization_missing_from_two_clusters_once_naming_both() {
    // A Kustomization only one cluster has is a note (clusters often differ by design):
    // counted by default, and `--verbose` lists it once per pair.
    let text = fluxsim(&["graph", dir()]);
    assert!(!text.stdout.contains("[FS210]"), "{}", text.stdout);
    assert!(
        text.stdout.contains("2 info: `--verbose` lists them"),
        "{}",
        text.stdout
    );
    let json = fluxsim(&["graph", dir(), "-o", "json"]).json();
    assert_eq!(count(&json["findings"], "FS210", "info"), 2, "{json:#}");
    let verbose = fluxsim(&["graph", dir(), "--verbose"]);
    assert_eq!(verbose.stdout.matches("info[FS210]").count(), 2);
    assert!(
        verbose.stdout.contains("`lab-only` is defined in cluster"),
        "{}",
        verbose.stdout
    );
}

#[test]
fn validate_counts_its_info_and_verbose_lists_it() {
    let text = fluxsim(&["validate", dir()]);
    let json = fluxsim(&["validate", dir(), "-o", "json"]).json();
    let info = json["counts"]["info"].as_u64().unwrap();
    assert!(info > 0, "{json:#}");
    assert!(!text.stdout.contains("info[FS300]"), "{}", text.stdout);
    assert!(
        text.stdout
            .ends_with(&format!("\n{info} info: `--verbose` lists them\n")),
        "{}",
        text.stdout
    );
    let verbose = fluxsim(&["validate", dir(), "--verbose"]);
    assert!(verbose.stdout.contains("info[FS300]"), "{}", verbose.stdout);
}

#[test]
fn render_says_a_note_of_several_kustomizations_once_per_cluster() {
    let text = fluxsim(&["render", dir()]).stdout;
    let note = "vars from SOPS-encrypted Secret/flux-system/sops-vars";
    assert_eq!(
        text.matches("note on 3 Kustomizations").count(),
        3,
        "{text}"
    );
    for cluster in ["dev", "lab", "prod"] {
        assert!(
            text.contains(&format!(
                "{cluster}: note on 3 Kustomizations (flux-system/secret-a, flux-system/secret-b,\n    \
                 flux-system/secret-c): {note}"
            )),
            "{text}"
        );
    }
    let verbose = fluxsim(&["render", dir(), "--verbose", "--wide"]).stdout;
    assert_eq!(verbose.matches(note).count(), 9, "{verbose}");
    assert!(
        verbose.contains(&format!("lab: flux-system/secret-b note: {note}")),
        "{verbose}"
    );
}

#[test]
fn one_component_change_is_one_hazard_per_cluster_at_the_component_file() {
    let repo = repo_from("testdata/noisy");
    let setting = repo.path().join("components/shared/setting.yaml");
    let text = std::fs::read_to_string(&setting).unwrap();
    std::fs::write(&setting, text.replace("SETTING: one", "SETTING: two")).unwrap();
    let dir = Some(repo.path());
    let diff = fluxsim_in(dir, &["diff", "--base", "HEAD"]);
    assert_eq!(diff.code, 1, "{diff:?}");
    let listed = hazards(&diff.stdout);
    assert_eq!(listed.len(), 3, "{}", diff.stdout);
    for h in &listed {
        assert!(
            h.contains(
                "error `FS310` at `components/shared/setting.yaml:5:1`, in 24 Kustomizations \
                 (`flux-system/app-01`"
            ),
            "{h}"
        );
        assert!(
            h.ends_with("24 hazards in all from this file (`-o json` lists each)"),
            "{h}"
        );
    }
    // JSON keeps each hazard, each pointing at the component's file.
    let json = fluxsim_in(dir, &["diff", "--base", "HEAD", "-o", "json"]).json();
    let apply = json["applyHazards"].as_array().unwrap();
    assert_eq!(apply.len(), 72);
    assert!(
        apply
            .iter()
            .all(|f| f["location"]["file"] == "components/shared/setting.yaml"),
        "{apply:#?}"
    );
    assert_eq!(json["clusters"][0]["hazards"].as_array().unwrap().len(), 24);
    // --verbose says each.
    let verbose = fluxsim_in(dir, &["diff", "--base", "HEAD", "--verbose"]);
    assert_eq!(hazards(&verbose.stdout).len(), 72, "{}", verbose.stdout);
}

/// The items of a diff's `hazards (N):` list, each on one line.
fn hazards(text: &str) -> Vec<String> {
    let Some((_, list)) = text.split_once("\nhazards (") else {
        return Vec::new();
    };
    let list = list.split("\n\n").next().unwrap_or("");
    let mut out: Vec<String> = Vec::new();
    for line in list.lines().skip(1) {
        match line.strip_prefix("  ! ") {
            Some(item) => out.push(item.to_string()),
            None => {
                if let Some(last) = out.last_mut() {
                    last.push(' ');
                    last.push_str(line.trim());
                }
            }
        }
    }
    out
}
