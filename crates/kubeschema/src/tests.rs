//! Behaviour tests of validation and hazards, each named after what the API server or Flux
//! does, with the source it comes from.

use serde_json::{json, Value};

use crate::{change_hazards, deletion_hazards, KubeVersion, Report, Validator};

fn deployment(container: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "apps"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}}
        }
    })
}

fn widget_crd(spec_schema: &Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": spec_schema}
            }}}]
        }
    })
}

fn widget(spec: &Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "apps"}, "spec": spec})
}

fn check(validator: &Validator, object: &Value) -> Report {
    validator.validate(object)
}

fn builtin(object: &Value) -> Report {
    check(&Validator::new(KubeVersion::DEFAULT), object)
}

fn custom(spec_schema: &Value, spec: &Value) -> Report {
    let mut v = Validator::new(KubeVersion::DEFAULT);
    v.add_crd(&widget_crd(spec_schema)).unwrap();
    check(&v, &widget(spec))
}

fn ids(r: &Report) -> Vec<(&str, &str)> {
    r.findings
        .iter()
        .map(|f| (f.rule.id, f.path.as_str()))
        .collect()
}

#[test]
fn every_embedded_version_loads_and_serves_apps_v1_deployment() {
    for version in KubeVersion::ALL {
        let v = Validator::new(version);
        assert!(
            v.kube_release().starts_with(version.as_str()),
            "{version}: {}",
            v.kube_release()
        );
        assert_eq!(v.is_namespaced("apps", "Deployment"), Some(true));
        assert_eq!(v.is_namespaced("", "Namespace"), Some(false));
        assert!(check(&v, &deployment(&json!({"name": "web", "image": "nginx"}))).is_clean());
    }
}

#[test]
fn kube_version_reads_minor_versions_and_rejects_others() {
    assert_eq!(KubeVersion::parse("v1.35.2"), Ok(KubeVersion::V1_35));
    assert_eq!(KubeVersion::parse("1.34"), Ok(KubeVersion::V1_34));
    assert_eq!(KubeVersion::parse("1.24"), Ok(KubeVersion::V1_24));
    assert_eq!(KubeVersion::parse("v1.29.15"), Ok(KubeVersion::V1_29));
    for s in ["1.23", "1.37", "2.30", "1", "1.x", "1.30.1.2", "kube"] {
        assert!(KubeVersion::parse(s).is_err(), "{s}");
    }
    assert_eq!(
        KubeVersion::parse("1.20").unwrap_err().to_string(),
        "Kubernetes version `1.20` has no embedded schemas (supported: 1.24 to 1.36)"
    );
    let minors: Vec<u32> = KubeVersion::ALL.iter().map(|v| v.minor()).collect();
    assert_eq!(minors, (24..=36).collect::<Vec<_>>());
    assert!(KubeVersion::ALL.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(KubeVersion::DEFAULT, KubeVersion::V1_36);
}

#[test]
fn kube_version_nearest_clamps_a_detected_version_to_the_embedded_range() {
    let n = KubeVersion::nearest("v1.22.3").unwrap();
    assert_eq!((n.version, n.exact), (KubeVersion::V1_24, false));
    let n = KubeVersion::nearest("1.38").unwrap();
    assert_eq!((n.version, n.exact), (KubeVersion::V1_36, false));
    let n = KubeVersion::nearest("v1.30.14").unwrap();
    assert_eq!((n.version, n.exact), (KubeVersion::V1_30, true));
    assert!(KubeVersion::nearest("v2.0.0").is_err());
}

// Kubernetes deprecation guide (kubernetes.io/docs/reference/using-api/deprecation-guide):
// v1.26 stops serving autoscaling/v2beta2 HorizontalPodAutoscaler, v1.25 batch/v1beta1
// CronJob and policy/v1beta1 PodSecurityPolicy, v1.32 flowcontrol.apiserver.k8s.io/v1beta3
// (served from v1.26); the published specs of each release agree.
#[test]
fn kube_api_reports_the_release_that_stops_serving_an_api() {
    let hpa = crate::kube_api("autoscaling", "v2beta2", "HorizontalPodAutoscaler").unwrap();
    assert_eq!(hpa.served, [KubeVersion::V1_24, KubeVersion::V1_25]);
    assert_eq!(hpa.removed_in, Some(KubeVersion::V1_26));
    let fs = crate::kube_api("flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema").unwrap();
    assert_eq!(fs.first_served(), Some(KubeVersion::V1_26));
    assert_eq!(fs.served.last(), Some(&KubeVersion::V1_31));
    assert_eq!(fs.removed_in, Some(KubeVersion::V1_32));
    for (group, kind) in [("batch", "CronJob"), ("policy", "PodSecurityPolicy")] {
        let api = crate::kube_api(group, "v1beta1", kind).unwrap();
        assert_eq!(api.removed_in, Some(KubeVersion::V1_25), "{group}/{kind}");
    }
    let deploy = crate::kube_api("apps", "v1", "Deployment").unwrap();
    assert_eq!(deploy.served, KubeVersion::ALL);
    assert_eq!(deploy.removed_in, None);
    assert!(crate::kube_api("", "v1", "ConfigMap")
        .unwrap()
        .served_in(KubeVersion::V1_24));
    assert!(crate::kube_api("apps", "v1beta1", "Deployment").is_none());
    // The meta types are no resources.
    assert!(crate::kube_api("apps", "v1", "DeleteOptions").is_none());
}

// What the table says is what the catalogs serve: an object of an API the table says is gone
// gets `no matches for kind` (FS303) from that version's catalog.
#[test]
fn an_api_kube_removed_is_not_served_by_that_versions_catalog() {
    let hpa = json!({
        "apiVersion": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "apps"},
        "spec": {"maxReplicas": 3, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}
    });
    let ids_of = |v: KubeVersion| -> Vec<&'static str> {
        check(&Validator::new(v), &hpa)
            .findings
            .iter()
            .map(|f| f.rule.id)
            .collect()
    };
    assert_eq!(ids_of(KubeVersion::V1_25), Vec::<&str>::new());
    assert_eq!(ids_of(KubeVersion::V1_26), ["FS303"]);
}

// structured-merge-diff typed/validate.go visitMapItems: a key with no field and no element
// type is "field not declared in schema"; server-side apply (Flux's) converts the patch with
// it whatever the field validation (kubernetes test/integration/apiserver/
// field_validation_test.go: "unknown fields were treated as errors in apply-patch").
#[test]
fn unknown_field_of_a_builtin_kind_fails_server_side_apply() {
    let r = builtin(&deployment(
        &json!({"name": "web", "image": "nginx", "imagePullPolice": "Always"}),
    ));
    assert_eq!(
        ids(&r),
        [("FS302", "spec.template.spec.containers[0].imagePullPolice")]
    );
    assert!(r.findings[0].message.ends_with(
        ".spec.template.spec.containers[name=\"web\"].imagePullPolice: field not declared in schema"
    ));
}

// Same conversion for a custom resource: the CRD's structural schema is its type
// (apiextensions-apiserver customresource_handler.go, NewTypeConverter).
#[test]
fn unknown_field_of_a_custom_resource_fails_server_side_apply_too() {
    let r = custom(
        &json!({"type": "object", "properties": {"a": {"type": "string"}}}),
        &json!({"b": "x"}),
    );
    assert_eq!(ids(&r), [("FS302", "spec.b")]);
}

// kube-openapi schemaconv/openapi.go visitSpec: x-kubernetes-preserve-unknown-fields makes
// every descendant of the inline schema accept unknown fields.
#[test]
fn preserve_unknown_fields_accepts_unknown_fields_below_it() {
    let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}});
    assert!(custom(&schema, &json!({"x": 1, "a": {"c": 2}})).is_clean());
}

// kube-openapi schemaconv/openapi.go parseObject: an object without properties and without
// additionalProperties is free-form.
#[test]
fn object_without_properties_is_free_form() {
    assert!(custom(
        &json!({"type": "object"}),
        &json!({"anything": {"goes": [1]}})
    )
    .is_clean());
}

// structured-merge-diff typed/validate.go validateScalar: numeric fields take ints and
// floats, not strings (a substituted value quoted in its source).
#[test]
fn string_where_an_integer_belongs_fails_typed_conversion() {
    let r = builtin(&deployment(
        &json!({"name": "web", "image": "nginx", "ports": [{"containerPort": "80"}]}),
    ));
    assert_eq!(
        ids(&r),
        [(
            "FS301",
            "spec.template.spec.containers[0].ports[0].containerPort"
        )]
    );
    assert!(r.findings[0]
        .message
        .ends_with("expected numeric (int or float), got string"));
}

// Go's encoding/json: the merged object is encoded again before decoding into the Go type,
// so 3.0 (printed 3) decodes into an int32 and 1.5 does not.
#[test]
fn fractional_number_in_an_int32_field_fails_decoding_but_integral_float_does_not() {
    let mut d = deployment(&json!({"name": "web", "image": "nginx"}));
    d["spec"]["replicas"] = json!(3.0);
    assert!(builtin(&d).is_clean());
    d["spec"]["replicas"] = json!(1.5);
    assert_eq!(ids(&builtin(&d)), [("FS301", "spec.replicas")]);
    d["spec"]["replicas"] = json!(3_000_000_000_i64);
    assert_eq!(ids(&builtin(&d)), [("FS301", "spec.replicas")]);
}

// kube-openapi schemaconv/smd.go convertPrimitive: int-or-string is an untyped scalar; a
// list or map is still rejected.
#[test]
fn int_or_string_takes_both_but_not_a_map() {
    let port = |p: Value| {
        deployment(&json!({"name": "web", "image": "nginx",
        "readinessProbe": {"httpGet": {"port": p}}}))
    };
    assert!(builtin(&port(json!(8080))).is_clean());
    assert!(builtin(&port(json!("http"))).is_clean());
    assert_eq!(builtin(&port(json!({"a": 1}))).findings[0].rule.id, "FS301");
    let schema =
        json!({"type": "object", "properties": {"p": {"x-kubernetes-int-or-string": true}}});
    assert!(custom(&schema, &json!({"p": 1})).is_clean());
    assert!(custom(&schema, &json!({"p": "1"})).is_clean());
    assert_eq!(
        ids(&custom(&schema, &json!({"p": 1.5}))),
        [("FS301", "spec.p")]
    );
}

// structured-merge-diff typed/validate.go visitListItems and helpers.go
// keyedAssociativeListItemToPathElement: a missing key takes the schema's default
// (ContainerPort.protocol is TCP), so 80 and 80/TCP are the same entry.
#[test]
fn list_map_keys_take_their_defaults_before_duplicates_are_found() {
    let r = builtin(&deployment(&json!({"name": "web", "image": "nginx",
        "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}]})));
    assert_eq!(
        ids(&r),
        [("FS305", "spec.template.spec.containers[0].ports")]
    );
    assert!(r.findings[0]
        .message
        .ends_with("duplicate entries for key [containerPort=80,protocol=\"TCP\"]"));
    let udp = builtin(&deployment(&json!({"name": "web", "image": "nginx",
        "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]})));
    assert!(udp.is_clean());
}

// structured-merge-diff typed/helpers.go: an element of a list-map with none of its keys
// (and no default for them) fails; a key with a schema default (EnvVar.name defaults to "")
// does not, and the Go validation then requires the name.
#[test]
fn list_map_element_without_any_key_fails_typed_conversion() {
    let schema = json!({"type": "object", "properties": {"l": {"type": "array",
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "string"}}}}}});
    let r = custom(&schema, &json!({"l": [{"v": "x"}]}));
    assert_eq!(ids(&r), [("FS305", "spec.l")]);
    assert!(r.findings[0]
        .message
        .contains("omits all key fields [\"k\"]"));
    let env = builtin(&deployment(
        &json!({"name": "web", "image": "nginx", "env": [{"value": "x"}]}),
    ));
    assert_eq!(
        env.findings[0].message,
        "spec.template.spec.containers[0].env[0].name: Required value"
    );
}

// structured-merge-diff typed/validate.go validateScalar, mapValue, listValue: null is valid
// everywhere in the typed conversion.
#[test]
fn null_values_pass_the_typed_conversion() {
    let mut d = deployment(&json!({"name": "web", "image": "nginx", "ports": null}));
    d["metadata"]["creationTimestamp"] = Value::Null;
    assert!(builtin(&d).is_clean());
}

// apiextensions-apiserver structuraldefaulting PruneNonNullableNullsWithoutDefaults: a null
// of a non-nullable field is dropped before validation, so a required one is then missing;
// a nullable one keeps its null.
#[test]
fn null_of_a_non_nullable_required_field_is_missing() {
    let schema = |nullable: bool| {
        json!({"type": "object", "required": ["a"],
        "properties": {"a": {"type": "string", "nullable": nullable}}})
    };
    assert_eq!(
        ids(&custom(&schema(false), &json!({"a": null}))),
        [("FS301", "spec.a")]
    );
    assert!(custom(&schema(true), &json!({"a": null})).is_clean());
}

// pkg/apis/core/v1/defaults.go SetDefaults_Container: an empty imagePullPolicy is defaulted
// before validation; a wrong one is "Unsupported value".
#[test]
fn builtin_enum_rejects_wrong_values_and_leaves_empty_ones_to_defaulting() {
    let r = builtin(&deployment(
        &json!({"name": "web", "image": "nginx", "imagePullPolicy": "always"}),
    ));
    assert_eq!(r.findings[0].message, "spec.template.spec.containers[0].imagePullPolicy: Unsupported value: \"always\": supported values: \"Always\", \"IfNotPresent\", \"Never\"");
    assert!(builtin(&deployment(
        &json!({"name": "web", "image": "nginx", "imagePullPolicy": ""})
    ))
    .is_clean());
}

// pkg/apis/apps/validation/validation.go ValidateDeploymentSpec: the selector is required.
#[test]
fn builtin_required_field_missing_is_required_value() {
    let mut d = deployment(&json!({"name": "web", "image": "nginx"}));
    d["spec"].as_object_mut().unwrap().remove("selector");
    let r = builtin(&d);
    assert_eq!(r.findings[0].message, "spec.selector: Required value");
}

// apimachinery pkg/api/resource/quantity.go ParseQuantity, run when the object is decoded.
#[test]
fn bad_quantity_fails_decoding() {
    let r = builtin(&deployment(&json!({"name": "web", "image": "nginx",
        "resources": {"limits": {"memory": "1 Gi"}, "requests": {"cpu": 0.5}}})));
    assert_eq!(
        ids(&r),
        [(
            "FS301",
            "spec.template.spec.containers[0].resources.limits[memory]"
        )]
    );
}

// Status is reset by the status strategies before validation: only the typed conversion
// reads it.
#[test]
fn status_is_read_by_the_typed_conversion_only() {
    let mut d = deployment(&json!({"name": "web", "image": "nginx"}));
    d["status"] = json!({"conditions": [{"type": "Available"}]});
    assert!(builtin(&d).is_clean());
    d["status"] = json!({"bogus": 1});
    assert_eq!(ids(&builtin(&d)), [("FS302", "status.bogus")]);
}

// apiextensions-apiserver validation.go kubeOpenAPIResultToFieldErrors and kube-openapi
// errors/schema.go: the messages of type, enum, pattern, bounds and formats.
#[test]
fn crd_value_validations_word_their_messages_as_apiextensions() {
    let schema = json!({"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 5},
        "e": {"type": "string", "enum": ["a", "b"]},
        "p": {"type": "string", "pattern": "^x+$"},
        "u": {"type": "string", "format": "uuid"},
        "l": {"type": "array", "maxItems": 1, "items": {"type": "string"}}
    }});
    let r = custom(
        &schema,
        &json!({"n": 1.5, "e": "c", "p": "y", "u": "z", "l": ["a", "b"]}),
    );
    let messages: Vec<&str> = r.findings.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "spec.e: Unsupported value: \"c\": supported values: \"a\", \"b\"",
            "spec.l: Too many: 2: must have at most 1 items",
            "spec.n: Invalid value: 1.5: spec.n in body must be of type integer: \"number\"",
            "spec.p: Invalid value: \"y\": spec.p in body should match '^x+$'",
            "spec.u: Invalid value: \"z\": spec.u in body must be of type uuid: \"z\"",
        ]
    );
}

// apiextensions-apiserver pkg/apiserver/schema/cel/validation.go: a false rule is
// field.Invalid with the message (objects omit their value), fieldPath and reason apply.
#[test]
fn cel_rule_false_is_reported_with_its_message() {
    let schema = json!({"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min must not exceed max"}]});
    let r = custom(&schema, &json!({"min": 3, "max": 1}));
    assert_eq!(
        r.findings[0].message,
        "spec: Invalid value: min must not exceed max"
    );
    assert!(custom(&schema, &json!({"min": 1, "max": 3})).is_clean());
}

// apiserver pkg/cel/escaping.go: property names that are CEL keywords or hold '-' are
// escaped; a rule written with the escaped name reads the field.
#[test]
fn cel_reads_escaped_property_names() {
    let schema = json!({"type": "object", "properties": {"namespace": {"type": "string"}, "my-field": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.__namespace__ == 'ok' && self.my__dash__field == 1"}]});
    assert!(custom(&schema, &json!({"namespace": "ok", "my-field": 1})).is_clean());
    let r = custom(&schema, &json!({"namespace": "no", "my-field": 1}));
    assert_eq!(r.findings[0].rule.id, "FS304");
    assert!(r.findings[0]
        .message
        .ends_with("failed rule: self.__namespace__ == 'ok' && self.my__dash__field == 1"));
}

// Kubernetes CEL libraries the cel crate lacks are never guessed: unchecked, with the error.
#[test]
fn cel_rule_with_a_kubernetes_only_function_is_unchecked() {
    let schema = json!({"type": "string", "x-kubernetes-validations": [{"rule": "isURL(self)"}]});
    let r = custom(
        &json!({"type": "object", "properties": {"u": schema}}),
        &json!({"u": "not a url"}),
    );
    assert!(r.findings.is_empty());
    assert!(r.unchecked[0].reason.contains("isURL"), "{:?}", r.unchecked);
}

// apiextensions-apiserver cel/validation.go: transition rules (oldSelf) run only on update.
#[test]
fn cel_transition_rule_is_unchecked() {
    let schema =
        json!({"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]});
    let r = custom(
        &json!({"type": "object", "properties": {"u": schema}}),
        &json!({"u": "x"}),
    );
    assert!(r.findings.is_empty());
    assert!(r.unchecked[0].reason.contains("transition rule"));
}

// apiextensions builder.go addEmbeddedProperties: an embedded resource's metadata is
// ObjectMeta, typed even under preserve-unknown-fields.
#[test]
fn embedded_resource_metadata_is_typed() {
    let schema = json!({"type": "object", "properties": {"t": {"type": "object",
        "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}});
    assert!(custom(
        &schema,
        &json!({"t": {"apiVersion": "v1", "kind": "X", "metadata": {"name": "a"}, "data": {}}})
    )
    .is_clean());
    assert_eq!(
        ids(&custom(&schema, &json!({"t": {"metadata": {"nam": "a"}}}))),
        [("FS302", "spec.t.metadata.nam")]
    );
}

// apimachinery meta.NoKindMatchError: a built-in group that does not serve the version.
#[test]
fn removed_builtin_api_version_is_not_served() {
    let r = builtin(
        &json!({"apiVersion": "policy/v1beta1", "kind": "PodSecurityPolicy", "metadata": {"name": "x"}}),
    );
    assert_eq!(ids(&r), [("FS303", "apiVersion")]);
}

#[test]
fn kind_of_an_unknown_group_is_unchecked_not_a_finding() {
    let r = builtin(
        &json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "x"}}),
    );
    assert!(r.findings.is_empty());
    assert!(r.unchecked[0]
        .reason
        .starts_with("no schema for Certificate.cert-manager.io v1"));
}

// apimachinery pkg/api/validation/objectmeta.go ValidateObjectMeta: labels and namespace.
#[test]
fn invalid_label_value_and_namespace_are_invalid_metadata() {
    let mut d = deployment(&json!({"name": "web", "image": "nginx"}));
    d["metadata"]["labels"] = json!({"tier": "front end"});
    d["metadata"]["namespace"] = json!("Apps");
    let r = builtin(&d);
    assert_eq!(
        ids(&r),
        [
            ("FS306", "metadata.labels"),
            ("FS306", "metadata.namespace")
        ]
    );
}

#[test]
fn validator_is_send_and_sync() {
    fn assert_sync<T: Send + Sync>() {}
    assert_sync::<Validator>();
}

// fluxcd/pkg/ssa manager_apply.go: ForceSelector, the annotation on the object.
#[test]
fn force_annotation_on_the_object_recreates_it() {
    let base = deployment(&json!({"name": "web", "image": "nginx"}));
    let mut head = base.clone();
    head["spec"]["selector"] = json!({"matchLabels": {"app": "web2"}});
    assert_eq!(change_hazards(&base, &head, false)[0].rule.id, "FS310");
    head["metadata"]["annotations"] = json!({"kustomize.toolkit.fluxcd.io/force": "enabled"});
    assert_eq!(change_hazards(&base, &head, false)[0].rule.id, "FS311");
}

// A chart version range is not a version: no major bump is claimed.
#[test]
fn chart_version_ranges_are_not_compared() {
    let hr = |v: &str| {
        json!({"apiVersion": "helm.toolkit.fluxcd.io/v2", "kind": "HelmRelease",
        "metadata": {"name": "a", "namespace": "b"}, "spec": {"chart": {"spec": {"version": v}}}})
    };
    assert!(change_hazards(&hr("1.x"), &hr("2.x"), false).is_empty());
    assert_eq!(
        change_hazards(&hr("v1.9.0"), &hr("v2.0.0"), false)[0]
            .rule
            .id,
        "FS332"
    );
}

// kustomize-controller prune: `kustomize.toolkit.fluxcd.io/prune: disabled` exempts it.
#[test]
fn prune_disabled_annotation_exempts_a_deletion() {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a",
        "annotations": {"kustomize.toolkit.fluxcd.io/prune": "disabled"}}});
    assert!(deletion_hazards(&ns, true, &[]).is_empty());
}

// apiextensions-apiserver pkg/apiserver/schema/defaulting/algorithm.go Default: the server
// fills in defaults before validating, so a required field with a default is never missing
// and CEL rules read the default (Gateway API's `kind` defaults to Service).
#[test]
fn crd_defaults_are_applied_before_required_fields_and_cel() {
    let schema = json!({"type": "object", "required": ["kind"],
        "properties": {"kind": {"type": "string", "default": "Service"}, "port": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.kind == 'Service' ? has(self.port) : true", "message": "port required"}]});
    let r = custom(&schema, &json!({}));
    assert_eq!(r.findings.len(), 1, "{:?}", r.findings);
    assert_eq!(r.findings[0].message, "spec: Invalid value: port required");
    assert!(r.unchecked.is_empty(), "{:?}", r.unchecked);
    assert!(custom(&schema, &json!({"port": 80})).is_clean());
}

// A value the caller does not know (fluxsim's placeholder of a var from an unreadable
// source) is not validated: unchecked, never a finding.
#[test]
fn values_with_the_unknown_marker_are_unchecked() {
    let mut v = Validator::new(KubeVersion::DEFAULT);
    v.set_unknown_marker("fluxsim-unknown:");
    let mut d = deployment(&json!({"name": "web", "image": "nginx"}));
    d["spec"]["replicas"] = json!("fluxsim-unknown:Secret/flux-system/vars:REPLICAS");
    d["metadata"]["labels"] = json!({"domain": "fluxsim-unknown:Secret/flux-system/vars:DOMAIN"});
    let r = v.validate(&d);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert!(
        r.unchecked.iter().any(|u| u.path == "spec.replicas"),
        "{:?}",
        r.unchecked
    );
    assert!(
        r.unchecked
            .iter()
            .any(|u| u.path == "metadata.labels[domain]"),
        "{:?}",
        r.unchecked
    );
    assert!(!builtin(&d).findings.is_empty());
}

// CEL cost bounds: the limits are apiserver `pkg/apis/cel/config.go` (`PerCallLimit`,
// `RuntimeCELCostBudget`, `MaxRequestSizeBytes`) and apiextensions-apiserver
// `pkg/apis/apiextensions/validation/validation.go` (`StaticEstimatedCostLimit`,
// `StaticEstimatedCRDCostLimit`); the messages are those of that file and of
// `pkg/apiserver/schema/cel/validation.go`.

/// `self.l.all(...)` nested `depth` deep over `self.l`.
fn nested_all(depth: usize) -> String {
    let vars: Vec<String> = (0..depth).map(|i| format!("v{i}")).collect();
    let mut rule = format!("{} >= 0", vars.join(" + "));
    for v in vars.iter().rev() {
        rule = format!("self.l.all({v}, {rule})");
    }
    rule
}

fn list_schema(rule: &str, max_items: Option<u64>) -> Value {
    let mut l = json!({"type": "array", "items": {"type": "integer"}});
    if let Some(m) = max_items {
        l["maxItems"] = json!(m);
    }
    json!({"type": "object", "properties": {"l": l},
           "x-kubernetes-validations": [{"rule": rule}]})
}

fn cost_ids(r: &Report) -> Vec<&str> {
    r.findings
        .iter()
        .filter(|f| f.rule.id == "FS308")
        .map(|f| f.path.as_str())
        .collect()
}

#[test]
fn crd_rule_over_the_static_estimated_cost_limit_is_rejected() {
    // Unbounded: the list is estimated at as many integers as fit in 3 MiB.
    let crd = widget_crd(&list_schema(&nested_all(2), None));
    let r = builtin(&crd);
    let path =
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    assert!(cost_ids(&r).contains(&path), "{r:#?}");
    let f = r.findings.iter().find(|f| f.path == path).unwrap();
    assert!(
        f.message
            .contains("Forbidden: estimated rule cost exceeds budget by factor of more than 100x"),
        "{}",
        f.message
    );
}

#[test]
fn crd_rule_bounded_by_max_items_is_accepted() {
    // 100 × 100 iterations of a few units: far under 10,000,000.
    let crd = widget_crd(&list_schema(&nested_all(2), Some(100)));
    assert!(cost_ids(&builtin(&crd)).is_empty());
    // A rule without comprehensions costs a few units whatever the sizes.
    let crd = widget_crd(&list_schema("size(self.l) < 10", None));
    assert!(cost_ids(&builtin(&crd)).is_empty());
}

#[test]
fn crd_rules_over_the_static_estimated_crd_cost_limit_are_rejected() {
    // One rule per item of an unbounded list of objects: each cheap, but 3 MiB of items
    // (each at least `{"a":[]}`, 9 bytes) makes the total over 100,000,000.
    let item = json!({"type": "object", "required": ["a"],
        "properties": {"a": {"type": "array", "maxItems": 20, "items": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.a.all(x, self.a.all(y, x + y >= 0))"}]});
    let schema =
        json!({"type": "object", "properties": {"items": {"type": "array", "items": item}}});
    let r = builtin(&widget_crd(&schema));
    assert!(
        cost_ids(&r).contains(&"spec.versions[0].schema.openAPIV3Schema"),
        "{r:#?}"
    );
    let f = r.findings.iter().find(|f| f.rule.id == "FS308").unwrap();
    assert!(f
        .message
        .contains("cost total for entire OpenAPIv3 schema exceeds budget"));
}

#[test]
fn cel_rule_over_the_per_call_limit_stops_with_a_finding() {
    // The CRD bomb of issue 42: five nested loops over 300 items (2.4e12 iterations)
    // stop after 1,000,000 units, at once.
    let schema = list_schema(&nested_all(5), Some(300));
    let spec = json!({"l": (0..300).collect::<Vec<i64>>()});
    let start = std::time::Instant::now();
    let r = custom(&schema, &spec);
    assert!(start.elapsed() < std::time::Duration::from_secs(20));
    let f = r
        .findings
        .iter()
        .find(|f| f.rule.id == "FS308")
        .expect("FS308");
    assert_eq!(f.path, "spec");
    assert!(
        f.message.contains(
            "'operation cancelled: actual cost limit exceeded': no further validation rules will \
             be run due to call cost exceeds limit for rule: self.l.all(v0"
        ),
        "{}",
        f.message
    );
}

#[test]
fn cel_rules_of_one_object_share_the_runtime_cost_budget() {
    // Each rule costs about 960,000 units (400 × 400 iterations of 6: under the per-call
    // limit); the eleventh finds the object's 10,000,000 budget spent, and the API server
    // runs no further rule.
    let rule = nested_all(2);
    let rules: Vec<Value> = (0..20).map(|_| json!({"rule": rule})).collect();
    let schema = json!({"type": "object",
        "properties": {"l": {"type": "array", "maxItems": 400, "items": {"type": "integer"}}},
        "x-kubernetes-validations": rules});
    let spec = json!({"l": (0..400).collect::<Vec<i64>>()});
    let r = custom(&schema, &spec);
    let costs: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.rule.id == "FS308")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(costs.len(), 1, "{r:#?}");
    assert!(costs[0].contains(
        "validation failed due to running out of cost budget, no further validation rules will be run"
    ));
}

#[test]
fn cel_rule_under_the_limits_still_passes_and_fails_as_before() {
    let schema = list_schema("self.l.all(x, x >= 0)", None);
    assert!(custom(&schema, &json!({"l": [1, 2, 3]}))
        .findings
        .is_empty());
    let r = custom(&schema, &json!({"l": [1, -2, 3]}));
    assert_eq!(ids(&r), vec![("FS304", "spec")]);
    // map and filter keep their result through the metered step.
    let schema = list_schema("self.l.filter(x, x > 1).map(x, x * 2) == [4, 6]", None);
    assert!(custom(&schema, &json!({"l": [1, 2, 3]}))
        .findings
        .is_empty());
}

#[test]
fn cel_evaluation_stops_at_the_callers_deadline() {
    // Under the per-call limit for fluxsim's count, but past a deadline that has already
    // passed: the running rule is a finding naming it, the others are not evaluated.
    let schema = list_schema(&nested_all(2), Some(300));
    let mut v = Validator::new(KubeVersion::DEFAULT);
    v.add_crd(&widget_crd(&schema)).unwrap();
    v.set_deadline(std::time::Instant::now(), "--timeout 5s");
    let r = v.validate(&widget(&json!({"l": (0..300).collect::<Vec<i64>>()})));
    let unchecked: Vec<&str> = r.unchecked.iter().map(|u| u.reason.as_str()).collect();
    assert_eq!(
        unchecked,
        vec!["CEL rule not evaluated: validation had reached --timeout 5s"],
        "{r:#?}"
    );
}

// A rule stopped by fluxsim's deadline in the middle of its evaluation is not validated (a
// warning): a slower machine is no defect of the repository, so never FS308.
#[test]
fn cel_rule_stopped_by_the_deadline_is_not_validated_never_a_cost_finding() {
    let schema = list_schema(&nested_all(2), Some(300));
    let mut v = Validator::new(KubeVersion::DEFAULT);
    v.add_crd(&widget_crd(&schema)).unwrap();
    // Not passed when the rule starts, passed soon after.
    v.set_deadline(
        std::time::Instant::now() + std::time::Duration::from_millis(1),
        "--timeout 5s",
    );
    let r = v.validate(&widget(&json!({"l": (0..300).collect::<Vec<i64>>()})));
    assert!(r.findings.iter().all(|f| f.rule.id != "FS308"), "{r:#?}");
    assert!(
        r.unchecked
            .iter()
            .any(|u| u.reason.contains("--timeout 5s")),
        "{r:#?}"
    );
}

#[test]
fn crds_the_api_server_accepts_are_under_the_estimated_cost_limits() {
    // Every embedded Flux CRD (kustomize-, source-, helm-, notification- and
    // image-controllers' of each minor) installs on a real API server, with its CEL rules:
    // the lower-bound estimate must never reject one.
    let mut rules = 0;
    for minor in crate::FluxMinor::ALL {
        for crd in crate::flux_crds_for(minor) {
            rules += crd.to_string().matches("x-kubernetes-validations").count();
            let r = builtin(crd);
            assert!(cost_ids(&r).is_empty(), "{minor:?}: {r:#?}");
        }
    }
    assert!(rules > 0);
}
