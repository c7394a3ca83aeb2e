//! Strategic merge as kustomize runs it: kyaml's `merge2` walk (`kyaml/yaml/merge2`,
//! `kyaml/yaml/walk`) with the `$patch` directives, lists merged by the keys of the OpenAPI
//! schemas and replaced where they have none.

use crate::node::{Map, Node};
use crate::openapi::{Schema, SchemaSet};

/// Patch content this module does not reproduce: a `$patch` directive on the whole object
/// (it deletes or replaces the resource), and directives or nulls on `metadata` or all of
/// `metadata.annotations`, which hold kustomize's own annotations while it builds.
pub(super) fn check_patch(node: &Node) -> Result<(), crate::Unsupported> {
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
pub(super) fn schema_of<'s>(
    nodes: [Option<&Node>; 2],
    schemas: SchemaSet<'s>,
) -> Option<Schema<'s>> {
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
/// OpenAPI schemas ([`crate::openapi`]) and replaced where they have none.
pub(super) fn merge(
    dest: &mut Node,
    patch: &Node,
    schemas: SchemaSet<'_>,
) -> Result<(), crate::Unsupported> {
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
                        m.insert(name, crate::reader::resolve_plain(value)?);
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
                val.insert(k, crate::reader::resolve_plain(v)?);
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
