//! The `patches:` transformer (`api/internal/builtins/PatchTransformer.go`): a patch is a
//! JSON 6902 operation list or strategic-merge documents, applied to the resources its
//! `target` selects (or, for strategic merge without target, to the resource it names).
//!
//! Strategic merge is reproduced only where it is plain recursive merging: maps merge, `null`
//! deletes, scalars replace. Lists are replaced only on custom resources whose elements
//! carry none of kyaml's associative keys; anything else (built-in kinds with lists, `$patch`
//! directives, empty collections) is left to kustomize.
//!
//! The merge walk is [`strategic`], the operations [`json6902`].

mod json6902;
mod strategic;

use json6902::{apply_op, OpError};
use strategic::{check_patch, merge, schema_of};

use crate::kustfile::{PatchKind, PatchSpec};
use crate::node::Node;
use crate::openapi::{Schema, SchemaSet};
use crate::reader::{read_documents, EmptyNulls, ReadError, Seg};
use crate::resource::{effective_namespace, known_namespace, Gvk, Resource};
use crate::selector::SelectorRegex;
use crate::NativeError;
/// Applies one `patches:` entry.
#[allow(
    clippy::too_many_lines,
    reason = "mirrors kustomize's PatchTransformer: target selection, then each patch kind"
)]
pub(crate) fn apply_patch(
    resources: &mut [Resource],
    spec: &PatchSpec,
    file: &str,
    schemas: SchemaSet<'_>,
) -> Result<(), NativeError> {
    let unsupported = |w: &str| NativeError::unsupported(&format!("{w} ({})", spec.origin), file);
    let trimmed = spec.text.trim_start();
    let is_json6902 = trimmed.starts_with('[')
        || trimmed.starts_with('-')
        || trimmed
            .lines()
            .find(|l| {
                let t = l.trim();
                !t.is_empty() && !t.starts_with('#') && t != "---"
            })
            .is_some_and(|l| l.trim_start().starts_with("- "));
    let wrong_kind = match spec.kind {
        PatchKind::Any => false,
        PatchKind::StrategicMerge => is_json6902,
        PatchKind::Json6902 => !is_json6902,
    };
    if wrong_kind {
        return Err(unsupported(
            "a patch of the other kind than its field expects",
        ));
    }
    if is_json6902 {
        let Some(target) = &spec.target else {
            return Err(unsupported("a JSON 6902 patch without a target"));
        };
        let value = goyaml::yaml_json::yaml_to_value(&spec.text)
            .map_err(|e| NativeError::Failed(format!("patch {}: {e}", spec.origin)))?;
        let Node::Seq(ops) = Node::from_json(&value) else {
            return Err(unsupported("a JSON 6902 patch that is not a list"));
        };
        let matcher = SelectorRegex::new(target).map_err(|w| unsupported(&w))?;
        for r in resources.iter_mut() {
            if !matcher.selects_for_patch(r).map_err(|w| unsupported(&w))? {
                continue;
            }
            if r.needs_hash {
                return Err(unsupported(
                    "a patch on a generated resource with a hash suffix",
                ));
            }
            // `patches:` remembers the id of every resource a JSON 6902 patch applies to (it
            // may rename it); the legacy `patchesJson6902` does not.
            // kustomize applies it to the object as JSON: a null written as nothing
            // becomes `null`.
            r.empty_null = EmptyNulls::None;
            if spec.kind == PatchKind::Any {
                r.store_previous_id().map_err(|e| match e {
                    NativeError::Unsupported { feature, .. } => unsupported(&feature),
                    other @ (NativeError::Failed(_) | NativeError::Bound(_)) => other,
                })?;
            }
            for op in &ops {
                apply_op(&mut r.node, op).map_err(|e| match e {
                    OpError::Unsupported(w) => unsupported(&w),
                    OpError::Failed(w) => NativeError::Failed(format!(
                        "applying JSON 6902 patch {} to {}: {w}",
                        spec.origin,
                        r.name()
                    )),
                })?;
            }
        }
        return Ok(());
    }
    let docs = read_documents(&spec.text).map_err(|e| match e {
        // saphyr and go-yaml disagree on some malformed input: let kustomize judge it.
        ReadError::Syntax(m) => unsupported(&format!("YAML the native reader rejects ({m})")),
        ReadError::Unsupported(w) => unsupported(&w),
        ReadError::Bound(b) => NativeError::Bound(format!("reading patch {}: {b}", spec.origin)),
    })?;
    if docs.is_empty() {
        return Err(unsupported("an empty patch"));
    }
    for patch in &docs {
        let Node::Map(pm) = patch else {
            return Err(unsupported("a strategic-merge patch that is not a mapping"));
        };
        check_patch(patch).map_err(|w| unsupported(&w))?;
        let Some(kind) = pm.get("kind").and_then(Node::as_str) else {
            return Err(unsupported("a strategic-merge patch without kind"));
        };
        let Some(name) = patch.str_at(&["metadata", "name"]) else {
            return Err(unsupported("a strategic-merge patch without metadata.name"));
        };
        let targets: Vec<usize> = if let Some(t) = &spec.target {
            let matcher = SelectorRegex::new(t).map_err(|w| unsupported(&w))?;
            let mut selected = Vec::new();
            for (i, r) in resources.iter().enumerate() {
                if matcher.selects_for_patch(r).map_err(|w| unsupported(&w))? {
                    selected.push(i);
                }
            }
            selected
        } else {
            find_by_any_id(resources, patch, kind, name).map_err(|e| match e {
                NativeError::Unsupported { feature, .. } => unsupported(&feature),
                other @ (NativeError::Failed(_) | NativeError::Bound(_)) => other,
            })?
        };
        for i in targets {
            let r = &mut resources[i];
            if r.needs_hash {
                return Err(unsupported(
                    "a patch on a generated resource with a hash suffix",
                ));
            }
            match &r.empty_null {
                EmptyNulls::None => {}
                EmptyNulls::Unknown => {
                    return Err(unsupported(
                        "a strategic-merge patch on an object with a null written as nothing \
                         (`a:`) inside an anchor, or a merge key, or left by an earlier patch",
                    ))
                }
                EmptyNulls::At(at) => {
                    let schema = schema_of([Some(&r.node), Some(patch)], schemas);
                    let mut path = Vec::new();
                    drop_empty_nulls(&mut r.node, at, schema, schemas, &mut path);
                    // Those the walk does not reach (in a list that does not merge) stay
                    // nulls written as nothing; where they are after this merge is not
                    // followed.
                    r.empty_null = if at.iter().any(|p| node_at(&r.node, p) == Some(&Node::Null)) {
                        EmptyNulls::Unknown
                    } else {
                        EmptyNulls::None
                    };
                }
            }
            // With a target, the patch takes the target's identity (PatchTransformer.go).
            let mut p = patch.clone();
            if let Node::Map(m) = &mut p {
                m.remove("apiVersion");
                m.remove("kind");
                if let Some(Node::Map(meta)) = m.get_mut("metadata") {
                    meta.remove("name");
                    meta.remove("namespace");
                }
            }
            merge(&mut r.node, &p, schemas).map_err(|w| unsupported(&w))?;
        }
    }
    Ok(())
}

/// What kyaml's merge walk does to the nulls written as nothing (`a:`, at `at`) of the
/// object it merges a patch into: it visits every field of every mapping it walks (all of
/// the object, and the elements of lists that merge by key, whether the patch names them or
/// not; not those of lists that do not merge), and `FieldSetter` clears a field whose value
/// is such a null unless the patch gives one (`kyaml/yaml/walk`, `yaml.FieldSetter`: a
/// tagged null is cleared unless kept, and only `null` and `~` are kept). Removing them
/// before the merge gives the same: a field the patch sets takes the patch's value over a
/// null or over nothing alike.
fn drop_empty_nulls(
    node: &mut Node,
    at: &std::collections::BTreeSet<Vec<Seg>>,
    schema: Option<Schema<'_>>,
    schemas: SchemaSet<'_>,
    path: &mut Vec<Seg>,
) {
    match node {
        Node::Map(m) => {
            let mut i = 0;
            while i < m.0.len() {
                path.push(Seg::Key(m.0[i].0.clone()));
                if m.0[i].1 == Node::Null && at.contains(path.as_slice()) {
                    m.0.remove(i);
                    path.pop();
                    continue;
                }
                let child = match schema.and_then(|s| s.field(&m.0[i].0)) {
                    Some(s) => Some(s),
                    None => schema_of([Some(&m.0[i].1), None], schemas),
                };
                drop_empty_nulls(&mut m.0[i].1, at, child, schemas, path);
                path.pop();
                i += 1;
            }
        }
        Node::Seq(items) => {
            // Only a list that merges by keys has its elements walked.
            if schema
                .and_then(Schema::merge_keys)
                .is_none_or(|k| k.is_empty())
            {
                return;
            }
            let elements = schema.and_then(Schema::elements);
            for (i, item) in items.iter_mut().enumerate() {
                if let Node::Map(_) = item {
                    path.push(Seg::Index(i));
                    drop_empty_nulls(item, at, elements, schemas, path);
                    path.pop();
                }
            }
        }
        _ => {}
    }
}

/// The node at `path`, when there is one.
fn node_at<'n>(node: &'n Node, path: &[Seg]) -> Option<&'n Node> {
    let mut at = node;
    for seg in path {
        at = match (seg, at) {
            (Seg::Key(k), Node::Map(m)) => m.get(k)?,
            (Seg::Index(i), Node::Seq(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(at)
}

/// `GetById(patch.OrgId())` for a strategic-merge patch without target: the one resource any
/// of whose ids (current or previous) equals the patch's, namespaces compared as effective
/// ones (`resWrangler.GetMatchingResourcesByAnyId`).
fn find_by_any_id(
    resources: &[Resource],
    patch: &Node,
    kind: &str,
    name: &str,
) -> Result<Vec<usize>, NativeError> {
    let api = patch.str_at(&["apiVersion"]).unwrap_or_default();
    let (group, version) = api.split_once('/').unwrap_or(("", api));
    let patch_gvk = Gvk {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
    };
    let ns = effective_namespace(
        &patch_gvk,
        patch.str_at(&["metadata", "namespace"]).unwrap_or_default(),
    );
    let mut found = Vec::new();
    for (i, r) in resources.iter().enumerate() {
        let gvk = r.gvk();
        if gvk.group != patch_gvk.group || gvk.version != patch_gvk.version {
            continue;
        }
        let current = gvk.kind == kind && r.name() == name && r.effective_namespace() == ns;
        let mut previous = false;
        for p in r
            .prev_ids
            .iter()
            .filter(|p| p.kind == kind && p.name == name)
        {
            previous |= *known_namespace(p, name)? == ns;
        }
        if current || previous {
            found.push(i);
        }
    }
    if found.len() != 1 {
        // kustomize fails (no match, or several).
        return Err(NativeError::unsupported(
            "a strategic-merge patch without target",
            "",
        ));
    }
    Ok(found)
}
