//! `validate --policies`, Kyverno's half: the Kyverno policies the cluster's render applies
//! and those of `[validate] policies` files, evaluated by the Kyverno CLI itself
//! (`kyverno apply`, v1.19.1 as `scripts/install-tools` builds it), so fluxsim writes no
//! second Kyverno engine (patterns, JMESPath, its CEL libraries). It runs in the tool box
//! (`fluxsim_core::sandbox`, the box helm and flux-operator run in): a cleared environment, the scratch folder the only place it
//! reads and writes, never the network, bounded in time and output. It is given files of the
//! scratch folder only (the policies, the objects, the render's CRDs, who applies them), and
//! fixed flags: no value of the repository is an argument.
//!
//! What the CLI is given, and why:
//! - `--crd-paths` with the CRDs of the render and of `--schema-dir`: without the CRD of a
//!   custom resource, `kyverno apply` matches nothing of it and says nothing
//!   (kyverno/kyverno#15949); with it, a policy on a HelmRelease or any other custom kind is
//!   evaluated.
//! - `--userinfo` with the user that creates the objects: the Kustomization's
//!   `serviceAccountName`, else the controller's service account (one run per user).
//! - `--policy-report --output-format json`: a `ClusterReport` whose results name the
//!   policy, the rule, the resource and the message.
//!
//! How bad a failed result is comes from the policy, as Kyverno acts on it at admission: a
//! `kyverno.io` policy's rule `validate.failureAction` (else the policy's
//! `validationFailureAction`, else `Audit`): `Enforce` rejects the create (an error), `Audit`
//! reports it (info); a `ValidatingPolicy`'s `validationActions`, as a binding's: `Deny` an
//! error, `Warn` a warning, `Audit` info. Not read: `validationFailureActionOverrides` per
//! namespace, and a `namespaceSelector` (the CLI reads namespace labels from a values file
//! fluxsim does not write: a policy with one matches as the CLI decides without it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::finding::Severity;
use crate::model::ClusterRender;

/// The Kyverno CLI version `scripts/install-tools` installs (and whose results fluxsim
/// reads).
pub const KYVERNO_VERSION: &str = "v1.19.1";

/// How to install the CLI, for the finding when it is missing.
pub const INSTALL_HINT: &str = "install the Kyverno CLI v1.19.1 as `kyverno` on PATH \
     (scripts/install-tools builds it from the Go module proxy: github.com/kyverno/kyverno, \
     ./cmd/cli/kubectl-kyverno)";

/// The largest report read from the CLI.
const OUTPUT_LIMIT: usize = 64 << 20;
/// How long one `kyverno apply` may take unless `--timeout` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether `obj` is a Kyverno policy that validates: a `kyverno.io` ClusterPolicy or Policy
/// with a `validate` rule, or a `policies.kyverno.io` ValidatingPolicy (or its namespaced
/// form).
#[must_use]
pub fn is_policy(obj: &Value) -> bool {
    let api = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let group = api.rsplit_once('/').map_or("", |(g, _)| g);
    match (group, kind) {
        ("kyverno.io", "ClusterPolicy" | "Policy") => obj
            .pointer("/spec/rules")
            .and_then(Value::as_array)
            .is_some_and(|rules| rules.iter().any(|r| r.get("validate").is_some())),
        ("policies.kyverno.io", "ValidatingPolicy" | "NamespacedValidatingPolicy") => true,
        _ => false,
    }
}

/// One result of `kyverno apply` that is not a pass, with what it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KyvernoResult {
    /// The policy (`name`, or `namespace/name` for a namespaced one).
    pub(crate) policy: String,
    /// The rule, for a `kyverno.io` policy.
    pub(crate) rule: Option<String>,
    /// Kyverno's message.
    pub(crate) message: String,
    /// `fail` (a violation) or `error` (the rule could not be evaluated).
    pub(crate) result: String,
}

/// What became of the Kyverno policies of one cluster.
#[derive(Debug, Default)]
pub(crate) struct ClusterOutcome {
    /// How many Kyverno policies there were.
    pub(crate) policies: usize,
    /// Each result with the indexes of its Kustomization and object.
    pub(crate) results: Vec<(usize, usize, KyvernoResult)>,
    /// Why (some of) the policies were not evaluated.
    pub(crate) not_checked: Option<String>,
    /// How bad each policy's (and rule's) failure is: `(policy, rule)` → severity, the
    /// rule `""` the policy's own.
    severities: BTreeMap<(String, String), Severity>,
}

impl ClusterOutcome {
    /// The severity of a failed `r`, as Kyverno acts on it at admission.
    pub(crate) fn severity(&self, r: &KyvernoResult) -> Severity {
        let rule = r.rule.clone().unwrap_or_default();
        self.severities
            .get(&(r.policy.clone(), rule))
            .or_else(|| self.severities.get(&(r.policy.clone(), String::new())))
            .copied()
            .unwrap_or(Severity::Info)
    }
}

/// The policy's name as the report names it.
fn policy_name(p: &Value) -> String {
    let name = crate::flux::str_at(p, &["metadata", "name"]).unwrap_or_default();
    match crate::flux::str_at(p, &["metadata", "namespace"]).filter(|n| !n.is_empty()) {
        Some(ns) if p.get("kind").and_then(Value::as_str) != Some("ClusterPolicy") => {
            format!("{ns}/{name}")
        }
        _ => name.to_string(),
    }
}

/// How bad a failure of each rule of `p` is (see the module's doc).
fn severities_of(p: &Value, out: &mut BTreeMap<(String, String), Severity>) {
    let name = policy_name(p);
    let bare = crate::flux::str_at(p, &["metadata", "name"])
        .unwrap_or_default()
        .to_string();
    let enforce = |action: Option<&str>| {
        if action.is_some_and(|a| a.eq_ignore_ascii_case("enforce")) {
            Severity::Error
        } else {
            Severity::Info
        }
    };
    let mut put = |rule: String, s: Severity| {
        out.insert((name.clone(), rule.clone()), s);
        out.insert((bare.clone(), rule), s);
    };
    if p.get("apiVersion")
        .and_then(Value::as_str)
        .is_some_and(|a| a.starts_with("policies.kyverno.io/"))
    {
        let actions: Vec<&str> = p
            .pointer("/spec/validationActions")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let s = if actions.contains(&"Deny") || actions.is_empty() {
            // Without validationActions a failure is taken as a Deny: the strictest.
            Severity::Error
        } else if actions.contains(&"Warn") {
            Severity::Warning
        } else {
            Severity::Info
        };
        put(String::new(), s);
        return;
    }
    let own = crate::flux::str_at(p, &["spec", "validationFailureAction"]);
    put(String::new(), enforce(own));
    for r in p
        .pointer("/spec/rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let rule = crate::flux::str_at(r, &["name"])
            .unwrap_or_default()
            .to_string();
        let action = crate::flux::str_at(r, &["validate", "failureAction"]).or(own);
        put(rule, enforce(action));
    }
}

/// The Kyverno CLI: `kyverno`, else `kubectl-kyverno`, on PATH.
fn locate() -> Option<PathBuf> {
    crate::scratch::on_path("kyverno").or_else(|| crate::scratch::on_path("kubectl-kyverno"))
}

/// What the Kyverno policies make of cluster `c`'s objects: those its render applies with
/// `extra` (the policy files'), each object evaluated by `kyverno apply` as created by the
/// user of the Kustomization (or HelmRelease) that applies it; `users[ki]` is that user.
pub(crate) fn cluster_results(
    c: &ClusterRender,
    extra: &[(String, Value)],
    extra_crds: &[(String, Value)],
    users: &[String],
    timeout: Option<Duration>,
) -> ClusterOutcome {
    let objects = crate::policies::cluster_objects(c);
    // The render's policies win a name they share with a file's (the cluster's own apply).
    let mut policies: BTreeMap<(String, String), &Value> = BTreeMap::new();
    for p in extra
        .iter()
        .map(|(_, v)| v)
        .filter(|v| is_policy(v))
        .chain(objects.iter().map(|(_, _, o)| *o).filter(|o| is_policy(o)))
    {
        let kind = p
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        policies.insert((kind, policy_name(p)), p);
    }
    let mut out = ClusterOutcome {
        policies: policies.len(),
        ..ClusterOutcome::default()
    };
    if policies.is_empty() {
        return out;
    }
    for p in policies.values() {
        severities_of(p, &mut out.severities);
    }
    let Some(cli) = locate() else {
        out.not_checked = Some(format!("no kyverno found on PATH: {INSTALL_HINT}"));
        return out;
    };
    let crds: Vec<&Value> = extra_crds
        .iter()
        .map(|(_, v)| v)
        .chain(
            objects
                .iter()
                .map(|(_, _, o)| *o)
                .filter(|o| kubeschema::is_crd(o)),
        )
        .collect();
    // One run per user: the objects each user creates.
    let mut by_user: BTreeMap<&str, Vec<(usize, usize, &Value)>> = BTreeMap::new();
    for &(ki, oi, o) in &objects {
        if is_policy(o) {
            continue;
        }
        by_user
            .entry(users.get(ki).map_or("", String::as_str))
            .or_default()
            .push((ki, oi, o));
    }
    let policy_values: Vec<&Value> = policies.values().copied().collect();
    for (user, objs) in by_user {
        let run = apply(
            &cli,
            &policy_values,
            &objs.iter().map(|(_, _, o)| *o).collect::<Vec<_>>(),
            &crds,
            user,
            timeout.unwrap_or(DEFAULT_TIMEOUT),
        );
        let results = match run {
            Ok(r) => r,
            Err(e) => {
                out.not_checked = Some(e);
                out.results.clear();
                return out;
            }
        };
        for (resource, r) in results {
            for &(ki, oi, o) in &objs {
                if same_object(o, &resource) {
                    out.results.push((ki, oi, r.clone()));
                }
            }
        }
    }
    out
}

/// Whether the object `o` is the report's `resource` (apiVersion, kind, namespace, name).
fn same_object(o: &Value, resource: &Value) -> bool {
    let at = |v: &Value, p: &[&str]| crate::flux::str_at(v, p).unwrap_or_default().to_string();
    let (own, theirs) = (
        at(o, &["metadata", "namespace"]),
        at(resource, &["namespace"]),
    );
    at(o, &["apiVersion"]) == at(resource, &["apiVersion"])
        && at(o, &["kind"]) == at(resource, &["kind"])
        && at(o, &["metadata", "name"]) == at(resource, &["name"])
        // An object without a namespace is the API server's `default` one, as the CLI
        // reports it: a result is never lost for the namespace it filled in.
        && (own == theirs || (own.is_empty() && theirs == "default"))
}

/// One `kyverno apply` of `policies` on `objects`: each result that is not a pass or a
/// skip, with its resource.
fn apply(
    cli: &Path,
    policies: &[&Value],
    objects: &[&Value],
    crds: &[&Value],
    user: &str,
    timeout: Duration,
) -> Result<Vec<(Value, KyvernoResult)>, String> {
    let dir = crate::scratch::tempdir(crate::scratch::Kind::Policy)
        .map_err(|e| format!("a folder for kyverno: {e}"))?;
    let d = dir.path();
    let write = |name: &str, docs: &[&Value]| -> Result<PathBuf, String> {
        // JSON documents are YAML: one per `---`, as the CLI reads a stream.
        let text: Vec<String> = docs.iter().map(ToString::to_string).collect();
        let path = d.join(name);
        std::fs::write(&path, text.join("\n---\n") + "\n")
            .map_err(|e| format!("writing {name} for kyverno: {e}"))?;
        Ok(path)
    };
    let mut args: Vec<std::ffi::OsString> = vec!["apply".into()];
    for (i, p) in policies.iter().enumerate() {
        args.push(write(&format!("policy-{i:04}.yaml"), &[p])?.into());
    }
    let resources = write("resources.yaml", objects)?;
    let info = serde_json::json!({
        "apiVersion": "cli.kyverno.io/v1alpha1",
        "kind": "UserInfo",
        "metadata": {"name": "fluxsim"},
        "userInfo": {"username": user},
    });
    let userinfo = write("userinfo.yaml", &[&info])?;
    args.extend(["--resource".into(), resources.into()]);
    args.extend(["--userinfo".into(), userinfo.into()]);
    if !crds.is_empty() {
        args.extend(["--crd-paths".into(), write("crds.yaml", crds)?.into()]);
    }
    args.extend(
        [
            "--policy-report",
            "--output-format",
            "json",
            "--remove-color",
        ]
        .iter()
        .map(Into::into),
    );
    let out = crate::sandbox::Tool::new(cli, timeout)
        .args(args)
        .dir(d)
        .confined()
        .output_limit(OUTPUT_LIMIT)
        .run()
        .map_err(|e| format!("kyverno apply: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The report is the one JSON line; the CLI also prints warnings on stdout.
    let report = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .and_then(|l| serde_json::from_str::<Value>(l).ok());
    let Some(report) = report else {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = crate::scratch::scrub(said.trim());
        if out.status.success() && said.is_empty() {
            // No policy matched any object: the CLI prints no report.
            return Ok(Vec::new());
        }
        return Err(format!(
            "kyverno apply gave no report ({}): {}",
            out.status,
            said.lines().last().unwrap_or("")
        ));
    };
    let mut results = Vec::new();
    for r in report
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let result = r.get("result").and_then(Value::as_str).unwrap_or("");
        if !matches!(result, "fail" | "error" | "warn") {
            continue;
        }
        let found = KyvernoResult {
            policy: crate::flux::str_at(r, &["policy"])
                .unwrap_or_default()
                .to_string(),
            rule: crate::flux::str_at(r, &["rule"]).map(str::to_string),
            message: crate::flux::str_at(r, &["message"])
                .unwrap_or_default()
                .to_string(),
            result: if result == "error" { "error" } else { "fail" }.to_string(),
        };
        for resource in r
            .get("resources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            results.push((resource.clone(), found.clone()));
        }
    }
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_report_resource_in_default_is_the_object_without_a_namespace() {
        let o = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        let r = |ns: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "c",
            "namespace": ns})
        };
        assert!(same_object(&o, &r("default")));
        assert!(same_object(&o, &r("")));
        assert!(!same_object(&o, &r("apps")));
    }

    #[test]
    fn kyverno_policies_that_validate_are_recognised() {
        let cp = json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": "p"}, "spec": {"rules": [{"name": "r", "validate": {}}]}});
        assert!(is_policy(&cp));
        let mutate = json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": "p"}, "spec": {"rules": [{"name": "r", "mutate": {}}]}});
        assert!(!is_policy(&mutate));
        let vp = json!({"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy"});
        assert!(is_policy(&vp));
        let vap = json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy"});
        assert!(!is_policy(&vap));
    }

    // Kyverno's failure actions (kyverno.io/v1 ClusterPolicy: a rule's
    // `validate.failureAction` wins over `spec.validationFailureAction`, whose default is
    // Audit; policies.kyverno.io ValidatingPolicy: `validationActions` as a binding's).
    #[test]
    fn a_kyverno_failure_is_as_bad_as_its_action_at_admission() {
        let cp = json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": "p"}, "spec": {"validationFailureAction": "Enforce",
            "rules": [{"name": "strict", "validate": {}},
                      {"name": "lax", "validate": {"failureAction": "Audit"}}]}});
        let audit = json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": "q"}, "spec": {"rules": [{"name": "r", "validate": {}}]}});
        let vp = json!({"apiVersion": "policies.kyverno.io/v1", "kind": "ValidatingPolicy",
            "metadata": {"name": "v"}, "spec": {"validationActions": ["Warn", "Audit"]}});
        let mut o = ClusterOutcome::default();
        for p in [&cp, &audit, &vp] {
            severities_of(p, &mut o.severities);
        }
        let r = |policy: &str, rule: Option<&str>| KyvernoResult {
            policy: policy.into(),
            rule: rule.map(Into::into),
            message: String::new(),
            result: "fail".into(),
        };
        assert_eq!(o.severity(&r("p", Some("strict"))), Severity::Error);
        assert_eq!(o.severity(&r("p", Some("lax"))), Severity::Info);
        assert_eq!(o.severity(&r("q", Some("r"))), Severity::Info);
        assert_eq!(o.severity(&r("v", None)), Severity::Warning);
    }
}
