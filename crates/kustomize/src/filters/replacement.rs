//! `replacements:` (`api/filters/replacement/replacement.go`, the last of the built-in
//! transformers): copy a value read from one object (or `sourceValue`) into fields of the
//! objects the targets select.
//!
//! kyaml copies only the text of a scalar into a scalar target, which keeps its tag: the
//! native builder reproduces that where the result is certain (a string into a string, a
//! number text into a number, a value into a field of its own type, a new field resolved as
//! a plain scalar) and delegates the rest (a number's original text, which is not kept here;
//! a path through a scalar holding YAML or JSON, which kustomize edits in place).

use regex::Regex;

use crate::kustfile::{FieldOptions, Replacement, SourceSelector, TargetSelector};
use crate::node::{Map, Node};
use crate::reader::resolve_plain;
use crate::resource::{PrevId, Resource};
use crate::selector::SelectorRegex;
use crate::NativeError;

/// Why a replacement is not applied here.
enum Problem {
    Unsupported(String),
    Failed(String),
}

fn unsupported(w: impl Into<String>) -> Problem {
    Problem::Unsupported(w.into())
}

fn failed(w: impl Into<String>) -> Problem {
    Problem::Failed(w.into())
}

/// Applies the replacements of one kustomization, in order.
pub(crate) fn apply_replacements(
    resources: &mut [Resource],
    replacements: &[Replacement],
    file: &str,
) -> Result<(), NativeError> {
    for r in replacements {
        apply_one(resources, r).map_err(|p| match p {
            Problem::Unsupported(w) => {
                NativeError::unsupported(&format!("{w} (replacements, {})", r.origin), file)
            }
            Problem::Failed(w) => NativeError::Failed(format!("{file}: replacements: {w}")),
        })?;
    }
    Ok(())
}

/// A value to copy, as kyaml holds it.
struct Value {
    node: Node,
    /// The scalar's text when it is known (`None` for a number or boolean read from a file,
    /// whose written form is not kept).
    text: Option<String>,
    /// `sourceValue` makes an untagged scalar (`yaml.NewScalarRNode`).
    untagged: bool,
}

fn apply_one(resources: &mut [Resource], r: &Replacement) -> Result<(), Problem> {
    if r.targets.is_empty() {
        return Err(failed(
            "replacements must specify a source and at least one target",
        ));
    }
    let value = match (&r.source, &r.source_value) {
        (Some(_), Some(_)) => {
            return Err(failed(
                "value and resource selectors are mutually exclusive",
            ))
        }
        (None, None) => {
            return Err(failed(
                "replacements must specify a source and at least one target",
            ))
        }
        (None, Some(v)) => Value {
            node: Node::Str(v.clone()),
            text: Some(v.clone()),
            untagged: true,
        },
        (Some(source), None) => source_value(resources, source)?,
    };
    for target in &r.targets {
        apply_target(resources, &value, target)?;
    }
    Ok(())
}

/// Every id of a resource (`utils.MakeResIds`): the current one with its namespace as
/// written, then its previous ones with their effective namespaces.
fn ids(r: &Resource) -> Vec<PrevId> {
    let mut out = vec![PrevId {
        kind: r.kind().to_string(),
        name: r.name().to_string(),
        namespace: Some(r.namespace().to_string()),
    }];
    out.extend(r.prev_ids.iter().cloned());
    out
}

/// `ResId.IsSelectedBy` of a source selector: each field set must equal the id's (the
/// namespace compared as an effective one).
fn source_selects(r: &Resource, id: &PrevId, s: &SourceSelector) -> Result<bool, Problem> {
    let gvk = r.gvk();
    if !(s.group.is_empty() || s.group == gvk.group)
        || !(s.version.is_empty() || s.version == gvk.version)
        || !(s.kind.is_empty() || s.kind == id.kind)
        || !(s.name.is_empty() || s.name == id.name)
    {
        return Ok(false);
    }
    if s.namespace.is_empty() {
        return Ok(true);
    }
    let id_gvk = crate::resource::Gvk {
        kind: id.kind.clone(),
        ..gvk
    };
    let effective = |ns: &str| crate::resource::effective_namespace(&id_gvk, ns);
    let mine = effective(
        id.namespace
            .as_deref()
            .ok_or_else(|| unsupported("a source namespace on a kind of unknown scope"))?,
    );
    Ok(effective(&s.namespace) == mine)
}

fn source_value(resources: &[Resource], s: &SourceSelector) -> Result<Value, Problem> {
    let mut found = None;
    for r in resources {
        let mut hit = false;
        for id in ids(r) {
            if source_selects(r, &id, s)? {
                hit = true;
                break;
            }
        }
        if hit {
            if found.is_some() {
                return Err(failed("multiple matches for the replacement source"));
            }
            found = Some(r);
        }
    }
    let Some(r) = found else {
        return Err(failed("nothing selected by the replacement source"));
    };
    let field_path = if s.field_path.is_empty() {
        "metadata.name"
    } else {
        &s.field_path
    };
    let parts = split_path(field_path)?;
    check_metadata_path(&parts)?;
    let node = lookup(&r.node, &parts)?.ok_or_else(|| {
        failed(format!(
            "fieldPath `{field_path}` is missing for replacement source"
        ))
    })?;
    let empty = match node {
        Node::Null => true,
        Node::Map(m) => m.is_empty(),
        Node::Seq(s) => s.is_empty(),
        _ => false,
    };
    if empty {
        // kustomize fails on a missing or empty source (`IsNilOrEmpty`); whether an empty
        // collection counts is left to it.
        return Err(unsupported("an empty or null replacement source"));
    }
    let mut value = Value {
        text: match node {
            Node::Str(t) => Some(t.clone()),
            _ => None,
        },
        node: node.clone(),
        untagged: false,
    };
    if !s.options.delimiter.is_empty() {
        let Some(text) = &value.text else {
            return Err(unsupported(
                "a source delimiter on a value that is not a string",
            ));
        };
        let pieces: Vec<&str> = text.split(s.options.delimiter.as_str()).collect();
        let piece = usize::try_from(s.options.index)
            .ok()
            .and_then(|i| pieces.get(i))
            .ok_or_else(|| {
                failed(format!(
                    "options.index {} is out of bounds",
                    s.options.index
                ))
            })?;
        value = Value {
            node: Node::Str((*piece).to_string()),
            text: Some((*piece).to_string()),
            untagged: false,
        };
    }
    Ok(value)
}

/// The parts of a field path (`kyaml/utils.SmarterPathSplitter`): split at dots outside
/// `[...]`. Escapes and unbalanced brackets are left to kustomize.
fn split_path(path: &str) -> Result<Vec<String>, Problem> {
    if path.contains('\\') || path.contains('\'') || path.contains('"') {
        return Err(unsupported(format!("the field path `{path}`")));
    }
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| unsupported(format!("the field path `{path}`")))?;
                cur.push(c);
            }
            '.' if depth == 0 => parts.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if depth != 0 {
        return Err(unsupported(format!("the field path `{path}`")));
    }
    parts.push(cur);
    // `cleanPath`: blank parts are dropped (trimmed).
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    for p in &parts {
        let bracketed = p.starts_with('[') && p.ends_with(']');
        if (p.contains('[') || p.contains(']')) && !bracketed {
            return Err(unsupported(format!("the field path `{path}`")));
        }
        if bracketed && !p.contains('=') {
            return Err(unsupported(format!("the field path `{path}`")));
        }
        // Go's Atoi takes signs and leading zeros: only plain indexes are reproduced.
        if (p.starts_with(['+', '-']) && p != "-")
            || (p.len() > 1 && p.starts_with('0') && is_index(&p[1..]))
        {
            return Err(unsupported(format!("the field path `{path}`")));
        }
    }
    if parts.is_empty() {
        return Err(unsupported(format!("the field path `{path}`")));
    }
    Ok(parts)
}

fn is_index(p: &str) -> bool {
    !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit())
}

/// kustomize's own annotations are in `metadata.annotations` while it builds: a path
/// copying or replacing the whole map (or `metadata`) is left to it.
fn check_metadata_path(parts: &[String]) -> Result<(), Problem> {
    let whole = match parts {
        [m] => m == "metadata" || m == "*",
        [m, a] => m == "metadata" && (a == "annotations" || a == "*"),
        _ => false,
    };
    if whole || parts.first().is_some_and(|p| p == "*") {
        return Err(unsupported("a field path over all of metadata.annotations"));
    }
    Ok(())
}

/// A string scalar as go-yaml prints it unquoted, so that kyaml's match against its YAML
/// text is a match against the string itself.
fn plain_text(n: &Node) -> Option<&str> {
    let Node::Str(s) = n else { return None };
    let first_ok = s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric);
    // No blanks (so no `: ` or ` #`), no flow or quote indicators, no `:` at the end.
    let chars_ok = s.bytes().all(|c| {
        c.is_ascii_alphanumeric()
            || matches!(c, b'-' | b'_' | b'.' | b'/' | b':' | b'@' | b'+' | b'=')
    }) && !s.ends_with(':');
    let stays_string = matches!(resolve_plain(s), Ok(Node::Str(_)))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    (first_ok && chars_ok && stays_string).then_some(s.as_str())
}

/// `yaml.Lookup` (`PathGetter`) without create: fields, exact `[key=value]` element
/// matches, indexes and `-` (the last element).
fn lookup<'n>(root: &'n Node, parts: &[String]) -> Result<Option<&'n Node>, Problem> {
    let mut n = root;
    for part in parts {
        n = match n {
            _ if part == "*" => return Err(unsupported("a wildcard in a replacement source")),
            Node::Seq(items) if is_index(part) => {
                let i: usize = part.parse().map_err(|_| unsupported("an index"))?;
                match items.get(i) {
                    Some(x) => x,
                    None => return Ok(None),
                }
            }
            Node::Seq(items) if part == "-" => match items.last() {
                Some(x) => x,
                None => return Err(unsupported("`-` on an empty list")),
            },
            Node::Seq(items) if part.starts_with('[') => {
                let (key, value) = part[1..part.len() - 1]
                    .split_once('=')
                    .ok_or_else(|| unsupported("a list match without ="))?;
                let mut hit = None;
                for item in items {
                    let field = if key.is_empty() {
                        Some(item)
                    } else {
                        item.as_map().and_then(|m| m.get(key))
                    };
                    match field {
                        Some(Node::Str(s)) if s == value => {
                            hit = Some(item);
                            break;
                        }
                        None | Some(Node::Str(_)) => {}
                        Some(_) => {
                            return Err(unsupported(
                                "a list match over a value that is not a string",
                            ))
                        }
                    }
                }
                match hit {
                    Some(x) => x,
                    None => return Ok(None),
                }
            }
            Node::Map(m) if !part.starts_with('[') && !is_index(part) && part != "-" => {
                match m.get(part) {
                    Some(x) => x,
                    None => return Ok(None),
                }
            }
            _ => {
                return Err(unsupported(
                    "a replacement field path through a value of another kind",
                ))
            }
        };
    }
    Ok(Some(n))
}

fn apply_target(
    resources: &mut [Resource],
    value: &Value,
    target: &TargetSelector,
) -> Result<(), Problem> {
    let select = SelectorRegex::new(&target.select).map_err(unsupported)?;
    let rejects: Vec<SelectorRegex> = target
        .reject
        .iter()
        .map(SelectorRegex::new)
        .collect::<Result<_, _>>()
        .map_err(unsupported)?;
    let default_paths = vec!["metadata.name".to_string()];
    let paths = if target.field_paths.is_empty() {
        &default_paths
    } else {
        &target.field_paths
    };
    let mut parsed = Vec::new();
    for p in paths {
        let parts = split_path(p)?;
        check_metadata_path(&parts)?;
        parsed.push((p.clone(), parts));
    }
    for r in resources.iter_mut() {
        // `selectByAnnoAndLabel`, then `RejectsAny`, then `Selects` over every id.
        if !select.match_meta(r).map_err(unsupported)? {
            continue;
        }
        let mut rejected = false;
        for rej in rejects.iter().filter(|x| !x.meta_is_empty()) {
            if rej.match_meta(r).map_err(unsupported)? {
                rejected = true;
            }
        }
        if rejected {
            continue;
        }
        let all = ids(r);
        let gvk = r.gvk();
        let id_matches = |s: &SelectorRegex, id: &PrevId| -> Result<bool, Problem> {
            let id_gvk = crate::resource::Gvk {
                kind: id.kind.clone(),
                ..gvk.clone()
            };
            Ok(s.match_gvk(&id_gvk)
                && s.match_name(&id.name)
                && s.match_namespace(id.namespace.as_deref())
                    .map_err(unsupported)?)
        };
        for rej in rejects.iter().filter(|x| !x.id_is_empty()) {
            for id in &all {
                if id_matches(rej, id)? {
                    rejected = true;
                }
            }
        }
        if rejected {
            continue;
        }
        let mut selected = false;
        for id in &all {
            if id_matches(&select, id)? {
                selected = true;
                break;
            }
        }
        if !selected {
            continue;
        }
        for (shown, parts) in &parsed {
            copy_to_target(r, value, parts, shown, &target.options)?;
        }
    }
    Ok(())
}

/// `copyValueToTarget` for one field path.
fn copy_to_target(
    r: &mut Resource,
    value: &Value,
    parts: &[String],
    shown: &str,
    options: &FieldOptions,
) -> Result<(), Problem> {
    // `setValueInStructuredData` runs first: a path through a scalar edits the YAML or JSON
    // inside it. Not reproduced.
    for i in 1..parts.len() {
        if let Ok(Some(n)) = lookup(&r.node, &parts[..i]) {
            if !matches!(n, Node::Map(_) | Node::Seq(_)) {
                return Err(unsupported(
                    "a replacement into structured data inside a string",
                ));
            }
        }
    }
    let create = options.create;
    let mut slots = Vec::new();
    let mut prefix = Vec::new();
    find_slots(&mut r.node, parts, create, value, &mut prefix, &mut slots)?;
    if slots.is_empty() {
        return Err(failed(format!(
            "unable to find field \"{shown}\" in replacement target"
        )));
    }
    for (path, created) in slots {
        let slot = node_at(&mut r.node, &path).ok_or_else(|| failed("a lost field"))?;
        set_field(slot, created, value, options)?;
    }
    Ok(())
}

/// One step into a node: a mapping key or a list position.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn node_at<'n>(root: &'n mut Node, path: &[Step]) -> Option<&'n mut Node> {
    let mut n = root;
    for s in path {
        n = match (n, s) {
            (Node::Map(m), Step::Key(k)) => m.get_mut(k)?,
            (Node::Seq(items), Step::Index(i)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(n)
}

/// A node kyaml creates for a missing part (`getPathPartKind`): a list before `[...]` or an
/// index, the value's kind at the end, else a mapping. A created scalar has no tag.
fn new_node(next: Option<&String>, value: &Value) -> Node {
    match next {
        Some(p) if p.starts_with('[') || is_index(p) => Node::Seq(Vec::new()),
        Some(_) => Node::Map(Map::default()),
        None => match &value.node {
            Node::Map(_) => Node::Map(Map::default()),
            Node::Seq(_) => Node::Seq(Vec::new()),
            _ => Node::Null,
        },
    }
}

#[allow(
    clippy::too_many_lines,
    reason = "one branch per kind of path part, as PathMatcher.filter dispatches"
)]
/// `PathMatcher` (`kyaml/yaml/match.go`) with its `Create`: collects the paths of the
/// fields a path matches, creating what is missing when asked; a created final scalar is
/// flagged (it has no tag).
fn find_slots(
    n: &mut Node,
    parts: &[String],
    create: bool,
    value: &Value,
    prefix: &mut Vec<Step>,
    out: &mut Vec<(Vec<Step>, bool)>,
) -> Result<(), Problem> {
    let Some((part, rest)) = parts.split_first() else {
        out.push((prefix.clone(), false));
        return Ok(());
    };
    if is_index(part) {
        let Node::Seq(items) = n else {
            return Err(unsupported("an index into a value that is not a list"));
        };
        let i: usize = part.parse().map_err(|_| unsupported("an index"))?;
        if items.len() == i && create {
            if rest.is_empty() {
                return Err(unsupported("a replacement creating a list element"));
            }
            items.push(new_node(rest.first(), value));
        }
        let Some(item) = items.get_mut(i) else {
            return Err(failed(format!(
                "index {i} specified but only {} elements found",
                items.len()
            )));
        };
        prefix.push(Step::Index(i));
        find_slots(item, rest, create, value, prefix, out)?;
        prefix.pop();
        return Ok(());
    }
    if part.starts_with('[') {
        let Node::Seq(items) = n else {
            return Err(unsupported("a list match on a value that is not a list"));
        };
        let (key, pattern) = part[1..part.len() - 1]
            .split_once('=')
            .ok_or_else(|| unsupported("a list match without ="))?;
        if pattern.contains('\\') {
            return Err(unsupported("a list match regex with escapes"));
        }
        // kyaml matches the element's YAML text with the unanchored regular expression.
        let re = Regex::new(pattern).map_err(|_| unsupported("a list match regex"))?;
        let mut matched = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let field = if key.is_empty() {
                Some(item)
            } else {
                match item {
                    Node::Map(m) => m.get(key),
                    _ => None,
                }
            };
            let Some(field) = field else { continue };
            if key.is_empty() && matches!(field, Node::Map(_) | Node::Seq(_)) {
                return Err(unsupported("a primitive list match over collections"));
            }
            if matches!(field, Node::Null) {
                continue;
            }
            let text = plain_text(field).ok_or_else(|| {
                unsupported("a list match over a value whose YAML text is not the string itself")
            })?;
            if re.is_match(text) {
                matched.push(i);
            }
        }
        if matched.is_empty() && create {
            let is_literal = pattern
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'/'));
            if !is_literal || (key.is_empty() && rest.is_empty()) {
                return Err(unsupported("a replacement creating a list element"));
            }
            let created = resolve_plain(pattern).map_err(unsupported)?;
            items.push(if key.is_empty() {
                created
            } else {
                Node::Map(Map(vec![(key.to_string(), created)]))
            });
            matched.push(items.len() - 1);
        }
        for i in matched {
            prefix.push(Step::Index(i));
            find_slots(&mut items[i], rest, create, value, prefix, out)?;
            prefix.pop();
        }
        return Ok(());
    }
    if part == "*" {
        let Node::Seq(items) = n else {
            return Err(unsupported("a wildcard over a value that is not a list"));
        };
        for (i, item) in items.iter_mut().enumerate() {
            prefix.push(Step::Index(i));
            find_slots(item, rest, create, value, prefix, out)?;
            prefix.pop();
        }
        return Ok(());
    }
    if part == "-" {
        return Err(unsupported("`-` in a replacement target path"));
    }
    let Node::Map(m) = n else {
        return Err(unsupported("a field of a value that is not a mapping"));
    };
    let mut created = false;
    if m.get(part).is_none() {
        if !create {
            return Ok(());
        }
        m.0.push((part.clone(), new_node(rest.first(), value)));
        created = rest.is_empty();
    }
    let Some(child) = m.get_mut(part) else {
        return Ok(());
    };
    if !rest.is_empty() && !matches!(child, Node::Map(_) | Node::Seq(_)) {
        return Err(unsupported(
            "a replacement into structured data inside a string",
        ));
    }
    prefix.push(Step::Key(part.clone()));
    if rest.is_empty() {
        out.push((prefix.clone(), created));
    } else {
        find_slots(child, rest, create, value, prefix, out)?;
    }
    prefix.pop();
    Ok(())
}

/// `setFieldValue`: into a scalar only the text goes (the field keeps its tag); anything
/// else is replaced by the value.
fn set_field(
    slot: &mut Node,
    created: bool,
    value: &Value,
    options: &FieldOptions,
) -> Result<(), Problem> {
    let scalar_target = !matches!(slot, Node::Map(_) | Node::Seq(_));
    let mut text = value.text.clone();
    if !options.delimiter.is_empty() {
        let Node::Str(current) = &*slot else {
            return Err(unsupported(
                "a target delimiter on a field that is not a string",
            ));
        };
        let Some(v) = &text else {
            return Err(unsupported(
                "a target delimiter with a value that is not a string",
            ));
        };
        let mut pieces: Vec<String> = current
            .split(options.delimiter.as_str())
            .map(str::to_string)
            .collect();
        match usize::try_from(options.index) {
            Err(_) => pieces.insert(0, v.clone()),
            Ok(i) if i >= pieces.len() => pieces.push(v.clone()),
            Ok(i) => pieces[i].clone_from(v),
        }
        text = Some(pieces.join(&options.delimiter));
    }
    if created && scalar_target {
        // A new untagged scalar: the text is read back as a plain scalar.
        if matches!(value.node, Node::Map(_) | Node::Seq(_)) {
            return Err(unsupported("a collection copied into a new scalar"));
        }
        *slot = match &text {
            Some(t) => resolve_plain(t).map_err(unsupported)?,
            // A number or boolean the reader resolved from plain text: read back as plain
            // text, its written form gives the same value.
            None => value.node.clone(),
        };
        return Ok(());
    }
    if !scalar_target {
        if value.untagged && !matches!(value.node, Node::Map(_) | Node::Seq(_)) {
            // An untagged sourceValue scalar placed as a node resolves as plain text.
            let t = text.unwrap_or_default();
            *slot = resolve_plain(&t).map_err(unsupported)?;
            return Ok(());
        }
        if !options.delimiter.is_empty() {
            return Err(unsupported("a target delimiter on a collection"));
        }
        *slot = value.node.clone();
        return Ok(());
    }
    if matches!(value.node, Node::Map(_) | Node::Seq(_)) {
        return Err(unsupported("a collection copied into a scalar field"));
    }
    let new = match (&*slot, &text) {
        (Node::Str(_), Some(t)) => Node::Str(t.clone()),
        // The same type on both sides: the text decodes to the source's value.
        (old, None) if same_type(old, &value.node) => value.node.clone(),
        (Node::Int(_) | Node::Uint(_), Some(t)) => match resolve_plain(t) {
            Ok(n @ (Node::Int(_) | Node::Uint(_))) => n,
            _ => {
                return Err(unsupported(
                    "a text that is not a number copied into a number",
                ))
            }
        },
        (Node::Bool(_), Some(t)) => match resolve_plain(t) {
            Ok(n @ Node::Bool(_)) => n,
            _ => {
                return Err(unsupported(
                    "a text that is not a boolean copied into a boolean",
                ))
            }
        },
        _ => {
            return Err(unsupported(
                "a replacement whose text or type kustomize would keep otherwise",
            ))
        }
    };
    *slot = new;
    Ok(())
}

fn same_type(a: &Node, b: &Node) -> bool {
    matches!(
        (a, b),
        (Node::Int(_) | Node::Uint(_), Node::Int(_) | Node::Uint(_))
            | (Node::Bool(_), Node::Bool(_))
            | (Node::Float(_), Node::Float(_))
    )
}
