//! One resource and its identity (`resid.ResId`), the resource map kustomize accumulates
//! into (`resmap`), and kustomize's legacy output order (`SortOrderTransformer.go`).

use super::kustfile::Behavior;
use super::node::{Map, Node};
use super::NativeError;

/// A resource being built.
#[derive(Debug, Clone)]
pub(crate) struct Resource {
    /// The object.
    pub(crate) node: Node,
    /// A generated ConfigMap or Secret whose name gets the content hash at the end.
    pub(crate) needs_hash: bool,
    /// The ids it had before a transformer changed it, oldest first (kustomize's
    /// `previousNames` / `previousNamespaces` / `previousKinds` build annotations).
    pub(crate) prev_ids: Vec<PrevId>,
    /// The name prefixes added to it, innermost kustomization first (`prefixes`).
    pub(crate) prefixes: Vec<String>,
    /// The name suffixes added to it, innermost kustomization first (`suffixes`).
    pub(crate) suffixes: Vec<String>,
    /// Where it holds a null written as nothing (`a:`), which a strategic merge drops.
    pub(crate) empty_null: super::reader::EmptyNulls,
}

/// An id a resource had before a transformer changed it (`Resource.StorePreviousId`): its
/// group and version are always the resource's current ones (`utils.PrevIds`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrevId {
    pub(crate) kind: String,
    pub(crate) name: String,
    /// The effective namespace (`ResId.EffectiveNamespace`): `default` for an unset one,
    /// [`NOT_A_NAMESPACE`] for a cluster-scoped kind; none for an id recorded without one.
    pub(crate) namespace: Option<String>,
}

/// `resid.TotallyNotANamespace`: the effective namespace of a cluster-scoped id.
pub(crate) const NOT_A_NAMESPACE: &str = "_non_namespaceable_";

/// Group, version and kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Gvk {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
}

impl Resource {
    /// Makes a resource of a document read from `file`, checking what kustomize checks and
    /// what this builder reproduces.
    pub(crate) fn from_document(mut node: Node, file: &str) -> Result<Resource, NativeError> {
        let unsupported = |what: &str| NativeError::Unsupported {
            feature: what.to_string(),
            file: file.to_string(),
        };
        let Node::Map(map) = &mut node else {
            return Err(unsupported("a document that is not a mapping"));
        };
        let kind = map.get("kind").and_then(Node::as_str).unwrap_or_default();
        if kind.is_empty() || !matches!(map.get("apiVersion"), Some(Node::Str(_))) {
            return Err(unsupported("a document without apiVersion or kind"));
        }
        if kind.ends_with("List") && map.get("items").is_some() {
            return Err(unsupported("a List document"));
        }
        let Some(Node::Map(meta)) = map.get_mut("metadata") else {
            return Err(unsupported("a document without metadata"));
        };
        if !matches!(meta.get("name"), Some(Node::Str(n)) if !n.is_empty()) {
            return Err(unsupported("a document without metadata.name"));
        }
        if !matches!(meta.get("namespace"), None | Some(Node::Str(_))) {
            return Err(unsupported("a metadata.namespace that is not a string"));
        }
        match meta.get("annotations") {
            // kio.ByteReader adds its index annotations on read and clears the map again
            // when they are removed: an empty map disappears (kyaml ClearEmptyAnnotations).
            Some(Node::Map(a)) if a.is_empty() => {
                meta.remove("annotations");
            }
            Some(Node::Map(a))
                if a.0.iter().any(|(k, _)| {
                    k.starts_with("config.kubernetes.io/")
                        || k.starts_with("internal.config.kubernetes.io/")
                        || k.starts_with("kustomize.config.k8s.io/")
                        || k.starts_with("config.k8s.io/")
                }) =>
            {
                return Err(unsupported("kustomize's own annotations"));
            }
            None | Some(Node::Map(_)) => {}
            Some(_) => return Err(unsupported("metadata.annotations that is not a mapping")),
        }
        if !matches!(meta.get("labels"), None | Some(Node::Map(_))) {
            return Err(unsupported("metadata.labels that is not a mapping"));
        }
        Ok(Resource {
            node,
            needs_hash: false,
            prev_ids: Vec::new(),
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            empty_null: super::reader::EmptyNulls::None,
        })
    }

    /// `ResId.EffectiveNamespace` of the current id.
    pub(crate) fn effective_namespace(&self) -> String {
        effective_namespace(&self.gvk(), self.namespace())
    }

    /// `Resource.StorePreviousId`: remembers the current id before a transformer changes it.
    /// kustomize keeps the ids in comma-separated annotations, so a comma in a name would
    /// split it: such names are left to kustomize.
    pub(crate) fn store_previous_id(&mut self) -> Result<(), NativeError> {
        let name = self.name().to_string();
        if name.contains(',') {
            return Err(NativeError::unsupported(
                "a renamed resource with a comma in its name",
                &name,
            ));
        }
        let namespace = Some(self.effective_namespace());
        self.prev_ids.push(PrevId {
            kind: self.kind().to_string(),
            name,
            namespace,
        });
        Ok(())
    }

    /// `Resource.OrgId`: the oldest previous id, or the current one.
    pub(crate) fn org_id(&self) -> PrevId {
        match self.prev_ids.first() {
            Some(id) => id.clone(),
            None => PrevId {
                kind: self.kind().to_string(),
                name: self.name().to_string(),
                namespace: Some(self.effective_namespace()),
            },
        }
    }

    /// The name of the original id (`OrgId().Name`).
    pub(crate) fn org_name(&self) -> &str {
        self.prev_ids
            .first()
            .map_or(self.name(), |id| id.name.as_str())
    }

    /// Whether `name` is the current name or a previous one (`GetMatchingResourcesByAnyId`
    /// for a name and kinds).
    pub(crate) fn has_any_name(&self, name: &str, kinds: &[&str]) -> bool {
        (self.name() == name && kinds.contains(&self.kind()))
            || self
                .prev_ids
                .iter()
                .any(|id| id.name == name && kinds.contains(&id.kind.as_str()))
    }

    /// `apiVersion` split into group and version, and `kind` (`resid.GvkFromNode`).
    pub(crate) fn gvk(&self) -> Gvk {
        let api = self.node.str_at(&["apiVersion"]).unwrap_or_default();
        let (group, version) = match api.find('/') {
            Some(i) => (&api[..i], &api[i + 1..]),
            None => ("", api),
        };
        Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: self.kind().to_string(),
        }
    }

    /// `kind`.
    pub(crate) fn kind(&self) -> &str {
        self.node.str_at(&["kind"]).unwrap_or_default()
    }

    /// Sets the annotation `key` (making `metadata.annotations` when missing).
    pub(crate) fn set_annotation(&mut self, key: &str, value: &str) {
        let Some(Node::Map(meta)) = self.node.as_map_mut().and_then(|m| m.get_mut("metadata"))
        else {
            return;
        };
        if !matches!(meta.get("annotations"), Some(Node::Map(_))) {
            meta.insert("annotations", Node::Map(Map::default()));
        }
        if let Some(Node::Map(a)) = meta.get_mut("annotations") {
            a.insert(key, Node::Str(value.to_string()));
        }
    }

    /// `metadata.name`.
    pub(crate) fn name(&self) -> &str {
        self.node.str_at(&["metadata", "name"]).unwrap_or_default()
    }

    /// `metadata.namespace`, empty when unset.
    pub(crate) fn namespace(&self) -> &str {
        self.node
            .str_at(&["metadata", "namespace"])
            .unwrap_or_default()
    }

    /// Whether two resources have the same id (`ResId.Equals`: an unset namespace is
    /// `default` for a namespaced kind, and a cluster-scoped kind has none).
    pub(crate) fn same_id(&self, other: &Resource) -> bool {
        self.gvk() == other.gvk()
            && self.name() == other.name()
            && self.effective_namespace() == other.effective_namespace()
    }
}

/// Absorbs generated resources one at a time (`resWrangler.AbsorbAll`, `appendReplaceOrMerge`):
/// a resource whose id equals no id of those already there, current or previous, is
/// appended (`create`; `merge` and `replace` fail); one that equals exactly one replaces it
/// (`merge`, `replace`; `create` fails).
pub(crate) fn absorb_all(
    into: &mut Vec<Resource>,
    more: Vec<(Resource, Behavior)>,
    file: &str,
) -> Result<(), NativeError> {
    for (r, behavior) in more {
        let gvk = r.gvk();
        let namespace = r.effective_namespace();
        let mut matches = Vec::new();
        for (i, existing) in into.iter().enumerate() {
            let current = existing.gvk() == gvk
                && existing.name() == r.name()
                && existing.effective_namespace() == namespace;
            let g = existing.gvk();
            let mut previous = false;
            for p in &existing.prev_ids {
                if g.group == gvk.group
                    && g.version == gvk.version
                    && p.kind == gvk.kind
                    && p.name == r.name()
                {
                    previous |= *known_namespace(p, r.name())? == namespace;
                }
            }
            if current || previous {
                matches.push(i);
            }
        }
        let id = || format!("{}/{} {}", r.kind(), r.name(), r.namespace());
        match (matches.as_slice(), behavior) {
            ([], Behavior::Create) => into.push(r),
            ([], _) => {
                return Err(NativeError::Failed(format!(
                    "merging from generator: id {} does not exist; cannot merge or replace",
                    id()
                )))
            }
            ([_], Behavior::Create) => {
                return Err(NativeError::Failed(format!(
                    "merging from generator: id {} exists; behavior must be merge or replace",
                    id()
                )))
            }
            ([i], _) => {
                let merged = merge_generated(&into[*i], r, behavior, file)?;
                into[*i] = merged;
            }
            _ => {
                return Err(NativeError::Failed(format!(
                    "merging from generator: found multiple objects that could accept merge of {}",
                    id()
                )))
            }
        }
    }
    Ok(())
}

/// A string-to-string map of the object (`data`, `metadata.labels`...), or why it is not
/// one kustomize's `map[string]string` readers would give back as it is.
fn string_pairs(
    node: &Node,
    path: &[&str],
    file: &str,
) -> Result<Vec<(String, String)>, NativeError> {
    match node.get_path(path) {
        None | Some(Node::Null) => Ok(Vec::new()),
        Some(Node::Map(m)) => {
            m.0.iter()
                .map(|(k, v)| match v {
                    Node::Str(s) => Ok((k.clone(), s.clone())),
                    _ => Err(NativeError::unsupported(
                        &format!(
                            "a generator merge over a {} value that is not a string",
                            path.join(".")
                        ),
                        file,
                    )),
                })
                .collect()
        }
        Some(_) => Err(NativeError::unsupported(
            &format!(
                "a generator merge over a {} that is not a mapping",
                path.join(".")
            ),
            file,
        )),
    }
}

/// `mergeStringMaps(old, new)`: the new value wins a key both have.
fn merge_pairs(old: Vec<(String, String)>, new: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out = old;
    for (k, v) in new {
        match out.iter_mut().find(|(ok, _)| *ok == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// Sets (or, when empty, removes) a string map at `metadata.<field>` or at `data`.
fn set_pairs(map: &mut Map, key: &str, pairs: Vec<(String, String)>) {
    map.remove(key);
    if !pairs.is_empty() {
        map.insert(
            key,
            Node::Map(Map(pairs
                .into_iter()
                .map(|(k, v)| (k, Node::Str(v)))
                .collect())),
        );
    }
}

/// The annotation origin annotations use (`utils.OriginAnnotationKey`).
const ORIGIN: &str = "config.kubernetes.io/origin";

/// `appendReplaceOrMerge` for one match: the new object keeps the old one's name, namespace
/// and build annotations (its previous ids, prefixes and suffixes, and a hash suffix only
/// when both ask for one), labels and annotations merged (the new value wins); with `merge`,
/// `data` and `binaryData` merged too and the old origin kept (`CopyMergeMetaDataFieldsFrom`,
/// `MergeDataMapFrom` in `api/resource/resource.go`).
fn merge_generated(
    old: &Resource,
    new: Resource,
    behavior: Behavior,
    file: &str,
) -> Result<Resource, NativeError> {
    let labels = merge_pairs(
        string_pairs(&old.node, &["metadata", "labels"], file)?,
        string_pairs(&new.node, &["metadata", "labels"], file)?,
    );
    let mut annotations = merge_pairs(
        string_pairs(&old.node, &["metadata", "annotations"], file)?,
        string_pairs(&new.node, &["metadata", "annotations"], file)?,
    );
    if behavior == Behavior::Merge {
        if let Some(Node::Str(origin)) = old.node.get_path(&["metadata", "annotations", ORIGIN]) {
            if let Some(slot) = annotations.iter_mut().find(|(k, _)| k == ORIGIN) {
                slot.1.clone_from(origin);
            }
        }
    }
    let mut node = new.node;
    let Node::Map(obj) = &mut node else {
        return Err(NativeError::Failed(format!(
            "{file}: a generated object that is not a mapping"
        )));
    };
    if behavior == Behavior::Merge {
        for field in ["data", "binaryData"] {
            let old_data = string_pairs(&old.node, &[field], file)?;
            let new_data = string_pairs(&Node::Map(obj.clone()), &[field], file)?;
            set_pairs(obj, field, merge_pairs(old_data, new_data));
        }
    }
    let Some(Node::Map(meta)) = obj.get_mut("metadata") else {
        return Err(NativeError::Failed(format!(
            "{file}: a generated object without metadata"
        )));
    };
    set_pairs(meta, "labels", labels);
    set_pairs(meta, "annotations", annotations);
    meta.insert("name", Node::Str(old.name().to_string()));
    if old.namespace().is_empty() {
        meta.remove("namespace");
    } else {
        meta.insert("namespace", Node::Str(old.namespace().to_string()));
    }
    Ok(Resource {
        node,
        needs_hash: old.needs_hash && new.needs_hash,
        prev_ids: old.prev_ids.clone(),
        prefixes: old.prefixes.clone(),
        suffixes: old.suffixes.clone(),
        empty_null: super::reader::EmptyNulls::None,
    })
}

/// A list of resources being accumulated, with its ids indexed by group, version, kind and
/// name, so that appending N resources one file at a time costs N lookups, not the N²/2
/// comparisons a scan of the whole list per resource makes (`resWrangler.Append` checks each
/// new resource against every one already there; a root listing thousands of Flux
/// Kustomizations made that quadratic). It holds the only mutable borrow of the list while
/// it lives, so the index cannot go stale.
pub(crate) struct Accumulator<'a> {
    list: &'a mut Vec<Resource>,
    /// (group, version, kind, name) to the positions in `list` with that id, in order.
    index: std::collections::HashMap<(Gvk, String), Vec<usize>>,
}

impl<'a> Accumulator<'a> {
    /// Indexes what `list` already holds.
    pub(crate) fn new(list: &'a mut Vec<Resource>) -> Accumulator<'a> {
        let mut index: std::collections::HashMap<(Gvk, String), Vec<usize>> =
            std::collections::HashMap::new();
        for (i, r) in list.iter().enumerate() {
            index
                .entry((r.gvk(), r.name().to_string()))
                .or_default()
                .push(i);
        }
        Accumulator { list, index }
    }

    /// Appends resources, failing on an id that is already there (`resWrangler.Append`).
    /// Only resources of the same group, version, kind and name can have the same id
    /// ([`Resource::same_id`]), so those are the only ones compared, in list order: the
    /// first error or match is the one a scan of the whole list would find.
    pub(crate) fn append_all(&mut self, more: Vec<Resource>) -> Result<(), NativeError> {
        for r in more {
            let key = (r.gvk(), r.name().to_string());
            if let Some(same) = self.index.get(&key) {
                for &i in same {
                    if self.list[i].same_id(&r) {
                        return Err(NativeError::Failed(format!(
                            "may not add resource with an already registered id: {}/{} {}",
                            r.kind(),
                            r.name(),
                            r.namespace()
                        )));
                    }
                }
            }
            self.index.entry(key).or_default().push(self.list.len());
            self.list.push(r);
        }
        Ok(())
    }
}

/// The effective namespace of a previous id, or why it is not known.
pub(crate) fn known_namespace<'a>(id: &'a PrevId, name: &str) -> Result<&'a String, NativeError> {
    id.namespace.as_ref().ok_or_else(|| {
        NativeError::unsupported(
            &format!(
                "the scope of kind {} (not in kustomize's built-in schema)",
                id.kind
            ),
            name,
        )
    })
}

/// `ResId.EffectiveNamespace` of an id with this group, version and kind.
pub(crate) fn effective_namespace(gvk: &Gvk, namespace: &str) -> String {
    if is_cluster_scoped(gvk) {
        NOT_A_NAMESPACE.to_string()
    } else if namespace.is_empty() {
        "default".to_string()
    } else {
        namespace.to_string()
    }
}

/// `Gvk.IsClusterScoped()` as kustomize v5.8.1 answers it for the build on this thread
/// (`kyaml/resid/gvk.go` `NewGvk` asks `openapi.IsCertainlyClusterScoped`): the kinds the
/// built-in Kubernetes v1.21.2 paths name without a namespace (36, NodeProxyOptions among
/// them), then for other kinds those a root custom schema's `paths` name without one
/// ([`super::openapi::scope`]). A kind that is
/// cluster-scoped on a newer Kubernetes but not in that schema (a `v1alpha1` ClusterRole, a
/// TokenReview, a MutatingAdmissionPolicyBinding) is namespaced for kustomize, which sets the
/// namespace on it (testdata/native/cluster-scope).
pub(crate) fn is_cluster_scoped(gvk: &Gvk) -> bool {
    let api_version = if gvk.group.is_empty() {
        gvk.version.clone()
    } else {
        format!("{}/{}", gvk.group, gvk.version)
    };
    super::openapi::is_certainly_cluster_scoped(&api_version, &gvk.kind)
}

const ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];
const ORDER_LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

fn type_order(kind: &str) -> i64 {
    if let Some(i) = ORDER_FIRST.iter().position(|k| *k == kind) {
        return i as i64 - ORDER_FIRST.len() as i64;
    }
    if let Some(i) = ORDER_LAST.iter().position(|k| *k == kind) {
        return 1 + i as i64;
    }
    0
}

fn or(s: &str, default: &'static str) -> String {
    if s.is_empty() {
        default.to_string()
    } else {
        s.to_string()
    }
}

/// `legacyGVKSortString`.
fn gvk_sort_string(g: &Gvk) -> String {
    [or(&g.group, "~G"), or(&g.version, "~V"), or(&g.kind, "~K")].join("_")
}

/// `legacyResIDSortString` (the Gvk part is equal when it is used).
fn id_sort_string(r: &Resource) -> String {
    [or(r.namespace(), "~X"), or(r.name(), "~N")].join("|")
}

/// Sorts resources in kustomize's legacy order (`legacyIDSorter.Less`; ids are unique, so
/// the unstable Go sort gives one answer).
pub(crate) fn sort_legacy(resources: &mut [Resource]) {
    resources.sort_by(|a, b| {
        let (ga, gb) = (a.gvk(), b.gvk());
        if ga != gb {
            let (oa, ob) = (type_order(&ga.kind), type_order(&gb.kind));
            if oa != ob {
                return oa.cmp(&ob);
            }
            return gvk_sort_string(&ga).cmp(&gvk_sort_string(&gb));
        }
        id_sort_string(a).cmp(&id_sort_string(b))
    });
}
