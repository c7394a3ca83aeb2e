//! The `patches:` transformer (`api/internal/builtins/PatchTransformer.go`): a patch is a
//! JSON 6902 operation list or strategic-merge documents, applied to the resources its
//! `target` selects (or, for strategic merge without target, to the resource it names).
//!
//! Strategic merge is reproduced only where it is plain recursive merging: maps merge, `null`
//! deletes, scalars replace. Lists are replaced only on custom resources whose elements
//! carry none of kyaml's associative keys; anything else (built-in kinds with lists, `$patch`
//! directives, empty collections) is left to kustomize.

use super::kustfile::{PatchKind, PatchSpec};
use super::node::{Map, Node};
use super::openapi::{Schema, SchemaSet};
use super::reader::{read_documents, EmptyNulls, ReadError, Seg};
use super::resource::{effective_namespace, known_namespace, Gvk, Resource};
use super::selector::SelectorRegex;
use super::NativeError;

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

/// Patch content this module does not reproduce: a `$patch` directive on the whole object
/// (it deletes or replaces the resource), and directives or nulls on `metadata` or all of
/// `metadata.annotations`, which hold kustomize's own annotations while it builds.
fn check_patch(node: &Node) -> Result<(), crate::Unsupported> {
    let Node::Map(m) = node else {
        return Err("a strategic-merge patch that is not a mapping".into());
    };
    if m.get("$patch").is_some() {
        return Err("a `$patch` directive on a whole object".into());
    }
    match m.get("metadata") {
        None => {}
        Some(Node::Map(meta)) => {
            if meta.get("$patch").is_some() {
                return Err("a `$patch` directive on metadata".into());
            }
            match meta.get("annotations") {
                None => {}
                Some(Node::Map(a)) if a.get("$patch").is_none() => {}
                Some(_) => {
                    return Err(
                        "a strategic-merge patch replacing all of metadata.annotations".into(),
                    )
                }
            }
        }
        Some(_) => return Err("a strategic-merge patch replacing all of metadata".into()),
    }
    Ok(())
}

/// The `$patch` directive of a patch map or list (`determineSmpDirective`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Directive {
    Merge,
    Replace,
    Delete,
}

const DIRECTIVE: &str = "$patch";

fn directive_of(value: &Node) -> Result<Directive, crate::Unsupported> {
    match value.as_str() {
        Some("merge") => Ok(Directive::Merge),
        Some("replace") => Ok(Directive::Replace),
        Some("delete") => Ok(Directive::Delete),
        _ => Err("an unknown `$patch` strategy".into()),
    }
}

/// A map's directive, removed from it (`determineMappingNodePatchStrategy`).
fn take_map_directive(m: &mut Map) -> Result<Directive, crate::Unsupported> {
    match m.remove(DIRECTIVE) {
        None => Ok(Directive::Merge),
        Some(v) => directive_of(&v),
    }
}

/// A list's directive: an element that is a map holding only `$patch`, removed from it
/// (`determineSequenceNodePatchStrategy`).
fn take_list_directive(items: &mut Vec<Node>) -> Result<Directive, crate::Unsupported> {
    let Some(i) = items
        .iter()
        .position(|e| e.as_map().is_some_and(|m| m.get(DIRECTIVE).is_some()))
    else {
        return Ok(Directive::Merge);
    };
    let Some(m) = items[i].as_map() else {
        return Ok(Directive::Merge);
    };
    if m.0.len() > 1 {
        return Ok(Directive::Merge);
    }
    let d = directive_of(m.get(DIRECTIVE).unwrap_or(&Node::Null))?;
    items.remove(i);
    Ok(d)
}

/// The schema of a node the walker enters without one (`Walker.GetSchema`): its kind's,
/// when the node names its `apiVersion` and `kind`.
fn schema_of<'s>(nodes: [Option<&Node>; 2], schemas: SchemaSet<'s>) -> Option<Schema<'s>> {
    for n in nodes.into_iter().flatten() {
        let (Some(api), Some(kind)) = (n.str_at(&["apiVersion"]), n.str_at(&["kind"])) else {
            continue;
        };
        if api.is_empty() || kind.is_empty() {
            continue;
        }
        if let Some(s) = schemas.for_type(api, kind) {
            return Some(s);
        }
    }
    None
}

/// Strategic merge of `patch` into `dest` as kustomize does it: kyaml's `merge2.Merge` with
/// `ListIncreaseDirection: Prepend` (`api/filters/patchstrategicmerge`,
/// `kyaml/yaml/merge2/merge2.go`, `kyaml/yaml/walk/*.go`), lists merged by the keys of the
/// OpenAPI schemas ([`super::openapi`]) and replaced where they have none.
fn merge(dest: &mut Node, patch: &Node, schemas: SchemaSet<'_>) -> Result<(), crate::Unsupported> {
    let schema = schema_of([Some(dest), Some(patch)], schemas);
    let current = std::mem::replace(dest, Node::Null);
    match walk(Some(current), Some(patch.clone()), schema, schemas)? {
        Some(n @ Node::Map(_)) => {
            *dest = n;
            Ok(())
        }
        _ => Err("a strategic-merge patch deleting the object".into()),
    }
}

/// `Walker.Walk` over a dest and a patch node: `None` clears the field.
fn walk(
    dest: Option<Node>,
    patch: Option<Node>,
    schema: Option<Schema<'_>>,
    schemas: SchemaSet<'_>,
) -> Result<Option<Node>, crate::Unsupported> {
    let schema = match schema {
        Some(s) => Some(s),
        None => schema_of([dest.as_ref(), patch.as_ref()], schemas),
    };
    let kind_of = |n: &Option<Node>| match n {
        Some(Node::Map(_)) => Some(0),
        Some(Node::Seq(_)) => Some(1),
        None | Some(Node::Null) => None,
        Some(_) => Some(2),
    };
    let (dk, pk) = (kind_of(&dest), kind_of(&patch));
    if let (Some(a), Some(b)) = (dk, pk) {
        if a != b {
            return Err("a strategic-merge patch changing a field's type".into());
        }
    }
    match dk.or(pk) {
        Some(1) => walk_list(dest, patch, schema, schemas),
        Some(2) => Ok(walk_scalar(dest, patch)?),
        _ => walk_map(dest, patch, schema, schemas),
    }
}

/// `Merger.VisitScalar`: the patch's value wins; a null patch clears the field. kyaml copies
/// the value into the existing node, which keeps its tag: only same-typed scalars are
/// reproduced.
fn walk_scalar(
    dest: Option<Node>,
    patch: Option<Node>,
) -> Result<Option<Node>, crate::Unsupported> {
    match (dest, patch) {
        (_, Some(Node::Null)) => Ok(None),
        (Some(d), Some(p)) => {
            if same_scalar_type(&d, &p) {
                Ok(Some(p))
            } else {
                Err("a strategic-merge patch changing a field's type".into())
            }
        }
        (None, p) => Ok(p),
        (d, None) => Ok(d),
    }
}

/// `walkMap` with `Merger.VisitMap`.
fn walk_map(
    dest: Option<Node>,
    patch: Option<Node>,
    schema: Option<Schema<'_>>,
    schemas: SchemaSet<'_>,
) -> Result<Option<Node>, crate::Unsupported> {
    let mut patch = match patch {
        Some(Node::Map(m)) => Some(m),
        Some(Node::Null) => {
            // A null patch clears the field (a dest without the field stays without it).
            return Ok(None);
        }
        None => None,
        Some(_) => return Err("a strategic-merge patch changing a field's type".into()),
    };
    let directive = match &mut patch {
        Some(p) => take_map_directive(p)?,
        None => Directive::Merge,
    };
    let mut dest = match dest {
        Some(Node::Map(m)) => match directive {
            Directive::Delete => return Ok(None),
            Directive::Replace => patch.clone().unwrap_or_default(),
            Directive::Merge => m,
        },
        None | Some(Node::Null) => {
            if directive == Directive::Delete {
                return Ok(None);
            }
            match &patch {
                Some(p) => p.clone(),
                // A null the patch does not name is kept (`MakePersistentNullNode`; the
                // caller made sure none is written as nothing).
                None => return Ok(dest),
            }
        }
        Some(_) => return Err("a strategic-merge patch changing a field's type".into()),
    };
    let mut keys: Vec<String> = dest.0.iter().map(|(k, _)| k.clone()).collect();
    if let Some(p) = &patch {
        for (k, _) in &p.0 {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys.sort();
    for key in keys {
        let child = schema.and_then(|s| s.field(&key));
        let d = dest.get(&key).cloned();
        let p = patch.as_ref().and_then(|p| p.get(&key)).cloned();
        match walk(d, p, child, schemas)? {
            // `FieldSetter`: no value (a patch's null among them) clears the field; a null
            // the dest keeps is kept.
            None => {
                dest.remove(&key);
            }
            Some(v) => dest.insert(&key, v),
        }
    }
    Ok(Some(Node::Map(dest)))
}

/// The text kyaml compares a merge key by (`ElementValuesList`): a string as it is, an
/// integer as written (taken to be its decimal form).
fn key_text(n: &Node) -> Option<String> {
    match n {
        Node::Str(s) => Some(s.clone()),
        Node::Int(i) => Some(i.to_string()),
        Node::Uint(u) => Some(u.to_string()),
        _ => None,
    }
}

/// `walkNonAssociativeSequence` and `walkAssociativeSequence` with `Merger.VisitList`.
fn walk_list(
    dest: Option<Node>,
    patch: Option<Node>,
    schema: Option<Schema<'_>>,
    schemas: SchemaSet<'_>,
) -> Result<Option<Node>, crate::Unsupported> {
    let keys = schema.and_then(Schema::merge_keys);
    let Some(keys) = keys else {
        // Not associative: the patch's list (as written) replaces the field.
        return Ok(match patch {
            Some(Node::Null) => None,
            Some(p) => Some(p),
            None => dest,
        });
    };
    let elements = schema.and_then(Schema::elements);
    let mut patch_items = match patch {
        Some(Node::Seq(items)) => Some(items),
        Some(Node::Null) => return Ok(None),
        None => None,
        Some(_) => return Err("a strategic-merge patch changing a field's type".into()),
    };
    let mut dest_items = match dest {
        Some(Node::Seq(items)) => items,
        None | Some(Node::Null) => match &patch_items {
            // VisitList: the patch list as it is (directives not read).
            Some(p) => p.clone(),
            None => return Ok(None),
        },
        Some(_) => return Err("a strategic-merge patch changing a field's type".into()),
    };
    if let Some(p) = &mut patch_items {
        match take_list_directive(p)? {
            Directive::Delete => return Ok(None),
            Directive::Replace => dest_items.clone_from(p),
            Directive::Merge => {}
        }
    }
    if keys.is_empty() {
        return merge_primitive_list(dest_items, patch_items.unwrap_or_default()).map(Some);
    }
    merge_keyed_list(
        dest_items,
        &patch_items.unwrap_or_default(),
        &keys,
        elements,
        schemas,
    )
    .map(Some)
}

/// A primitive list that merges (`finalizers`): the patch's values, then the dest's not in
/// it, each once.
fn merge_primitive_list(dest: Vec<Node>, patch: Vec<Node>) -> Result<Node, crate::Unsupported> {
    let mut out: Vec<Node> = Vec::new();
    for item in patch.into_iter().chain(dest) {
        if !matches!(item, Node::Str(_)) {
            return Err("a merged primitive list with an item that is not a string".into());
        }
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(Node::Seq(out))
}

/// The merge-key values of a list's elements; `Err` for elements this module does not
/// reproduce (no mapping, a key that is not a string or integer, keys only some elements
/// have, repeated keys).
fn element_keys(
    items: &[Node],
    keys: &[String],
) -> Result<Vec<Vec<Option<String>>>, crate::Unsupported> {
    items
        .iter()
        .map(|item| {
            let Node::Map(m) = item else {
                return Err("a merged list with an element that is not a mapping".into());
            };
            keys.iter()
                .map(|k| match m.get(k) {
                    None => Ok(None),
                    Some(v) => key_text(v)
                        .filter(|t| !t.is_empty())
                        .map(Some)
                        .ok_or_else(|| {
                            crate::Unsupported::from("a merge key that is not a string or integer")
                        }),
                })
                .collect()
        })
        .collect()
}

/// An associative list merged by its keys (`setAssociativeSequenceElements` with
/// `MergeOptionsListPrepend`): the patch's elements in its order, then the dest's others in
/// theirs; an element present in both is merged, one whose merge is empty (`$patch: delete`)
/// is removed.
fn merge_keyed_list(
    dest: Vec<Node>,
    patch: &[Node],
    keys: &[String],
    elements: Option<Schema<'_>>,
    schemas: SchemaSet<'_>,
) -> Result<Node, crate::Unsupported> {
    let dk = element_keys(&dest, keys)?;
    let pk = element_keys(patch, keys)?;
    if patch.is_empty() {
        // Nothing to merge: kyaml gives the list back as it is, unless two elements' keys
        // match (`mergeValues`), which it would fold together.
        let folds = dk
            .iter()
            .enumerate()
            .any(|(i, a)| dk[..i].iter().any(|b| keys_match(a, b)));
        if folds && keys.len() > 1 {
            return merge_partial_keys(dest, patch, keys, elements, schemas);
        }
        for (i, a) in dk.iter().enumerate() {
            if a.iter().all(Option::is_none) {
                return Err("a merged list with an element without merge key".into());
            }
            if dk[..i].iter().any(|b| keys_match(a, b)) {
                return Err("a merged list with elements of matching merge keys".into());
            }
        }
        return Ok(Node::Seq(dest));
    }
    // `validateKeys`: only keys some element sets count; each must then be set by every
    // element (kyaml's matching of partial keys is not reproduced).
    let used: Vec<bool> = (0..keys.len())
        .map(|i| dk.iter().chain(&pk).any(|v| v[i].is_some()))
        .collect();
    if !used.iter().any(|u| *u) {
        return Err("a merged list whose elements have no merge key".into());
    }
    let partial = used
        .iter()
        .enumerate()
        .any(|(i, u)| *u && dk.iter().chain(&pk).any(|v| v[i].is_none()));
    if partial && keys.len() > 1 {
        return merge_partial_keys(dest, patch, keys, elements, schemas);
    }
    let composite = |v: &Vec<Option<String>>| -> Result<Vec<String>, crate::Unsupported> {
        v.iter()
            .zip(&used)
            .filter(|(_, u)| **u)
            .map(|(x, _)| {
                x.clone().ok_or_else(|| {
                    crate::Unsupported::from(
                        "a merged list whose elements set different merge keys",
                    )
                })
            })
            .collect()
    };
    let dkeys: Vec<Vec<String>> = dk.iter().map(composite).collect::<Result<_, _>>()?;
    let pkeys: Vec<Vec<String>> = pk.iter().map(composite).collect::<Result<_, _>>()?;
    for list in [&dkeys, &pkeys] {
        for (i, k) in list.iter().enumerate() {
            if list[..i].contains(k) {
                return Err("a merged list with a repeated merge key".into());
            }
        }
    }
    // Single key: `ElementSetter` replaces an element in place, so the patch's come first,
    // then the dest's others. Several keys: `appendListNode` removes each dest element and
    // appends it again, so the patch's new elements come first, then the dest's in its order.
    let several = used.iter().filter(|u| **u).count() > 1;
    let mut order: Vec<Vec<String>> = Vec::new();
    if several {
        order.extend(pkeys.iter().filter(|k| !dkeys.contains(k)).cloned());
        order.extend(dkeys.iter().cloned());
    } else {
        order.extend(pkeys.iter().cloned());
        order.extend(dkeys.iter().filter(|k| !pkeys.contains(k)).cloned());
    }
    let mut out = Vec::new();
    for k in order {
        let d = dkeys.iter().position(|x| *x == k).map(|i| dest[i].clone());
        let p = pkeys.iter().position(|x| *x == k).map(|i| patch[i].clone());
        let merged = walk_map(d, p, elements, schemas)?;
        match merged {
            None | Some(Node::Null) => {}
            Some(Node::Map(m)) if m.is_empty() => {}
            Some(Node::Map(mut m)) => {
                let named: Vec<&String> = keys
                    .iter()
                    .zip(&used)
                    .filter(|(_, u)| **u)
                    .map(|(k, _)| k)
                    .collect();
                for (name, value) in named.into_iter().zip(&k) {
                    if m.get(name).is_none() {
                        // `yaml.NewScalarRNode`: an untagged scalar, read back as plain text.
                        m.insert(name, super::reader::resolve_plain(value)?);
                    }
                }
                out.push(Node::Map(m));
            }
            Some(_) => return Err("a merged list element that is not a mapping".into()),
        }
    }
    Ok(Node::Seq(out))
}

/// The text of a merge-key field as kyaml reads it (`ElementValuesList`): empty when the
/// field is missing; `Err` for values whose text is not reproduced (null, empty, not a
/// scalar).
fn key_field(elem: &Node, key: &str) -> Result<String, crate::Unsupported> {
    let Node::Map(m) = elem else {
        return Err("a merged list with an element that is not a mapping".into());
    };
    match m.get(key) {
        None => Ok(String::new()),
        Some(v) => key_text(v)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| crate::Unsupported::from("a merge key that is not a string or integer")),
    }
}

/// `validateKeys`: the keys some of `lists` sets, and `values` at those keys (all of both
/// when none is set).
fn validate_keys(
    lists: &[Vec<String>],
    values: &[String],
    keys: &[String],
) -> (Vec<String>, Vec<String>) {
    let set: Vec<bool> = (0..keys.len())
        .map(|i| {
            lists
                .iter()
                .any(|v| v.get(i).is_some_and(|x| !x.is_empty()))
        })
        .collect();
    if !set.iter().any(|s| *s) {
        return (keys.to_vec(), values.to_vec());
    }
    let vk = keys
        .iter()
        .zip(&set)
        .filter(|(_, s)| **s)
        .map(|(k, _)| k.clone())
        .collect();
    let vv = values
        .iter()
        .zip(&set)
        .filter(|(_, s)| **s)
        .map(|(v, _)| v.clone())
        .collect();
    (vk, vv)
}

/// `ElementSetter` with the element `idx`: every item matching `keys` = `values` is replaced
/// by it, else it is appended.
fn set_element(
    arena: &[Node],
    items: &mut Vec<usize>,
    keys: &[String],
    values: &[String],
    idx: usize,
) -> Result<(), crate::Unsupported> {
    let mut found = false;
    for slot in items.iter_mut() {
        if setter_matches(&arena[*slot], keys, values)? {
            *slot = idx;
            found = true;
        }
    }
    if !found {
        items.push(idx);
    }
    Ok(())
}

/// `FieldMatcher` as `ElementSetter` runs it: an empty value asks only that the field be
/// there.
fn setter_matches(
    elem: &Node,
    keys: &[String],
    values: &[String],
) -> Result<bool, crate::Unsupported> {
    let Node::Map(m) = elem else {
        return Err("a merged list with an element that is not a mapping".into());
    };
    for (k, v) in keys.iter().zip(values) {
        match m.get(k) {
            None => return Ok(false),
            Some(field) if !v.is_empty() => {
                if key_text(field).as_deref() != Some(v.as_str()) {
                    return Ok(false);
                }
            }
            Some(_) => {}
        }
    }
    Ok(true)
}

/// `MatchElementList` (`ElementMatcher` with `MatchField`): every key's field there with
/// that text.
fn element_matches(elem: &Node, keys: &[String], values: &[String]) -> bool {
    let Node::Map(m) = elem else { return false };
    keys.iter()
        .zip(values)
        .all(|(k, v)| m.get(k).and_then(key_text).as_deref() == Some(v.as_str()))
}

/// `setAssociativeSequenceElements` (Prepend) step by step for a list whose elements set
/// only some of its several merge keys (a Service port without `protocol` against ports
/// with it): kyaml fills a missing key from an element whose other keys agree
/// (`mergeValues`) and then matches elements by the filled keys, so such a patch element
/// may find no partner and be dropped, as kustomize does.
#[allow(
    clippy::too_many_lines,
    reason = "one pass per step of setAssociativeSequenceElements and appendListNode"
)]
fn merge_partial_keys(
    dest: Vec<Node>,
    patch: &[Node],
    keys: &[String],
    elements: Option<Schema<'_>>,
    schemas: SchemaSet<'_>,
) -> Result<Node, crate::Unsupported> {
    for e in patch {
        if e.as_map().is_some_and(|m| m.get(DIRECTIVE).is_some()) {
            return Err("a `$patch` directive in a list with several merge keys".into());
        }
    }
    // The dest's elements live in an arena: kyaml merges a dest element in place, and the
    // lists below hold the same element.
    let mut arena: Vec<Node> = dest;
    let mut dest_list: Vec<usize> = (0..arena.len()).collect();
    let values_of = |e: &Node| -> Result<Vec<String>, crate::Unsupported> {
        keys.iter().map(|k| key_field(e, k)).collect()
    };
    let mut vl: Vec<Vec<String>> = Vec::new();
    for e in patch.iter().chain(arena.iter()) {
        let v = values_of(e)?;
        if !vl.contains(&v) {
            vl.push(v);
        }
    }
    // `mergeValues`.
    for i in 0..vl.len() {
        for j in 0..vl.len() {
            let (a, b) = (&vl[i], &vl[j]);
            let mut common = false;
            let mut merged = Vec::new();
            let mut ok = true;
            for (x, y) in a.iter().zip(b) {
                if x == y {
                    common = true;
                    merged.push(x.clone());
                } else if !x.is_empty() && !y.is_empty() {
                    ok = false;
                    break;
                } else if x.is_empty() {
                    merged.push(y.clone());
                } else {
                    merged.push(x.clone());
                }
            }
            if ok && common {
                vl[i].clone_from(&merged);
                vl[j] = merged;
            }
        }
    }
    let mut items: Vec<usize> = Vec::new();
    let mut last_keys: Vec<String> = keys.to_vec();
    for values in vl.clone() {
        let (vk, vv) = validate_keys(&vl, &values, keys);
        last_keys.clone_from(&vk);
        let (mk, mv) = validate_keys(std::slice::from_ref(&vv), &vv, &vk);
        if mv.iter().any(String::is_empty) {
            return Err("a merged list element matched by an empty key".into());
        }
        let d = dest_list
            .iter()
            .copied()
            .find(|&d| element_matches(&arena[d], &mk, &mv));
        let p = patch.iter().find(|e| element_matches(e, &mk, &mv)).cloned();
        let merged = walk_map(d.map(|d| arena[d].clone()), p, elements, schemas)?;
        let mut val = match merged {
            None | Some(Node::Null) => None,
            Some(Node::Map(m)) if m.is_empty() => None,
            Some(Node::Map(m)) => Some(m),
            Some(_) => return Err("a merged list element that is not a mapping".into()),
        };
        let Some(val) = val.as_mut() else {
            // `ElementSetter` without an element: the matching dest elements go.
            let mut kept = Vec::new();
            for &d in &dest_list {
                if !setter_matches(&arena[d], &vk, &vv)? {
                    kept.push(d);
                }
            }
            dest_list = kept;
            continue;
        };
        for (k, v) in vk.iter().zip(&vv) {
            if val.get(k).is_none() && !v.is_empty() {
                val.insert(k, super::reader::resolve_plain(v)?);
            }
        }
        let idx = if let Some(d) = d {
            arena[d] = Node::Map(val.clone());
            d
        } else {
            arena.push(Node::Map(val.clone()));
            arena.len() - 1
        };
        set_element(&arena, &mut items, &vk, &vv, idx)?;
    }
    if vl.is_empty() {
        return Ok(Node::Seq(
            dest_list.into_iter().map(|d| arena[d].clone()).collect(),
        ));
    }
    // `appendListNode(items, dest, validKeys)`: an element without one of the keys is
    // appended once per missing key, and matched by the values it has (those of the first
    // keys, as `ElementSetter` pairs them).
    for &d in &dest_list {
        let Node::Map(m) = &arena[d] else {
            return Err("a merged list with an element that is not a mapping".into());
        };
        let mut v = Vec::new();
        for k in &last_keys {
            match m.get(k) {
                None => items.push(d),
                Some(field) => v
                    .push(key_text(field).ok_or_else(|| {
                        "a merge key that is not a string or integer".to_string()
                    })?),
            }
        }
        if v.is_empty() {
            return Err("a merged list element without any of its merge keys".into());
        }
        if last_keys.len() > 1 {
            let mut kept = Vec::new();
            for &i in &items {
                if !setter_matches(&arena[i], &last_keys, &v)? {
                    kept.push(i);
                }
            }
            items = kept;
        }
        set_element(&arena, &mut items, &last_keys, &v, d)?;
    }
    Ok(Node::Seq(
        items.into_iter().map(|i| arena[i].clone()).collect(),
    ))
}

/// kyaml's `match` of two key-value lists: no position set differently on both sides, and
/// at least one equal.
fn keys_match(a: &[Option<String>], b: &[Option<String>]) -> bool {
    let mut common = false;
    for (x, y) in a.iter().zip(b) {
        match (x, y) {
            (Some(x), Some(y)) if x == y => common = true,
            (None, None) => common = true,
            (Some(_), Some(_)) => return false,
            _ => {}
        }
    }
    common
}

fn same_scalar_type(a: &Node, b: &Node) -> bool {
    matches!(
        (a, b),
        (Node::Str(_), Node::Str(_))
            | (Node::Bool(_), Node::Bool(_))
            | (Node::Int(_) | Node::Uint(_), Node::Int(_) | Node::Uint(_))
            | (Node::Float(_), Node::Float(_))
    )
}

enum OpError {
    Unsupported(String),
    Failed(String),
}

fn failed(s: &str) -> OpError {
    OpError::Failed(s.to_string())
}

/// Splits a JSON pointer (`/a/b~1c`) into its tokens.
fn pointer(path: &str) -> Result<Vec<String>, OpError> {
    if path.is_empty() {
        return Err(OpError::Unsupported(
            "a JSON 6902 operation on the root".into(),
        ));
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(failed("a JSON pointer must start with /"));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn parent_mut<'n>(root: &'n mut Node, tokens: &[String]) -> Result<&'n mut Node, OpError> {
    let mut n = root;
    for t in tokens {
        n = match n {
            Node::Map(m) => m.get_mut(t).ok_or_else(|| failed("missing path"))?,
            Node::Seq(items) => {
                let i = index(t, items.len(), false)?;
                items
                    .get_mut(i)
                    .ok_or_else(|| failed("index out of range"))?
            }
            _ => return Err(failed("path through a scalar")),
        };
    }
    Ok(n)
}

fn index(token: &str, len: usize, allow_end: bool) -> Result<usize, OpError> {
    if token == "-" && allow_end {
        return Ok(len);
    }
    if token.is_empty()
        || !token.bytes().all(|c| c.is_ascii_digit())
        || (token.len() > 1 && token.starts_with('0'))
    {
        return Err(OpError::Unsupported(format!(
            "the JSON pointer index `{token}`"
        )));
    }
    let i: usize = token.parse().map_err(|_| failed("bad index"))?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if i > max || (!allow_end && len == 0) {
        return Err(failed("index out of range"));
    }
    Ok(i)
}

fn get<'n>(root: &'n Node, tokens: &[String]) -> Result<&'n Node, OpError> {
    let mut n = root;
    for t in tokens {
        n = match n {
            Node::Map(m) => m.get(t).ok_or_else(|| failed("missing path"))?,
            Node::Seq(items) => items
                .get(index(t, items.len(), false)?)
                .ok_or_else(|| failed("index out of range"))?,
            _ => return Err(failed("path through a scalar")),
        };
    }
    Ok(n)
}

fn add(root: &mut Node, tokens: &[String], value: Node) -> Result<(), OpError> {
    let (last, parents) = tokens.split_last().ok_or_else(|| failed("empty path"))?;
    match parent_mut(root, parents)? {
        Node::Map(m) => {
            m.insert(last, value);
            Ok(())
        }
        Node::Seq(items) => {
            let i = index(last, items.len(), true)?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err(failed("add to a scalar")),
    }
}

fn remove(root: &mut Node, tokens: &[String]) -> Result<Node, OpError> {
    let (last, parents) = tokens.split_last().ok_or_else(|| failed("empty path"))?;
    match parent_mut(root, parents)? {
        Node::Map(m) => m.remove(last).ok_or_else(|| failed("missing key")),
        Node::Seq(items) => {
            let i = index(last, items.len(), false)?;
            Ok(items.remove(i))
        }
        _ => Err(failed("remove from a scalar")),
    }
}

/// One JSON 6902 operation, as evanphx/json-patch v4 applies it: no parent is created, but
/// `replace` of a missing object key sets it (`partialDoc.get` finds nothing without error).
/// During a build every resource carries kustomize's internal annotations, so
/// `metadata.annotations` exists even when the file has none.
fn apply_op(root: &mut Node, op: &Node) -> Result<(), OpError> {
    let Node::Map(m) = op else {
        return Err(failed("an operation that is not an object"));
    };
    let kind = m
        .get("op")
        .and_then(Node::as_str)
        .ok_or_else(|| failed("missing op"))?;
    let path = m
        .get("path")
        .and_then(Node::as_str)
        .ok_or_else(|| failed("missing path"))?;
    let tokens = pointer(path)?;
    let value = || {
        m.get("value")
            .cloned()
            .ok_or_else(|| failed("missing value"))
    };
    let touches_annotations =
        |t: &[String]| t.len() >= 2 && t[0] == "metadata" && t[1] == "annotations";
    if touches_annotations(&tokens) {
        if !matches!(kind, "add" | "replace" | "remove") || tokens.len() == 2 && kind != "remove" {
            return Err(OpError::Unsupported(
                "a JSON 6902 operation on metadata.annotations as a whole".into(),
            ));
        }
        if let Some(Node::Map(meta)) = root.as_map_mut().and_then(|r| r.get_mut("metadata")) {
            if meta.get("annotations").is_none() && tokens.len() > 2 {
                meta.0
                    .push(("annotations".into(), Node::Map(Map::default())));
            }
        }
    }
    match kind {
        "add" => add(root, &tokens, value()?),
        "remove" => {
            if tokens.len() == 2 && touches_annotations(&tokens) {
                // The internal annotations make it exist; removing it drops the user's too.
                if let Some(Node::Map(meta)) = root.as_map_mut().and_then(|r| r.get_mut("metadata"))
                {
                    meta.remove("annotations");
                }
                return Ok(());
            }
            remove(root, &tokens).map(|_| ())
        }
        "replace" => {
            let v = value()?;
            let (last, parents) = tokens.split_last().ok_or_else(|| failed("empty path"))?;
            match parent_mut(root, parents)? {
                Node::Map(pm) => {
                    pm.insert(last, v);
                    Ok(())
                }
                Node::Seq(items) => {
                    let i = index(last, items.len(), false)?;
                    items[i] = v;
                    Ok(())
                }
                _ => Err(failed("replace in a scalar")),
            }
        }
        "move" | "copy" => {
            let from = m
                .get("from")
                .and_then(Node::as_str)
                .ok_or_else(|| failed("missing from"))?;
            let from = pointer(from)?;
            if touches_annotations(&from) {
                return Err(OpError::Unsupported(
                    "a JSON 6902 move or copy from metadata.annotations".into(),
                ));
            }
            // A missing source key reads as nothing in v4: not reproduced.
            let v = get(root, &from)
                .map_err(|_| {
                    OpError::Unsupported("a JSON 6902 move or copy from a missing path".into())
                })?
                .clone();
            if kind == "move" {
                remove(root, &from)?;
            }
            add(root, &tokens, v)
        }
        "test" => Err(OpError::Unsupported("a JSON 6902 test operation".into())),
        other => Err(failed(&format!("unknown op {other}"))),
    }
}
