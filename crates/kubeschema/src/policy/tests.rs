//! Policies evaluated on small renders, each case after the API server's behaviour.
#![allow(clippy::needless_pass_by_value)] // the builders read as the JSON literals they take

use super::*;
use serde_json::json;

const FLUX: &str = "system:serviceaccount:flux-system:kustomize-controller";

fn vap(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name}, "spec": spec})
}

fn binding(name: &str, policy: &str, actions: &[&str], extra: Value) -> Value {
    let mut spec = json!({"policyName": policy, "validationActions": actions});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name}, "spec": spec})
}

fn deployments() -> Value {
    json!({"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
        "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]})
}

fn deployment(ns: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns, "labels": {"app": "web"}},
        "spec": {"replicas": replicas}})
}

fn run(objects: &[Value], object: &Value) -> Vec<PolicyResult> {
    run_as(objects, object, FLUX)
}

fn run_as(objects: &[Value], object: &Value, user: &str) -> Vec<PolicyResult> {
    let policies = Policies::of(objects);
    let refs: Vec<&Value> = objects.iter().collect();
    let namespaces: BTreeMap<String, &Value> = objects
        .iter()
        .filter(|o| o["kind"] == "Namespace")
        .map(|o| {
            (
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                o,
            )
        })
        .collect();
    let kinds = Kinds::of(objects);
    policies.evaluate(
        object,
        &Admission {
            namespaces: &namespaces,
            objects: &refs,
            kinds: &kinds,
            username: user,
            deadline: None,
        },
    )
}

fn messages(results: &[PolicyResult]) -> Vec<(Action, String)> {
    results
        .iter()
        .filter_map(|r| match &r.outcome {
            PolicyOutcome::Violation {
                action, message, ..
            } => Some((*action, message.clone())),
            _ => None,
        })
        .collect()
}

fn not_checkable(results: &[PolicyResult]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| match &r.outcome {
            PolicyOutcome::NotCheckable { reason } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

fn max_replicas(extra: Value) -> Value {
    let mut spec = json!({"matchConstraints": deployments(),
        "validations": [{"expression": "object.spec.replicas <= 5", "message": "at most 5 replicas"}]});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    vap("max-replicas", spec)
}

// validating/dispatcher.go: a Deny decision becomes
// "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s".
#[test]
fn a_deny_binding_denies_a_false_validation_in_the_api_servers_words() {
    let objs = [
        max_replicas(json!({})),
        binding("b", "max-replicas", &["Deny"], json!({})),
    ];
    assert_eq!(
        messages(&run(&objs, &deployment("apps", 7))),
        vec![(Action::Deny, "ValidatingAdmissionPolicy 'max-replicas' with binding 'b' denied request: at most 5 replicas".to_string())]
    );
    assert!(run(&objs, &deployment("apps", 3)).is_empty());
}

// dispatcher.go: Warn adds "Validation failed for ValidatingAdmissionPolicy '%s' with
// binding '%s': %s"; Audit publishes validation.policy.admission.k8s.io/validation_failure.
#[test]
fn warn_and_audit_actions_each_report_the_failure() {
    let objs = [
        max_replicas(json!({})),
        binding("b", "max-replicas", &["Warn", "Audit"], json!({})),
    ];
    let got = messages(&run(&objs, &deployment("apps", 7)));
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], (Action::Warn, "Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding 'b': at most 5 replicas".to_string()));
    assert_eq!(got[1].0, Action::Audit);
    assert!(got[1]
        .1
        .contains("validation.policy.admission.k8s.io/validation_failure"));
}

// A policy without a binding does nothing (kubernetes.io ValidatingAdmissionPolicy docs:
// "a policy ... and a binding ... are both required").
#[test]
fn a_policy_without_a_binding_does_nothing() {
    assert!(run(&[max_replicas(json!({}))], &deployment("apps", 7)).is_empty());
}

// validator.go: messageExpression wins when it gives a non-empty one-line string; else
// message; else "failed expression: <expression>".
#[test]
fn message_expression_then_message_then_the_expression() {
    let p = vap(
        "p",
        json!({"matchConstraints": deployments(), "validations": [
        {"expression": "object.spec.replicas <= 5", "message": "m",
         "messageExpression": "'replicas ' + string(object.spec.replicas) + ' > 5'"},
        {"expression": "object.spec.replicas < 2", "messageExpression": "''"},
        {"expression": "object.spec.replicas < 1"}]}),
    );
    let got = messages(&run(
        &[p, binding("b", "p", &["Deny"], json!({}))],
        &deployment("apps", 7),
    ));
    assert!(
        got[0].1.ends_with("denied request: replicas 7 > 5"),
        "{got:?}"
    );
    // An empty messageExpression falls back (no message: the expression).
    assert!(got[1]
        .1
        .ends_with("denied request: failed expression: object.spec.replicas < 2"));
    assert!(got[2]
        .1
        .ends_with("denied request: failed expression: object.spec.replicas < 1"));
}

// predicates/namespace: a namespaced object is matched by its Namespace's labels (with
// kubernetes.io/metadata.name, which the API server sets).
#[test]
fn namespace_selector_reads_the_rendered_namespaces_labels() {
    let objs = [
        max_replicas(
            json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
            "namespaceSelector": {"matchLabels": {"env": "prod"}}}}),
        ),
        binding("b", "max-replicas", &["Deny"], json!({})),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dev", "labels": {"env": "dev"}}}),
    ];
    assert_eq!(messages(&run(&objs, &deployment("prod", 7))).len(), 1);
    assert!(run(&objs, &deployment("dev", 7)).is_empty());
    // A namespace the render lacks: its labels are unknown.
    assert_eq!(
        not_checkable(&run(&objs, &deployment("elsewhere", 7))).len(),
        1
    );
}

#[test]
fn a_namespace_name_selector_is_known_without_the_namespace() {
    let objs = [
        max_replicas(
            json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
            "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name",
                "operator": "NotIn", "values": ["kube-system"]}]}}}),
        ),
        binding("b", "max-replicas", &["Deny"], json!({})),
    ];
    assert_eq!(messages(&run(&objs, &deployment("apps", 7))).len(), 1);
    assert!(run(&objs, &deployment("kube-system", 7)).is_empty());
}

// matching.go: excludeResourceRules first; objectSelector on the object's labels.
#[test]
fn exclude_rules_and_object_selector_narrow_the_match() {
    let excluded = max_replicas(
        json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
        "excludeResourceRules": [{"apiGroups": ["apps"], "apiVersions": ["*"], "operations": ["*"],
            "resources": ["deployments"], "resourceNames": ["web"]}]}}),
    );
    let b = binding("b", "max-replicas", &["Deny"], json!({}));
    assert!(run(&[excluded, b.clone()], &deployment("apps", 7)).is_empty());
    let selected = max_replicas(
        json!({"matchConstraints": {"resourceRules": deployments()["resourceRules"],
        "objectSelector": {"matchLabels": {"app": "other"}}}}),
    );
    assert!(run(&[selected, b], &deployment("apps", 7)).is_empty());
}

// The binding's matchResources narrows what the policy matches.
#[test]
fn binding_match_resources_narrow_the_policy() {
    let objs = [
        max_replicas(json!({})),
        binding(
            "b",
            "max-replicas",
            &["Deny"],
            json!({"matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "prod"}}}}),
        ),
    ];
    assert!(run(&objs, &deployment("apps", 7)).is_empty());
    assert_eq!(messages(&run(&objs, &deployment("prod", 7))).len(), 1);
}

// rules.go: operations must include CREATE (or *); the scope `Cluster` leaves
// namespaced objects out.
#[test]
fn resource_rules_need_create_and_the_scope() {
    let b = binding("b", "max-replicas", &["Deny"], json!({}));
    let update = max_replicas(
        json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"],
        "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["deployments"]}]}}),
    );
    assert!(run(&[update, b.clone()], &deployment("apps", 7)).is_empty());
    let cluster = max_replicas(
        json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["*"],
        "apiVersions": ["*"], "operations": ["*"], "resources": ["*"], "scope": "Cluster"}]}}),
    );
    assert!(run(&[cluster, b], &deployment("apps", 7)).is_empty());
}

fn with_params(param_ref: Value) -> Vec<Value> {
    vec![
        vap(
            "max-replicas",
            json!({"matchConstraints": deployments(),
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                "messageExpression": "'at most ' + params.data.max"}]}),
        ),
        binding(
            "b",
            "max-replicas",
            &["Deny"],
            json!({"paramRef": param_ref}),
        ),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits", "namespace": "apps",
            "labels": {"limits": "yes"}}, "data": {"max": "3"}}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits", "namespace": "other"},
            "data": {"max": "10"}}),
    ]
}

// policy_dispatcher.go CollectParams: a namespaced paramKind is read in the paramRef's
// namespace, else the object's.
#[test]
fn params_by_name_come_from_the_objects_namespace() {
    let objs = with_params(json!({"name": "limits", "parameterNotFoundAction": "Deny"}));
    let got = messages(&run(&objs, &deployment("apps", 5)));
    assert_eq!(got.len(), 1);
    assert!(got[0].1.ends_with("denied request: at most 3"), "{got:?}");
    assert!(run(&objs, &deployment("other", 5)).is_empty());
    let objs = with_params(
        json!({"name": "limits", "namespace": "other", "parameterNotFoundAction": "Deny"}),
    );
    assert!(run(&objs, &deployment("apps", 5)).is_empty());
}

#[test]
fn params_by_selector_evaluate_each_match() {
    let objs = with_params(
        json!({"selector": {"matchLabels": {"limits": "yes"}}, "parameterNotFoundAction": "Allow"}),
    );
    assert_eq!(messages(&run(&objs, &deployment("apps", 5))).len(), 1);
    // In another namespace no param matches: Allow admits.
    assert!(run(&objs, &deployment("other", 5)).is_empty());
}

// CollectParams: no param and `Deny` is a configuration error; under failurePolicy Fail
// it denies whatever the binding's actions (dispatcher.go addConfigError).
#[test]
fn parameter_not_found_deny_fails_the_binding() {
    let objs = with_params(json!({"name": "missing", "parameterNotFoundAction": "Deny"}));
    let got = messages(&run(&objs, &deployment("apps", 1)));
    assert_eq!(got.len(), 1);
    assert!(
        got[0]
            .1
            .contains("failed to configure binding: no params found"),
        "{got:?}"
    );
    let allow = with_params(json!({"name": "missing", "parameterNotFoundAction": "Allow"}));
    assert!(run(&allow, &deployment("apps", 1)).is_empty());
}

// validator.go policyDecisionActionForError: an error is a Deny decision under Fail
// (through the binding's actions), nothing under Ignore.
#[test]
fn failure_policy_decides_what_an_error_does() {
    let erring = |fp: &str| {
        vap(
            "p",
            json!({"matchConstraints": deployments(), "failurePolicy": fp,
        "validations": [{"expression": "object.spec.missing == 1"}]}),
        )
    };
    let got = messages(&run(
        &[erring("Fail"), binding("b", "p", &["Warn"], json!({}))],
        &deployment("apps", 1),
    ));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, Action::Warn);
    assert!(got[0].1.contains("resulted in error"), "{got:?}");
    assert!(run(
        &[erring("Ignore"), binding("b", "p", &["Deny"], json!({}))],
        &deployment("apps", 1)
    )
    .is_empty());
}

// The authorizer is stubbed: an expression that reads it, or reads a variable that does,
// is not checkable, never a pass or a violation.
#[test]
fn an_expression_reading_the_authorizer_is_not_checkable() {
    let p = vap(
        "p",
        json!({"matchConstraints": deployments(),
        "variables": [{"name": "allowed", "expression": "authorizer.group('apps').resource('deployments').check('scale').allowed()"}],
        "validations": [
            {"expression": "authorizer.serviceAccount('x', 'y').group('').resource('pods').check('get').allowed()"},
            {"expression": "variables.allowed"},
            {"expression": "object.spec.replicas < 3"}]}),
    );
    let got = run(
        &[p, binding("b", "p", &["Deny"], json!({}))],
        &deployment("apps", 7),
    );
    let nc = not_checkable(&got);
    assert_eq!(nc.len(), 2, "{got:?}");
    assert!(nc.iter().all(|r| r.contains("authorizer")), "{nc:?}");
    // The validation that does not read it is still checked.
    assert_eq!(messages(&got).len(), 1);
}

// matchConditions: any false skips the policy (kubernetes.io docs, "Matching requests").
#[test]
fn a_false_match_condition_skips_the_policy() {
    let p = max_replicas(
        json!({"matchConditions": [{"name": "not-flux", "expression": "!request.userInfo.username.startsWith('system:serviceaccount:flux-system:')"}]}),
    );
    let objs = [p, binding("b", "max-replicas", &["Deny"], json!({}))];
    assert!(run(&objs, &deployment("apps", 7)).is_empty());
    assert_eq!(
        messages(&run_as(
            &objs,
            &deployment("apps", 7),
            "system:serviceaccount:apps:deployer"
        ))
        .len(),
        1
    );
}

// cel.CreateAdmissionRequest: a create by the Kustomization's service account.
#[test]
fn request_is_a_create_by_the_flux_service_account() {
    let p = vap(
        "p",
        json!({"matchConstraints": deployments(), "validations": [
        {"expression": "request.operation == 'CREATE' && request.resource.resource == 'deployments' && request.namespace == 'apps' && 'system:serviceaccounts:flux-system' in request.userInfo.groups && oldObject == null"}]}),
    );
    assert!(run(
        &[p, binding("b", "p", &["Deny"], json!({}))],
        &deployment("apps", 7)
    )
    .is_empty());
}

// Composition variables see the variables before them.
#[test]
fn variables_compose_in_order() {
    let p = vap(
        "p",
        json!({"matchConstraints": deployments(),
        "variables": [{"name": "r", "expression": "object.spec.replicas"}, {"name": "twice", "expression": "variables.r * 2"}],
        "validations": [{"expression": "variables.twice <= 10"}]}),
    );
    assert_eq!(
        messages(&run(
            &[p, binding("b", "p", &["Deny"], json!({}))],
            &deployment("apps", 7)
        ))
        .len(),
        1
    );
}

// validator.go: auditAnnotations publish `policy/key` when the value is a non-empty string.
#[test]
fn audit_annotations_publish_their_value() {
    let p = vap(
        "p",
        json!({"matchConstraints": deployments(),
        "auditAnnotations": [{"key": "high-replicas", "valueExpression": "object.spec.replicas > 5 ? 'replicas ' + string(object.spec.replicas) : null"}]}),
    );
    let objs = [p, binding("b", "p", &["Audit"], json!({}))];
    let got = run(&objs, &deployment("apps", 7));
    assert_eq!(
        got[0].outcome,
        PolicyOutcome::AuditAnnotation {
            key: "p/high-replicas".into(),
            value: "replicas 7".into()
        }
    );
    assert!(run(&objs, &deployment("apps", 2)).is_empty());
}

// A comprehension bomb stops at PerCallLimit (apiserver pkg/apis/cel/config.go), an
// error under failurePolicy, never a hang.
#[test]
fn a_cel_bomb_in_a_policy_is_bounded() {
    let p = vap(
        "p",
        json!({"matchConstraints": deployments(), "validations": [{"expression":
        "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, [1,2,3,4,5,6,7,8,9,10].all(g, a + b + c + d + e + f + g > 0)))))))"}]}),
    );
    let started = Instant::now();
    let got = messages(&run(
        &[p, binding("b", "p", &["Deny"], json!({}))],
        &deployment("apps", 1),
    ));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(got.len(), 1);
    assert!(got[0].1.contains(crate::cost::COST_LIMIT_ERROR), "{got:?}");
}

// matchPolicy Equivalent (the default): a rule for another served version of the CRD
// matches after conversion, which fluxsim cannot do.
#[test]
fn an_equivalent_version_match_is_not_checkable() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets"},
        "versions": [{"name": "v1", "served": true}, {"name": "v2", "served": true}]}});
    let p = vap(
        "p",
        json!({"matchConstraints": {"resourceRules": [{"apiGroups": ["example.com"],
        "apiVersions": ["v2"], "operations": ["CREATE"], "resources": ["widgets"]}]},
        "validations": [{"expression": "false"}]}),
    );
    let w = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "a"}});
    let objs = [crd, p.clone(), binding("b", "p", &["Deny"], json!({}))];
    assert_eq!(not_checkable(&run(&objs, &w)).len(), 1);
    let mut exact = p;
    exact["spec"]["matchConstraints"]["matchPolicy"] = json!("Exact");
    let objs = [
        objs[0].clone(),
        exact,
        binding("b", "p", &["Deny"], json!({})),
    ];
    assert!(run(&objs, &w).is_empty());
}

// The resource of a kind: its CRD's plural and scope, else the API server's rules for
// built-in kinds.
#[test]
fn kinds_map_to_resources_through_crds_and_built_ins() {
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "octopi.example.com"}, "spec": {"group": "example.com", "scope": "Cluster",
        "names": {"kind": "Octopus", "plural": "octopi"}, "versions": [{"name": "v1", "served": true}]}});
    let kinds = Kinds::of([&crd]);
    assert_eq!(kinds.plural("example.com", "Octopus"), "octopi");
    assert!(!kinds.namespaced("example.com", "Octopus"));
    assert_eq!(kinds.plural("networking.k8s.io", "Ingress"), "ingresses");
    assert_eq!(kinds.plural("", "Endpoints"), "endpoints");
    assert_eq!(
        kinds.plural("networking.k8s.io", "NetworkPolicy"),
        "networkpolicies"
    );
    assert!(kinds.namespaced("apps", "Deployment"));
    assert!(!kinds.namespaced("rbac.authorization.k8s.io", "ClusterRole"));
}

// namespaceObject is the object's Namespace; one the render lacks is unknown, so an
// expression reading it is not checkable.
#[test]
fn namespace_object_is_the_rendered_namespace_or_not_checkable() {
    let p = vap(
        "p",
        json!({"matchConstraints": deployments(), "validations": [
        {"expression": "namespaceObject.metadata.labels['tier'] == 'gold'"}]}),
    );
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {"tier": "silver"}}});
    let objs = [p, binding("b", "p", &["Deny"], json!({})), ns];
    assert_eq!(messages(&run(&objs, &deployment("apps", 1))).len(), 1);
    let got = run(&objs, &deployment("elsewhere", 1));
    assert!(messages(&got).is_empty());
    assert_eq!(not_checkable(&got).len(), 1, "{got:?}");
}
