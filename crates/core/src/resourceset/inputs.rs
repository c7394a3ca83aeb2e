//! A ResourceSet's inputs as flux-operator v0.59.0 computes them (`internal/inputs`,
//! `internal/controller/resourceset_controller.go` getInputs): the inline `spec.inputs`, the
//! exported inputs of every `ResourceSetInputProvider` that `spec.inputsFrom` names (by name,
//! or by label selector, in the ResourceSet's namespace), each input given its `provider`
//! metadata, then combined by `spec.inputStrategy` (`Flatten`, `Permute`).
//!
//! What a provider exports offline: a `Static` provider its `defaultValues` and an `id` (the
//! CLI's `build rset` makes it from the provider's name, the controller from its UID, which
//! no repository holds); any other type (pull requests, branches, tags, artifacts, external
//! services) needs a service, so its inputs come from `fluxsim.toml`'s
//! `[[resourceset.inputs]]`, else stand-ins made of the fields that type exports
//! ([`placeholders`]), each merged over the provider's `defaultValues` as the controller
//! merges them (`NewResourceSetInput`: the provider's own fields win).
//!
//! Combining is written here (not only left to `flux-operator build rset`) because the
//! CLI takes only `Static` providers: a render with sample or stand-in inputs hands the CLI
//! the combined list. It is checked against the CLI on the `Static` fixtures.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::error::ResourceSetError;
pub use super::error::{SelectorError, COMBINED_BOUND_WORDS};
use super::{ResourceSet, RSET_API_VERSION};
use crate::flux::str_at;

/// One input set: a map of values.
pub(crate) type Input = Map<String, Value>;

/// `ResourceSetInputProvider`'s kind.
pub const PROVIDER_KIND: &str = "ResourceSetInputProvider";

/// flux-operator's `inputs.ID`: the Adler-32 checksum of `s`, in decimal
/// (`internal/inputs/id.go`).
#[must_use]
pub fn id(s: &str) -> String {
    let mut a = adler2::Adler32::new();
    a.write_slice(s.as_bytes());
    a.checksum().to_string()
}

/// `inputs.NormalizeKeyForTemplate` (`internal/inputs/keys.go`): lower case, spaces and
/// punctuation (Unicode's P categories, as Go's `unicode.IsPunct`) become `_`, anything else
/// that is not `a-z0-9` is dropped, then runs of `_` are squeezed and trimmed.
#[must_use]
pub fn normalize_key(key: &str) -> String {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    let mapped: String = key
        .chars()
        .filter_map(|c| {
            // Go's unicode.ToLower maps one rune to one rune: the first of Rust's mapping.
            let c = c.to_lowercase().next().unwrap_or(c);
            let punct = matches!(
                get_general_category(c),
                G::ConnectorPunctuation
                    | G::DashPunctuation
                    | G::OpenPunctuation
                    | G::ClosePunctuation
                    | G::InitialPunctuation
                    | G::FinalPunctuation
                    | G::OtherPunctuation
            );
            if c.is_whitespace() || punct {
                Some('_')
            } else if c.is_ascii_lowercase() || c.is_ascii_digit() {
                Some(c)
            } else {
                None
            }
        })
        .collect();
    mapped
        .split('_')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

/// A `ResourceSetInputProvider` of the cluster's render.
#[derive(Debug, Clone, PartialEq)]
pub struct InputProvider {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// `spec.type`.
    pub kind: String,
    /// `metadata.labels` (for `inputsFrom[].selector`).
    pub labels: BTreeMap<String, String>,
    /// `spec.defaultValues`.
    pub defaults: Input,
    /// The object as rendered.
    pub object: Value,
}

impl InputProvider {
    /// Reads a provider object (`None` when it has no name).
    #[must_use]
    pub fn from_json(obj: &Value) -> Option<InputProvider> {
        Some(InputProvider {
            namespace: str_at(obj, &["metadata", "namespace"])
                .unwrap_or("default")
                .to_string(),
            name: str_at(obj, &["metadata", "name"])?.to_string(),
            kind: str_at(obj, &["spec", "type"])
                .unwrap_or_default()
                .to_string(),
            labels: obj
                .get("metadata")
                .and_then(|m| m.get("labels"))
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
            defaults: obj
                .get("spec")
                .and_then(|s| s.get("defaultValues"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            object: obj.clone(),
        })
    }

    /// `Static`: its inputs are in the repository.
    #[must_use]
    pub fn is_static(&self) -> bool {
        self.kind == "Static"
    }
}

/// Where the inputs of a provider that needs a service came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Supplied {
    /// `[[resourceset.inputs]]` of fluxsim.toml (what the entry matched on).
    Samples(String),
    /// Nothing said: stand-ins of the fields its type exports.
    Placeholders,
}

/// One provider as the ResourceSet sees it: its inputs and whence they came.
#[derive(Debug, Clone, PartialEq)]
pub struct Provided {
    /// The provider.
    pub provider: InputProvider,
    /// Its exported inputs (before the `provider` metadata is added).
    pub inputs: Vec<Input>,
    /// For a provider that needs a service: where its inputs came from.
    pub supplied: Option<Supplied>,
}

/// Whether `labels` match a `metav1.LabelSelector` (`matchLabels` and `matchExpressions`
/// with `In`, `NotIn`, `Exists`, `DoesNotExist`; apimachinery `LabelSelectorAsSelector`). An
/// empty selector matches everything.
pub fn selector_matches(
    selector: &Value,
    labels: &BTreeMap<String, String>,
) -> Result<bool, SelectorError> {
    if let Some(m) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in m {
            let want = v.as_str().unwrap_or_default();
            if labels.get(k).map(String::as_str) != Some(want) {
                return Ok(false);
            }
        }
    }
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = str_at(e, &["key"]).unwrap_or_default();
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let op = str_at(e, &["operator"]).unwrap_or_default();
        let has = labels.get(key);
        let ok = match op {
            "In" | "NotIn" if values.is_empty() => {
                return Err(SelectorError(format!(
                    "matchExpressions on `{key}`: `{op}` needs values"
                )))
            }
            "Exists" | "DoesNotExist" if !values.is_empty() => {
                return Err(SelectorError(format!(
                    "matchExpressions on `{key}`: `{op}` takes no values"
                )))
            }
            "In" => has.is_some_and(|v| values.contains(&v.as_str())),
            "NotIn" => has.is_none_or(|v| !values.contains(&v.as_str())),
            "Exists" => has.is_some(),
            "DoesNotExist" => has.is_none(),
            other => {
                return Err(SelectorError(format!(
                    "matchExpressions on `{key}`: `{other}` is not a label selector operator"
                )))
            }
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The providers `rset`'s `spec.inputsFrom` names among `providers` (the cluster's, any
/// namespace), in the controller's order of lookup, each once; `Err` with the controller's
/// words when an entry cannot be used or a provider named is not on the cluster.
pub fn referenced<'a>(
    rset: &ResourceSet,
    providers: &'a [InputProvider],
) -> Result<Vec<&'a InputProvider>, ResourceSetError> {
    let mut found: Vec<&InputProvider> = Vec::new();
    let same_ns = || {
        providers
            .iter()
            .filter(|p| p.namespace == rset.id.namespace)
    };
    for from in &rset.inputs_from {
        if let Some(name) = str_at(from, &["name"]).filter(|n| !n.is_empty()) {
            if found.iter().any(|p| p.name == name) {
                continue;
            }
            match same_ns().find(|p| p.name == name) {
                Some(p) => found.push(p),
                None => {
                    return Err(ResourceSetError::ProviderNotFound {
                        kind: PROVIDER_KIND,
                        namespace: rset.id.namespace.clone(),
                        name: name.to_string(),
                    })
                }
            }
        } else if let Some(selector) = from.get("selector").filter(|s| !s.is_null()) {
            for p in same_ns() {
                let matches = selector_matches(selector, &p.labels)?;
                if matches && !found.iter().any(|f| f.name == p.name) {
                    found.push(p);
                }
            }
        } else {
            return Err(ResourceSetError::NoProviderRef);
        }
    }
    Ok(found)
}

/// Stand-in inputs for a provider that needs a service: one input of the fields its type
/// exports (`internal/gitprovider/result.go` `Result.ToMap`, the OCI and ExternalArtifact
/// exports of `resourcesetinputprovider_controller.go`), valued so that they read as what
/// they are and fit in Kubernetes names. An `ExternalService` (or an unknown type) exports
/// what its service says: only an `id` is known.
#[must_use]
pub fn placeholders(kind: &str) -> Input {
    const WORD: &str = "fluxsim-placeholder";
    let sha = "0".repeat(40);
    let fields: Value = if kind.ends_with("PullRequest") || kind.ends_with("MergeRequest") {
        let mut v = json!({"id": "0", "sha": sha, "branch": WORD, "title": WORD, "author": WORD});
        if kind.starts_with("GitLab") {
            v["slug"] = json!(WORD);
        }
        v
    } else if kind.ends_with("ArtifactTag") {
        json!({"id": id(WORD), "tag": WORD, "digest": format!("sha256:{}", "0".repeat(64))})
    } else if kind.ends_with("Branch") || kind == "GitLabEnvironment" {
        let mut v = json!({"id": id(WORD), "sha": sha, "branch": WORD});
        if kind.starts_with("GitLab") {
            v["slug"] = json!(WORD);
        }
        v
    } else if kind.ends_with("Tag") {
        let mut v = json!({"id": id(WORD), "sha": sha, "tag": WORD});
        if kind.starts_with("GitLab") {
            v["slug"] = json!(WORD);
        }
        v
    } else if kind == "ExternalArtifact" {
        json!({"id": id(WORD), "name": WORD, "namespace": WORD, "revision": WORD})
    } else {
        json!({"id": id(WORD)})
    };
    fields.as_object().cloned().unwrap_or_default()
}

/// The controller's `NewResourceSetInput(defaults, m)`: `m` with every default it lacks.
#[must_use]
pub fn with_defaults(defaults: &Input, mut m: Input) -> Input {
    for (k, v) in defaults {
        m.entry(k.clone()).or_insert_with(|| v.clone());
    }
    m
}

/// What `flux-operator build rset --inputs-from-provider` exports for a `Static` provider:
/// its `defaultValues` with `id` set to the id of its name (`cmd/cli/build_resourceset.go`
/// loadProvidersFromFile; the controller uses the provider's UID, unknown offline).
#[must_use]
pub fn static_inputs(p: &InputProvider) -> Vec<Input> {
    let mut vals = p.defaults.clone();
    vals.insert("id".into(), Value::String(id(&p.name)));
    vec![vals]
}

/// The `provider` metadata flux-operator adds to each input (`getFromProvider`).
fn provider_meta(kind: &str, name: &str, namespace: &str) -> Value {
    json!({"apiVersion": RSET_API_VERSION, "kind": kind, "name": name, "namespace": namespace})
}

/// Most permutations flux-operator makes (`maxPermutations`).
const MAX_PERMUTATIONS: u64 = 10_000;

/// Most bytes (as JSON) the combined inputs of one ResourceSet may hold: fluxsim's own
/// bound, not the operator's. `Permute` multiplies what it is given (100 inputs of 100 KB
/// times 100 sample pull requests are 10,000 combinations, under the count cap, of 1 GB), and
/// fluxsim builds the combinations itself when a provider's inputs come from fluxsim.toml.
pub const MAX_COMBINED_BYTES: u64 = 64 << 20;

/// The bytes (as JSON) of each input of `inputs`.
fn sizes(inputs: &[Input]) -> Vec<u64> {
    inputs
        .iter()
        .map(|i| serde_json::to_string(i).map_or(0, |t| t.len() as u64))
        .collect()
}

/// `Err` when `bytes` (what the combinations would hold) is past [`MAX_COMBINED_BYTES`].
fn check_combined(bytes: u128, combinations: u128) -> Result<(), ResourceSetError> {
    if bytes > u128::from(MAX_COMBINED_BYTES) {
        return Err(ResourceSetError::TooLarge {
            max: MAX_COMBINED_BYTES,
            combinations,
            bytes,
        });
    }
    Ok(())
}

/// The bytes (as JSON) `inputs` hold, as [`combine`] made them.
#[must_use]
pub fn combined_bytes(inputs: &[Input]) -> u64 {
    sizes(inputs).iter().sum()
}

/// `inputs.Combine`: the ResourceSet's own inputs, then each provider's (sorted by
/// namespace and name: one kind, so the GVK does not order them), each input given its
/// `provider`, combined by the strategy. `Err` with the controller's words.
pub fn combine(rset: &ResourceSet, provided: &[Provided]) -> Result<Vec<Input>, ResourceSetError> {
    let mut sources: Vec<(&'static str, &str, &str, Vec<Input>)> = vec![(
        "ResourceSet",
        rset.id.name.as_str(),
        rset.id.namespace.as_str(),
        rset.inputs.clone(),
    )];
    let mut sorted: Vec<&Provided> = provided.iter().collect();
    sorted.sort_by(|a, b| {
        (&a.provider.namespace, &a.provider.name).cmp(&(&b.provider.namespace, &b.provider.name))
    });
    for p in sorted {
        sources.push((
            PROVIDER_KIND,
            p.provider.name.as_str(),
            p.provider.namespace.as_str(),
            p.inputs.clone(),
        ));
    }
    let with_meta: Vec<(&'static str, &str, Vec<Input>)> = sources
        .into_iter()
        .map(|(kind, name, ns, inputs)| {
            let meta = provider_meta(kind, name, ns);
            let inputs = inputs
                .into_iter()
                .map(|mut i| {
                    i.insert("provider".into(), meta.clone());
                    i
                })
                .collect();
            (kind, name, inputs)
        })
        .collect();
    match rset.strategy.as_str() {
        "Flatten" => {
            let all: Vec<Input> = with_meta.into_iter().flat_map(|(_, _, i)| i).collect();
            check_combined(u128::from(combined_bytes(&all)), all.len() as u128)?;
            Ok(all)
        }
        "Permute" => permute(with_meta, rset.include_empty_providers),
        other => Err(ResourceSetError::UnknownStrategy(other.to_string())),
    }
}

/// `Permuter` (`internal/inputs/permuter.go`): every combination of one input per provider
/// (empty providers skipped unless `includeEmptyProviders`), each input scoped under its
/// provider's normalized name, the combination's `id` made of `name=index` parts.
fn permute(
    sources: Vec<(&'static str, &str, Vec<Input>)>,
    include_empty: bool,
) -> Result<Vec<Input>, ResourceSetError> {
    let mut scoped: Vec<(String, Vec<Input>)> = Vec::new();
    let mut expected: u64 = 0;
    for (kind, name, inputs) in sources {
        if !include_empty && inputs.is_empty() {
            continue;
        }
        let n = inputs.len() as u64;
        expected = if scoped.is_empty() { n } else { expected * n };
        if expected > MAX_PERMUTATIONS {
            return Err(ResourceSetError::TooManyPermutations {
                kind,
                name: name.to_string(),
                inputs: inputs.len(),
                max: MAX_PERMUTATIONS,
                got: expected,
            });
        }
        let key = normalize_key(name);
        if key.is_empty() {
            return Err(ResourceSetError::EmptyProviderName {
                kind,
                name: name.to_string(),
            });
        }
        scoped.push((key, inputs));
    }
    if scoped.is_empty() || scoped.iter().any(|(_, i)| i.is_empty()) {
        return Ok(Vec::new());
    }
    // What the combinations would hold, before one is made: each input is in as many
    // combinations as the other providers' counts multiply to.
    let counts: Vec<u128> = scoped.iter().map(|(_, i)| i.len() as u128).collect();
    let combinations: u128 = counts.iter().product();
    let bytes: u128 = scoped
        .iter()
        .zip(&counts)
        .map(|((_, inputs), n)| {
            let own: u128 = sizes(inputs).iter().map(|b| u128::from(*b)).sum();
            own.saturating_mul(combinations / n)
        })
        .fold(0u128, u128::saturating_add);
    check_combined(bytes, combinations)?;
    // The combinations in the permuter's order: the first provider's index changes slowest.
    let mut out = Vec::new();
    let mut index = vec![0usize; scoped.len()];
    loop {
        let mut perm = Input::new();
        let mut parts = Vec::new();
        for ((key, inputs), i) in scoped.iter().zip(&index) {
            perm.insert(key.clone(), Value::Object(inputs[*i].clone()));
            parts.push(format!("{key}={i}"));
        }
        perm.insert("id".into(), Value::String(id(&parts.join("/"))));
        out.push(perm);
        // Next index, last provider fastest.
        let mut p = scoped.len();
        loop {
            if p == 0 {
                return Ok(out);
            }
            p -= 1;
            index[p] += 1;
            if index[p] < scoped[p].1.len() {
                break;
            }
            index[p] = 0;
        }
    }
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)]
mod tests {
    use super::*;

    // internal/inputs/id_test.go, combine_test.go: ids are Adler-32 in decimal.
    #[test]
    fn an_input_id_is_the_adler32_checksum_in_decimal() {
        assert_eq!(id("foo"), "42074437");
        assert_eq!(id("bar"), "39649590");
        assert_eq!(id("baz"), "40173886");
    }

    // internal/inputs/keys_test.go TestNormalizeKeyForTemplate.
    #[test]
    fn provider_names_are_normalized_as_template_keys() {
        for (key, want) in [
            ("My_ResourceSet", "my_resourceset"),
            ("My-ResourceSet", "my_resourceset"),
            ("My/ResourceSet", "my_resourceset"),
            ("My.ResourceSet", "my_resourceset"),
            ("My ResourceSet", "my_resourceset"),
            ("_a---b_-_", "a_b"),
            ("A0..B", "a0_b"),
            ("A  B", "a_b"),
            ("A@@B", "a_b"),
            ("__", ""),
            ("a$b", "ab"),
        ] {
            assert_eq!(normalize_key(key), want, "{key}");
        }
    }

    fn rset(strategy: &str, inputs: Value) -> ResourceSet {
        ResourceSet::from_json(&json!({
            "apiVersion": RSET_API_VERSION, "kind": "ResourceSet",
            "metadata": {"name": "rset", "namespace": "default"},
            "spec": {"inputStrategy": {"name": strategy}, "inputs": inputs}
        }))
        .unwrap()
    }

    fn provided(name: &str, inputs: Value) -> Provided {
        Provided {
            provider: InputProvider::from_json(&json!({
                "apiVersion": RSET_API_VERSION, "kind": PROVIDER_KIND,
                "metadata": {"name": name, "namespace": "default"}, "spec": {"type": "Static"}
            }))
            .unwrap(),
            inputs: inputs
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_object().unwrap().clone())
                .collect(),
            supplied: None,
        }
    }

    // internal/inputs/combine_test.go TestCombine "flattens" and "permutes".
    #[test]
    fn combine_flattens_and_permutes_as_the_operator_does() {
        let ins = json!([{"id": id("foo")}, {"id": id("bar")}]);
        let p = [provided("rsip", json!([{"id": id("baz")}]))];
        let flat = combine(&rset("Flatten", ins.clone()), &p).unwrap();
        let ids: Vec<&str> = flat.iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["42074437", "39649590", "40173886"]);
        assert_eq!(flat[2]["provider"]["kind"], PROVIDER_KIND);
        assert_eq!(flat[0]["provider"]["kind"], "ResourceSet");
        let perm = combine(&rset("Permute", ins), &p).unwrap();
        let ids: Vec<&str> = perm.iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["563152006", "563676295"]);
        assert_eq!(perm[0]["rset"]["id"], "42074437");
        assert_eq!(perm[1]["rsip"]["provider"]["name"], "rsip");
        assert!(perm[0].get("provider").is_none());
    }

    // fluxsim's own bound (MAX_COMBINED_BYTES): the permuter caps only the count, so 100
    // inputs of 100 KB times 100 stop before any combination is made.
    #[test]
    fn permutations_past_the_combined_bytes_bound_stop_before_they_are_made() {
        let blob = "x".repeat(100 << 10);
        let big: Vec<Value> = (0..100).map(|i| json!({"i": i, "blob": blob})).collect();
        let small: Vec<Value> = (0..100).map(|i| json!({"id": i})).collect();
        let p = [provided("prs", Value::Array(small.clone()))];
        let err = combine(&rset("Permute", Value::Array(big)), &p)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("10000 input sets would hold")
                && err.contains("more than fluxsim's bound of 64 MiB a ResourceSet"),
            "{err}"
        );
        // Under the bound, the same shape combines.
        let few: Vec<Value> = (0..5).map(|i| json!({"i": i, "blob": blob})).collect();
        assert_eq!(
            combine(&rset("Permute", Value::Array(few)), &p)
                .unwrap()
                .len(),
            500
        );
    }

    // internal/inputs/permuter_test.go "two input sets per provider": the first provider's
    // index changes slowest.
    #[test]
    fn permutations_come_in_the_permuter_s_order() {
        let r = rset("Permute", json!([]));
        let p = [
            provided(
                "provider-1",
                json!([{"key1": "value1"}, {"key1": "value2"}]),
            ),
            provided(
                "provider-2",
                json!([{"key2": "value1"}, {"key2": "value2"}]),
            ),
        ];
        let perm = combine(&r, &p).unwrap();
        let ids: Vec<&str> = perm.iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            ["2075461889", "2075527426", "2076379394", "2076444931"]
        );
        assert_eq!(perm[1]["provider_1"]["key1"], "value1");
        assert_eq!(perm[1]["provider_2"]["key2"], "value2");
    }

    // combine_test.go "permutes skipping empty providers by default" and
    // "permutes to empty when includeEmptyProviders".
    #[test]
    fn an_empty_provider_is_skipped_unless_include_empty_providers() {
        let ins = json!([{"a": 1}, {"a": 2}]);
        let p = [provided("rsip", json!([]))];
        assert_eq!(combine(&rset("Permute", ins.clone()), &p).unwrap().len(), 2);
        let mut r = rset("Permute", ins);
        r.include_empty_providers = true;
        assert!(combine(&r, &p).unwrap().is_empty());
    }

    #[test]
    fn too_many_permutations_and_an_unknown_strategy_fail_with_the_operator_s_words() {
        let many: Vec<Value> = (0..10_001).map(|_| json!({})).collect();
        let err = combine(&rset("Permute", Value::Array(many)), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("max: 10000, got: 10001"), "{err}");
        let err = combine(&rset("Shuffle", json!([])), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown input strategy: 'Shuffle'"), "{err}");
    }

    #[test]
    fn a_label_selector_matches_labels_and_expressions() {
        let labels: BTreeMap<String, String> = [("env".to_string(), "prod".to_string())]
            .into_iter()
            .collect();
        let m = |s: Value| selector_matches(&s, &labels);
        assert!(m(json!({"matchLabels": {"env": "prod"}})).unwrap());
        assert!(!m(json!({"matchLabels": {"env": "dev"}})).unwrap());
        assert!(m(
            json!({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod"]}]})
        )
        .unwrap());
        assert!(
            m(json!({"matchExpressions": [{"key": "team", "operator": "DoesNotExist"}]})).unwrap()
        );
        assert!(!m(
            json!({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]})
        )
        .unwrap());
        assert!(m(json!({})).unwrap());
        assert!(m(json!({"matchExpressions": [{"key": "env", "operator": "Near"}]})).is_err());
    }

    #[test]
    fn placeholders_carry_the_fields_each_provider_type_exports() {
        let pr = placeholders("GitHubPullRequest");
        for k in ["id", "sha", "branch", "title", "author"] {
            assert!(pr.contains_key(k), "{k}");
        }
        assert!(placeholders("GitLabMergeRequest").contains_key("slug"));
        assert!(placeholders("OCIArtifactTag").contains_key("digest"));
        assert!(placeholders("GiteaTag").contains_key("tag"));
        assert_eq!(placeholders("ExternalService").len(), 1);
        let merged = with_defaults(
            &json!({"branch": "default", "env": "preview"})
                .as_object()
                .unwrap()
                .clone(),
            pr,
        );
        assert_eq!(merged["branch"], "fluxsim-placeholder");
        assert_eq!(merged["env"], "preview");
    }
}
