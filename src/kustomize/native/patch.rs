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
use super::reader::{read_documents, ReadError};
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
        let json = crate::goyaml::yaml_json::yaml_to_json(&spec.text)
            .map_err(|e| NativeError::Failed(format!("patch {}: {e}", spec.origin)))?;
        let value: serde_json::Value = serde_json::from_str(&json)
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
            if spec.kind == PatchKind::Any {
                r.store_previous_id().map_err(|e| match e {
                    NativeError::Unsupported { feature, .. } => unsupported(&feature),
                    other @ NativeError::Failed(_) => other,
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
                other @ NativeError::Failed(_) => other,
            })?
        };
        for i in targets {
            let r = &mut resources[i];
            if r.needs_hash {
                return Err(unsupported(
                    "a patch on a generated resource with a hash suffix",
                ));
            }
            let builtin = is_builtin_group(&r.gvk().group);
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
            merge(&mut r.node, &p, builtin).map_err(|w| unsupported(&w))?;
        }
    }
    Ok(())
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
    )?;
    let mut found = Vec::new();
    for (i, r) in resources.iter().enumerate() {
        let gvk = r.gvk();
        if gvk.group != patch_gvk.group || gvk.version != patch_gvk.version {
            continue;
        }
        let current = gvk.kind == kind && r.name() == name && r.effective_namespace()? == ns;
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

/// Kubernetes API groups (kyaml's schema knows their merge keys and list strategies).
fn is_builtin_group(group: &str) -> bool {
    group.is_empty() || !group.contains('.') || group.ends_with(".k8s.io")
}

/// Patch content this module does not reproduce.
fn check_patch(node: &Node) -> Result<(), String> {
    match node {
        Node::Map(m) => {
            if m.is_empty() {
                return Err("an empty mapping in a strategic-merge patch".into());
            }
            for (k, v) in &m.0 {
                if k.starts_with('$') {
                    return Err(format!("the `{k}` directive"));
                }
                check_patch(v)?;
            }
            Ok(())
        }
        Node::Seq(items) => {
            if items.is_empty() {
                return Err("an empty list in a strategic-merge patch".into());
            }
            items.iter().try_for_each(check_patch)
        }
        _ => Ok(()),
    }
}

/// kyaml's `AssociativeSequenceKeys` (`kyaml/yaml/fns.go`).
const ASSOCIATIVE_KEYS: [&str; 7] = [
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
];

fn has_associative_elements(items: &[Node]) -> bool {
    items.iter().any(|i| {
        i.as_map()
            .is_some_and(|m| ASSOCIATIVE_KEYS.iter().any(|k| m.get(k).is_some()))
    })
}

/// Recursive strategic merge of `patch` into `dest` (maps only; see the module doc).
fn merge(dest: &mut Node, patch: &Node, builtin: bool) -> Result<(), String> {
    let (Node::Map(d), Node::Map(p)) = (&mut *dest, patch) else {
        return Err("a strategic-merge patch that is not a mapping".into());
    };
    for (k, pv) in &p.0 {
        match pv {
            Node::Null => {
                d.remove(k);
            }
            Node::Map(_) => match d.get_mut(k) {
                Some(dv @ Node::Map(_)) => merge(dv, pv, builtin)?,
                Some(Node::Null) | None => {
                    if contains_seq(pv) && builtin {
                        return Err("a strategic-merge patch with lists on a built-in kind".into());
                    }
                    check_new_lists(pv)?;
                    d.insert(k, strip_nulls(pv));
                }
                Some(_) => return Err("a strategic-merge patch changing a field's type".into()),
            },
            Node::Seq(items) => {
                if builtin {
                    return Err("a strategic-merge patch with lists on a built-in kind".into());
                }
                let dest_items = match d.get(k) {
                    Some(Node::Seq(di)) => di.as_slice(),
                    Some(Node::Null) | None => &[],
                    Some(_) => return Err("a strategic-merge patch changing a field's type".into()),
                };
                if has_associative_elements(items) || has_associative_elements(dest_items) {
                    return Err("a strategic-merge patch on a list with merge keys".into());
                }
                check_new_lists(pv)?;
                d.insert(k, strip_nulls(pv));
            }
            // kyaml's merge copies a scalar's value into the existing node, which keeps its
            // tag (`a: "x"` patched with `a: 1` prints `a: "1"`): only same-typed scalars
            // are reproduced.
            scalar => match d.get(k) {
                None => d.insert(k, scalar.clone()),
                Some(old) if same_scalar_type(old, scalar) => d.insert(k, scalar.clone()),
                Some(_) => return Err("a strategic-merge patch changing a field's type".into()),
            },
        }
    }
    Ok(())
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

fn contains_seq(n: &Node) -> bool {
    match n {
        Node::Seq(_) => true,
        Node::Map(m) => m.0.iter().any(|(_, v)| contains_seq(v)),
        _ => false,
    }
}

/// Lists copied in whole must not hold what kyaml would merge element-wise.
fn check_new_lists(n: &Node) -> Result<(), String> {
    match n {
        Node::Seq(items) => {
            if has_associative_elements(items) {
                return Err("a strategic-merge patch on a list with merge keys".into());
            }
            items.iter().try_for_each(check_new_lists)
        }
        Node::Map(m) => m.0.iter().try_for_each(|(_, v)| check_new_lists(v)),
        _ => Ok(()),
    }
}

/// A new subtree from a patch: kyaml drops `null` fields of it.
fn strip_nulls(n: &Node) -> Node {
    match n {
        Node::Map(m) => Node::Map(Map(m
            .0
            .iter()
            .filter(|(_, v)| *v != Node::Null)
            .map(|(k, v)| (k.clone(), strip_nulls(v)))
            .collect())),
        other => other.clone(),
    }
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
