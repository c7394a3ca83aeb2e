//! A pull request cannot write markup into fluxsim's reports, nor escape sequences into a
//! terminal: a repository whose Kustomization names, namespaces, paths, cluster folders,
//! file names and ConfigMap values hold `<!--`, `</summary>`, backtick runs, `|`, `@mentions`,
//! `#12` references,
//! newlines and ESC (none of which is checked offline: the API server would refuse most of
//! them, fluxsim reads them raw), and every report printed from it.

use std::fs;
use std::path::Path;

use crate::common::{commit_all, fluxsim_in, git, Output};

/// A Kustomization `metadata.name`: ends a code span, a `<code>`, the `<summary>`, opens an
/// HTML comment (which would hide the rest of the comment), a table cell, a mention, a
/// `<details>`, an ESC sequence and a carriage return.
const NAME: &str = "web`</code></summary><!--|@octocat <details>\u{1b}[2J\r";
/// [`NAME`] as a YAML double-quoted scalar.
const NAME_YAML: &str = r#""web`</code></summary><!--|@octocat <details>\e[2J\r""#;
/// A cluster folder: markup, a mention, and references a forge links and notifies (an
/// issue or pull request `#12`, a GitLab merge request `!3`).
const CLUSTER: &str = "prod`<!--|@octocat #12 !3";
/// A `spec.path` that does not exist: its error quotes it, newlines and all.
const PATH_YAML: &str = r#""./apps/<!--\n\n```\n</details>""#;
/// A Kustomization name that is a path out of `render --out`'s folder.
const TRAVERSAL: &str = "../../../../pwned";
/// A manifest's file name.
const FILE: &str = "cm <!--`|@octocat.yaml";

/// `NAME` as a Markdown table cell shows it: `<code>` with every markup character a
/// reference, the ESC and `\r` visible.
const NAME_CELL: &str =
    "<code>flux-system/web&#96;&lt;/code&gt;&lt;/summary&gt;&lt;!--&#124;@octocat \
                         &lt;details&gt;\\x1b&#91;2J\\r</code>";
/// `NAME` as a `<summary>` shows it: HTML text in `<code>`.
const NAME_SUMMARY: &str = "<code>flux-system/web`&lt;/code&gt;&lt;/summary&gt;&lt;!--|@octocat \
                            &lt;details&gt;\\x1b[2J\\r</code>";

fn kustomizations(cluster: &str) -> String {
    format!(
        r#"apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m0s
  ref:
    branch: main
  url: ssh://git@example.internal/fleet.git
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m0s
  path: "./clusters/{cluster}"
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {NAME_YAML}
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps/web
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: broken
  namespace: flux-system
spec:
  interval: 10m
  path: {PATH_YAML}
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {TRAVERSAL}
  namespace: flux-system
spec:
  interval: 10m
  path: ./apps/web
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: other
  namespace: "ns<!--"
spec:
  interval: 10m
  path: ./apps/web
  prune: true
  dependsOn:
    - name: "missing`<!--"
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
"#
    )
}

const CONFIGMAP: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: "web<!--`|"
  namespace: default
data:
  greeting: "hello\n````````\n</details>\n<!--\n::error::pwned\n@octocat"
"#;

const DEPLOYMENT: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: "app<!--"
  namespace: default
spec:
  selector:
    matchLabels:
      app: app
  template:
    metadata:
      labels:
        app: app
    spec:
      containers:
        - name: "c<!--`|"
          image: "ghcr.io/example/app:1<!--`|@octocat"
"#;

/// The hostile repository, committed, then changed in the work tree (the ConfigMap's
/// value and the image): what a pull request brings.
fn hostile_repo() -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("fluxsim-test-hostile-")
        .tempdir()
        .unwrap();
    let root = tmp.path();
    for cluster in ["dev", CLUSTER] {
        let dir = root.join("clusters").join(cluster);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("flux.yaml"), kustomizations(cluster)).unwrap();
    }
    let web = root.join("apps/web");
    fs::create_dir_all(&web).unwrap();
    fs::write(web.join(FILE), CONFIGMAP).unwrap();
    fs::write(web.join("deployment.yaml"), DEPLOYMENT).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    commit_all(root, "hostile");
    edit(&web.join(FILE), "hello", "bye");
    edit(&web.join("deployment.yaml"), "app:1", "app:2");
    tmp
}

fn edit(file: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{} lacks {from}", file.display());
    fs::write(file, text.replacen(from, to, 1)).unwrap();
}

fn run(repo: &Path, args: &[&str]) -> Output {
    let out = fluxsim_in(Some(repo), args);
    assert!(
        out.code == 0 || out.code == 1,
        "{args:?} exit {}:\n{}{}",
        out.code,
        out.stdout,
        out.stderr
    );
    out
}

/// Every Markdown report of the hostile repository, by command.
fn markdown_reports(repo: &Path) -> Vec<(&'static str, String)> {
    let md = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--format", "markdown"]);
        run(repo, &all).stdout
    };
    let flavour = |f: &str| run(repo, &["diff", "--base", "HEAD", "--format", f]).stdout;
    vec![
        ("diff", md(&["diff", "--base", "HEAD"])),
        ("diff --format gitlab", flavour("gitlab")),
        ("diff --format gitea", flavour("gitea")),
        ("prove", md(&["prove", "--base", "HEAD", "--expect", "any"])),
        ("compare", md(&["compare"])),
        ("graph", md(&["graph"])),
        ("images", md(&["images"])),
        ("images --diff", md(&["images", "--diff", "--base", "HEAD"])),
    ]
}

/// `md` split as CommonMark reads it: the lines outside fenced code blocks, and each block
/// as (its fence's length, its body); panics on a block that is never closed. (fluxsim's
/// fences start their line.)
fn split_fenced(md: &str) -> (Vec<&str>, Vec<(usize, Vec<&str>)>) {
    let ticks = |l: &str| l.len() - l.trim_start_matches('`').len();
    let mut outside = Vec::new();
    let mut blocks = Vec::new();
    let mut open: Option<(usize, Vec<&str>)> = None;
    for line in md.lines() {
        match &mut open {
            Some((n, body)) => {
                if ticks(line) >= *n && line.trim_start_matches('`').trim().is_empty() {
                    blocks.push(open.take().unwrap());
                } else {
                    body.push(line);
                }
            }
            None if ticks(line) >= 3 => open = Some((ticks(line), Vec::new())),
            None => outside.push(line),
        }
    }
    assert!(open.is_none(), "a fenced block is never closed:\n{md}");
    (outside, blocks)
}

/// The text GitHub reads for mentions: `outside` lines without code (`` `...` ``,
/// `<code>...</code>`).
fn prose(outside: &[&str]) -> String {
    let mut out = String::new();
    for line in outside {
        let mut rest = *line;
        while let Some(start) = rest.find("<code>") {
            out.push_str(&rest[..start]);
            let end = rest[start..]
                .find("</code>")
                .map_or(rest.len(), |e| start + e + 7);
            rest = &rest[end..];
        }
        // Backticks outside fences are fluxsim's own (the repository's are `&#96;`).
        for (i, part) in rest.split('`').enumerate() {
            if i % 2 == 0 {
                out.push_str(part);
            }
        }
        out.push('\n');
    }
    out
}

/// What holds for any Markdown report fluxsim prints, whatever the repository says: in a
/// fenced block the repository's text is shown as it is (GitHub escapes it); outside, it
/// opens no comment, no tag, no code block, no table cell, and mentions nobody.
fn assert_markdown_is_fluxsims(what: &str, md: &str) {
    assert!(
        !md.contains('\u{1b}') && !md.contains('\r'),
        "{what}: a control is raw:\n{md}"
    );
    let (outside, blocks) = split_fenced(md);
    let text = outside.join("\n");
    assert!(
        !text.contains("<!--"),
        "{what}: an HTML comment is opened:\n{md}"
    );
    let count = |s: &str| text.matches(s).count();
    assert_eq!(count("<details>"), count("</details>"), "{what}:\n{md}");
    assert_eq!(count("<summary>"), count("</summary>"), "{what}:\n{md}");
    assert_eq!(count("<summary>"), count("<details>"), "{what}:\n{md}");
    // A line that starts with HTML is one of fluxsim's.
    for line in outside.iter().filter(|l| l.starts_with('<')) {
        // GitLab's and Gitea's form: `<details>` alone, `<summary>` on the next line.
        if matches!(*line, "</details>" | "<details>" | "<details open>") {
            continue;
        }
        let summary = line
            .strip_prefix("<details><summary>")
            .or_else(|| line.strip_prefix("<details open><summary>"))
            .or_else(|| line.strip_prefix("<summary>"));
        assert!(
            summary.is_some() && line.ends_with("</summary>"),
            "{what}: a line of HTML fluxsim did not write: {line:?}\n{md}"
        );
        assert_eq!(line.matches("<summary>").count(), 1, "{what}: {line}");
        assert_eq!(line.matches("</summary>").count(), 1, "{what}: {line}");
    }
    // No block can be closed from inside: its fence is longer than any backtick run in it.
    for (fence, body) in &blocks {
        for line in body {
            let longest = line.split(|c| c != '`').map(str::len).max().unwrap_or(0);
            assert!(longest < *fence, "{what}: {line:?} in a fence of {fence}");
        }
    }
    // Every row of a table has the cells of its header.
    let mut header: Option<usize> = None;
    for line in &outside {
        if !line.starts_with('|') {
            header = None;
            continue;
        }
        let cells = line.replace("\\|", "").matches('|').count();
        match header {
            None => header = Some(cells),
            Some(h) => assert_eq!(cells, h, "{what}: {line}\n{md}"),
        }
    }
    let prose = prose(&outside);
    assert!(
        !prose.contains("@octocat"),
        "{what}: a mention outside code:\n{prose}"
    );
    // (`&#124;` holds `#12` too: a character reference is not one.)
    for reference in ["#12", "!3"] {
        let raw = prose
            .match_indices(reference)
            .filter(|(at, _)| !prose[..*at].ends_with('&'))
            .count();
        assert_eq!(raw, 0, "{what}: {reference} would link an issue:\n{prose}");
    }
}

#[test]
fn markdown_report_escapes_an_html_comment_in_a_kustomization_name() {
    let repo = hostile_repo();
    let md = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--format",
            "markdown",
        ],
    )
    .stdout;
    assert!(
        md.contains(&format!("| {NAME_CELL} | changed |")),
        "the table row:\n{md}"
    );
    assert!(
        md.contains(&format!(
            "<details><summary>{NAME_SUMMARY} in dev, prod`&lt;!--|@\u{2060}octocat &#35;12 &#33;3: 2 objects</summary>"
        )),
        "the summary:\n{md}"
    );
    assert!(
        md.contains("### <code>prod&#96;&lt;!--&#124;@octocat &#35;12 &#33;3</code>\n"),
        "the cluster's heading:\n{md}"
    );
    assert!(
        md.contains("| <code>ns&lt;!--/other</code> | changed |"),
        "a namespace:\n{md}"
    );
    assert_markdown_is_fluxsims("diff", &md);
}

#[test]
fn markdown_reports_of_a_hostile_repository_open_no_comment_and_close_only_their_own_details() {
    let repo = hostile_repo();
    for (what, md) in markdown_reports(repo.path()) {
        assert!(md.starts_with("## "), "{what}:\n{md}");
        assert_markdown_is_fluxsims(what, &md);
    }
}

#[test]
fn html_report_of_a_hostile_repository_holds_only_fluxsims_markup() {
    let repo = hostile_repo();
    for cmd in [
        &["diff", "--base", "HEAD"][..],
        &["prove", "--base", "HEAD", "--expect", "any"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--format", "html"]);
        let html = run(repo.path(), &args).stdout;
        assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
        // One script and one style, fluxsim's; no comment, no element of the repository's.
        assert_eq!(html.matches("<script").count(), 1, "{cmd:?}");
        assert_eq!(html.matches("<style").count(), 1, "{cmd:?}");
        assert!(!html.contains("<!--"), "{cmd:?}");
        assert!(!html.contains("<details>\u{1b}"), "{cmd:?}");
        assert!(!html.contains('\u{1b}') && !html.contains('\r'), "{cmd:?}");
        // The name is there, as text.
        assert!(html.contains("&lt;/summary&gt;&lt;!--"), "{cmd:?}");
    }
}

#[test]
fn markdown_diff_fence_is_longer_than_the_repositorys_backtick_runs() {
    let repo = hostile_repo();
    let md = run(
        repo.path(),
        &[
            "diff",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--format",
            "markdown",
        ],
    )
    .stdout;
    // The ConfigMap's value holds a run of 8 backticks, shown in the diff: a fence of 9.
    assert!(md.contains("\n`````````diff\n"), "{md}");
    assert!(md.contains("\n     ````````\n"), "{md}");
    // The error quoting the path (a fence of 3 in it) sits in a fence of 4, as it is.
    assert!(
        md.contains(
            "````diff\n# base and head: failed: spec.path `./apps/<!--\n\n```\n</details>` does not exist"
        ),
        "{md}"
    );
}

#[test]
fn markdown_prove_escapes_paths_errors_and_file_names() {
    let repo = hostile_repo();
    let md = run(
        repo.path(),
        &[
            "prove",
            "--diff-style",
            "lines",
            "--base",
            "HEAD",
            "--expect",
            "any",
            "--format",
            "markdown",
        ],
    )
    .stdout;
    // What the proof could not see: the error's code is `<code>`, its words text.
    assert!(
        md.contains(
            "- ⚠️ could not see dev:flux-system/broken: base and head: failed: spec.path \
             <code>./apps/&lt;!--\\n\\n&#96;&#96;&#96;\\n&lt;/details&gt;</code> does not exist in the source\n"
        ),
        "{md}"
    );
    // The shared canary sits in the file with the odd name.
    assert!(
        md.contains("(shared) in apps/web/cm &lt;!--&#96;&#124;@\u{2060}octocat.yaml: "),
        "{md}"
    );
    assert_markdown_is_fluxsims("prove", &md);
}

#[test]
fn markdown_graph_escapes_mermaid_labels_and_finding_messages() {
    let repo = hostile_repo();
    let md = run(repo.path(), &["graph", "--format", "markdown"]).stdout;
    assert!(
        md.contains(
            "[\"web#96;#lt;/code#gt;#lt;/summary#gt;#lt;!--|@octocat #lt;details#gt;\\x1b[2J\\r<br/>"
        ),
        "{md}"
    );
    assert!(
        md.contains("  subgraph c1[\"prod#96;#lt;!--|@octocat #35;12 !3\"]\n"),
        "{md}"
    );
    assert_markdown_is_fluxsims("graph", &md);
}

#[test]
fn markdown_images_escapes_image_references() {
    let repo = hostile_repo();
    let md = run(
        repo.path(),
        &["images", "--diff", "--base", "HEAD", "--format", "markdown"],
    )
    .stdout;
    assert!(
        md.contains(
            "| <code>ghcr.io/example/app:1&lt;!--&#96;&#124;@octocat</code> → \
             <code>ghcr.io/example/app:2&lt;!--&#96;&#124;@octocat</code> |"
        ),
        "{md}"
    );
    assert_markdown_is_fluxsims("images --diff", &md);
}

#[test]
fn markdown_reports_cut_by_limit_bytes_stay_balanced() {
    let repo = hostile_repo();
    for limit in [400, 700, 1000, 1500, 2000, 3000, 4000] {
        let text = limit.to_string();
        for args in [
            &["diff", "--base", "HEAD"][..],
            &["prove", "--base", "HEAD", "--expect", "any"][..],
        ] {
            let mut all = args.to_vec();
            all.extend(["--format", "markdown", "--limit-bytes", &text]);
            let out = run(repo.path(), &all);
            assert!(out.stdout.len() <= limit, "{limit}: {}", out.stdout.len());
            if !out.stdout.is_empty() {
                assert_markdown_is_fluxsims(&format!("{args:?} cut at {limit}"), &out.stdout);
            }
        }
    }
}

#[test]
fn text_reports_show_the_repositorys_control_characters_escaped() {
    let repo = hostile_repo();
    for args in [
        &["render"][..],
        &["diff", "--base", "HEAD"][..],
        &["prove", "--base", "HEAD", "--expect", "any"][..],
        &["compare"][..],
        &["audit"][..],
        &["graph"][..],
        &["images"][..],
        &["images", "--diff", "--base", "HEAD"][..],
    ] {
        // Without colour, no escape sequence at all is fluxsim's own, wrapped at 80 columns
        // or not.
        let mut all = args.to_vec();
        all.extend(["--color", "never"]);
        let narrow = run(repo.path(), &all);
        // Every name on its line, and the audit's per-Kustomization lines too.
        all.extend(["--wide", "--verbose"]);
        let out = run(repo.path(), &all);
        for (stream, text) in [
            ("stdout", &narrow.stdout),
            ("stderr", &narrow.stderr),
            ("stdout", &out.stdout),
            ("stderr", &out.stderr),
        ] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\r'),
                "{args:?} {stream}:\n{text}"
            );
        }
        if args[0] != "images" {
            assert!(
                out.stdout.contains("\\x1b[2J\\r"),
                "{args:?}:\n{}",
                out.stdout
            );
        }
    }
}

#[test]
fn text_report_keeps_a_name_and_a_path_on_their_line() {
    let repo = hostile_repo();
    let out = run(repo.path(), &["render", "--wide"]);
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("dev") && l.contains("flux-system/broken"))
        .unwrap();
    assert!(
        row.contains("./apps/<!--\\n\\n```\\n</details>  "),
        "{row}\n{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "flux-system/web`</code></summary><!--|@octocat <details>\\x1b[2J\\r  ./apps/web"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn json_report_keeps_the_repositorys_names_exactly() {
    let repo = hostile_repo();
    let json = run(repo.path(), &["render", "--format", "json"]).json();
    let names: Vec<&str> = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&NAME), "{names:?}");
    let diff = run(repo.path(), &["diff", "--base", "HEAD", "--format", "json"]);
    let text = serde_json::to_string(&diff.json()).unwrap();
    // The Kustomization's name, as `{namespace, name}`, exactly as the repository has it.
    assert!(
        text.contains("\"name\":\"web`</code></summary><!--|@octocat <details>\\u001b[2J\\r"),
        "{text}"
    );
}

#[test]
fn render_out_writes_every_file_inside_its_folder() {
    let repo = hostile_repo();
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("a/b/out");
    fs::create_dir_all(dir.parent().unwrap()).unwrap();
    let out = run(repo.path(), &["render", "--out", dir.to_str().unwrap()]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    // Nothing beside the folder: the names are segments of a path, never `..`.
    let mut outside = Vec::new();
    for entry in walk(top.path()) {
        if !entry.starts_with(&dir) && entry.is_file() {
            outside.push(entry);
        }
    }
    assert!(
        outside.is_empty(),
        "written outside {}: {outside:?}",
        dir.display()
    );
    // The name is one segment, its `/` written `%2F` (as docs/security.md says).
    assert!(dir
        .join("dev/flux-system/..%2F..%2F..%2F..%2Fpwned.yaml")
        .is_file());
    assert!(dir.join(format!("{CLUSTER}/ns<!--/other.yaml")).is_file());
    // One line of SHA256SUMS per file, whatever the names hold.
    let sums = fs::read_to_string(dir.join("SHA256SUMS")).unwrap();
    let files = walk(&dir)
        .into_iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "yaml"))
        .count();
    assert_eq!(sums.lines().count(), files, "{sums}");
    assert!(sums.contains("%0D.yaml\n"), "{sums}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}
