//! The GitHub Action's and the GitLab job's scripts (`scripts/action/`), run here as the CI
//! runs them: the comment body (marker, cap, note), the sticky comment and note (with fake
//! `gh` and `curl`), the merge-base, the installer (from a local release folder), and the
//! whole sequence on a fixture pull request (two commits of `testdata/fleet`). The CI recipes
//! (`docs/ci.md`) are checked to be these files, copied.

// The shared harness serves several test crates; this one uses part of it.
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{commit_all, crate_path, git, repo_from};

const GITHUB_LIMIT: usize = 65_536;

fn script(name: &str) -> PathBuf {
    crate_path(&format!("scripts/action/{name}"))
}

/// Runs a script with `env`, in `cwd`; (status, stdout, stderr).
fn run_script(
    name: &str,
    args: &[&str],
    env: &[(&str, &str)],
    cwd: Option<&Path>,
) -> (i32, String, String) {
    let mut cmd = Command::new("bash");
    cmd.arg(script(name)).args(args);
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GITHUB_OUTPUT",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let out = cmd.output().expect("bash runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn comment_body(report: &str, args: &[&str]) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("report.md");
    fs::write(&file, report).unwrap();
    let mut all: Vec<&str> = args.to_vec();
    all.push(file.to_str().unwrap());
    let (code, out, err) = run_script("comment-body", &all, &[], None);
    assert_eq!(code, 0, "{err}");
    out
}

/// A report of `n` Kustomization sections, each a `<details>` with a diff in a fence.
fn big_report(n: usize) -> String {
    let mut s = String::from("## ✅ fluxsim prove: `main` → `HEAD`: PASS\n\n### Changes\n");
    for i in 0..n {
        let _ = write!(
            s,
            "\n<details><summary><code>flux-system/app-{i}</code> in dev, prod: 1 object</summary>\n\n```diff\n"
        );
        for j in 0..40 {
            let _ = writeln!(s, "+  key-{j}: value {i} é");
        }
        s.push_str("```\n\n</details>\n");
    }
    s
}

#[test]
fn comment_body_starts_with_the_hidden_marker_and_keeps_a_small_report_whole() {
    let report = "## fluxsim diff: identical\n\nnothing changed\n";
    let body = comment_body(report, &["--marker", "prove"]);
    assert_eq!(body, format!("<!-- fluxsim-comment: prove -->\n{report}"));
}

#[test]
fn comment_body_is_capped_at_githubs_65536_characters_with_a_note_of_what_was_cut() {
    let report = big_report(200);
    assert!(report.len() > 3 * GITHUB_LIMIT);
    let body = comment_body(&report, &["--artifact-url", "https://example.invalid/a/1"]);
    assert!(
        body.chars().count() <= GITHUB_LIMIT,
        "{}",
        body.chars().count()
    );
    assert!(body.len() <= GITHUB_LIMIT, "bytes too: {}", body.len());
    assert!(body.starts_with("<!-- fluxsim-comment: fluxsim -->\n## ✅ fluxsim prove"));
    assert!(
        body.contains("> This report was cut to fit a pull-request comment (65536 characters): ")
    );
    // What was cut is named: the sections that did not fit.
    let note = &body[body.find("> [!WARNING]").unwrap()..];
    assert!(
        note.contains(", with: the rest of `flux-system/app-"),
        "{note}"
    );
    assert!(
        note.contains("in dev, prod: 1 object; `flux-system/app-"),
        "{note}"
    );
    assert!(note.contains(" more."), "{note}");
    assert!(body.contains("[fluxsim report artifact](https://example.invalid/a/1)"));
    // Every code block and <details> that was opened is closed.
    assert_eq!(body.matches("```").count() % 2, 0);
    assert_eq!(
        body.matches("<details>").count(),
        body.matches("</details>").count()
    );
    // Nothing but whole lines of the report (and the note) are kept.
    for line in body
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("> [!WARNING]"))
    {
        assert!(
            line.is_empty() || line == "```" || line == "</details>" || report.contains(line),
            "{line}"
        );
    }
}

#[test]
fn comment_body_cap_closes_a_fence_cut_in_the_middle() {
    let mut report = String::from("## x\n\n<details><summary>big</summary>\n\n````diff\n");
    for i in 0..5000 {
        let _ = writeln!(report, "+line {i}");
    }
    report.push_str("````\n\n</details>\n");
    let body = comment_body(&report, &["--max-chars", "8000"]);
    assert!(body.len() <= 8000, "{}", body.len());
    let tail: Vec<&str> = body.lines().rev().take(8).collect();
    assert!(tail.contains(&"````"), "{tail:?}");
    assert!(tail.contains(&"</details>"), "{tail:?}");
}

#[test]
fn comment_body_refuses_a_marker_that_could_break_out_of_the_comment() {
    let (code, _, err) = run_script("comment-body", &["--marker", "x -->"], &[], None);
    assert_eq!(code, 2);
    assert!(err.contains("--marker"), "{err}");
}

/// Writes an executable fake of a tool, `name`, in `dir`, running `body` in bash.
fn fake_bin(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    fs::write(&path, format!("#!/usr/bin/env bash\n{body}")).unwrap();
    let mut perm = fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    fs::set_permissions(&path, perm).unwrap();
}

fn with_path(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn has_jq() -> bool {
    if Command::new("jq").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "jq is not installed, and CI must run this test"
        );
        eprintln!("jq is not installed: skipped");
        return false;
    }
    true
}

/// A fake `gh`, logging every call to `FAKE_GH_LOG`. `api user` answers `FAKE_GH_USER`, or
/// fails as the workflow token's 403 does when that is empty. The comment list is
/// `FAKE_GH_COMMENTS` (the API's JSON), filtered by the script's own `--jq` with the real jq.
/// A write whose method is in `FAKE_GH_FAIL` fails as GitHub's 403 does.
const FAKE_GH: &str = r#"echo "$*" >> "$FAKE_GH_LOG"
case "$*" in
  "api user --jq .login")
    [ -n "${FAKE_GH_USER:-}" ] || { echo 'HTTP 403: Resource not accessible by integration' >&2; exit 1; }
    echo "$FAKE_GH_USER" ;;
  *"--paginate"*) printf '%s' "${FAKE_GH_COMMENTS:-[]}" | jq -r "${@: -1}" ;;
  *"-X "*)
    for m in ${FAKE_GH_FAIL:-}; do
      case "$*" in *"-X $m "*) echo "HTTP 403: Resource not accessible by integration" >&2; exit 1 ;; esac
    done
    case "$*" in *"-X PATCH"*|*"-X POST"*) echo "https://github.example/pr/7#comment" ;; esac ;;
esac
"#;

/// The workflow token's user, whose comments are the report's by default.
const BOT: &str = "github-actions[bot]";

/// A GitHub issue comment as the API lists it.
fn gh_comment(id: u64, login: &str, body: &str) -> serde_json::Value {
    serde_json::json!({"id": id, "user": {"login": login, "type": "User"}, "body": body})
}

/// post-comment against the fake `gh`, on pull request 7 of `org/fleet`.
struct FakeGitHub {
    tmp: tempfile::TempDir,
    path: String,
    log: PathBuf,
}

/// What one post-comment run did: its status, stdout (the job log), stderr, and the `gh`
/// calls the fake saw, in order.
struct GhRun {
    code: i32,
    out: String,
    err: String,
    calls: Vec<String>,
}

impl GhRun {
    /// The calls that write (PATCH, POST, DELETE).
    fn writes(&self) -> Vec<&str> {
        self.calls
            .iter()
            .map(String::as_str)
            .filter(|c| c.starts_with("api -X "))
            .collect()
    }
}

impl FakeGitHub {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        fs::create_dir(&bin).unwrap();
        fake_bin(&bin, "gh", FAKE_GH);
        let path = with_path(&bin);
        let log = tmp.path().join("gh.log");
        Self { tmp, path, log }
    }

    /// A comment body file, `text` after the marker line of `marker`.
    fn body(&self, file: &str, marker: &str, text: &str) -> PathBuf {
        let path = self.tmp.path().join(file);
        fs::write(&path, format!("<!-- fluxsim-comment: {marker} -->\n{text}")).unwrap();
        path
    }

    fn run(&self, bodies: &[&Path], comments: &[serde_json::Value], env: &[(&str, &str)]) -> GhRun {
        let _ = fs::remove_file(&self.log);
        let comments = serde_json::Value::Array(comments.to_vec()).to_string();
        let mut all = vec![
            ("PATH", self.path.as_str()),
            ("GITHUB_REPOSITORY", "org/fleet"),
            ("PR_NUMBER", "7"),
            ("FAKE_GH_LOG", self.log.to_str().unwrap()),
            ("FAKE_GH_COMMENTS", comments.as_str()),
        ];
        all.extend_from_slice(env);
        let args: Vec<&str> = bodies.iter().map(|b| b.to_str().unwrap()).collect();
        let (code, out, err) = run_script("post-comment", &args, &all, None);
        let calls = fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        GhRun {
            code,
            out,
            err,
            calls,
        }
    }
}

#[test]
fn sticky_comments_are_edited_in_place_created_when_missing_and_deleted_when_the_report_shrinks() {
    if !has_jq() {
        return;
    }
    let gh = FakeGitHub::new();
    let one = gh.body("body-1.md", "fluxsim", "summary\n");
    let two = gh.body("body-2.md", "fluxsim part 2", "details\n");
    // The first push: both parts are posted.
    let run = gh.run(&[&one, &two], &[gh_comment(11, "alice", "LGTM")], &[]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert_eq!(run.out.matches("\nposted ").count(), 2, "{}", run.out);
    assert_eq!(run.calls[0], "api user --jq .login", "{:?}", run.calls);
    assert!(
        run.calls[1].starts_with("api --paginate repos/org/fleet/issues/7/comments --jq"),
        "{:?}",
        run.calls
    );
    let writes = run.writes();
    assert_eq!(writes.len(), 2, "{writes:?}");
    assert!(writes[0].starts_with("api -X POST repos/org/fleet/issues/7/comments -F body=@"));
    assert!(
        writes[0].ends_with("body-1.md --jq .html_url"),
        "{writes:?}"
    );
    assert!(
        writes[1].ends_with("body-2.md --jq .html_url"),
        "{writes:?}"
    );
    // A later push whose report is shorter: part 1 edited, parts 2 and 3 of the earlier
    // report deleted; a comment of someone else's and another job's marker kept.
    let existing = [
        gh_comment(11, "alice", "LGTM"),
        gh_comment(4242, BOT, "<!-- fluxsim-comment: fluxsim -->\nold"),
        gh_comment(4300, BOT, "<!-- fluxsim-comment: fluxsim part 2 -->\nold"),
        gh_comment(4301, BOT, "<!-- fluxsim-comment: fluxsim part 3 -->\nold"),
        gh_comment(5000, BOT, "<!-- fluxsim-comment: other part 2 -->\nold"),
    ];
    let run = gh.run(&[&one], &existing, &[]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert!(run.out.contains("\nupdated "), "{}", run.out);
    let writes = run.writes();
    assert!(
        writes[0].starts_with("api -X PATCH repos/org/fleet/issues/comments/4242 -F body=@"),
        "{writes:?}"
    );
    assert_eq!(
        writes[1..],
        [
            "api -X DELETE repos/org/fleet/issues/comments/4300",
            "api -X DELETE repos/org/fleet/issues/comments/4301"
        ],
        "{writes:?}"
    );
    // Parts of another marker are refused.
    let other = gh.body("other.md", "other part 2", "x\n");
    let run = gh.run(&[&one, &other], &[], &[]);
    assert_eq!(run.code, 2);
    assert!(run.err.contains("does not carry the marker"), "{}", run.err);
}

/// Issue 42, item 5: anyone can write a comment that starts with the marker; an earlier one
/// of an attacker's must not receive the report (nor be deleted as an extra part).
#[test]
fn sticky_comment_of_another_author_holding_the_marker_is_not_edited_and_the_bots_own_is() {
    if !has_jq() {
        return;
    }
    let gh = FakeGitHub::new();
    let one = gh.body("body-1.md", "fluxsim", "summary\n");
    let existing = [
        gh_comment(10, "mallory", "<!-- fluxsim-comment: fluxsim -->\nspoof"),
        gh_comment(
            12,
            "mallory",
            "<!-- fluxsim-comment: fluxsim part 2 -->\nspoof",
        ),
        gh_comment(20, BOT, "<!-- fluxsim-comment: fluxsim -->\nold"),
    ];
    let run = gh.run(&[&one], &existing, &[]);
    assert_eq!(run.code, 0, "{}", run.err);
    let writes = run.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert!(
        writes[0].starts_with("api -X PATCH repos/org/fleet/issues/comments/20 -F body=@"),
        "{writes:?}"
    );
    // Both spoofs are named in the job log, with their author.
    for id in [10, 12] {
        assert!(
            run.out.contains(&format!(
                "::warning::fluxsim ignored comment {id} by mallory: it holds the marker of this report"
            )),
            "{}",
            run.out
        );
    }
    assert!(
        run.out.contains("but github-actions[bot] did not write it"),
        "{}",
        run.out
    );
}

#[test]
fn sticky_comment_is_created_when_only_another_author_holds_the_marker() {
    if !has_jq() {
        return;
    }
    let gh = FakeGitHub::new();
    let one = gh.body("body-1.md", "fluxsim", "summary\n");
    let existing = [gh_comment(
        10,
        "mallory",
        "<!-- fluxsim-comment: fluxsim -->\nspoof",
    )];
    let run = gh.run(&[&one], &existing, &[]);
    assert_eq!(run.code, 0, "{}", run.err);
    let writes = run.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert!(
        writes[0].starts_with("api -X POST repos/org/fleet/issues/7/comments -F body=@"),
        "{writes:?}"
    );
    assert!(
        run.out
            .contains("::warning::fluxsim ignored comment 10 by mallory: "),
        "{}",
        run.out
    );
}

#[test]
fn sticky_comment_author_is_the_tokens_user_when_it_can_read_it_and_the_input_overrides_it() {
    if !has_jq() {
        return;
    }
    let gh = FakeGitHub::new();
    let one = gh.body("body-1.md", "fluxsim", "summary\n");
    let existing = [
        gh_comment(10, BOT, "<!-- fluxsim-comment: fluxsim -->\nold"),
        gh_comment(20, "alice", "<!-- fluxsim-comment: fluxsim -->\nold"),
        gh_comment(
            30,
            "fluxsim-app[bot]",
            "<!-- fluxsim-comment: fluxsim -->\nold",
        ),
    ];
    // A personal access token of alice's: `GET /user` says who it is.
    let run = gh.run(&[&one], &existing, &[("FAKE_GH_USER", "alice")]);
    assert_eq!(run.code, 0, "{}", run.err);
    let writes = run.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert!(writes[0].starts_with("api -X PATCH repos/org/fleet/issues/comments/20 "));
    assert!(
        run.out
            .contains("ignored comment 10 by github-actions[bot]: "),
        "{}",
        run.out
    );
    // The `comment-author` input wins, and /user is not asked.
    let run = gh.run(
        &[&one],
        &existing,
        &[
            ("FAKE_GH_USER", "alice"),
            ("COMMENT_AUTHOR", "fluxsim-app[bot]"),
        ],
    );
    assert_eq!(run.code, 0, "{}", run.err);
    assert!(
        !run.calls.iter().any(|c| c.starts_with("api user")),
        "{:?}",
        run.calls
    );
    let writes = run.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert!(writes[0].starts_with("api -X PATCH repos/org/fleet/issues/comments/30 "));
    assert!(
        run.out.contains("ignored comment 20 by alice: "),
        "{}",
        run.out
    );
}

#[test]
fn sticky_comment_ignored_authors_login_cannot_start_a_workflow_command() {
    if !has_jq() {
        return;
    }
    let gh = FakeGitHub::new();
    let one = gh.body("body-1.md", "fluxsim", "summary\n");
    let login = "evil\n::error::pwned\r100%\u{1b}[31m";
    let existing = [gh_comment(
        10,
        login,
        "<!-- fluxsim-comment: fluxsim -->\nspoof",
    )];
    let run = gh.run(&[&one], &existing, &[]);
    assert_eq!(run.code, 0, "{}", run.err);
    // One line names it; the newline, CR, `%` and the escape are written as text.
    let named: Vec<&str> = run
        .out
        .lines()
        .filter(|l| l.contains("comment 10"))
        .collect();
    assert_eq!(
        named,
        [
            "::warning::fluxsim ignored comment 10 by evil\\n::error::pwned\\r100%25?[31m: it holds \
             the marker of this report ('<!-- fluxsim-comment: fluxsim -->') but github-actions[bot] \
             did not write it"
        ],
        "{}",
        run.out
    );
    assert!(
        run.out.lines().all(|l| !l.starts_with("::error")),
        "{}",
        run.out
    );
}

#[test]
fn sticky_comment_failed_update_fails_the_step_and_posts_no_other_comment() {
    if !has_jq() {
        return;
    }
    let gh = FakeGitHub::new();
    let one = gh.body("body-1.md", "fluxsim", "summary\n");
    let own = [gh_comment(
        20,
        BOT,
        "<!-- fluxsim-comment: fluxsim -->\nold",
    )];
    let run = gh.run(&[&one], &own, &[("FAKE_GH_FAIL", "PATCH")]);
    assert_eq!(run.code, 1, "{}", run.out);
    assert!(
        run.out.contains(
            "::error::fluxsim could not update the pull-request comment 20 (the job needs \
             'pull-requests: write'; a pull request from a fork has a read-only token): HTTP 403: \
             Resource not accessible by integration"
        ),
        "{}",
        run.out
    );
    let writes = run.writes();
    assert_eq!(writes.len(), 1, "the PATCH alone: {writes:?}");
    assert!(writes[0].starts_with("api -X PATCH repos/org/fleet/issues/comments/20 "));
    // A failed create, and a failed delete of an extra part, fail it too.
    let run = gh.run(&[&one], &[], &[("FAKE_GH_FAIL", "POST")]);
    assert_eq!(run.code, 1, "{}", run.out);
    assert!(
        run.out
            .contains("::error::fluxsim could not post the pull-request comment ("),
        "{}",
        run.out
    );
    let extra = [
        gh_comment(20, BOT, "<!-- fluxsim-comment: fluxsim -->\nold"),
        gh_comment(21, BOT, "<!-- fluxsim-comment: fluxsim part 2 -->\nold"),
    ];
    let run = gh.run(&[&one], &extra, &[("FAKE_GH_FAIL", "DELETE")]);
    assert_eq!(run.code, 1, "{}", run.out);
    assert!(
        run.out
            .contains("::error::fluxsim could not delete the pull-request comment 21 (part 2"),
        "{}",
        run.out
    );
}

#[test]
fn sticky_comment_that_cannot_be_read_fails_the_step_with_what_gh_said_on_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    fake_bin(
        tmp.path(),
        "gh",
        "printf 'HTTP 403: no\\n::error::pwned 100%%\\r' >&2; exit 1\n",
    );
    let body = tmp.path().join("comment.md");
    fs::write(&body, "<!-- fluxsim-comment: fluxsim -->\nreport\n").unwrap();
    let path = with_path(tmp.path());
    let (code, out, _) = run_script(
        "post-comment",
        &[body.to_str().unwrap()],
        &[
            ("PATH", &path),
            ("GITHUB_REPOSITORY", "org/fleet"),
            ("PR_NUMBER", "7"),
        ],
        None,
    );
    assert_eq!(code, 1, "{out}");
    let last = out.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("::error::fluxsim could not read the pull request's comments"),
        "{out}"
    );
    assert!(
        last.ends_with(": HTTP 403: no%0A::error::pwned 100%25%0D"),
        "{out}"
    );
    assert!(!out.contains("\n::error::pwned"), "{out}");
}

/// A fake `curl` for the Gitea and GitLab scripts, logging each call (and the JSON a
/// `--data-binary @-` sent) to `FAKE_CURL_LOG`. The token's user (`.../user`) is `FAKE_USER`
/// (its JSON; a 401 when empty), the comment list `FAKE_LIST` on its first page and empty
/// after; a write whose method is in `FAKE_FAIL` fails as `curl -f` does on a 403.
const FAKE_CURL: &str = r#"echo "$*" >> "$FAKE_CURL_LOG"
for m in ${FAKE_FAIL:-}; do
  case "$*" in *"-X $m "*) echo "curl: (22) The requested URL returned error: 403" >&2; exit 22 ;; esac
done
case "$*" in
  *"--data-binary @-"*) cat >> "$FAKE_CURL_LOG"; echo >> "$FAKE_CURL_LOG"; echo '{}' ;;
  *"-X PUT"*|*"-X POST"*|*"-X DELETE"*) echo '{}' ;;
  */user)
    [ -n "${FAKE_USER:-}" ] || { echo "curl: (22) The requested URL returned error: 401" >&2; exit 22; }
    echo "$FAKE_USER" ;;
  *"&page=1&"*|*/comments) echo "$FAKE_LIST" ;;
  *) echo '[]' ;;
esac
"#;

/// A script run against the fake `curl`: (status, stdout, stderr, the calls logged).
fn run_with_fake_curl(
    script_name: &str,
    bodies: &[&Path],
    env: &[(&str, &str)],
) -> (i32, String, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    fake_bin(tmp.path(), "curl", FAKE_CURL);
    let log = tmp.path().join("curl.log");
    let path = with_path(tmp.path());
    let mut all = vec![
        ("PATH", path.as_str()),
        ("FAKE_CURL_LOG", log.to_str().unwrap()),
    ];
    all.extend_from_slice(env);
    let args: Vec<&str> = bodies.iter().map(|b| b.to_str().unwrap()).collect();
    let (code, out, err) = run_script(script_name, &args, &all, None);
    (code, out, err, fs::read_to_string(&log).unwrap_or_default())
}

const GITLAB_BOT: &str = r#"{"id": 77, "username": "project_12_bot_abc"}"#;

/// gitlab-note on merge request 3 of project 12, the token's user `project_12_bot_abc`.
fn gitlab_note(
    notes: &str,
    bodies: &[&Path],
    env: &[(&str, &str)],
) -> (i32, String, String, String) {
    let mut all = vec![
        ("CI_API_V4_URL", "https://gitlab.example/api/v4"),
        ("CI_PROJECT_ID", "12"),
        ("CI_MERGE_REQUEST_IID", "3"),
        ("FLUXSIM_GITLAB_TOKEN", "t0ken"),
        ("FAKE_USER", GITLAB_BOT),
        ("FAKE_LIST", notes),
    ];
    all.extend_from_slice(env);
    run_with_fake_curl("gitlab-note", bodies, &all)
}

#[test]
fn gitlab_notes_are_sticky_and_extra_parts_are_deleted() {
    if !has_jq() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("body-1.md");
    fs::write(&one, "<!-- fluxsim-comment: fluxsim -->\nreport\n").unwrap();
    let two = tmp.path().join("body-2.md");
    fs::write(&two, "<!-- fluxsim-comment: fluxsim part 2 -->\nmore\n").unwrap();
    let (code, out, err, calls) = gitlab_note(
        r#"[{"id": 1, "author": {"username": "alice"}, "body": "LGTM"}]"#,
        &[&one, &two],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "gitlab-note: the report's notes are those of project_12_bot_abc\nposted a note\nposted a note\n"
    );
    assert!(
        calls.contains("-H PRIVATE-TOKEN: t0ken https://gitlab.example/api/v4/user\n"),
        "{calls}"
    );
    assert!(
        calls.contains("-X POST -H PRIVATE-TOKEN: t0ken --data-urlencode body@"),
        "{calls}"
    );
    let (code, out, err, calls) = gitlab_note(
        r#"[{"id": 1, "author": {"username": "alice"}, "body": "LGTM"},
            {"id": 99, "author": {"username": "project_12_bot_abc"}, "body": "<!-- fluxsim-comment: fluxsim -->\nold"},
            {"id": 100, "author": {"username": "project_12_bot_abc"}, "body": "<!-- fluxsim-comment: fluxsim part 2 -->\nold"}]"#,
        &[&one],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.ends_with("\nupdated note 99\ndeleted note 100\n"),
        "{out}"
    );
    assert!(
        calls.contains("-X PUT -H PRIVATE-TOKEN: t0ken --data-urlencode body@"),
        "{calls}"
    );
    assert!(
        calls.contains("-X DELETE -H PRIVATE-TOKEN: t0ken https://gitlab.example/api/v4/projects/12/merge_requests/3/notes/100"),
        "{calls}"
    );
}

#[test]
fn gitlab_notes_of_another_author_holding_the_marker_are_not_updated_nor_deleted() {
    if !has_jq() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("body-1.md");
    fs::write(&one, "<!-- fluxsim-comment: fluxsim -->\nreport\n").unwrap();
    let notes = r#"[{"id": 5, "author": {"username": "mallory"}, "body": "<!-- fluxsim-comment: fluxsim -->\nspoof"},
                    {"id": 6, "author": {"username": "mallory"}, "body": "<!-- fluxsim-comment: fluxsim part 2 -->\nspoof"},
                    {"id": 99, "author": {"username": "project_12_bot_abc"}, "body": "<!-- fluxsim-comment: fluxsim -->\nold"}]"#;
    let (code, out, err, calls) = gitlab_note(notes, &[&one], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("gitlab-note: ignored note 5 by mallory: "),
        "{out}"
    );
    assert!(
        out.contains("gitlab-note: ignored note 6 by mallory: "),
        "{out}"
    );
    assert!(out.ends_with("\nupdated note 99\n"), "{out}");
    let writes: Vec<&str> = calls
        .lines()
        .filter(|l| l.starts_with("-fsS -X "))
        .collect();
    assert_eq!(writes.len(), 1, "{calls}");
    assert!(writes[0].ends_with("/merge_requests/3/notes/99"), "{calls}");
    // Only mallory's: a new note, and COMMENT_AUTHOR names the user without asking /user.
    let (code, out, err, calls) = gitlab_note(
        &notes.replace("project_12_bot_abc", "mallory"),
        &[&one],
        &[("COMMENT_AUTHOR", "fluxsim-bot")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.ends_with("\nposted a note\n"), "{out}");
    assert!(out.contains("ignored note 99 by mallory: "), "{out}");
    assert!(!calls.contains("/api/v4/user"), "{calls}");
}

#[test]
fn gitlab_note_failed_update_fails_the_script_and_an_unknown_user_is_an_error() {
    if !has_jq() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("body-1.md");
    fs::write(&one, "<!-- fluxsim-comment: fluxsim -->\nreport\n").unwrap();
    let notes = r#"[{"id": 99, "author": {"username": "project_12_bot_abc"}, "body": "<!-- fluxsim-comment: fluxsim -->\nold"}]"#;
    let (code, out, err, calls) = gitlab_note(notes, &[&one], &[("FAKE_FAIL", "PUT")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("gitlab-note: could not update note 99 (curl said why above"),
        "{err}"
    );
    assert!(!calls.contains("-X POST"), "{calls}");
    let (code, _, err, calls) = gitlab_note(notes, &[&one], &[("FAKE_USER", "")]);
    assert_eq!(code, 2);
    assert!(err.contains("set COMMENT_AUTHOR"), "{err}");
    assert!(!calls.contains("-X "), "nothing written: {calls}");
}

/// gitea-comment on pull request 5 of `org/fleet`, the token's user `gitea-actions`.
fn gitea_comment(
    comments: &str,
    bodies: &[&Path],
    env: &[(&str, &str)],
) -> (i32, String, String, String) {
    let mut all = vec![
        ("GITEA_API_URL", "https://codeberg.example/api/v1"),
        ("GITHUB_REPOSITORY", "org/fleet"),
        ("PR_NUMBER", "5"),
        ("GITEA_TOKEN", "t0ken"),
        ("FAKE_USER", r#"{"id": -2, "login": "gitea-actions"}"#),
        ("FAKE_LIST", comments),
    ];
    all.extend_from_slice(env);
    run_with_fake_curl("gitea-comment", bodies, &all)
}

#[test]
fn gitea_comments_are_sticky_and_extra_parts_are_deleted() {
    if !has_jq() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("body-1.md");
    // A body with what JSON must escape.
    fs::write(
        &one,
        "<!-- fluxsim-comment: fluxsim -->\n\"quoted\" \\ `x`\n",
    )
    .unwrap();
    let comments = r#"[{"id": 7, "user": {"login": "gitea-actions"}, "body": "<!-- fluxsim-comment: fluxsim -->\nold"},
                       {"id": 8, "user": {"login": "gitea-actions"}, "body": "<!-- fluxsim-comment: fluxsim part 2 -->\nold"},
                       {"id": 9, "user": {"login": "alice"}, "body": "nice"}]"#;
    let (code, out, err, calls) = gitea_comment(comments, &[&one], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "gitea-comment: the report's comments are those of gitea-actions\nupdated comment 7\ndeleted comment 8\n"
    );
    assert!(
        calls.contains("-X PATCH -H Authorization: token t0ken -H Content-Type: application/json --data-binary @- https://codeberg.example/api/v1/repos/org/fleet/issues/comments/7"),
        "{calls}"
    );
    let sent = calls
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("the JSON sent");
    let v: serde_json::Value = serde_json::from_str(sent).unwrap();
    assert_eq!(
        v["body"],
        "<!-- fluxsim-comment: fluxsim -->\n\"quoted\" \\ `x`\n"
    );
    assert!(calls.contains("-X DELETE -H Authorization: token t0ken https://codeberg.example/api/v1/repos/org/fleet/issues/comments/8"), "{calls}");
}

#[test]
fn gitea_comment_of_another_author_holding_the_marker_is_left_alone_and_named() {
    if !has_jq() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("body-1.md");
    fs::write(&one, "<!-- fluxsim-comment: fluxsim -->\nreport\n").unwrap();
    let comments = r#"[{"id": 3, "user": {"login": "mallory\u001b]0;x"}, "body": "<!-- fluxsim-comment: fluxsim -->\nspoof"},
                       {"id": 4, "user": {"login": "mallory"}, "body": "<!-- fluxsim-comment: fluxsim part 2 -->\nspoof"}]"#;
    let (code, out, err, calls) = gitea_comment(comments, &[&one], &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "gitea-comment: the report's comments are those of gitea-actions\n\
         gitea-comment: ignored comment 3 by mallory?]0;x: it holds the marker of this report but gitea-actions did not write it\n\
         gitea-comment: ignored comment 4 by mallory: it holds the marker of this report but gitea-actions did not write it\n\
         posted a comment\n"
    );
    let writes: Vec<&str> = calls
        .lines()
        .filter(|l| l.starts_with("-fsS -X "))
        .collect();
    assert_eq!(writes.len(), 1, "{calls}");
    assert!(
        writes[0].ends_with("https://codeberg.example/api/v1/repos/org/fleet/issues/5/comments"),
        "{calls}"
    );
}

#[test]
fn gitea_comment_failed_update_fails_the_script() {
    if !has_jq() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let one = tmp.path().join("body-1.md");
    fs::write(&one, "<!-- fluxsim-comment: fluxsim -->\nreport\n").unwrap();
    let comments = r#"[{"id": 7, "user": {"login": "gitea-actions"}, "body": "<!-- fluxsim-comment: fluxsim -->\nold"}]"#;
    let (code, out, err, calls) = gitea_comment(comments, &[&one], &[("FAKE_FAIL", "PATCH")]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains("gitea-comment: could not update comment 7 (curl said why above"),
        "{err}"
    );
    assert!(!out.contains("updated"), "{out}");
    assert!(!calls.contains("-X POST"), "{calls}");
    let (code, _, err, _) = gitea_comment("[]", &[&one], &[("FAKE_FAIL", "POST")]);
    assert_eq!(code, 1);
    assert!(
        err.contains("gitea-comment: could not post a comment on pull request 5"),
        "{err}"
    );
}

/// A fleet repository served as `origin` and a clone of it with a pull-request branch of two
/// commits: an unrelated edit, then an image bump.
fn fixture_pr() -> (tempfile::TempDir, tempfile::TempDir) {
    let origin = repo_from("testdata/fleet");
    let clone = tempfile::Builder::new()
        .prefix("fluxsim-test-clone-")
        .tempdir()
        .unwrap();
    git(
        clone.path(),
        &["clone", "-q", origin.path().to_str().unwrap(), "."],
    );
    git(clone.path(), &["checkout", "-q", "-b", "pr"]);
    let readme = clone.path().join("README.md");
    fs::write(&readme, "# fleet\n\nA pull request.\n").unwrap();
    commit_all(clone.path(), "docs");
    let apps = clone.path().join("clusters/base/apps.yaml");
    let text = fs::read_to_string(&apps).unwrap();
    fs::write(&apps, text.replacen("newTag: 2.14.1", "newTag: 2.15.0", 1)).unwrap();
    commit_all(clone.path(), "bump orders-api");
    (origin, clone)
}

#[test]
fn merge_base_of_a_pull_request_is_where_it_left_the_base_branch() {
    let (origin, clone) = fixture_pr();
    let main = git(origin.path(), &["rev-parse", "HEAD"]);
    let (code, out, err) = run_script("merge-base", &["main"], &[], Some(clone.path()));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, main);
    let (code, out, _) = run_script(
        "merge-base",
        &["--base", "HEAD~1", "main"],
        &[],
        Some(clone.path()),
    );
    assert_eq!(code, 0);
    assert_eq!(out, git(clone.path(), &["rev-parse", "HEAD~1"]));
    let (code, _, err) = run_script("merge-base", &[], &[], Some(clone.path()));
    assert_eq!(code, 2);
    assert!(err.contains("give --base REV"), "{err}");
}

#[test]
fn action_steps_on_a_fixture_pull_request_produce_the_comments_and_the_whole_report() {
    let (_origin, clone) = fixture_pr();
    let (code, base, err) = run_script("merge-base", &["main"], &[], Some(clone.path()));
    assert_eq!(code, 0, "{err}");
    let out = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let gh_output = out.path().join("github-output");
    let (code, _, err) = run_script(
        "run",
        &[],
        &[
            ("BASE", base.trim()),
            ("COMMAND", "prove"),
            ("EXPECT", "any"),
            ("ARGS", "--strip-label example.com/none"),
            ("SARIF", "true"),
            (
                "REPORT_URL",
                "https://github.example/org/fleet/actions/runs/9",
            ),
            ("FLUXSIM", env!("CARGO_BIN_EXE_fluxsim")),
            ("FLUXSIM_CACHE_DIR", cache.path().to_str().unwrap()),
            ("FLUXSIM_NETWORK", "none"),
            ("OUT", out.path().to_str().unwrap()),
            ("GITHUB_OUTPUT", gh_output.to_str().unwrap()),
        ],
        Some(clone.path()),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        fs::read_to_string(out.path().join("exit-code")).unwrap(),
        "0\n",
        "{err}"
    );
    assert_eq!(fs::read_to_string(&gh_output).unwrap(), "exit-code=0\n");
    let report = fs::read_to_string(out.path().join("report.md")).unwrap();
    // The verdict in words, both revisions as short commits.
    let head = git(clone.path(), &["rev-parse", "HEAD"]);
    let title = format!(
        "## ✅ fluxsim prove: `{}` → `HEAD ({})`: 4 Kustomizations change in 2 of 2 clusters, the proof holds\n",
        &base.trim()[..12],
        &head.trim()[..12]
    );
    assert!(report.starts_with(&title), "{report}");
    // What the canaries prove, in one line of the summary.
    assert!(
        report.contains("🐤 The canaries prove this diff sees changes: "),
        "{report}"
    );
    // The image bump, in the summary and as a semantic change.
    assert!(
        report.contains("- `ghcr.io/example-org/orders-api`: `2.14.1` → `2.15.0` in `dev`"),
        "{report}"
    );
    assert!(
        report.contains("  spec.template.spec.containers[name=api].image\n-   ghcr.io/example-org/orders-api:2.14.1\n+   ghcr.io/example-org/orders-api:2.15.0\n"),
        "{report}"
    );
    // Every report of the run, for the artifact.
    for f in [
        "report.html",
        "report.json",
        "report.txt",
        "report.md",
        "comment-1.md",
    ] {
        assert!(out.path().join("report").join(f).is_file(), "{f}");
    }
    let first = fs::read_to_string(out.path().join("report/comment-1.md")).unwrap();
    assert!(
        first.contains("[the HTML report](https://github.example/org/fleet/actions/runs/9)"),
        "{first}"
    );
    let sarif: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.path().join("fluxsim.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let (code, listed, err) = run_script(
        "comment-bodies",
        &["--marker", "fluxsim", out.path().to_str().unwrap()],
        &[],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        listed,
        format!("{}\n", out.path().join("body-1.md").display())
    );
    let body = fs::read_to_string(out.path().join("body-1.md")).unwrap();
    assert_eq!(body, format!("<!-- fluxsim-comment: fluxsim -->\n{first}"));
    assert!(body.len() <= GITHUB_LIMIT);
}

#[test]
fn run_without_a_base_reports_that_it_could_not_run_and_exits_0() {
    let out = tempfile::tempdir().unwrap();
    let (code, _, err) = run_script(
        "run",
        &[],
        &[
            ("FLUXSIM", "/nonexistent/fluxsim"),
            ("OUT", out.path().to_str().unwrap()),
        ],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        fs::read_to_string(out.path().join("exit-code")).unwrap(),
        "2\n"
    );
    let report = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        report.starts_with("## ❌ fluxsim prove could not run (exit 2)"),
        "{report}"
    );
    assert!(report.contains("BASE is not set"), "{report}");
    // Its comment is that report.
    let (code, _, err) = run_script("comment-bodies", &[out.path().to_str().unwrap()], &[], None);
    assert_eq!(code, 0, "{err}");
    let body = fs::read_to_string(out.path().join("body-1.md")).unwrap();
    assert_eq!(body, format!("<!-- fluxsim-comment: fluxsim -->\n{report}"));
}

#[test]
fn run_reports_an_error_of_fluxsim_in_the_report() {
    let (_origin, clone) = fixture_pr();
    let out = tempfile::tempdir().unwrap();
    let (code, _, _) = run_script(
        "run",
        &[],
        &[
            ("BASE", "no-such-revision"),
            ("IMAGES", "true"),
            ("FLUXSIM", env!("CARGO_BIN_EXE_fluxsim")),
            ("OUT", out.path().to_str().unwrap()),
        ],
        Some(clone.path()),
    );
    assert_eq!(code, 0);
    assert_eq!(
        fs::read_to_string(out.path().join("exit-code")).unwrap(),
        "2\n"
    );
    let report = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(
        report.starts_with("## ❌ fluxsim prove could not run (exit 2)"),
        "{report}"
    );
}

/// Runs `run` with a fake fluxsim that writes `stderr` (a repository's error, quoted) and
/// exits 2; (run's stderr: what the job log shows, report.md).
fn run_with_failing_fluxsim(stderr: &str) -> (String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let quoted = tmp.path().join("stderr.txt");
    fs::write(&quoted, stderr).unwrap();
    fake_bin(
        tmp.path(),
        "fluxsim",
        &format!("cat '{}' >&2\nexit 2\n", quoted.display()),
    );
    let out = tmp.path().join("out");
    let (code, _, err) = run_script(
        "run",
        &[],
        &[
            ("BASE", "main"),
            ("FLUXSIM", tmp.path().join("fluxsim").to_str().unwrap()),
            ("OUT", out.to_str().unwrap()),
        ],
        Some(tmp.path()),
    );
    assert_eq!(code, 0, "{err}");
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    (err, report)
}

/// The action's `helm`, `fetch-charts` and `audit` inputs reach fluxsim as its flags (a fake
/// fluxsim writes the arguments it was given); `helm: auto` (the default) passes none, so
/// HelmReleases follow fluxsim's default (rendered when helm is found), `false` turns them off.
#[test]
fn run_passes_the_helm_fetch_charts_and_audit_inputs_as_flags() {
    let args_of = |env: &[(&str, &str)]| {
        let tmp = tempfile::tempdir().unwrap();
        let seen = tmp.path().join("args.txt");
        fake_bin(
            tmp.path(),
            "fluxsim",
            &format!(
                "printf '%s\\n' \"$@\" > '{}'\necho report\nexit 0\n",
                seen.display()
            ),
        );
        let out = tmp.path().join("out");
        let fluxsim = tmp.path().join("fluxsim");
        let mut all = vec![
            ("BASE", "main"),
            ("FLUXSIM", fluxsim.to_str().unwrap()),
            ("OUT", out.to_str().unwrap()),
        ];
        all.extend_from_slice(env);
        let (code, _, err) = run_script("run", &[], &all, Some(tmp.path()));
        assert_eq!(code, 0, "{err}");
        fs::read_to_string(&seen)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let has = |args: &[String], flag: &str| args.iter().any(|a| a == flag);
    // HelmReleases by fluxsim's own default (rendered when helm is found): no flag.
    let plain = args_of(&[]);
    for flag in ["--helm", "--no-helm", "--fetch-charts", "--audit"] {
        assert!(!has(&plain, flag), "{flag} by default: {plain:?}");
    }
    let off = args_of(&[("HELM", "false"), ("FETCH_CHARTS", "true")]);
    assert!(
        has(&off, "--no-helm") && !has(&off, "--helm") && !has(&off, "--fetch-charts"),
        "{off:?}"
    );
    let audit = args_of(&[("AUDIT", "true")]);
    assert!(
        has(&audit, "--audit") && !has(&audit, "--helm"),
        "{audit:?}"
    );
    let helm = args_of(&[("HELM", "true")]);
    assert!(
        has(&helm, "--helm") && !has(&helm, "--fetch-charts"),
        "{helm:?}"
    );
    let fetch = args_of(&[
        ("HELM", "true"),
        ("FETCH_CHARTS", "true"),
        ("AUDIT", "true"),
    ]);
    assert_eq!(
        fetch.iter().filter(|a| *a == "--helm").count(),
        1,
        "{fetch:?}"
    );
    assert!(
        has(&fetch, "--fetch-charts") && has(&fetch, "--audit"),
        "{fetch:?}"
    );
}

/// What a pull request can make fluxsim's error say: workflow commands, and a fence.
const HOSTILE_STDERR: &str = "fluxsim: error: spec.path `./apps/x`:\n::add-mask::the-job-log\n\
                              ::error file=README.md::pwned\n````\n<!--\n";

#[test]
fn run_echoes_fluxsims_stderr_to_the_job_log_with_workflow_commands_stopped() {
    let (log, _) = run_with_failing_fluxsim(HOSTILE_STDERR);
    let lines: Vec<&str> = log.lines().collect();
    let token = lines[0]
        .strip_prefix("::stop-commands::")
        .unwrap_or_else(|| panic!("the echo starts by stopping commands:\n{log}"));
    assert_eq!(token.len(), 32, "a random token: {token}");
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()), "{token}");
    assert!(!HOSTILE_STDERR.contains(token));
    assert_eq!(lines.last().unwrap(), &format!("::{token}::"), "{log}");
    assert_eq!(lines[1..lines.len() - 1].join("\n") + "\n", HOSTILE_STDERR);
    // Another run, another token.
    let (again, _) = run_with_failing_fluxsim(HOSTILE_STDERR);
    assert_ne!(again.lines().next(), log.lines().next());
}

#[test]
fn run_resumes_workflow_commands_on_a_line_of_their_own() {
    let (log, _) = run_with_failing_fluxsim("no newline at the end ::x::");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 3, "{log}");
    assert_eq!(lines[1], "no newline at the end ::x::");
    assert!(
        lines[2].starts_with("::") && lines[2].ends_with("::"),
        "{log}"
    );
}

#[test]
fn run_reports_fluxsims_error_in_a_fence_longer_than_its_backtick_runs() {
    let (_, report) = run_with_failing_fluxsim(HOSTILE_STDERR);
    assert_eq!(
        report,
        format!("## ❌ fluxsim prove could not run (exit 2)\n\n`````\n{HOSTILE_STDERR}`````\n")
    );
    let (_, report) = run_with_failing_fluxsim("plain, no newline");
    assert!(
        report.ends_with("\n```\nplain, no newline\n```\n"),
        "{report}"
    );
}

#[test]
fn comment_body_cut_names_no_section_from_inside_a_diff() {
    let mut report =
        String::from("## x\n\n<details><summary><code>a</code></summary>\n\n````diff\n");
    for i in 0..3000 {
        let _ = writeln!(report, "+line {i}");
    }
    // A diff's lines that look like a heading and a summary, past the cut.
    report.push_str("# <!-- hidden\n+<summary><!--</summary>\n```\n````\n\n</details>\n");
    let body = comment_body(&report, &["--max-chars", "8000"]);
    let note = &body[body.find("> [!WARNING]").unwrap()..];
    assert!(!note.contains("<!--"), "{note}");
    assert!(note.contains(", with: the rest of `a`."), "{note}");
}

#[test]
fn comment_body_names_a_section_whose_name_is_escaped_in_html_code() {
    let mut report = String::new();
    for i in 0..2 {
        let _ = write!(
            report,
            "\n<details><summary><code>ns&lt;!--/app-{i}</code> in dev: 1 object</summary>\n\n```diff\n"
        );
        for j in 0..300 {
            let _ = writeln!(report, "+  key-{j}: value");
        }
        report.push_str("```\n\n</details>\n");
    }
    let body = comment_body(&report, &["--max-chars", "8000"]);
    let note = &body[body.find("> [!WARNING]").unwrap()..];
    assert!(
        note.contains("the rest of <code>ns&lt;!--/app-0</code> in dev: 1 object"),
        "{note}"
    );
    assert!(!note.contains("`ns&lt;"), "{note}");
}

#[cfg(target_os = "linux")]
#[test]
fn install_takes_the_release_binary_and_checks_its_sha256() {
    let arch = std::env::consts::ARCH;
    let target = format!("{arch}-unknown-linux-musl");
    let release = tempfile::tempdir().unwrap();
    // A release folder as the release workflow lays it out.
    let stage = release.path().join(format!("fluxsim-{target}"));
    fs::create_dir(&stage).unwrap();
    fs::copy(env!("CARGO_BIN_EXE_fluxsim"), stage.join("fluxsim")).unwrap();
    let archive = format!("fluxsim-{target}.tar.gz");
    let tar = Command::new("tar")
        .args(["-czf", &archive, &format!("fluxsim-{target}")])
        .current_dir(release.path())
        .status()
        .unwrap();
    assert!(tar.success());
    let digest = crate::common::sha256(&fs::read(release.path().join(&archive)).unwrap());
    let sums = release.path().join(format!("{archive}.sha256"));
    fs::write(&sums, format!("{digest}  {archive}\n")).unwrap();
    let url = format!("file://{}", release.path().display());
    let dest = tempfile::tempdir().unwrap();
    let (code, out, err) = run_script(
        "install",
        &["--version", "v0.1.0", dest.path().to_str().unwrap()],
        &[("FLUXSIM_DOWNLOAD_URL", &url)],
        None,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("installed fluxsim "), "{out}");
    assert!(dest.path().join("fluxsim").is_file());
    // A tampered archive is refused.
    fs::write(&sums, format!("{}  {archive}\n", "0".repeat(64))).unwrap();
    let (code, _, err) = run_script(
        "install",
        &[dest.path().to_str().unwrap()],
        &[("FLUXSIM_DOWNLOAD_URL", &url)],
        None,
    );
    assert_eq!(code, 1);
    assert!(err.contains("SHA-256"), "{err}");
}

/// `install --helm VERSION` takes helm's archive as get.helm.sh lays it out, checked against
/// its `.sha256sum`; a tampered one, or a version that is not a release, is refused.
#[cfg(target_os = "linux")]
#[test]
fn install_takes_helm_and_checks_its_sha256() {
    let goarch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        _ => "arm64",
    };
    let arch = std::env::consts::ARCH;
    let target = format!("{arch}-unknown-linux-musl");
    let release = tempfile::tempdir().unwrap();
    let stage = release.path().join(format!("fluxsim-{target}"));
    fs::create_dir(&stage).unwrap();
    fs::copy(env!("CARGO_BIN_EXE_fluxsim"), stage.join("fluxsim")).unwrap();
    let tar = |archive: &str, folder: &str| {
        let ok = Command::new("tar")
            .args(["-czf", archive, folder])
            .current_dir(release.path())
            .status()
            .unwrap();
        assert!(ok.success());
        let digest = crate::common::sha256(&fs::read(release.path().join(archive)).unwrap());
        fs::write(
            release.path().join(format!("{archive}.sha256")),
            format!("{digest}  {archive}\n"),
        )
        .unwrap();
        digest
    };
    tar(
        &format!("fluxsim-{target}.tar.gz"),
        &format!("fluxsim-{target}"),
    );
    // helm's own layout: linux-amd64/helm in helm-VERSION-linux-amd64.tar.gz.
    let helm_dir = release.path().join(format!("linux-{goarch}"));
    fs::create_dir(&helm_dir).unwrap();
    fs::write(helm_dir.join("helm"), "#!/bin/sh\necho v4.2.4\n").unwrap();
    let harchive = format!("helm-v4.2.4-linux-{goarch}.tar.gz");
    let digest = tar(&harchive, &format!("linux-{goarch}"));
    let sums = release.path().join(format!("{harchive}.sha256sum"));
    fs::write(&sums, format!("{digest}  {harchive}\n")).unwrap();
    let url = format!("file://{}", release.path().display());
    let install = |version: &str| {
        let dest = tempfile::tempdir().unwrap();
        let (code, out, err) = run_script(
            "install",
            &["--helm", version, dest.path().to_str().unwrap()],
            &[("FLUXSIM_DOWNLOAD_URL", &url), ("HELM_DOWNLOAD_URL", &url)],
            None,
        );
        (code, out, err, dest.path().join("helm").is_file())
    };
    let (code, out, err, installed) = install("v4.2.4");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("installed helm v4.2.4"), "{out}");
    assert!(installed);
    let (code, _, err, installed) = install("--version");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not --version") && !installed, "{err}");
    fs::write(&sums, format!("{}  {harchive}\n", "0".repeat(64))).unwrap();
    let (code, _, err, installed) = install("v4.2.4");
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("{harchive}: SHA-256")) && !installed,
        "{err}"
    );
}

/// `install --flux-operator VERSION` takes the Flux Operator CLI as its goreleaser release lays
/// it out (`flux-operator_X.Y.Z_OS_ARCH.tar.gz`, listed in `flux-operator_X.Y.Z_checksums.txt`);
/// an archive the checksums do not list, a tampered one, or a version that is not a release,
/// is refused and nothing is installed.
#[cfg(target_os = "linux")]
#[test]
fn install_takes_flux_operator_and_checks_its_sha256() {
    let goarch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        _ => "arm64",
    };
    let target = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
    let release = tempfile::tempdir().unwrap();
    let root = release.path();
    let tar = |archive: &str, files: &[&str], dir: &Path| {
        let ok = Command::new("tar")
            .arg("-czf")
            .arg(root.join(archive))
            .args(files)
            .current_dir(dir)
            .status()
            .unwrap();
        assert!(ok.success());
        crate::common::sha256(&fs::read(root.join(archive)).unwrap())
    };
    let stage = root.join(format!("fluxsim-{target}"));
    fs::create_dir(&stage).unwrap();
    fs::copy(env!("CARGO_BIN_EXE_fluxsim"), stage.join("fluxsim")).unwrap();
    let archive = format!("fluxsim-{target}.tar.gz");
    let digest = tar(&archive, &[&format!("fluxsim-{target}")], root);
    fs::write(
        root.join(format!("{archive}.sha256")),
        format!("{digest}  {archive}\n"),
    )
    .unwrap();
    // goreleaser's archive: the binary and LICENSE at its root.
    let op = tempfile::tempdir().unwrap();
    fs::write(
        op.path().join("flux-operator"),
        "#!/bin/sh\necho 'client: 0.59.0'\n",
    )
    .unwrap();
    fs::write(op.path().join("LICENSE"), "AGPL\n").unwrap();
    let oarchive = format!("flux-operator_0.59.0_linux_{goarch}.tar.gz");
    let odigest = tar(&oarchive, &["flux-operator", "LICENSE"], op.path());
    let sums = root.join("flux-operator_0.59.0_checksums.txt");
    let listed = |digest: &str| {
        format!(
            "{}  flux-operator_0.59.0_darwin_arm64.tar.gz\n{digest}  {oarchive}\n",
            "1".repeat(64)
        )
    };
    fs::write(&sums, listed(&odigest)).unwrap();
    let url = format!("file://{}", root.display());
    let install = |version: &str| {
        let dest = tempfile::tempdir().unwrap();
        let (code, out, err) = run_script(
            "install",
            &["--flux-operator", version, dest.path().to_str().unwrap()],
            &[
                ("FLUXSIM_DOWNLOAD_URL", &url),
                ("FLUX_OPERATOR_DOWNLOAD_URL", &url),
            ],
            None,
        );
        let bin = dest.path().join("flux-operator");
        let installed = fs::read_to_string(&bin).ok();
        (code, out, err, installed)
    };
    let (code, out, err, installed) = install("v0.59.0");
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("installed flux-operator v0.59.0"), "{out}");
    assert!(installed.unwrap().contains("0.59.0"));
    let (code, _, err, installed) = install("-x");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not -x") && installed.is_none(), "{err}");
    fs::write(&sums, listed(&"0".repeat(64))).unwrap();
    let (code, _, err, installed) = install("v0.59.0");
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("{oarchive}: SHA-256")) && installed.is_none(),
        "{err}"
    );
    // Checksums that do not name the archive.
    fs::write(&sums, format!("{odigest}  other.tar.gz\n")).unwrap();
    let (code, _, err, installed) = install("v0.59.0");
    assert_eq!(code, 1);
    assert!(err.contains("says nothing") && installed.is_none(), "{err}");
}

/// The action installs the flux-operator CLI at the version fluxsim reproduces, and its
/// cached tool folder is keyed on that version.
#[test]
fn action_installs_the_flux_operator_version_fluxsim_reproduces() {
    let action = fs::read_to_string(crate_path("action.yml")).unwrap();
    let inputs = &action[action.find("\ninputs:\n").unwrap()..action.find("\noutputs:\n").unwrap()];
    let input = &inputs[inputs
        .find("\n  flux-operator-version:\n")
        .expect("the input")..];
    let default = input
        .lines()
        .find_map(|l| l.trim().strip_prefix("default: "))
        .unwrap();
    assert_eq!(default, fluxsim_core::resourceset::REPRODUCED_OPERATOR);
    assert!(action.contains("-operator-${{ inputs.flux-operator-version }}-"));
    assert!(action.contains("${OPERATOR_VERSION:+--flux-operator \"$OPERATOR_VERSION\"}"));
    let tools = fs::read_to_string(crate_path("scripts/install-tools")).unwrap();
    assert!(tools.contains(&format!("operator_version={default}\n")));
}

#[test]
fn version_is_the_input_else_the_actions_release_tag() {
    let v = |args: &[&str]| run_script("version", args, &[("PATH", "/usr/bin:/bin")], None).1;
    assert_eq!(v(&["v1.0.0", "main", "o/fluxsim"]), "v1.0.0\n");
    assert_eq!(v(&["", "v0.3.1", "o/fluxsim"]), "v0.3.1\n");
}

/// Every script the action and the workflows call exists and is executable.
#[test]
fn action_calls_only_scripts_that_exist() {
    let action = fs::read_to_string(crate_path("action.yml")).unwrap();
    let calls: Vec<&str> = action
        .split("scripts/action/")
        .skip(1)
        .map(|s| {
            s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
                .unwrap()
        })
        .collect();
    assert!(calls.len() >= 5, "{calls:?}");
    for name in calls {
        let path = script(name);
        let mode = fs::metadata(&path)
            .unwrap_or_else(|_| {
                panic!("action.yml calls scripts/action/{name}, which does not exist")
            })
            .permissions();
        assert!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o111 != 0,
            "{name} is not executable"
        );
    }
    // The SARIF upload: the v4 action, skipped on forks.
    assert!(action.contains("github/codeql-action/upload-sarif@v4"));
    assert!(action.contains("github.event.pull_request.head.repo.full_name == github.repository"));
}

/// The comment step passes the `comment-author` input to post-comment, and is skipped on a
/// fork's pull request (a read-only token, where a comment that cannot be written would
/// fail the step).
#[test]
fn action_passes_the_comment_author_input_and_skips_the_comment_on_forks() {
    let action = fs::read_to_string(crate_path("action.yml")).unwrap();
    let inputs = &action[action.find("\ninputs:\n").unwrap()..action.find("\noutputs:\n").unwrap()];
    assert!(inputs.contains("\n  comment-author:\n"), "{inputs}");
    let step = action
        .split("\n    - ")
        .find(|s| s.contains("scripts/action/post-comment"))
        .expect("the comment step");
    assert!(
        step.contains("COMMENT_AUTHOR: ${{ inputs.comment-author }}"),
        "{step}"
    );
    assert!(
        step.contains("github.event.pull_request.head.repo.full_name == github.repository"),
        "{step}"
    );
}

/// The CI recipes (docs/ci.md) hold the example files verbatim.
#[test]
fn ci_recipes_are_copied_from_the_tested_files() {
    let page = fs::read_to_string(crate_path("docs/ci.md")).unwrap();
    for file in [
        "docs/ci/github-workflow.yml",
        "docs/ci/gitlab-ci.yml",
        "docs/ci/gitea-workflow.yml",
    ] {
        let text = fs::read_to_string(crate_path(file)).unwrap();
        assert!(
            page.contains(&format!("```yaml\n{text}```")),
            "docs/ci.md does not hold {file} verbatim in a ```yaml block"
        );
    }
}

/// The example workflow runs this repository's action with the permissions it needs, and
/// the GitLab job calls the scripts that exist (those run above).
#[test]
fn ci_examples_use_the_action_and_the_tested_scripts() {
    let workflow = fs::read_to_string(crate_path("docs/ci/github-workflow.yml")).unwrap();
    assert!(workflow.contains("fetch-depth: 0"));
    assert!(workflow.contains("security-events: write"));
    assert!(workflow.contains("pull-requests: write"));
    assert!(workflow.contains("uses: fluxsim/fluxsim@v"), "{workflow}");
    for (file, names) in [
        (
            "docs/ci/gitlab-ci.yml",
            ["merge-base", "run", "comment-bodies", "gitlab-note"],
        ),
        (
            "docs/ci/gitea-workflow.yml",
            ["merge-base", "run", "comment-bodies", "gitea-comment"],
        ),
    ] {
        let job = fs::read_to_string(crate_path(file)).unwrap();
        for name in names {
            assert!(
                job.contains(&format!("/scripts/action/{name}")),
                "{file} does not call {name}"
            );
            assert!(script(name).is_file());
        }
    }
    let gitlab = fs::read_to_string(crate_path("docs/ci/gitlab-ci.yml")).unwrap();
    assert!(gitlab.contains("FORMAT: gitlab"), "{gitlab}");
    let gitea = fs::read_to_string(crate_path("docs/ci/gitea-workflow.yml")).unwrap();
    assert!(gitea.contains("FORMAT: gitea"), "{gitea}");
}

/// The examples pin the release this checkout is (so a version bump updates them).
#[test]
fn ci_examples_pin_this_version() {
    let v = format!("v{}", env!("CARGO_PKG_VERSION"));
    let workflow = fs::read_to_string(crate_path("docs/ci/github-workflow.yml")).unwrap();
    assert!(
        workflow.contains(&format!("uses: fluxsim/fluxsim@{v}\n")),
        "{workflow}"
    );
    for file in ["docs/ci/gitlab-ci.yml", "docs/ci/gitea-workflow.yml"] {
        let job = fs::read_to_string(crate_path(file)).unwrap();
        assert!(job.contains(&format!("FLUXSIM_VERSION: {v}\n")), "{file}");
    }
}
