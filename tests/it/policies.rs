//! `fluxsim validate --policies` end to end on `testdata/policies`: the cluster's own
//! ValidatingAdmissionPolicies (rendered from `admission/`) and one installed outside Flux
//! (`policies/`, named by `[validate] policies`), evaluated on every rendered object as the
//! API server admits a create (apiserver `pkg/admission/plugin/policy/validating`). The
//! expected findings below are written out by hand from the semantics of the Kubernetes
//! documentation (kubernetes.io "Validating Admission Policy"): see testdata/policies/README.md.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{commit_all, fluxsim, fluxsim_in, repo_from};

/// The value of the finding's `related` entry of `role`, or `-`.
fn related(f: &Value, role: &str) -> String {
    f["related"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["role"] == role)
        .and_then(|r| r["value"].as_str())
        .unwrap_or("-")
        .to_string()
}

/// (rule, severity, file:line, cluster, policy, binding) of every policy finding (FS34x).
fn policy_findings(json: &Value) -> BTreeSet<(String, String, String, String, String, String)> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("FS34"))
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}",
                    f["location"]["file"].as_str().unwrap_or("-"),
                    f["location"]["line"]
                ),
                f["cluster"].as_str().unwrap().to_string(),
                related(f, "policy"),
                related(f, "binding"),
            )
        })
        .collect()
}

fn row(
    rule: &str,
    sev: &str,
    at: &str,
    policy: &str,
    binding: &str,
) -> (String, String, String, String, String, String) {
    (
        rule.into(),
        sev.into(),
        at.into(),
        "planted".into(),
        policy.into(),
        binding.into(),
    )
}

fn validate_json(repo: &std::path::Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["validate", repo.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    let out = fluxsim(&args);
    (out.code, out.json())
}

// Each planted violation once, at the file and line of its object (the line of its name);
// the clean cluster, with the same policies, has none.
#[test]
fn policies_each_planted_violation_is_found_once_at_its_file_and_line() {
    let repo = repo_from("testdata/policies");
    let (code, json) = validate_json(repo.path(), &[]);
    assert_eq!(code, 1, "a Deny violation is an error: {json:#}");
    let got = policy_findings(&json);
    let want: BTreeSet<_> = [
        // 5 replicas in `apps` (enforce: "true"), the param says 3: the Deny binding denies.
        row(
            "FS340",
            "error",
            "apps/planted/web.yaml:4",
            "max-replicas",
            "max-replicas-deny",
        ),
        // No team label: the Warn binding warns.
        row(
            "FS340",
            "warning",
            "apps/planted/worker.yaml:4",
            "team-label",
            "team-label-warn",
        ),
        // redis:latest: the Audit binding records it.
        row(
            "FS340",
            "info",
            "apps/planted/cache.yaml:4",
            "no-latest",
            "no-latest-audit",
        ),
        // Asks the authorizer: not checkable, never a pass or a violation.
        row(
            "FS341",
            "warning",
            "apps/planted/scaler.yaml:4",
            "scale-authorized",
            "scale-authorized-deny",
        ),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want, "{json:#}");
    // `sandbox` has no enforce label: 10 replicas there are not matched (namespaceSelector).
    assert!(!json.to_string().contains("apps/planted/sandbox.yaml"));
    let messages: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS340")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.contains(
            &"ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied \
              request: replicas 5 is over the limit of 3"
        ),
        "{messages:?}"
    );
    assert!(messages.contains(
        &"Validation failed for ValidatingAdmissionPolicy 'team-label' with binding \
          'team-label-warn': every Deployment needs a team label"
    ));
}

// Without `--policies` and without `[validate] policies`, no policy is evaluated; with
// `--policies` alone, the render's own are (the one of `policies/` is not named).
#[test]
fn policies_are_evaluated_only_when_asked() {
    let repo = repo_from("testdata/policies");
    std::fs::remove_file(repo.path().join("fluxsim.toml")).unwrap();
    commit_all(repo.path(), "no config");
    let (_, json) = validate_json(repo.path(), &[]);
    assert!(policy_findings(&json).is_empty(), "{json:#}");
    let (code, json) = validate_json(repo.path(), &["--policies"]);
    assert_eq!(code, 1);
    let policies: BTreeSet<String> = policy_findings(&json).into_iter().map(|r| r.4).collect();
    assert_eq!(
        policies,
        ["max-replicas", "no-latest", "team-label"]
            .map(String::from)
            .into_iter()
            .collect()
    );
}

#[test]
fn policies_text_and_sarif_name_the_policy_and_the_place() {
    let repo = repo_from("testdata/policies");
    let text = fluxsim_in(Some(repo.path()), &["validate", "--wide"]);
    assert_eq!(text.code, 1, "{text:?}");
    assert!(
        text.stdout.contains(
            "apps/planted/web.yaml:4:1: error[FS340]: ValidatingAdmissionPolicy 'max-replicas'"
        ),
        "{}",
        text.stdout
    );
    let sarif = fluxsim_in(Some(repo.path()), &["validate", "--format", "sarif"]).json();
    let run = &sarif["runs"][0];
    let rules: BTreeSet<&str> = run["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains("FS340") && rules.contains("FS341"),
        "{rules:?}"
    );
    let errors: Vec<String> = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == "FS340" && r["level"] == "error")
        .map(|r| {
            let l = &r["locations"][0]["physicalLocation"];
            format!(
                "{}:{}",
                l["artifactLocation"]["uri"].as_str().unwrap(),
                l["region"]["startLine"]
            )
        })
        .collect();
    assert_eq!(errors, vec!["apps/planted/web.yaml:4".to_string()]);
}

// Hostile: a policy file outside the repository root is refused, by `../` or by a symbolic
// link (the tree holds none: Flux's archive holds none).
#[test]
fn policies_outside_the_repository_are_refused() {
    let repo = repo_from("testdata/policies");
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[validate]\npolicies = [\"../outside\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "outside");
    let out = fluxsim(&["validate", repo.path().to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("[validate] policies")
            && out
                .stderr
                .contains("not a file or folder of the repository"),
        "{}",
        out.stderr
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("vap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        outside.path().join("vap.yaml"),
        repo.path().join("link.yaml"),
    )
    .unwrap();
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[validate]\npolicies = [\"link.yaml\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "link");
    let out = fluxsim(&["validate", repo.path().to_str().unwrap()]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("not a file or folder of the repository"),
        "{}",
        out.stderr
    );
}

// Hostile: a CEL bomb in a policy stops at the API server's per-call cost limit
// (apiserver pkg/apis/cel/config.go PerCallLimit): a Deny under failurePolicy Fail, in
// bounded time.
#[test]
fn policies_a_cel_bomb_is_bounded() {
    let repo = repo_from("testdata/policies");
    let ten = "[1,2,3,4,5,6,7,8,9,10]";
    let bomb = format!(
        "{ten}.all(a, {ten}.all(b, {ten}.all(c, {ten}.all(d, {ten}.all(e, {ten}.all(f, {ten}.all(g, {ten}.all(h, a+b+c+d+e+f+g+h > 0))))))))"
    );
    std::fs::write(
        repo.path().join("policies/bomb.yaml"),
        format!(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: bomb\nspec:\n  matchConstraints:\n    resourceRules:\n      - apiGroups: [apps]\n        apiVersions: [v1]\n        operations: [CREATE]\n        resources: [deployments]\n  validations:\n    - expression: \"{bomb}\"\n---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: bomb\nspec:\n  policyName: bomb\n  validationActions: [Deny]\n"
        ),
    )
    .unwrap();
    commit_all(repo.path(), "bomb");
    let started = std::time::Instant::now();
    let (code, json) = validate_json(repo.path(), &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(120));
    assert_eq!(code, 1);
    let bombs: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["message"].as_str().unwrap().contains("'bomb'"))
        .collect();
    // Every Deployment of both clusters (2 clean, 5 planted), each stopped at the limit.
    assert_eq!(bombs.len(), 7, "{bombs:#?}");
    assert!(bombs.iter().all(|f| f["severity"] == "error"
        && f["message"]
            .as_str()
            .unwrap()
            .contains("actual cost limit exceeded")));
}

// `diff --validate --policies`: both revisions are evaluated and only what head brings is
// reported (the planted cluster's violations are in base too).
#[test]
fn policies_diff_reports_only_the_violations_head_brings() {
    let repo = repo_from("testdata/policies");
    let web = repo.path().join("apps/clean/web.yaml");
    let text = std::fs::read_to_string(&web).unwrap();
    std::fs::write(&web, text.replace("replicas: 2", "replicas: 4")).unwrap();
    let diff = fluxsim_in(
        Some(repo.path()),
        &[
            "diff",
            "--base",
            "HEAD",
            "--validate",
            "--policies",
            "--format",
            "json",
        ],
    );
    let json = diff.json();
    let brought: Vec<(String, String, String)> = json["validation"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"].as_str().unwrap().starts_with("FS34"))
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["cluster"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        brought,
        vec![(
            "FS340".to_string(),
            "clean".to_string(),
            "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-deny' denied \
             request: replicas 4 is over the limit of 3"
                .to_string()
        )],
        "{json:#}"
    );
}

/// testdata/policies with the Kyverno policies of `kyverno/` installed outside Flux too
/// (`[validate] policies`), committed.
fn with_kyverno_policies() -> tempfile::TempDir {
    let repo = repo_from("testdata/policies");
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[validate]\npolicies = [\"policies/\", \"kyverno/\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "Kyverno policies too");
    repo
}

/// The Kyverno CLI, or `None` (the test is skipped, saying how to install it).
fn kyverno() -> Option<std::path::PathBuf> {
    let found = crate::common::which("kyverno");
    if found.is_none() {
        eprintln!("skipped: no kyverno on PATH (scripts/install-tools installs it)");
    }
    found
}

/// (rule, severity, file:line, cluster, policy, rule of the policy) of each Kyverno finding.
fn kyverno_findings(json: &Value) -> BTreeSet<(String, String, String, String, String, String)> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| matches!(f["rule"].as_str(), Some("FS343" | "FS344")))
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                format!(
                    "{}:{}",
                    f["location"]["file"].as_str().unwrap_or("-"),
                    f["location"]["line"]
                ),
                f["cluster"].as_str().unwrap().to_string(),
                related(f, "policy"),
                related(f, "rule"),
            )
        })
        .collect()
}

// Kyverno policies through the Kyverno CLI: each planted violation once, at its object's
// file and line, as bad as the policy acts at admission (an Enforce pattern rule an error,
// an Audit CEL rule info, a Warn ValidatingPolicy a warning); the clean cluster has none.
#[test]
fn policies_kyverno_each_planted_violation_is_found_once_as_bad_as_its_action() {
    if kyverno().is_none() {
        return;
    }
    let repo = with_kyverno_policies();
    let (code, json) = validate_json(repo.path(), &[]);
    assert_eq!(code, 1, "{json:#}");
    let row = |sev: &str, at: &str, policy: &str, rule: &str| {
        (
            "FS343".to_string(),
            sev.to_string(),
            at.to_string(),
            "planted".to_string(),
            policy.to_string(),
            rule.to_string(),
        )
    };
    let want: BTreeSet<_> = [
        row(
            "error",
            "apps/planted/worker.yaml:4",
            "require-team",
            "team-label",
        ),
        row(
            "info",
            "apps/planted/web.yaml:4",
            "require-team",
            "replicas-cel",
        ),
        row("warning", "apps/planted/cache.yaml:4", "pinned-images", "-"),
    ]
    .into_iter()
    .collect();
    assert_eq!(kyverno_findings(&json), want, "{json:#}");
}

// The same results as `kyverno apply` run by hand on the same render (`render --out`):
// every failed (policy, rule, object) of the CLI is a finding of fluxsim, and no other.
#[test]
fn policies_kyverno_results_agree_with_kyverno_apply_run_directly() {
    let Some(cli) = kyverno() else {
        return;
    };
    let repo = with_kyverno_policies();
    let out = tempfile::tempdir().unwrap();
    let render = fluxsim(&[
        "render",
        repo.path().to_str().unwrap(),
        "--cluster",
        "planted",
        "--out",
        out.path().join("r").to_str().unwrap(),
    ]);
    assert!(render.code <= 1, "{}", render.stderr);
    let mut files = Vec::new();
    let mut pending = vec![out.path().join("r")];
    while let Some(dir) = pending.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                pending.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut cmd = std::process::Command::new(cli);
    cmd.arg("apply")
        .arg(repo.path().join("kyverno/require-team.yaml"))
        .arg(repo.path().join("kyverno/pinned-images.yaml"));
    for f in &files {
        cmd.arg("--resource").arg(f);
    }
    cmd.args([
        "--policy-report",
        "--output-format",
        "json",
        "--remove-color",
    ]);
    let direct = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&direct.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| {
            panic!(
                "no report: {stdout}{}",
                String::from_utf8_lossy(&direct.stderr)
            )
        });
    let report: Value = serde_json::from_str(line).unwrap();
    let by_hand: BTreeSet<(String, String, String)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["result"] == "fail")
        .flat_map(|r| {
            r["resources"].as_array().unwrap().iter().map(move |res| {
                (
                    r["policy"].as_str().unwrap().to_string(),
                    r["rule"].as_str().unwrap_or("-").to_string(),
                    format!(
                        "{}/{}",
                        res["namespace"].as_str().unwrap_or(""),
                        res["name"].as_str().unwrap()
                    ),
                )
            })
        })
        .collect();
    let (_, json) = validate_json(repo.path(), &["--cluster", "planted"]);
    let ours: BTreeSet<(String, String, String)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS343")
        .map(|f| {
            let object = related(f, "object");
            // `Kind.group/namespace/name`: the namespace and the name, as the report has them.
            let parts: Vec<&str> = object.rsplitn(3, '/').collect();
            let ns_name = format!("{}/{}", parts[1], parts[0]);
            (related(f, "policy"), related(f, "rule"), ns_name)
        })
        .collect();
    assert!(by_hand.len() >= 3, "{by_hand:?}");
    assert_eq!(ours, by_hand, "{json:#}");
}

// Without the CLI, the Kyverno policies are not evaluated, and fluxsim says so (a warning
// naming how to install it), never a pass.
#[test]
fn policies_kyverno_without_the_cli_is_a_warning_saying_how_to_install_it() {
    let repo = with_kyverno_policies();
    let bin = crate::common::path_with_git_only();
    if let Some(k) = crate::common::which("kustomize") {
        std::os::unix::fs::symlink(k, bin.path().join("kustomize")).unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args([
            "validate",
            repo.path().to_str().unwrap(),
            "--format",
            "json",
        ])
        .env("PATH", bin.path())
        .env("FLUXSIM_NETWORK", "none")
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let not_checked: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "FS344")
        .collect();
    assert_eq!(not_checked.len(), 2, "one per cluster: {json:#}");
    for f in not_checked {
        assert_eq!(f["severity"], "warning");
        let m = f["message"].as_str().unwrap();
        assert!(
            m.starts_with("2 Kyverno policies not evaluated: no kyverno found on PATH")
                && m.contains("scripts/install-tools"),
            "{m}"
        );
    }
}

// A hostile Kyverno policy asks the CLI to call a service (`context.apiCall.service.url`):
// the CLI runs in the box, without the network, so nothing reaches the listener, and the
// rule's error is a warning, never a pass nor a hang.
#[test]
fn policies_kyverno_a_policy_that_calls_a_service_reaches_no_network() {
    if kyverno().is_none() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let repo = repo_from("testdata/policies");
    std::fs::create_dir_all(repo.path().join("hostile")).unwrap();
    std::fs::write(
        repo.path().join("hostile/call-home.yaml"),
        format!(
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata:\n  name: call-home\nspec:\n  \
             validationFailureAction: Enforce\n  rules:\n    - name: call\n      match:\n        any:\n          \
             - resources:\n              kinds: [Deployment]\n      context:\n        - name: answer\n          \
             apiCall:\n            method: GET\n            service:\n              url: http://127.0.0.1:{port}/leak\n      \
             validate:\n        message: called\n        deny:\n          conditions:\n            any:\n              \
             - key: \"{{{{ answer }}}}\"\n                operator: Equals\n                value: yes\n"
        ),
    )
    .unwrap();
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[validate]\npolicies = [\"policies/\", \"hostile/\"]\n",
    )
    .unwrap();
    commit_all(repo.path(), "a policy that calls a service");
    let (_, json) = validate_json(repo.path(), &[]);
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the policy reached the network"
    );
    let kyverno: Vec<&Value> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["related"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|r| r["value"] == "call-home")
        })
        .collect();
    assert!(
        kyverno
            .iter()
            .all(|f| f["rule"] == "FS344" && f["severity"] == "warning"),
        "{json:#}"
    );
}
