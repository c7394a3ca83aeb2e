//! Renamed resources and the references that follow them: the content hash kustomize
//! appends to a generated ConfigMap or Secret (`api/hasher/hasher.go`, `HashTransformer`), and
//! the name-reference fix-up that ends every build (`ResAccumulator.FixBackReferences`:
//! `api/internal/accumulator/namereferencetransformer.go`, `api/filters/nameref/nameref.go`,
//! with the field specs of `builtinpluginconsts/namereference.go`).
//!
//! The fix-up runs once, at the root, over every resource of the build: a reference is
//! rewritten to the one resource of the referred kind that once had the referenced name
//! (any of its previous ids), in a namespace the referrer can see, preferring the one renamed
//! by the same prefixes and suffixes as the referrer. So renames in a sub-kustomization and
//! in the kustomizations above it are all followed at the end.

use crate::konfig::{BackReference, Spec, NAME_REFERENCES};
use crate::node::{Map, Node};
use crate::resource::{
    effective_namespace, is_cluster_scoped, Gvk, PrevId, Resource, NOT_A_NAMESPACE,
};
use crate::NativeError;

/// Appends the content hash to every generated resource that asks for it (`HashTransformer`:
/// the id before is remembered, so [`fix_back_references`] follows the new name).
pub(crate) fn apply_hash_suffixes(resources: &mut [Resource]) -> Result<(), NativeError> {
    for r in resources.iter_mut().filter(|r| r.needs_hash) {
        let hash = hash_of(r);
        r.store_previous_id()?;
        let new = format!("{}-{hash}", r.name());
        if let Some(Node::Map(meta)) = r.node.as_map_mut().and_then(|m| m.get_mut("metadata")) {
            meta.insert("name", Node::Str(new));
        }
        r.needs_hash = false;
    }
    Ok(())
}

/// `Gvk.IsSelected`: empty selector fields match anything.
fn selects(group: &str, version: &str, kind: &str, gvk: &Gvk) -> bool {
    (group.is_empty() || group == gvk.group)
        && (version.is_empty() || version == gvk.version)
        && (kind.is_empty() || kind == gvk.kind)
}

/// What the fix-up reads of each resource: ids do not change while it runs (only fields of
/// the referrers do), so they are taken once. The scope of a kind kustomize's schema does
/// not know is asked for only when a reference depends on it.
struct Ident {
    /// The current group, version and kind.
    gvk: Gvk,
    name: String,
    /// `metadata.namespace` as it is (empty when unset).
    namespace: String,
    /// Whether the kind is cluster-scoped (as kustomize says, see `is_cluster_scoped`).
    cluster_scoped: bool,
    /// The effective current namespace.
    effective: String,
    prev_ids: Vec<PrevId>,
    /// The effective namespace of the original id (`OrgId().EffectiveNamespace()`).
    org_namespace: Option<String>,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
}

impl Ident {
    fn of(r: &Resource) -> Ident {
        let gvk = r.gvk();
        let org = r.org_id();
        let org_gvk = Gvk {
            kind: org.kind,
            ..gvk.clone()
        };
        Ident {
            name: r.name().to_string(),
            namespace: r.namespace().to_string(),
            cluster_scoped: is_cluster_scoped(&gvk),
            effective: r.effective_namespace(),
            prev_ids: r.prev_ids.clone(),
            org_namespace: org.namespace.map(|ns| effective_namespace(&org_gvk, &ns)),
            prefixes: r.prefixes.clone(),
            suffixes: r.suffixes.clone(),
            gvk,
        }
    }

    fn unknown_scope(&self) -> Problem {
        Problem::Unsupported(format!(
            "the scope of {}/{} {} (not in kustomize's built-in schema)",
            self.gvk.group, self.gvk.version, self.gvk.kind
        ))
    }

    fn org_namespace(&self) -> Result<&str, Problem> {
        self.org_namespace
            .as_deref()
            .ok_or_else(|| self.unknown_scope())
    }

    /// Whether one of its previous ids is selected by this group, version and kind (the
    /// previous ids keep the current group and version).
    fn was(&self, group: &str, version: &str, kind: &str) -> bool {
        self.prev_ids.iter().any(|p| {
            selects(
                group,
                version,
                kind,
                &Gvk {
                    kind: p.kind.clone(),
                    ..self.gvk.clone()
                },
            )
        })
    }
}

/// Why a reference cannot be fixed here.
enum Problem {
    /// kustomize's answer is not reproduced.
    Unsupported(String),
    /// kustomize fails the build.
    Failed(String),
}

fn unsupported(what: &str) -> Problem {
    Problem::Unsupported(what.to_string())
}

/// The referrer being fixed, and what the fix-up needs of the build.
struct Fixing<'a> {
    idents: &'a [Ident],
    /// The referrer's ids.
    me: &'a Ident,
    /// The namespaces of its ServiceAccount subjects, when it is a RoleBinding.
    namespaces: &'a [String],
    /// The referral's kind selector.
    back: &'a BackReference,
    /// The `roleRef` group and kind, when the field is a `roleRef/name`.
    role_ref: Option<(String, String)>,
}

impl Fixing<'_> {
    /// `SubsetThatCouldBeReferencedByResource`: anything for a cluster-scoped referrer, else
    /// cluster-scoped objects, its own namespace's, and those of the namespaces of a
    /// RoleBinding's ServiceAccount subjects.
    fn can_refer_to(&self, t: &Ident) -> bool {
        self.me.cluster_scoped
            || t.cluster_scoped
            || t.effective == self.me.effective
            || self.namespaces.contains(&t.namespace)
    }

    /// The whole subset, by index.
    fn subset(&self) -> Vec<usize> {
        (0..self.idents.len())
            .filter(|&j| self.can_refer_to(&self.idents[j]))
            .collect()
    }
}

/// `FixBackReferences`: in every referrer (selected by its original kind), rewrites each
/// name reference to the current name of the resource it refers to.
pub(crate) fn fix_back_references(resources: &mut [Resource]) -> Result<(), NativeError> {
    // Without a previous id nothing can be a referral: the pass only checks what kustomize
    // would fail on.
    let renamed = resources.iter().any(|r| !r.prev_ids.is_empty());
    let idents: Vec<Ident> = if renamed {
        resources.iter().map(Ident::of).collect()
    } else {
        Vec::new()
    };
    for (i, r) in resources.iter_mut().enumerate() {
        let shown = r.name().to_string();
        let in_resource = |p: Problem| match p {
            Problem::Unsupported(w) => NativeError::unsupported(&w, &shown),
            Problem::Failed(w) => {
                NativeError::Failed(format!("updating name reference in `{shown}`: {w}"))
            }
        };
        let org_gvk = Gvk {
            kind: r.prev_ids.first().map_or(r.kind(), |p| &p.kind).to_string(),
            ..r.gvk()
        };
        let specs: Vec<(&BackReference, &Spec)> = NAME_REFERENCES
            .iter()
            .flat_map(|b| b.referrers.iter().map(move |s| (b, s)))
            .filter(|(_, s)| selects(s.group, s.version, s.kind, &org_gvk))
            .collect();
        if specs.is_empty() {
            continue;
        }
        // Taken before any field of the referrer changes, as kustomize takes the subset.
        let namespaces = role_binding_namespaces(&r.node).map_err(in_resource)?;
        for (back, spec) in specs {
            let path = split_path(spec.path);
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let fixing = if renamed {
                let role_ref = if spec.path.ends_with("roleRef/name") {
                    role_ref_gvk(&r.node).map_err(in_resource)?
                } else {
                    None
                };
                Some(Fixing {
                    idents: &idents,
                    me: &idents[i],
                    namespaces: &namespaces,
                    back,
                    role_ref,
                })
            } else {
                None
            };
            walk(&mut r.node, &path, &mut |node: &mut Node| {
                set(node, fixing.as_ref())
            })
            .map_err(in_resource)?;
        }
    }
    Ok(())
}

/// `getNamespacesForRoleBinding`: the namespaces of a RoleBinding's ServiceAccount subjects,
/// whose resources it may refer to from another namespace.
fn role_binding_namespaces(node: &Node) -> Result<Vec<String>, Problem> {
    let mut out = Vec::new();
    if node.str_at(&["kind"]) != Some("RoleBinding") {
        return Ok(out);
    }
    let Some(Node::Seq(subjects)) = node.get_path(&["subjects"]) else {
        return Ok(out);
    };
    for s in subjects {
        let Node::Map(m) = s else {
            return Err(unsupported("a role binding subject that is not a mapping"));
        };
        let (Some(ns), Some(kind)) = (m.get("namespace"), m.get("kind")) else {
            continue;
        };
        let Node::Str(kind) = kind else {
            return Err(unsupported(
                "a role binding subject kind that is not a string",
            ));
        };
        if kind == "ServiceAccount" {
            let Node::Str(ns) = ns else {
                return Err(unsupported(
                    "a ServiceAccount subject namespace that is not a string",
                ));
            };
            out.push(ns.clone());
        }
    }
    Ok(out)
}

/// `getRoleRefGvk`: the `roleRef` group and kind; none when either is missing.
fn role_ref_gvk(node: &Node) -> Result<Option<(String, String)>, Problem> {
    let Some(role_ref) = node.get_path(&["roleRef"]) else {
        return Ok(None);
    };
    let Node::Map(m) = role_ref else {
        return Err(unsupported("a roleRef that is not a mapping"));
    };
    match (m.get("apiGroup"), m.get("kind")) {
        (Some(Node::Str(g)), Some(Node::Str(k))) => Ok(Some((g.clone(), k.clone()))),
        (None, _) | (_, None) => Ok(None),
        _ => Err(unsupported(
            "a roleRef apiGroup or kind that is not a string",
        )),
    }
}

/// `fieldspec.Filter` without creation: walks `path`, sequences element by element (a null
/// anywhere ends the walk), and calls `set` on what is at its end.
fn walk(
    node: &mut Node,
    path: &[&str],
    set: &mut dyn FnMut(&mut Node) -> Result<(), Problem>,
) -> Result<(), Problem> {
    let Some((first, rest)) = path.split_first() else {
        return set(node);
    };
    match node {
        Node::Null => Ok(()),
        Node::Seq(items) => items.iter_mut().try_for_each(|i| walk(i, path, set)),
        Node::Map(m) => match m.get_mut(first) {
            Some(v) => walk(v, rest, set),
            None => Ok(()),
        },
        // kustomize fails ("expected sequence or mapping node").
        _ => Err(unsupported("a name-reference path that runs into a scalar")),
    }
}

/// `nameref.Filter.set`: a name, a list of names, or a mapping with `name` (and `namespace`).
/// With nothing renamed (`fixing` is none) only what kustomize would fail on is checked.
fn set(node: &mut Node, fixing: Option<&Fixing>) -> Result<(), Problem> {
    match node {
        Node::Null => Ok(()),
        Node::Map(m) => set_mapping(m, fixing),
        Node::Seq(items) => {
            for item in items {
                match item {
                    Node::Null => {}
                    Node::Map(m) => set_mapping(m, fixing)?,
                    Node::Seq(_) => {
                        return Err(unsupported("a list in a list of name references"));
                    }
                    other => set_scalar(other, fixing)?,
                }
            }
            Ok(())
        }
        other => set_scalar(other, fixing),
    }
}

fn set_scalar(node: &mut Node, fixing: Option<&Fixing>) -> Result<(), Problem> {
    let Some(f) = fixing else {
        return Ok(());
    };
    // kustomize compares the scalar's YAML text, which the reader did not keep.
    let Node::Str(old) = node else {
        return Err(unsupported("a name reference that is not a string"));
    };
    if let Some(j) = select(f, old, None, false)? {
        let new = &f.idents[j].name;
        if new != old {
            old.clone_from(new);
        }
    }
    Ok(())
}

/// `setMapping`: the candidates are narrowed to the mapping's `namespace` (the original
/// namespaces first, then the current ones); the referral's namespace is written too,
/// unless it has none.
fn set_mapping(m: &mut Map, fixing: Option<&Fixing>) -> Result<(), Problem> {
    let Some(name) = m.get("name") else {
        // kustomize fails ("no 'name' field in node").
        return Err(unsupported("a name reference mapping without a name"));
    };
    let Node::Str(old) = name else {
        return Err(unsupported(
            "a name reference mapping whose name is not a string",
        ));
    };
    let Some(f) = fixing else {
        return Ok(());
    };
    let pool: Option<Vec<usize>> = match m.get("namespace") {
        None => None,
        Some(Node::Str(ns)) => {
            // `GroupedByOriginalNamespace`, then `GroupedByCurrentNamespace`, of the subset.
            let subset = f.subset();
            let mut original = Vec::new();
            let mut current = Vec::new();
            for &j in &subset {
                let t = &f.idents[j];
                let (was_in, is_in) = (t.org_namespace()?, t.effective.as_str());
                if was_in != NOT_A_NAMESPACE && was_in == ns {
                    original.push(j);
                }
                if is_in != NOT_A_NAMESPACE && is_in == ns {
                    current.push(j);
                }
            }
            Some(if original.is_empty() {
                current
            } else {
                original
            })
        }
        Some(_) => {
            return Err(unsupported(
                "a name reference mapping whose namespace is not a string",
            ))
        }
    };
    let Some(j) = select(f, old, pool.as_deref(), true)? else {
        return Ok(());
    };
    let t = &f.idents[j];
    if t.name == *old && t.namespace.is_empty() {
        return Ok(());
    }
    m.insert("name", Node::Str(t.name.clone()));
    // An empty namespace would not mean `default` here: it is left as it is.
    if !t.namespace.is_empty() {
        m.insert("namespace", Node::Str(t.namespace.clone()));
    }
    Ok(())
}

/// `selectReferral`: the candidates that once had the name, were of the referred kind (and
/// of the `roleRef` kind), and are in the referrer's namespace unless one of them is
/// cluster-scoped or a ServiceAccount. Several left are told apart by the referrer's
/// prefixes and suffixes, first letting an empty list match any, then exactly; none left
/// means no change, several that differ fail the build. (Checked against kubectl: equal
/// names left after the loose comparison still go through the exact one.)
fn select(
    f: &Fixing,
    old: &str,
    pool: Option<&[usize]>,
    with_namespace: bool,
) -> Result<Option<usize>, Problem> {
    let me = f.me;
    // Without a pool, the referrer's subset (what needs a kind's scope comes last).
    let all: Vec<usize>;
    let pool = if let Some(p) = pool {
        p
    } else {
        all = (0..f.idents.len()).collect();
        &all
    };
    let mut c = Vec::new();
    for &j in pool {
        let t = &f.idents[j];
        let named = t.prev_ids.iter().any(|p| p.name == old)
            && t.was(f.back.group, f.back.version, f.back.kind)
            && f.role_ref
                .as_ref()
                .is_none_or(|(group, kind)| t.was(group, "", kind));
        if !named || !f.can_refer_to(t) {
            continue;
        }
        let visible = me.cluster_scoped
            || t.cluster_scoped
            || t.gvk.kind == "ServiceAccount"
            || t.effective == me.effective;
        if visible {
            c.push(j);
        }
    }
    if c.len() == 1 {
        return Ok(Some(c[0]));
    }
    c.retain(|&j| affixes_match(me, &f.idents[j], true));
    if c.len() == 1 {
        return Ok(Some(c[0]));
    }
    c.retain(|&j| affixes_match(me, &f.idents[j], false));
    // Candidates that would write the same thing are as good as one (the first is taken).
    let same = |c: &[usize]| {
        let first = &f.idents[c[0]];
        c.iter().all(|&j| {
            let t = &f.idents[j];
            t.name == first.name && (!with_namespace || t.namespace == first.namespace)
        })
    };
    match c.len() {
        0 => Ok(None),
        1 => Ok(Some(c[0])),
        _ if same(&c) => Ok(Some(c[0])),
        _ => {
            let ids: Vec<String> = c
                .iter()
                .map(|&j| {
                    let t = &f.idents[j];
                    format!("{}/{}.{}", t.gvk.kind, t.name, t.namespace)
                })
                .collect();
            Err(Problem::Failed(format!(
                "found multiple possible referrals for `{old}`: {}",
                ids.join(", ")
            )))
        }
    }
}

/// `Resource.PrefixesSuffixesEquals`: the two were renamed by the same innermost prefixes
/// and suffixes (`utils.SameEndingSubSlice`); with `allow_empty`, none on either side
/// matches anything.
fn affixes_match(a: &Ident, b: &Ident, allow_empty: bool) -> bool {
    let matches = |x: &[String], y: &[String]| {
        (allow_empty && (x.is_empty() || y.is_empty())) || same_ending(x, y)
    };
    matches(&a.prefixes, &b.prefixes) && matches(&a.suffixes, &b.suffixes)
}

/// `utils.SameEndingSubSlice`: the shorter list ends the longer one; an empty list only ends
/// an empty one.
fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.is_empty();
    }
    long.ends_with(short)
}

/// Splits a field-spec path at `/`, keeping `\/` as a slash inside a field name.
fn split_path(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'/') => {
                chars.next();
                if let Some(last) = out.last_mut() {
                    last.push('/');
                }
            }
            '/' => out.push(String::new()),
            other => {
                if let Some(last) = out.last_mut() {
                    last.push(other);
                }
            }
        }
    }
    out
}

/// `hasher.Hash` for a ConfigMap or Secret: the JSON of kind, data (and type), with the name
/// left empty (`getNodeValues` looks up `metadata/name` as one field name and finds nothing).
fn hash_of(r: &Resource) -> String {
    let mut json = String::from("{");
    let data = r.node.get_path(&["data"]);
    let field = |json: &mut String, key: &str, value: Option<&Node>| {
        goyaml::json::push_json_str(json, key);
        json.push(':');
        match value {
            Some(Node::Map(m)) => {
                let mut entries: Vec<(&String, &Node)> = m.0.iter().map(|(k, v)| (k, v)).collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                json.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        json.push(',');
                    }
                    goyaml::json::push_json_str(json, k);
                    json.push(':');
                    goyaml::json::push_json_str(json, v.as_str().unwrap_or_default());
                }
                json.push('}');
            }
            Some(Node::Str(s)) => goyaml::json::push_json_str(json, s),
            _ => goyaml::json::push_json_str(json, ""),
        }
    };
    field(&mut json, "data", data);
    json.push(',');
    if r.kind() == "Secret" {
        field(&mut json, "kind", Some(&Node::Str("Secret".into())));
        json.push(',');
        field(&mut json, "name", None);
        json.push(',');
        field(&mut json, "type", r.node.get_path(&["type"]));
    } else {
        field(&mut json, "kind", Some(&Node::Str("ConfigMap".into())));
        json.push(',');
        field(&mut json, "name", None);
    }
    json.push('}');
    // kustomize's `hasher.encode`: `fmt.Sprintf("%x", sha256.Sum256(...))`.
    let hex = format!(
        "{:x}",
        <sha2::Sha256 as sha2::Digest>::digest(json.as_bytes())
    );
    hex.chars()
        .take(10)
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn same_ending_lists_end_alike_and_an_empty_list_ends_only_an_empty_one() {
        // utils.SameEndingSubSlice (api/internal/utils/stringslice.go).
        assert!(same_ending(&strings(&["a", "b"]), &strings(&["b"])));
        assert!(same_ending(&strings(&["b"]), &strings(&["a", "b"])));
        assert!(!same_ending(&strings(&["a", "b"]), &strings(&["a"])));
        assert!(same_ending(&[], &[]));
        assert!(!same_ending(&[], &strings(&["a"])));
    }

    fn ident(prefixes: &[&str], suffixes: &[&str]) -> Ident {
        Ident {
            gvk: Gvk {
                group: String::new(),
                version: "v1".into(),
                kind: "ConfigMap".into(),
            },
            name: "x".into(),
            namespace: String::new(),
            effective: "default".into(),
            cluster_scoped: false,
            prev_ids: Vec::new(),
            org_namespace: Some("default".into()),
            prefixes: strings(prefixes),
            suffixes: strings(suffixes),
        }
    }

    #[test]
    fn loose_affix_comparison_lets_an_empty_list_match_and_the_exact_one_does_not() {
        // Resource.PrefixesSuffixesEquals(o, allowEmpty) (api/resource/resource.go).
        let referrer = ident(&["blue"], &[]);
        let canary = ident(&[], &["canary"]);
        assert!(affixes_match(&referrer, &canary, true));
        assert!(!affixes_match(&referrer, &canary, false));
        let blue = ident(&["blue"], &[]);
        assert!(affixes_match(&referrer, &blue, false));
        let green = ident(&["green"], &[]);
        assert!(!affixes_match(&referrer, &green, true));
    }

    #[test]
    fn annotation_paths_keep_escaped_slashes() {
        assert_eq!(
            split_path("metadata/annotations/a.io\\/b"),
            vec!["metadata", "annotations", "a.io/b"]
        );
    }
}
