//! Every CI snippet of the documentation runs green on a pull request of every repository
//! shape: the snippets are read from README.md and docs/ here (each ```yaml block that is a
//! GitHub workflow, a list of GitHub steps or a GitLab CI job), so the docs and this test
//! cannot drift apart.
//!
//! The repositories are `testdata/fleet` and `testdata/shapes/*`, small repositories written
//! to reproduce the shapes of public Flux repositories (`testdata/shapes/README.md`): the
//! snapshots themselves are not part of the repository, and tests read nothing outside it.
//! `FLUXSIM_CI_SNIPPET_REPOS` (folders separated by `:`) runs the same snippets on other
//! repositories, such as local snapshots of real ones:
//!
//! ```sh
//! FLUXSIM_CI_SNIPPET_REPOS=/path/a:/path/b cargo test --test it ci_snippets -- --ignored
//! ```
//!
//! How each step runs: a `run:` step with `bash -e` (as GitHub's default shell does), in the
//! pull request's checkout, with `fluxsim` on PATH and `GITHUB_STEP_SUMMARY` set; the
//! `fluxsim/fluxsim` action as its steps do (`scripts/action/merge-base`, then
//! `scripts/action/run`; the job fails when the exit code it records is not 0, unless
//! `fail: false`); other actions (`actions/checkout`, `upload-sarif`) are not run. A GitLab
//! job runs its `script:` lines in one `bash -e`, with this checkout as `/opt/fluxsim`, its
//! `variables:`, and a fake `curl` answering GitLab's API. A Forgejo or Gitea workflow's
//! steps that run `/opt/fluxsim`'s scripts run the same way, with the job's and the step's
//! `env:` (the step that installs fluxsim from the network is not run: this build is on
//! PATH), the fake `curl` answering Gitea's API.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{commit_all, copy_dir, crate_path, git};

/// One step of a snippet.
#[derive(Debug, Clone)]
enum Step {
    /// A GitHub `run:` step.
    Run(String),
    /// `uses: fluxsim/fluxsim@...` with its `with:` inputs.
    Action(serde_json::Map<String, Value>),
    /// A `run:` step of a workflow that runs fluxsim's scripts from a clone in `/opt/fluxsim`
    /// (Forgejo and Gitea Actions): the script, and the job's and the step's `env:`.
    Forge {
        script: String,
        env: Vec<(String, String)>,
    },
    /// A GitLab CI job: its `script:` lines and `variables:`.
    Gitlab {
        script: Vec<String>,
        variables: Vec<(String, String)>,
    },
}

/// A snippet: where it is, and its steps.
#[derive(Debug, Clone)]
struct Snippet {
    place: String,
    steps: Vec<Step>,
}

/// The markdown files of the docs: README.md and docs/**/*.md.
fn doc_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(fs::DirEntry::path);
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut pages = vec![crate_path("README.md")];
    walk(&crate_path("docs"), &mut pages);
    pages
}

/// The ```yaml blocks of a page, with their first line number.
fn yaml_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if line.trim_start() == "```yaml" => current = Some((i + 2, String::new())),
            Some(_) if line.trim_start() == "```" => out.extend(current.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    out
}

/// A map of `env:` (or `variables:`) as pairs, the values as strings.
fn env_of(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// A step of a job whose `env:` is `job_env`.
fn github_step(step: &Value, job_env: &[(String, String)]) -> Option<Step> {
    if let Some(run) = step.get("run").and_then(Value::as_str) {
        if run.contains("/opt/fluxsim") {
            // Installing fluxsim from the network is not run: this build is on PATH and
            // this checkout stands for the clone.
            if run.contains("scripts/action/install") {
                return None;
            }
            let mut env = job_env.to_vec();
            env.extend(env_of(step.get("env")));
            return Some(Step::Forge {
                script: run.to_string(),
                env,
            });
        }
        return Some(Step::Run(run.to_string()));
    }
    let uses = step.get("uses").and_then(Value::as_str)?;
    uses.starts_with("fluxsim/fluxsim@").then(|| {
        Step::Action(
            step.get("with")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        )
    })
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The steps of a YAML block: a workflow's jobs' steps, a list of steps, or GitLab jobs.
fn steps_of(doc: &Value) -> Vec<Step> {
    if let Some(jobs) = doc.get("jobs").and_then(Value::as_object) {
        return jobs
            .values()
            .flat_map(|j| strings_or_steps(j.get("steps"), &env_of(j.get("env"))))
            .collect();
    }
    if doc.is_array() {
        return strings_or_steps(Some(doc), &[]);
    }
    doc.as_object()
        .map(|jobs| {
            jobs.values()
                .filter(|j| j.get("script").is_some())
                .map(|j| Step::Gitlab {
                    script: strings(j.get("script")),
                    variables: j
                        .get("variables")
                        .and_then(Value::as_object)
                        .map(|m| {
                            m.iter()
                                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                                .collect()
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn strings_or_steps(v: Option<&Value>, job_env: &[(String, String)]) -> Vec<Step> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|s| github_step(s, job_env)).collect())
        .unwrap_or_default()
}

/// Every CI snippet of the docs.
fn snippets() -> Vec<Snippet> {
    let mut out = Vec::new();
    for page in doc_pages() {
        let text = fs::read_to_string(&page).unwrap();
        let rel = page
            .strip_prefix(crate_path(""))
            .unwrap_or(&page)
            .display()
            .to_string();
        for (line, block) in yaml_blocks(&text) {
            let doc = fluxsim::goyaml::yaml_json::yaml_to_value(&block)
                .unwrap_or_else(|e| panic!("{rel}:{line}: a yaml block that is not YAML: {e}"));
            let steps = steps_of(&doc);
            assert!(
                !steps.is_empty() || !block.contains("fluxsim "),
                "{rel}:{line}: a yaml block runs fluxsim, but is neither a workflow, a list of \
                 steps nor a GitLab job: this test cannot run it"
            );
            if !steps.is_empty() {
                out.push(Snippet {
                    place: format!("{rel}:{line}"),
                    steps,
                });
            }
        }
    }
    out
}

#[test]
fn the_docs_hold_the_ci_snippets_this_test_runs() {
    let all = snippets();
    let runs: Vec<&String> = all
        .iter()
        .flat_map(|s| &s.steps)
        .filter_map(|s| match s {
            Step::Run(r) => Some(r),
            _ => None,
        })
        .collect();
    assert!(
        runs.iter()
            .any(|r| r.contains("fluxsim compare . --format markdown >> \"$GITHUB_STEP_SUMMARY\"")),
        "{runs:?}"
    );
    assert!(
        runs.iter()
            .any(|r| r.contains("fluxsim audit --format sarif")),
        "{runs:?}"
    );
    let steps = all.iter().flat_map(|s| &s.steps);
    assert_eq!(
        steps
            .clone()
            .filter(|s| matches!(s, Step::Action(_)))
            .count(),
        1,
        "the action, once (docs/ci.md)"
    );
    assert_eq!(
        steps.filter(|s| matches!(s, Step::Gitlab { .. })).count(),
        1,
        "the GitLab job, once (docs/ci.md)"
    );
}

/// A repository served as `origin` (branch `main`, a copy of `src`) and a clone of it on a
/// pull-request branch whose one commit edits a Flux Kustomization file (a comment added:
/// its Kustomization renders again, and applies the same).
fn pull_request(src: &Path) -> (tempfile::TempDir, tempfile::TempDir) {
    let origin = tempfile::Builder::new()
        .prefix("fluxsim-snippet-origin-")
        .tempdir()
        .unwrap();
    copy_dir(src, origin.path());
    let _ = fs::remove_dir_all(origin.path().join(".git"));
    git(origin.path(), &["init", "-q", "-b", "main"]);
    commit_all(origin.path(), "main");
    let clone = tempfile::Builder::new()
        .prefix("fluxsim-snippet-pr-")
        .tempdir()
        .unwrap();
    git(
        clone.path(),
        &["clone", "-q", origin.path().to_str().unwrap(), "."],
    );
    git(clone.path(), &["checkout", "-q", "-b", "pr"]);
    let files = git(clone.path(), &["ls-files", "*.yaml"]);
    let edited = files
        .lines()
        .find(|f| {
            fs::read_to_string(clone.path().join(f))
                .is_ok_and(|t| t.contains("kind: Kustomization\n") && t.contains("spec:"))
        })
        .unwrap_or_else(|| panic!("{}: no Flux Kustomization file", src.display()));
    let path = clone.path().join(edited);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, format!("{text}\n# edited by the pull request\n")).unwrap();
    commit_all(clone.path(), "edit");
    (origin, clone)
}

/// A folder with `fluxsim` (this build) and the fakes a step needs, first on PATH.
fn bin_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fluxsim"), dir.path().join("fluxsim")).unwrap();
    // GitLab's and Gitea's APIs: the token's user (`.../user`, whose comments the scripts
    // keep) is a bot, the notes (comments) list is empty, a new one is accepted (what is sent
    // on stdin read, as curl reads it).
    let curl = dir.path().join("curl");
    fs::write(
        &curl,
        "#!/usr/bin/env bash\ncase \"$*\" in *@-*) cat > /dev/null ;; esac\n\
         case \"$*\" in *\"-X POST\"*) echo '{}' ;; \
         */user) echo '{\"login\": \"bot\", \"username\": \"bot\"}' ;; *) echo '[]' ;; esac\n",
    )
    .unwrap();
    let mut perm = fs::metadata(&curl).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    fs::set_permissions(&curl, perm).unwrap();
    dir
}

/// Runs `script` with `bash -e` in `dir`; what failed, if anything.
fn bash(script: &str, dir: &Path, env: &[(&str, String)]) -> Result<String, String> {
    let out = Command::new("bash")
        .args(["-e", "-c", script])
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!("exit {:?}:\n{text}", out.status.code()))
    }
}

/// Runs one step in the pull request's checkout `dir`.
fn run_step(step: &Step, dir: &Path, env: &[(&str, String)]) -> Result<(), String> {
    let out_dir = tempfile::tempdir().unwrap();
    match step {
        Step::Run(script) => bash(script, dir, env).map(drop),
        Step::Action(with) => {
            let input = |k: &str, default: &str| {
                with.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or(default)
                    .to_string()
            };
            let scripts = crate_path("scripts/action");
            let base = bash(&format!("{}/merge-base main", scripts.display()), dir, env)?;
            let mut env = env.to_vec();
            env.extend([
                ("BASE", base.trim().to_string()),
                ("COMMAND", input("command", "prove")),
                ("EXPECT", input("expect", "any")),
                ("ARGS", input("args", "")),
                ("IMAGES", input("images", "true")),
                ("SARIF", input("sarif", "true")),
                ("OUT", out_dir.path().display().to_string()),
            ]);
            bash(&format!("{}/run", scripts.display()), dir, &env)?;
            let code = fs::read_to_string(out_dir.path().join("exit-code")).unwrap_or_default();
            if input("fail", "true") == "true" && code.trim() != "0" {
                let report =
                    fs::read_to_string(out_dir.path().join("report.md")).unwrap_or_default();
                return Err(format!("the action fails the job: exit {code}{report}"));
            }
            Ok(())
        }
        Step::Forge { script, env: vars } => {
            let fluxsim_checkout = crate_path("").display().to_string();
            let body = script.replace("/opt/fluxsim", fluxsim_checkout.trim_end_matches('/'));
            let mut env = env.to_vec();
            for (k, v) in vars {
                // The workflow's expressions, as a pull request into main would give them.
                let v = if v.contains("github.base_ref") {
                    "main".to_string()
                } else if v.contains("${{") {
                    format!("https://forge.example/{k}")
                } else {
                    v.clone()
                };
                env.push((k.as_str(), v));
            }
            env.push(("GITHUB_REPOSITORY", "owner/fleet".to_string()));
            bash(&body, dir, &env).map(drop)
        }
        Step::Gitlab { script, variables } => {
            let fluxsim_checkout = crate_path("").display().to_string();
            let fluxsim_checkout = fluxsim_checkout.trim_end_matches('/');
            let body = script
                .iter()
                .map(|l| l.replace("/opt/fluxsim", fluxsim_checkout))
                .collect::<Vec<_>>()
                .join("\n");
            let mut env = env.to_vec();
            for (k, v) in variables {
                env.push((k.as_str(), v.clone()));
            }
            env.extend([
                ("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "main".to_string()),
                ("CI_API_V4_URL", "https://gitlab.example/api/v4".to_string()),
                ("CI_PROJECT_ID", "12".to_string()),
                ("CI_MERGE_REQUEST_IID", "3".to_string()),
                ("FLUXSIM_GITLAB_TOKEN", "t0ken".to_string()),
            ]);
            bash(&body, dir, &env).map(drop)
        }
    }
}

/// Runs every snippet on a pull request of `repo`; panics naming each one that failed.
fn snippets_pass_on(repo: &Path) {
    let (_origin, clone) = pull_request(repo);
    let bin = bin_dir();
    let cache = tempfile::tempdir().unwrap();
    let summary = tempfile::NamedTempFile::new().unwrap();
    let env = [
        (
            "PATH",
            format!(
                "{}:{}",
                bin.path().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        ),
        ("FLUXSIM_CACHE_DIR", cache.path().display().to_string()),
        // Hermetic: the shapes name real chart hosts (see common::fluxsim_in).
        ("FLUXSIM_NETWORK", "none".to_string()),
        ("GITHUB_STEP_SUMMARY", summary.path().display().to_string()),
    ];
    let gitlab_runs = Command::new("jq").arg("--version").output().is_ok();
    let mut failed = Vec::new();
    for s in snippets() {
        for step in &s.steps {
            if matches!(step, Step::Gitlab { .. } | Step::Forge { .. }) && !gitlab_runs {
                eprintln!("{}: jq is not installed: the job is not run", s.place);
                continue;
            }
            if let Err(e) = run_step(step, clone.path(), &env) {
                failed.push(format!("{} ({step:?}): {e}", s.place));
            }
        }
    }
    assert!(
        failed.is_empty(),
        "on {}:\n{}",
        repo.display(),
        failed.join("\n\n")
    );
    // The compare step wrote its report where GitHub shows it.
    let written = fs::read_to_string(summary.path()).unwrap();
    assert!(written.contains("## fluxsim compare"), "{written}");
}

#[test]
fn ci_snippets_pass_on_the_fleet() {
    snippets_pass_on(&crate_path("testdata/fleet"));
}

#[test]
fn ci_snippets_pass_on_environments_whose_overlays_patch_templates() {
    snippets_pass_on(&crate_path("testdata/shapes/env-overlays"));
}

#[test]
fn ci_snippets_pass_on_a_fleet_whose_tenants_come_from_an_oci_repository() {
    snippets_pass_on(&crate_path("testdata/shapes/oci-fleet"));
}

#[test]
fn ci_snippets_pass_on_a_cluster_whose_crds_come_from_a_bootstrap_helmfile() {
    snippets_pass_on(&crate_path("testdata/shapes/bootstrap-helmfile"));
}

#[test]
#[ignore = "runs on the folders FLUXSIM_CI_SNIPPET_REPOS names (snapshots of real repositories)"]
fn ci_snippets_pass_on_the_repositories_named_in_the_environment() {
    let repos = std::env::var("FLUXSIM_CI_SNIPPET_REPOS")
        .expect("FLUXSIM_CI_SNIPPET_REPOS names the folders to run the snippets on");
    for repo in repos.split(':').filter(|r| !r.is_empty()) {
        snippets_pass_on(Path::new(repo));
    }
}
