//! One test per rule, on renders made by hand (no kustomize, no files: locations fall back to
//! the build directory). `tests/it/audit.rs` checks the same rules end to end, with lines.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::{audit_clusters, AuditOptions};
use crate::artifact::Artifact;
use crate::finding::{Finding, Severity};
use crate::flux::Kustomization;
use crate::model::{ClusterRender, KustomizationRender, Status, VarSource};

fn kustomization(name: &str, spec: &Value) -> Kustomization {
    Kustomization::from_json(&json!({
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": name, "namespace": "flux-system"}, "spec": spec
    }))
    .unwrap()
}

/// A rendered Kustomization whose template is `yaml` and whose vars are `vars` (inline).
fn render(name: &str, spec: &Value, yaml: &str, vars: &[(&str, &str)]) -> KustomizationRender {
    KustomizationRender {
        template: Some(Artifact::from_kustomize_output(yaml.to_string()).unwrap()),
        vars: vars
            .iter()
            .map(|(k, v)| {
                (
                    (*k).to_string(),
                    VarSource {
                        source: "ConfigMap/cluster-vars".into(),
                        from: "applied by flux-system/flux-system".into(),
                        encrypted: false,
                        value: (*v).to_string(),
                    },
                )
            })
            .collect(),
        build_path: Some(format!("apps/{name}")),
        ..KustomizationRender::new(kustomization(name, spec), None, Status::Rendered)
    }
}

/// A Kustomization with postBuild; its vars are those `render` is given (sources that nothing
/// applies are tested on their own, as FS112).
fn substituting() -> Value {
    json!({"path": "./apps", "postBuild": {"substitute": {}}})
}

fn cluster(name: &str, kustomizations: Vec<KustomizationRender>) -> ClusterRender {
    ClusterRender {
        name: name.to_string(),
        kustomizations,
        waves: Vec::new(),
        strict: true,
        strict_from: None,
        flux_strict: true,
        versions: crate::versions::ClusterVersions::default(),
        home: String::new(),
    }
}

fn audit_with(clusters: &[ClusterRender], strict: bool) -> Vec<Finding> {
    let fs = crate::source::SourceFs::empty("/nonexistent".into());
    audit_clusters(&fs, clusters, AuditOptions { strict }).findings
}

fn audit(clusters: &[ClusterRender]) -> Vec<Finding> {
    audit_with(clusters, true)
}

fn rules(findings: &[Finding]) -> Vec<(&'static str, Severity)> {
    findings.iter().map(|f| (f.rule, f.severity)).collect()
}

fn configmap(data: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n{data}")
}

const VARS: &[(&str, &str)] = &[("CLUSTER_NAME", "dev"), ("FLAG", "on"), ("N", "3")];

// fluxcd/pkg envsubst/parse/parse.go: `${A[0]}` ends the variable name and then wants a `}`:
// "missing closing brace", and kustomize_varsub.go fails the whole Kustomization with it.
#[test]
fn indexed_expansion_fails_the_whole_kustomization() {
    let c = cluster(
        "dev",
        vec![render(
            "a",
            &substituting(),
            &configmap("  A: ${ARR[0]} ${CLUSTER_NAME}\n"),
            VARS,
        )],
    );
    let f = audit(&[c]);
    assert_eq!(rules(&f), [("FS101", Severity::Error)]);
    assert_eq!(f[0].related("expression"), ["${ARR[0]}"]);
    assert!(
        f[0].message.contains("missing closing brace"),
        "{}",
        f[0].message
    );
}

// fluxcd/pkg envsubst/template.go lookupFunc: `:?` and `:+` fall through to toDefault.
#[test]
fn colon_question_and_colon_plus_are_plain_defaults() {
    let yaml = configmap("  A: ${CLUSTER_NAME:+yes}\n  B: ${OTHER:?required}\n");
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), &yaml, VARS)],
    )]);
    assert_eq!(
        rules(&f),
        [("FS102", Severity::Warning), ("FS102", Severity::Warning)]
    );
}

// fluxcd/pkg envsubst (strict mode, the StrictPostBuildSubstitutions gate on by default since
// kustomize-controller v1.9.0): an unset var without a default is an error; without strict
// mode it is an empty string, which a repository may mean: a warning.
#[test]
fn undefined_var_without_default_fails_strict_and_empties_otherwise() {
    let yaml = configmap("  A: ${NOPE}\n  B: ${ALSO_NOPE:=fine}\n");
    let c = [cluster(
        "dev",
        vec![render("a", &substituting(), &yaml, VARS)],
    )];
    let strict = audit(&c);
    assert_eq!(rules(&strict), [("FS103", Severity::Error)]);
    assert_eq!(strict[0].related("var"), ["NOPE"]);
    assert_eq!(strict[0].related("object"), ["ConfigMap/c"]);
    assert!(strict[0].message.contains("fails"));
    let lax = audit_with(&c, false);
    assert_eq!(rules(&lax), [("FS103", Severity::Warning)]);
    assert!(lax[0].message.contains("empty string"));
    // A cluster whose Flux substitutes without strict mode (its gate off, or a release
    // before v2.9) is judged so even when the audit is strict.
    let mut old = c.clone();
    old[0].flux_strict = false;
    assert_eq!(rules(&audit(&old)), [("FS103", Severity::Warning)]);
}

// envsubst substitutes every `${...}`, scripts included; only `$${` is an escape
// (fluxcd/pkg envsubst/parse/scan.go).
#[test]
fn shell_var_in_a_script_is_substituted_by_flux() {
    let yaml = configmap(
        "  run.sh: |\n    #!/bin/sh\n    echo ${CLUSTER_NAME} ${key} $${escaped} ${HOME:-/root} ${UNIFI_HEAP:=1024}\n",
    );
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), &yaml, VARS)],
    )]);
    // `${key}`: undefined, fails; `${HOME:-/root}`: a shell variable given a default; the
    // defined `${CLUSTER_NAME}` and the cluster-style `${UNIFI_HEAP:=1024}` are Flux's.
    let mut got = rules(&f);
    got.sort();
    assert_eq!(
        got,
        [("FS104", Severity::Warning), ("FS104", Severity::Error)]
    );
    let mut vars: Vec<(Vec<&str>, Severity)> =
        f.iter().map(|x| (x.related("var"), x.severity)).collect();
    vars.sort();
    assert_eq!(
        vars,
        [
            (vec!["HOME"], Severity::Warning),
            (vec!["key"], Severity::Error)
        ]
    );
    assert!(f.iter().any(|x| x.message.contains("`${key}`")));
    assert!(f.iter().any(|x| x.message.contains("`${HOME:-/root}`")));
}

#[test]
fn args_of_a_plain_container_are_not_a_script() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - args:\n    - --level=${LEVEL}\n    name: x\n";
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), yaml, VARS)],
    )]);
    assert_eq!(rules(&f), [("FS103", Severity::Error)]);
}

// sigs.k8s.io/yaml YAMLToJSON reads the substituted text as YAML 1.1 (kustomize_varsub.go).
#[test]
fn yaml11_boolean_in_configmap_data_fails_the_apply_but_integer_replicas_is_fine() {
    let cm = configmap("  A: ${FLAG}\n");
    let deploy =
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: ${N}\n";
    let f = audit(&[cluster(
        "dev",
        vec![render(
            "a",
            &substituting(),
            &format!("{cm}---\n{deploy}"),
            VARS,
        )],
    )]);
    assert_eq!(rules(&f), [("FS105", Severity::Error)]);
    assert!(
        f[0].message.contains("the boolean `true`"),
        "{}",
        f[0].message
    );
}

/// A value that turns a field into a list is an error, unless the template's default is a
/// list too (`${EXT:=[]}`, or a default var holding `[]`): the structure is the template's
/// design, as in a real repository's `extensions: ${EXTENSIONS:=${emptyArray}}`.
#[test]
fn a_list_value_is_a_structure_change_unless_the_default_is_a_list_too() {
    let db = |field: &str| {
        format!(
            "apiVersion: postgresql.cnpg.io/v1\nkind: Database\nmetadata:\n  name: d\nspec:\n  extensions: {field}\n"
        )
    };
    let list = [("EXT", "[{name: vchord}]"), ("emptyArray", "[]")];
    for (field, expected) in [
        ("${EXT}", vec![("FS105", Severity::Error)]),
        ("${EXT:=none}", vec![("FS105", Severity::Error)]),
        ("${EXT:=[]}", vec![]),
        ("${EXT:=${emptyArray}}", vec![]),
    ] {
        let f = audit(&[cluster(
            "dev",
            vec![render("a", &substituting(), &db(field), &list)],
        )]);
        let found: Vec<_> = rules(&f)
            .into_iter()
            .filter(|(r, _)| *r == "FS105")
            .collect();
        assert_eq!(found, expected, "{field}: {f:#?}");
    }
}

#[test]
fn value_that_breaks_the_document_is_an_error() {
    let yaml = configmap("  A: ${V}\n");
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), &yaml, &[("V", "a: b")])],
    )]);
    assert_eq!(rules(&f), [("FS105", Severity::Error)]);
    assert!(f[0].message.contains("no longer YAML"), "{}", f[0].message);
}

// kustomize-controller substitutes only when spec.postBuild is set and, unless
// substituteStrategy is Always, some var is defined (postbuild::should_substitute).
#[test]
fn reference_in_a_path_that_does_not_substitute_ships_verbatim() {
    let yaml = configmap("  A: ${CLUSTER_NAME}\n");
    let none = render("a", &json!({"path": "./a"}), &yaml, &[]);
    let empty = render("b", &substituting(), &yaml, &[]);
    // Another Kustomization of the cluster receives CLUSTER_NAME: Flux was meant to
    // substitute it (a warning).
    let vars = render(
        "c",
        &substituting(),
        &configmap("  B: x\n"),
        &[("CLUSTER_NAME", "dev")],
    );
    let f = audit(&[cluster("dev", vec![none.clone(), empty.clone(), vars])]);
    assert_eq!(
        rules(&f),
        [("FS106", Severity::Warning), ("FS106", Severity::Warning)]
    );
    assert!(f.iter().any(|x| x.message.contains("has no postBuild")));
    assert!(f.iter().any(|x| x.message.contains("defines no var")));
    // No Kustomization has a var of that name: presumably the application's own syntax.
    let f = audit(&[cluster("dev", vec![none, empty])]);
    assert_eq!(
        rules(&f),
        [("FS106", Severity::Info), ("FS106", Severity::Info)]
    );
    assert!(
        f[0].message.contains("application's own"),
        "{}",
        f[0].message
    );
}

// kustomize_varsub.go skips objects labelled or annotated
// kustomize.toolkit.fluxcd.io/substitute: disabled.
#[test]
fn substitution_disabled_object_ships_verbatim_as_info() {
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n  name: c\ndata:\n  A: ${ANYTHING[0]}\n";
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), yaml, VARS)],
    )]);
    assert_eq!(rules(&f), [("FS107", Severity::Info)]);
}

// kustomize_varsub.go: every var name must match varsubRegex, or the Kustomization fails.
#[test]
fn invalid_inline_var_name_fails_the_kustomization_and_unused_inline_var_is_info() {
    let spec = json!({"path": "./a", "postBuild": {"substitute": {"bad.name": "x", "SPARE": "y", "USED": "z"}}});
    let k = render(
        "a",
        &spec,
        &configmap("  A: ${USED}\n"),
        &[("USED", "z"), ("SPARE", "y")],
    );
    let f = audit(&[cluster("dev", vec![k])]);
    assert_eq!(
        rules(&f),
        [("FS108", Severity::Error), ("FS109", Severity::Info)]
    );
}

#[test]
fn other_clusters_host_as_a_literal_is_an_error_and_generic_values_are_not_searched() {
    let yaml = configmap("  A: https://api.prod.example.net/\n  B: info\n  C: ${HOST} ${LEVEL}\n");
    let dev = render(
        "a",
        &substituting(),
        &yaml,
        &[("HOST", "api.dev.example.net"), ("LEVEL", "debug")],
    );
    let prod = render(
        "a",
        &substituting(),
        &yaml,
        &[("HOST", "api.prod.example.net"), ("LEVEL", "info")],
    );
    let f = audit(&[cluster("dev", vec![dev]), cluster("prod", vec![prod])]);
    assert_eq!(rules(&f), [("FS110", Severity::Error)]);
    assert_eq!(f[0].cluster.as_deref(), Some("dev"));
    assert!(f[0].message.contains("`api.prod.example.net`"));
    assert!(
        f[0].message.ends_with("a host name, specific to prod"),
        "{}",
        f[0].message
    );
}

/// Three clusters sharing `STORAGE` and `MONITORING_NS`; `yaml_of(cluster)` is the template
/// each renders besides the references.
fn three_clusters(yaml_of: impl Fn(&str) -> String) -> Vec<ClusterRender> {
    let values = [
        ("dev", "ceph-block", "10.0.1.5"),
        ("prod", "local-hostpath", "10.0.2.5"),
        ("lab", "nfs-client", "10.0.3.5"),
    ];
    values
        .iter()
        .map(|(c, storage, db)| {
            let yaml = configmap(&format!("  S: ${{STORAGE}}\n  D: ${{DB}}\n{}", yaml_of(c)));
            cluster(
                c,
                vec![render(
                    "a",
                    &substituting(),
                    &yaml,
                    &[("STORAGE", storage), ("DB", db)],
                )],
            )
        })
        .collect()
}

#[test]
fn other_clusters_value_that_another_cluster_uses_as_a_word_is_a_warning() {
    // dev names prod's storage class literally, and so does lab: a common name, perhaps
    // meant (a warning that says who else uses it).
    let f = audit(&three_clusters(|c| match c {
        "dev" | "lab" => "  X: local-hostpath\n".to_string(),
        _ => String::new(),
    }));
    let dev: Vec<&Finding> = f
        .iter()
        .filter(|f| f.cluster.as_deref() == Some("dev"))
        .collect();
    assert_eq!(dev.len(), 1, "{f:#?}");
    assert_eq!(dev[0].severity, Severity::Warning);
    assert!(
        dev[0]
            .message
            .contains("lab's templates use it as a word too"),
        "{}",
        dev[0].message
    );
}

#[test]
fn other_clusters_value_no_other_cluster_uses_is_an_error_and_an_address_always_is() {
    let f = audit(&three_clusters(|c| match c {
        "dev" => "  X: local-hostpath\n  Y: 10.0.2.5\n".to_string(),
        _ => String::new(),
    }));
    let mut got: Vec<(Severity, bool)> = f
        .iter()
        .map(|f| (f.severity, f.message.contains("`10.0.2.5`")))
        .collect();
    got.sort();
    assert_eq!(
        got,
        [(Severity::Error, false), (Severity::Error, true)],
        "{f:#?}"
    );
    assert!(
        f.iter()
            .any(|f| f.message.ends_with("an IP address, specific to prod")),
        "{f:#?}"
    );
    assert!(
        f.iter().any(|f| f
            .message
            .ends_with("no other cluster's vars or templates use it, so it is specific to prod")),
        "{f:#?}"
    );
    // Prod's own templates naming it too: it is a word there, not only prod's value.
    let f = audit(&three_clusters(|c| match c {
        "dev" | "prod" => "  X: local-hostpath\n".to_string(),
        _ => String::new(),
    }));
    assert_eq!(rules(&f), [("FS110", Severity::Warning)], "{f:#?}");
    assert!(
        f[0].message
            .contains("prod's own templates use it as a literal too"),
        "{}",
        f[0].message
    );
}

#[test]
fn other_clusters_value_in_a_comment_of_an_embedded_file_is_not_a_literal() {
    // A values file in a ConfigMap: prod's address only in a comment of it.
    let f = audit(&three_clusters(|c| match c {
        "dev" => "  values.yaml: |\n    # db: 10.0.2.5\n    db: local\n".to_string(),
        _ => String::new(),
    }));
    assert!(f.is_empty(), "{f:#?}");
}

// kustomize-controller reads a SOPS-encrypted substituteFrom Secret as it is when the
// Kustomization cannot decrypt it; offline, its values are ciphertext.
#[test]
fn encrypted_source_is_noted_and_its_vars_are_not_type_checked() {
    let secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: flux-system\nsops:\n  version: 3.9.1\nstringData:\n  P: ENC[AES256_GCM,data:x,type:str]\n";
    let root = render("root", &json!({"path": "./"}), secret, &[]);
    let spec =
        json!({"path": "./a", "postBuild": {"substituteFrom": [{"kind": "Secret", "name": "s"}]}});
    let mut user = render("a", &spec, &configmap("  A: ${P}\n"), &[("P", "ENC[...]")]);
    for v in user.vars.values_mut() {
        v.encrypted = true;
    }
    let f = audit(&[cluster("dev", vec![root, user])]);
    assert_eq!(rules(&f), [("FS111", Severity::Info)]);
}

#[test]
fn kustomization_whose_build_fails_is_not_audited_and_is_an_error() {
    let mut k = render("a", &substituting(), &configmap("  A: b\n"), VARS);
    k.template = None;
    k.status = Status::Failed("spec.path `./a`: kustomize build failed".into());
    let f = audit(&[cluster("dev", vec![k])]);
    assert_eq!(rules(&f), [("FS100", Severity::Error)]);
}

#[test]
fn summary_counts_files_vars_references_and_hazards() {
    let yaml = configmap("  A: ${CLUSTER_NAME}\n  B: ${NOPE}\n");
    let fs = crate::source::SourceFs::empty("/nonexistent".into());
    let a = audit_clusters(
        &fs,
        &[cluster(
            "dev",
            vec![render("a", &substituting(), &yaml, VARS)],
        )],
        AuditOptions { strict: true },
    );
    let p = &a.paths[0];
    assert_eq!(
        (p.defined, p.referenced, p.hazards, p.substitutes),
        (3, 2, 1, true)
    );
    assert!(a.checks >= 2);
    let by_rule: BTreeMap<&str, usize> = a.findings.iter().fold(BTreeMap::new(), |mut m, f| {
        *m.entry(f.rule).or_default() += 1;
        m
    });
    assert_eq!(by_rule, BTreeMap::from([("FS103", 1)]));
}

// kustomize-controller reads substituteFrom sources from the cluster (kustomize_varsub.go
// loadVars); one that nothing in the repository applies may still exist there.
#[test]
fn source_nothing_applies_makes_vars_unknown_instead_of_undefined() {
    let spec = json!({"path": "./a", "postBuild": {"substituteFrom": [
        {"kind": "Secret", "name": "from-external-secrets", "optional": true}]}});
    let yaml = configmap("  A: ${TOKEN}\n  run.sh: |\n    #!/bin/sh\n    echo ${key}\n");
    let f = audit(&[cluster("dev", vec![render("a", &spec, &yaml, &[])])]);
    let mut got = rules(&f);
    got.sort_unstable();
    // No FS103 for `${TOKEN}`, no FS106 (Flux may well substitute); the shell-looking
    // `${key}` is still suspect, as a warning.
    assert_eq!(
        got,
        [("FS104", Severity::Warning), ("FS112", Severity::Info)]
    );
}

#[test]
fn disabled_object_in_a_path_without_postbuild_is_info() {
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n  name: c\ndata:\n  A: ${X}\n";
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &json!({"path": "./a"}), yaml, &[])],
    )]);
    assert_eq!(rules(&f), [("FS107", Severity::Info)]);
}

// fluxcd/pkg envsubst/parse: `${PIPESTATUS[0]}` (missing closing brace), `${#arr[@]}` (bad
// substitution) and `${@}` (unable to parse variable name) stop the parser; `${1}` parses
// as a var named `1`, which no source can define (its name is invalid), so it fails strictly.
#[test]
fn shell_specials_in_a_script_are_reported() {
    let yaml =
        configmap("  run.sh: |\n    #!/bin/bash\n    echo ${PIPESTATUS[0]} ${#arr[@]} ${@} ${1}\n");
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), &yaml, VARS)],
    )]);
    let mut got = rules(&f);
    got.sort_unstable();
    assert_eq!(
        got,
        [
            ("FS101", Severity::Error),
            ("FS101", Severity::Error),
            ("FS101", Severity::Error),
            ("FS104", Severity::Error),
        ]
    );
}

// sigs.k8s.io/yaml (YAML 1.1): `#x` after `: ` starts a comment, so the value is null;
// `*x` is an alias to an anchor that does not exist, so the document does not parse.
#[test]
fn comment_and_alias_values_null_or_break_the_document() {
    let comment = audit(&[cluster(
        "dev",
        vec![render(
            "a",
            &substituting(),
            &configmap("  A: ${V}\n"),
            &[("V", "#x")],
        )],
    )]);
    assert_eq!(rules(&comment), [("FS105", Severity::Error)]);
    assert!(
        comment[0].message.contains("null"),
        "{}",
        comment[0].message
    );
    let alias = audit(&[cluster(
        "dev",
        vec![render(
            "a",
            &substituting(),
            &configmap("  A: ${V}\n"),
            &[("V", "*x")],
        )],
    )]);
    assert_eq!(rules(&alias), [("FS105", Severity::Error)]);
    assert!(
        alias[0].message.contains("no longer YAML"),
        "{}",
        alias[0].message
    );
}

// No input makes the audit panic: random values built from the characters that matter to
// envsubst and YAML, as values and as var values, in a script and out of one.
#[test]
fn random_templates_and_values_never_panic() {
    const CHARS: &[u8] = b"${}[]:#*&!|>-?,'\"\\ /%@x0A_\n";
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..400 {
        let mut word = |n: u64| -> String {
            (0..n)
                .map(|_| char::from(CHARS[(next() % CHARS.len() as u64) as usize]))
                .collect()
        };
        let value = word(12);
        let var = word(6);
        let script = format!("#!/bin/sh\n{}", word(10));
        let yaml = configmap(&format!(
            "  A: {}\n  B: {}\n",
            serde_json::to_string(&value).unwrap(),
            serde_json::to_string(&script).unwrap()
        ));
        let k = render(
            "a",
            &substituting(),
            &yaml,
            &[("V", var.as_str()), ("x", "y")],
        );
        let other = render(
            "a",
            &substituting(),
            &yaml,
            &[("V", "other-value"), ("x", "z")],
        );
        let _ = audit(&[cluster("dev", vec![k]), cluster("prod", vec![other])]);
    }
}

// fluxcd/pkg envsubst v1.7.1 funcs.go toSubstr slices `s[pos:pos+length]`: a length that
// wraps the sum past the largest int makes the end negative, and Go panics ("slice bounds out
// of range"); the controller fails the Kustomization. It parses, so only evaluation finds it.
// A negative length counts back from the end since v1.7.1 (v1.7.0 panicked on it).
#[test]
fn wrapping_substring_length_panics_flux_and_is_an_error() {
    let yaml = configmap("  A: ${CLUSTER_NAME:1:9223372036854775807}\n");
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), &yaml, VARS)],
    )]);
    assert_eq!(rules(&f), [("FS113", Severity::Error)]);
    assert!(
        f[0].message.contains("slice bounds out of range"),
        "{}",
        f[0].message
    );
    // A length that does not wrap evaluates, a negative one too.
    let yaml = configmap("  A: ${CLUSTER_NAME:0:1}${CLUSTER_NAME:0:-1}\n");
    let f = audit(&[cluster(
        "dev",
        vec![render("a", &substituting(), &yaml, VARS)],
    )]);
    assert!(f.is_empty(), "{f:?}");
}
