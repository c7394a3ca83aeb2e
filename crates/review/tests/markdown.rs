//! The Markdown report: split into comments that fit, the summary whole in the first, every
//! comment valid Markdown, the repository's text escaped.

mod common;

use common::{check_markdown, demo, generated};
use review::analysis::analyze;
use review::markdown::{comments, document, Flavor, LimitError, MarkdownOptions};
use review::model::{Cluster, Object, ObjectId, Review, Status, Unit};
use review::strip::Filters;
use serde_json::json;

fn github(limit: usize) -> MarkdownOptions {
    MarkdownOptions {
        limit,
        ..MarkdownOptions::new(Flavor::GitHub)
    }
}

/// The text outside fenced code blocks (where the repository's text must not be markup).
fn outside_code(md: &str) -> String {
    let mut out = String::new();
    let mut fence = 0;
    for line in md.lines() {
        let t = line.trim_start();
        let ticks = t.len() - t.trim_start_matches('`').len();
        if fence > 0 {
            if ticks >= fence && t[ticks..].trim().is_empty() {
                fence = 0;
            }
            continue;
        }
        if ticks >= 3 {
            fence = ticks;
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `text` without its `<code>` elements and code spans.
fn without_code_spans(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("<code>") {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once("</code>").map_or("", |(_, r)| r);
    }
    out.push_str(rest);
    let mut plain = String::new();
    for (i, part) in out.split('`').enumerate() {
        if i % 2 == 0 {
            plain.push_str(part);
        }
    }
    plain
}

#[test]
fn a_500_kustomization_change_is_split_with_the_whole_summary_first() {
    let review = generated(500, 6);
    let a = analyze(&review, &Filters::new());
    let parts = comments(&a, &github(65_536)).unwrap();
    assert!(parts.len() > 3, "{} comments", parts.len());
    for (i, p) in parts.iter().enumerate() {
        assert!(
            p.len() <= 65_536,
            "comment {} holds {} bytes",
            i + 1,
            p.len()
        );
        check_markdown(p).unwrap_or_else(|e| panic!("comment {}: {e}", i + 1));
    }
    let first = &parts[0];
    // The counts, whole: every cluster's row, the totals.
    assert!(first.contains(
        "**Kustomizations**: 500 changed · **HelmReleases**: 50 changed · in 6 of 6 clusters"
    ));
    for c in 0..6 {
        let n = 500 / 6 + usize::from(c < 500 % 6);
        assert!(
            first.contains(&format!(
                "| `cluster-{c:02}` | Kustomizations | · | {n} | · | · |"
            )),
            "row of cluster-{c:02}"
        );
    }
    assert!(first.contains("**500 objects** deleted by prune"));
    assert!(first.contains("**500 image changes** · **25 hazards**"));
    // Per Deployment: its `helm.sh/chart` and `app.kubernetes.io/version` labels and its pod
    // template's `checksum/config`.
    assert!(first.contains("_1500 changes hidden by the default filters"));
    // Later comments say where they are.
    assert!(parts[1].starts_with(&format!("**fluxsim review** — part 2 of {}", parts.len())));
    assert!(first.ends_with(&format!(
        "_Continued in the next comment (part 2 of {})._\n",
        parts.len()
    )));
    // Nothing is lost: every Kustomization's details are in some comment.
    let all = parts.join("\n");
    for i in 0..500 {
        assert!(
            all.contains(&format!("<code>flux-system/app-{i:03}</code>")),
            "app-{i:03}"
        );
    }
}

#[test]
fn gitlab_notes_take_the_same_report_in_fewer_parts() {
    let a = analyze(&generated(500, 6), &Filters::new());
    let gh = comments(&a, &github(65_536)).unwrap();
    let gl = comments(&a, &MarkdownOptions::new(Flavor::GitLab)).unwrap();
    assert!(gl.len() < gh.len());
    for p in &gl {
        assert!(p.len() <= 1_000_000);
        check_markdown(p).unwrap();
        // GitLab's collapsible section: `<summary>` on its own line after `<details>`.
        assert!(!p.contains("<details><summary>"));
    }
}

#[test]
fn a_summary_too_long_for_one_comment_shortens_its_lists_and_gives_them_after() {
    let mut review = generated(40, 2);
    // Thousands of prune deletions: too many to list in one comment.
    for i in 0..3000 {
        review.clusters[0]
            .prune_deletions
            .push(review::model::Deletion {
                unit: "flux-system/bulk".into(),
                object: ObjectId {
                    kind: "ConfigMap".into(),
                    namespace: "bulk".into(),
                    name: format!("generated-config-{i:05}"),
                    ..ObjectId::default()
                },
            });
    }
    let a = analyze(&review, &Filters::new());
    let parts = comments(&a, &github(65_536)).unwrap();
    let first = &parts[0];
    assert!(first.contains("<summary><strong>Deleted by prune</strong> (3040)</summary>"));
    assert!(first.contains("more, listed after the details"));
    assert!(
        first.contains("| `cluster-00` | Kustomizations |"),
        "the table stays"
    );
    let all = parts.join("\n");
    assert!(all.contains("### The summary's lists in full"));
    for i in [0, 1500, 2999] {
        assert!(all.contains(&format!("`ConfigMap bulk/generated-config-{i:05}`")));
    }
    for p in &parts {
        assert!(p.len() <= 65_536);
        check_markdown(p).unwrap();
    }
}

#[test]
fn an_object_larger_than_a_comment_is_split_between_lines_and_its_block_reopened() {
    let text = |tag: &str| -> String {
        (0..6000)
            .map(|i| format!("line {i} {tag}\n"))
            .collect::<Vec<_>>()
            .concat()
    };
    let cm = |t: String| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge", "namespace": "x"}, "data": {"big.txt": t}});
    let (a, b) = (cm(text("a")), cm(text("b")));
    let review = Review {
        base: "main".into(),
        head: "pr".into(),
        clusters: vec![Cluster {
            name: "prod".into(),
            units: vec![Unit {
                name: "flux-system/huge".into(),
                status: Status::Changed,
                objects: vec![Object {
                    id: ObjectId::of(&a),
                    base: Some(a),
                    head: Some(b),
                }],
                ..Unit::default()
            }],
            ..Cluster::default()
        }],
        ..Review::default()
    };
    let parts = comments(&analyze(&review, &Filters::new()), &github(65_536)).unwrap();
    assert!(parts.len() >= 3, "{}", parts.len());
    for p in &parts[1..] {
        assert!(p.contains("<code>flux-system/huge</code>: changed — 1 object changed (continued)"));
        assert!(p.contains("```diff\n"));
    }
    for p in &parts {
        assert!(p.len() <= 65_536);
        check_markdown(p).unwrap();
    }
    let all = parts.join("\n");
    assert!(all.contains("+    line 5999 b"));
}

#[test]
fn a_reorder_only_change_says_only_order_changed() {
    let ds = |order: &[&str]| {
        let c: Vec<_> = order
            .iter()
            .map(|n| json!({"name": n, "image": "i"}))
            .collect();
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "x"},
               "spec": {"template": {"spec": {"containers": c, "tolerations": [{"key": "a"}, {"key": "b"}]}}}})
    };
    let (a, mut b) = (ds(&["app", "sidecar"]), ds(&["sidecar", "app"]));
    b["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "b"}, {"key": "a"}]);
    let review = Review {
        base: "main".into(),
        head: "pr".into(),
        clusters: vec![Cluster {
            name: "prod".into(),
            units: vec![Unit {
                name: "flux-system/infra".into(),
                status: Status::Changed,
                objects: vec![Object {
                    id: ObjectId::of(&a),
                    base: Some(a),
                    head: Some(b),
                }],
                ..Unit::default()
            }],
            ..Cluster::default()
        }],
        ..Review::default()
    };
    let md = document(&analyze(&review, &Filters::new()), Flavor::GitHub);
    let diff = md
        .split("```diff\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap();
    assert_eq!(
        diff,
        "  spec.template.spec.containers: order changed\n      before: app, sidecar\n      after:  sidecar, app\n  \
         spec.template.spec.tolerations: order changed\n      before: {\"key\":\"a\"}, {\"key\":\"b\"}\n      after:  {\"key\":\"b\"}, {\"key\":\"a\"}"
    );
}

#[test]
fn chart_bump_noise_is_hidden_and_counted_in_the_summary() {
    let md = document(&analyze(&demo(false), &Filters::new()), Flavor::GitHub);
    assert!(md.contains("_5 changes hidden by the default filters (`--no-default-strip` shows them); 1 Kustomization or HelmRelease changed in nothing else._"));
    assert!(!md.contains("helm.sh/chart"));
    assert!(!md.contains("checksum/config"));
    assert!(md.contains(
        "-   ghcr.io/stefanprodan/podinfo:6.5.0\n+   ghcr.io/stefanprodan/podinfo:6.6.0"
    ));
    let all = document(&analyze(&demo(false), &Filters::none()), Flavor::GitHub);
    assert!(all.contains("metadata.labels.\"helm.sh/chart\""));
    assert!(!all.contains("hidden by the default filters"));
}

#[test]
fn repository_text_is_never_markup() {
    let a = analyze(&demo(true), &Filters::new());
    for flavor in [Flavor::GitHub, Flavor::GitLab, Flavor::Gitea] {
        let mut docs = comments(&a, &MarkdownOptions::new(flavor)).unwrap();
        docs.push(document(&a, flavor));
        for md in docs {
            check_markdown(&md).unwrap();
            let text = outside_code(&md);
            for raw in ["<script", "<!--", "<b>", "<img"] {
                assert!(
                    !text.contains(raw),
                    "{flavor:?}: {raw} outside code in\n{text}"
                );
            }
            // Mentions and references are not read in code (`<code>`, code spans): only the
            // text around must be free of them.
            let prose = without_code_spans(&text);
            for raw in ["@octocat", "#12"] {
                assert!(!prose.contains(raw), "{flavor:?}: {raw} in\n{prose}");
            }
            assert!(!md.contains('\u{1b}'), "controls are shown, not sent");
            // The backtick run in the value cannot close its block: the fence is longer.
            assert!(md.contains("````yaml\n"));
        }
    }
}

#[test]
fn a_limit_too_small_is_an_error_not_a_cut_summary() {
    let a = analyze(&demo(false), &Filters::new());
    assert_eq!(
        comments(&a, &github(1000)),
        Err(LimitError::TooSmall { limit: 1000 })
    );
    let parts = comments(&a, &github(4096)).unwrap();
    assert!(parts.len() > 1);
    for p in &parts {
        assert!(p.len() <= 4096);
        check_markdown(p).unwrap();
    }
}

#[test]
fn thousands_of_changed_clusters_keep_their_totals_in_the_first_comment() {
    let clusters = (0..2500)
        .map(|i| Cluster {
            name: format!("edge-site-{i:04}"),
            units: vec![Unit {
                name: "flux-system/apps".into(),
                status: Status::Added,
                ..Unit::default()
            }],
            ..Cluster::default()
        })
        .collect();
    let review = Review {
        base: "main".into(),
        head: "pr".into(),
        clusters,
        ..Review::default()
    };
    let parts = comments(&analyze(&review, &Filters::new()), &github(65_536)).unwrap();
    let first = &parts[0];
    assert!(first.contains("**Kustomizations**: 2500 added · in 2500 of 2500 clusters"));
    assert!(first.contains("more changed: listed after the details."));
    let all = parts.join("\n");
    assert!(all.contains("**Changed clusters** (2500)"));
    assert!(all.contains("- `edge-site-2499`: Kustomizations 1 added; HelmReleases no change"));
    for p in &parts {
        assert!(p.len() <= 65_536);
        check_markdown(p).unwrap();
    }
}

#[test]
fn every_limit_and_flavor_gives_valid_comments_that_lose_nothing() {
    for review in [demo(true), demo(false), generated(30, 3)] {
        let a = analyze(&review, &Filters::new());
        let whole = document(&a, Flavor::GitHub);
        for flavor in [Flavor::GitHub, Flavor::GitLab, Flavor::Gitea] {
            for limit in [4096, 5000, 7919, 12_000, 30_000] {
                let opts = MarkdownOptions {
                    flavor,
                    limit,
                    report_url: Some("https://example.com/run/1 (artifact)".into()),
                };
                let parts = comments(&a, &opts).unwrap();
                for (i, p) in parts.iter().enumerate() {
                    assert!(
                        p.len() <= limit,
                        "{flavor:?} {limit}: part {} holds {}",
                        i + 1,
                        p.len()
                    );
                    check_markdown(p)
                        .unwrap_or_else(|e| panic!("{flavor:?} {limit} part {}: {e}", i + 1));
                }
                // Every diff line of the whole document is in some comment.
                let all = parts.join("\n");
                for line in whole
                    .lines()
                    .filter(|l| l.starts_with('+') || l.starts_with('-'))
                {
                    assert!(all.contains(line), "{flavor:?} {limit}: lost {line}");
                }
                assert!(
                    parts[0].contains("(https://example.com/run/1%20%28artifact%29)"),
                    "the address is one link"
                );
            }
        }
    }
}
