//! The field-spec transformers: namespace, labels, annotations (kustomize
//! `api/filters/fieldspec`, `api/filters/namespace`, `api/filters/labels`,
//! `api/filters/annotations`, with the field specs of `api/konfig/builtinpluginconsts`).

use super::node::{Map, Node};
use super::resource::{is_cluster_scoped, Gvk, Resource};
use super::NativeError;

/// A `types.FieldSpec`: which kinds, which path, whether to create it.
struct FieldSpec {
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    path: &'static str,
    create: bool,
}

const fn fs(
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    path: &'static str,
    create: bool,
) -> FieldSpec {
    FieldSpec {
        group,
        version,
        kind,
        path,
        create,
    }
}

/// `metadataLabelsFieldSpecs` (builtinpluginconsts/metadatalabels.go).
const METADATA_LABELS: &[FieldSpec] = &[
    fs("", "", "", "metadata/labels", true),
    fs(
        "",
        "v1",
        "ReplicationController",
        "spec/template/metadata/labels",
        true,
    ),
    fs("", "", "Deployment", "spec/template/metadata/labels", true),
    fs("", "", "ReplicaSet", "spec/template/metadata/labels", true),
    fs("", "", "DaemonSet", "spec/template/metadata/labels", true),
    fs(
        "apps",
        "",
        "StatefulSet",
        "spec/template/metadata/labels",
        true,
    ),
    fs(
        "apps",
        "",
        "StatefulSet",
        "spec/volumeClaimTemplates[]/metadata/labels",
        true,
    ),
    fs("batch", "", "Job", "spec/template/metadata/labels", true),
    fs(
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/metadata/labels",
        true,
    ),
    fs(
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/labels",
        true,
    ),
];

/// `commonLabelFieldSpecs` (builtinpluginconsts/commonlabels.go), before the metadata ones.
const COMMON_LABEL_SELECTORS: &[FieldSpec] = &[
    fs("", "v1", "Service", "spec/selector", true),
    fs("", "v1", "ReplicationController", "spec/selector", true),
    fs("", "", "Deployment", "spec/selector/matchLabels", true),
    fs("apps", "", "Deployment", "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels", false),
    fs("apps", "", "Deployment", "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels", false),
    fs("apps", "", "Deployment", "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels", false),
    fs("apps", "", "Deployment", "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels", false),
    fs("apps", "", "Deployment", "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels", false),
    fs("", "", "ReplicaSet", "spec/selector/matchLabels", true),
    fs("", "", "DaemonSet", "spec/selector/matchLabels", true),
    fs("apps", "", "StatefulSet", "spec/selector/matchLabels", true),
    fs("apps", "", "StatefulSet", "spec/volumeClaimTemplates[]/metadata/labels", true),
    fs("apps", "", "StatefulSet", "spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels", false),
    fs("apps", "", "StatefulSet", "spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels", false),
    fs("apps", "", "StatefulSet", "spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels", false),
    fs("apps", "", "StatefulSet", "spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels", false),
    fs("apps", "", "StatefulSet", "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels", false),
    fs("batch", "", "Job", "spec/selector/matchLabels", false),
    fs("batch", "", "CronJob", "spec/jobTemplate/spec/selector/matchLabels", false),
    fs("policy", "", "PodDisruptionBudget", "spec/selector/matchLabels", false),
    fs("networking.k8s.io", "", "NetworkPolicy", "spec/podSelector/matchLabels", false),
    fs("networking.k8s.io", "", "NetworkPolicy", "spec/ingress/from/podSelector/matchLabels", false),
    fs("networking.k8s.io", "", "NetworkPolicy", "spec/egress/to/podSelector/matchLabels", false),
];

/// `commonAnnotationFieldSpecs` (builtinpluginconsts/commonannotations.go).
const COMMON_ANNOTATIONS: &[FieldSpec] = &[
    fs("", "", "", "metadata/annotations", true),
    fs(
        "",
        "v1",
        "ReplicationController",
        "spec/template/metadata/annotations",
        true,
    ),
    fs(
        "",
        "",
        "Deployment",
        "spec/template/metadata/annotations",
        true,
    ),
    fs(
        "",
        "",
        "ReplicaSet",
        "spec/template/metadata/annotations",
        true,
    ),
    fs(
        "",
        "",
        "DaemonSet",
        "spec/template/metadata/annotations",
        true,
    ),
    fs(
        "",
        "",
        "StatefulSet",
        "spec/template/metadata/annotations",
        true,
    ),
    fs(
        "batch",
        "",
        "Job",
        "spec/template/metadata/annotations",
        true,
    ),
    fs(
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/metadata/annotations",
        true,
    ),
    fs(
        "batch",
        "",
        "CronJob",
        "spec/jobTemplate/spec/template/metadata/annotations",
        true,
    ),
];

/// `Gvk.IsSelected`: empty selector fields match anything.
fn selected(gvk: &Gvk, spec: &FieldSpec) -> bool {
    (spec.group.is_empty() || spec.group == gvk.group)
        && (spec.version.is_empty() || spec.version == gvk.version)
        && (spec.kind.is_empty() || spec.kind == gvk.kind)
}

/// What to do at the end of a field-spec path.
#[derive(Clone, Copy)]
enum Setter<'a> {
    /// Set these entries in the mapping there (labels, annotations).
    Entries(&'a [(String, String)]),
    /// Set the scalar there to this string (namespace).
    Scalar(&'a str),
}

/// `fieldspec.Filter`: walks `path` (sequences are walked element by element), creating
/// missing fields when the spec says so, and sets the value at the end.
fn apply_path(node: &mut Node, path: &[&str], create: bool, setter: Setter) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        return set_value(node, setter);
    };
    match node {
        Node::Seq(items) => {
            for item in items {
                apply_path(item, path, create, setter)?;
            }
            Ok(())
        }
        Node::Map(map) => {
            let (name, is_seq) = match first.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (*first, false),
            };
            let creating = create && !is_seq;
            if map.get(name).is_none() {
                if !creating {
                    return Ok(());
                }
                let new = if rest.is_empty() {
                    match setter {
                        Setter::Entries(_) => Node::Map(Map::default()),
                        Setter::Scalar(_) => Node::Str(String::new()),
                    }
                } else {
                    Node::Map(Map::default())
                };
                map.0.push((name.to_string(), new));
            }
            let Some(field) = map.get_mut(name) else {
                return Ok(());
            };
            if *field == Node::Null {
                if creating && (!rest.is_empty() || matches!(setter, Setter::Entries(_))) {
                    *field = Node::Map(Map::default());
                } else {
                    return Err(format!("a null `{name}` on a field-spec path"));
                }
            }
            apply_path(field, rest, create, setter)
        }
        _ => Err("a field-spec path through a scalar".into()),
    }
}

fn set_value(node: &mut Node, setter: Setter) -> Result<(), String> {
    match setter {
        Setter::Entries(pairs) => {
            let Node::Map(map) = node else {
                return Err("labels or annotations that are not a mapping".into());
            };
            for (k, v) in pairs {
                map.insert(k, Node::Str(v.clone()));
            }
            Ok(())
        }
        Setter::Scalar(value) => {
            if !matches!(node, Node::Str(_)) {
                return Err("a namespace field that is not a string".into());
            }
            *node = Node::Str(value.to_string());
            Ok(())
        }
    }
}

fn apply_specs(
    r: &mut Resource,
    specs: &[&FieldSpec],
    setter: Setter,
    file: &str,
) -> Result<(), NativeError> {
    let gvk = r.gvk();
    for spec in specs {
        if !selected(&gvk, spec) {
            continue;
        }
        let path: Vec<&str> = spec.path.split('/').collect();
        apply_path(&mut r.node, &path, spec.create, setter)
            .map_err(|w| NativeError::unsupported(&w, file))?;
    }
    Ok(())
}

/// The `labels:` transformer for one label set, and `commonLabels` (`include_selectors`).
pub(crate) fn add_labels(
    resources: &mut [Resource],
    pairs: &[(String, String)],
    include_selectors: bool,
    file: &str,
) -> Result<(), NativeError> {
    if pairs.is_empty() {
        return Ok(());
    }
    let specs: Vec<&FieldSpec> = if include_selectors {
        COMMON_LABEL_SELECTORS
            .iter()
            .chain(METADATA_LABELS.iter())
            .collect()
    } else {
        METADATA_LABELS[..1].iter().collect()
    };
    for r in resources {
        apply_specs(r, &specs, Setter::Entries(pairs), file)?;
    }
    Ok(())
}

/// The `commonAnnotations` transformer.
pub(crate) fn add_annotations(
    resources: &mut [Resource],
    pairs: &[(String, String)],
    file: &str,
) -> Result<(), NativeError> {
    if pairs.is_empty() {
        return Ok(());
    }
    let specs: Vec<&FieldSpec> = COMMON_ANNOTATIONS.iter().collect();
    for r in resources {
        apply_specs(r, &specs, Setter::Entries(pairs), file)?;
    }
    Ok(())
}

/// The namespace transformer (`namespace.Filter` with the `namespace` field specs).
pub(crate) fn set_namespace(
    resources: &mut [Resource],
    namespace: &str,
    file: &str,
) -> Result<(), NativeError> {
    if namespace.is_empty() {
        return Ok(());
    }
    let in_file = |e: NativeError| match e {
        NativeError::Unsupported { feature, .. } => NativeError::unsupported(&feature, file),
        other @ NativeError::Failed(_) => other,
    };
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        let cluster_scoped = is_cluster_scoped(&gvk).map_err(in_file)?;
        // Every resource remembers its id, moved or not (NamespaceTransformer.go).
        r.store_previous_id().map_err(in_file)?;
        // metaNamespaceHack: metadata/namespace, created, on namespaced kinds only.
        if !cluster_scoped {
            apply_path(
                &mut r.node,
                &["metadata", "namespace"],
                true,
                Setter::Scalar(namespace),
            )
            .map_err(|w| NativeError::unsupported(&w, file))?;
        }
        // roleBindingHack: subjects named `default` get the namespace.
        if gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding" {
            if let Some(Node::Seq(subjects)) =
                r.node.as_map_mut().and_then(|m| m.get_mut("subjects"))
            {
                for s in subjects {
                    if let Node::Map(m) = s {
                        if m.get("name") == Some(&Node::Str("default".into())) {
                            m.insert("namespace", Node::Str(namespace.to_string()));
                        }
                    }
                }
            }
        }
        if gvk.kind == "Namespace" {
            if gvk.group.is_empty() && gvk.version == "v1" {
                apply_path(
                    &mut r.node,
                    &["metadata", "name"],
                    true,
                    Setter::Scalar(namespace),
                )
                .map_err(|w| NativeError::unsupported(&w, file))?;
            } else {
                return Err(NativeError::unsupported(
                    "a Namespace that is not v1 under a namespace transformer",
                    file,
                ));
            }
        }
        if (gvk.group == "apiregistration.k8s.io" && gvk.kind == "APIService")
            || (gvk.group == "apiextensions.k8s.io" && gvk.kind == "CustomResourceDefinition")
        {
            if gvk.kind == "APIService" {
                return Err(NativeError::unsupported(
                    "an APIService under a namespace transformer",
                    file,
                ));
            }
            apply_path(
                &mut r.node,
                &[
                    "spec",
                    "conversion",
                    "webhook",
                    "clientConfig",
                    "service",
                    "namespace",
                ],
                false,
                Setter::Scalar(namespace),
            )
            .map_err(|w| NativeError::unsupported(&w, file))?;
        }
    }
    // NamespaceTransformer: the new namespace must not make two ids equal.
    for i in 0..resources.len() {
        for j in (i + 1)..resources.len() {
            if resources[i].same_id(&resources[j])? {
                return Err(NativeError::Failed(
                    "namespace transformation produces ID conflict".into(),
                ));
            }
        }
    }
    Ok(())
}

/// The `images:` transformer (`api/filters/imagetag`): kustomize first walks every
/// `containers` / `initContainers` list anywhere in a resource but a CRD (`legacy.go`), then
/// its image field specs, which reach nothing the walk did not (and the update is
/// idempotent). Digests are not reproduced.
pub(crate) fn set_images(
    resources: &mut [Resource],
    image: &super::kustfile::ImageSpec,
    file: &str,
) -> Result<(), NativeError> {
    let pattern = regex::Regex::new(&format!(
        "^{}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$",
        image.name
    ))
    .map_err(|_| {
        NativeError::unsupported("an image name that is not a regular expression", file)
    })?;
    for r in resources.iter_mut() {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        walk_containers(&mut r.node, &mut |value: &mut Node| {
            let Node::Str(s) = value else {
                return Err("an image that is not a string".to_string());
            };
            if !pattern.is_match(s) {
                return Ok(());
            }
            *s = new_image(s, image)?;
            Ok(())
        })
        .map_err(|w| NativeError::unsupported(&w, file))?;
    }
    Ok(())
}

/// `findFieldsFilter.walk` with `checkImageTagsFn`: every `image` of every element of a
/// `containers` or `initContainers` list, depth first.
fn walk_containers(
    node: &mut Node,
    f: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), String> {
    match node {
        Node::Map(m) => {
            for (key, value) in &mut m.0 {
                walk_containers(value, f)?;
                if key == "containers" || key == "initContainers" {
                    if let Node::Seq(items) = value {
                        for item in items {
                            if let Some(image) = item.as_map_mut().and_then(|c| c.get_mut("image"))
                            {
                                f(image)?;
                            }
                        }
                    }
                }
            }
            Ok(())
        }
        Node::Seq(items) => items.iter_mut().try_for_each(|i| walk_containers(i, f)),
        _ => Ok(()),
    }
}

/// `imageTagUpdater.SetImageValue` for an image without a digest (`image.Split`).
fn new_image(value: &str, image: &super::kustfile::ImageSpec) -> Result<String, String> {
    if value.contains('@') {
        return Err("an image with a digest".into());
    }
    let slash = value.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &value[slash..];
    if search.matches(':').count() > 1 {
        return Err("an image with several tags".into());
    }
    let (mut name, mut tag) = match search.find(':') {
        Some(i) => (
            value[..slash + i].to_string(),
            value[slash + i + 1..].to_string(),
        ),
        None => (value.to_string(), String::new()),
    };
    if let Some(n) = &image.new_name {
        name.clone_from(n);
    }
    if let Some(t) = &image.new_tag {
        tag.clone_from(t);
    }
    if !tag.is_empty() {
        name.push(':');
        name.push_str(&tag);
    }
    Ok(name)
}

/// `namePrefix` then `nameSuffix` (`PrefixTransformer`, `SuffixTransformer`):
/// `metadata/name` of every resource but CRDs, APIServices and Namespaces (by their original
/// kind, `prefixFieldSpecsToSkip`). Each renamed resource remembers its previous id and the
/// prefix or suffix it got: the name-reference pass at the end of the build follows them
/// (`nameref::fix_back_references`).
pub(crate) fn add_prefix_suffix(
    resources: &mut [Resource],
    prefix: &str,
    suffix: &str,
    file: &str,
) -> Result<(), NativeError> {
    if prefix.is_empty() && suffix.is_empty() {
        return Ok(());
    }
    // kustomize keeps them in a comma-separated annotation, which a comma would split.
    if prefix.contains(',') || suffix.contains(',') {
        return Err(NativeError::unsupported(
            "a name prefix or suffix with a comma",
            file,
        ));
    }
    let in_file = |e: NativeError| match e {
        NativeError::Unsupported { feature, .. } => NativeError::unsupported(&feature, file),
        other @ NativeError::Failed(_) => other,
    };
    for (affix, is_prefix) in [(prefix, true), (suffix, false)] {
        if affix.is_empty() {
            continue;
        }
        for r in resources.iter_mut() {
            let group = r.gvk().group;
            let kind = r.org_id().kind;
            let skip = kind == "CustomResourceDefinition"
                || kind == "Namespace"
                || (group == "apiregistration.k8s.io" && kind == "APIService");
            if skip {
                continue;
            }
            r.store_previous_id().map_err(in_file)?;
            let name = if is_prefix {
                r.prefixes.push(affix.to_string());
                format!("{affix}{}", r.name())
            } else {
                r.suffixes.push(affix.to_string());
                format!("{}{affix}", r.name())
            };
            if let Some(Node::Map(meta)) = r.node.as_map_mut().and_then(|m| m.get_mut("metadata")) {
                meta.insert("name", Node::Str(name));
            }
        }
    }
    for i in 0..resources.len() {
        for j in (i + 1)..resources.len() {
            if resources[i].same_id(&resources[j])? {
                return Err(NativeError::Failed(
                    "name prefix or suffix produces an ID conflict".into(),
                ));
            }
        }
    }
    Ok(())
}

/// The `replicas:` transformer (`ReplicaCountTransformer`): `spec/replicas` of the
/// Deployments, StatefulSets, ReplicaSets and ReplicationControllers named so (by any of
/// their ids). An existing value keeps its type (`SetScalar` keeps the tag: `"1"` becomes
/// `"3"`); a missing one is created as an integer.
pub(crate) fn set_replicas(
    resources: &mut [Resource],
    name: &str,
    count: i64,
    file: &str,
) -> Result<(), NativeError> {
    const KINDS: [&str; 4] = [
        "Deployment",
        "StatefulSet",
        "ReplicaSet",
        "ReplicationController",
    ];
    let mut found = false;
    for r in resources.iter_mut() {
        if !r.has_any_name(name, &KINDS) {
            continue;
        }
        found = true;
        let Some(Node::Map(top)) = Some(&mut r.node) else {
            continue;
        };
        if top.get("spec").is_none() {
            top.0.push(("spec".into(), Node::Map(Map::default())));
        }
        let Some(Node::Map(spec)) = top.get_mut("spec") else {
            return Err(NativeError::unsupported(
                "a spec that is not a mapping",
                file,
            ));
        };
        let value = match spec.get("replicas") {
            None | Some(Node::Null | Node::Int(_) | Node::Uint(_)) => Node::Int(count),
            Some(Node::Str(_)) => Node::Str(count.to_string()),
            Some(_) => {
                return Err(NativeError::unsupported(
                    "a spec.replicas that is not an integer or a string",
                    file,
                ))
            }
        };
        spec.insert("replicas", value);
    }
    if !found {
        return Err(NativeError::Failed(format!(
            "resource with name {name} does not match a config with the following GVK \
             [Deployment StatefulSet ReplicaSet ReplicationController]"
        )));
    }
    Ok(())
}
