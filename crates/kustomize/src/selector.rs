//! Kubernetes label selectors as kustomize reads them for `labelSelector` and
//! `annotationSelector` (`kyaml/yaml/internal/k8sgen/pkg/labels/selector.go`, a copy of
//! apimachinery's): `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
//! `key notin (a,b)`, `key` (exists) and `!key` (does not exist), joined by commas.
//!
//! Only selectors this module is sure kustomize parses the same way are accepted: the
//! numeric `<` / `>` operators, empty value sets, keys or values kustomize's validation may
//! reject, and keys naming kustomize's own build annotations (present on every object while
//! it builds) are unsupported, so the build is delegated.

use regex::Regex;

use super::kustfile::Selector;
use super::node::Node;
use super::resource::{Gvk, Resource};

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    /// `key=value` / `key==value` (`in` with one value is the same).
    In(String, Vec<String>),
    /// `key!=value` / `key notin (...)`.
    NotIn(String, Vec<String>),
    /// `key`.
    Exists(String),
    /// `!key`.
    DoesNotExist(String),
}

/// A parsed label selector (an empty one selects everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LabelSelector(Vec<Requirement>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Eq,
    DoubleEq,
    NotEq,
    Not,
    Open,
    Close,
    Comma,
    In,
    NotIn,
}

fn lex(text: &str) -> Result<Vec<Token>, crate::Unsupported> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let special = |c: u8| matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<');
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | b'\n');
    while i < bytes.len() {
        let c = bytes[i];
        if space(c) {
            i += 1;
            continue;
        }
        if special(c) {
            let two = bytes.get(i..i + 2);
            let (tok, len) = match (c, two) {
                (b'=', Some(b"==")) => (Token::DoubleEq, 2),
                (b'!', Some(b"!=")) => (Token::NotEq, 2),
                (b'=', _) => (Token::Eq, 1),
                (b'!', _) => (Token::Not, 1),
                (b'(', _) => (Token::Open, 1),
                (b')', _) => (Token::Close, 1),
                (b',', _) => (Token::Comma, 1),
                _ => return Err("a numeric (`<`, `>`) selector operator".into()),
            };
            // Runs like `=!` or `!==` lex differently in apimachinery: not reproduced.
            if bytes
                .get(i + len)
                .is_some_and(|n| matches!(n, b'=' | b'!' | b'<' | b'>'))
            {
                return Err("an unusual run of selector operators".into());
            }
            out.push(tok);
            i += len;
            continue;
        }
        let start = i;
        while i < bytes.len() && !space(bytes[i]) && !special(bytes[i]) {
            i += 1;
        }
        let word = &text[start..i];
        out.push(match word {
            "in" => Token::In,
            "notin" => Token::NotIn,
            _ => Token::Ident(word.to_string()),
        });
    }
    Ok(out)
}

/// `validation.IsQualifiedName`: `[prefix/]name`, the name 1–63 characters of
/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, the prefix a DNS subdomain.
fn valid_key(key: &str) -> bool {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            })
    });
    prefix_ok && !name.is_empty() && valid_value(name)
}

/// `validation.IsValidLabelValue`: empty, or up to 63 characters of
/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`.
fn valid_value(v: &str) -> bool {
    let b = v.as_bytes();
    v.is_empty()
        || (b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.')))
}

/// Keys of kustomize's own annotations, which every object carries while it builds.
fn is_internal(key: &str) -> bool {
    key.starts_with("config.kubernetes.io/")
        || key.starts_with("internal.config.kubernetes.io/")
        || key.starts_with("kustomize.config.k8s.io/")
        || key.starts_with("config.k8s.io/")
}

impl LabelSelector {
    /// Parses a selector; `Err` says what is not reproduced.
    pub(crate) fn parse(text: &str) -> Result<LabelSelector, crate::Unsupported> {
        let tokens = lex(text)?;
        let unusual = || crate::Unsupported(format!("the selector `{text}`"));
        let mut reqs = Vec::new();
        let mut i = 0;
        let ident = |t: Option<&Token>| match t {
            Some(Token::Ident(s)) => Some(s.clone()),
            _ => None,
        };
        while i < tokens.len() {
            let req = if tokens[i] == Token::Not {
                let key = ident(tokens.get(i + 1)).ok_or_else(unusual)?;
                i += 2;
                Requirement::DoesNotExist(key)
            } else {
                let key = ident(tokens.get(i)).ok_or_else(unusual)?;
                i += 1;
                match tokens.get(i) {
                    None | Some(Token::Comma) => Requirement::Exists(key),
                    Some(op @ (Token::Eq | Token::DoubleEq | Token::NotEq)) => {
                        let value = match tokens.get(i + 1) {
                            Some(Token::Ident(v)) => {
                                i += 2;
                                v.clone()
                            }
                            None | Some(Token::Comma) => {
                                i += 1;
                                String::new()
                            }
                            _ => return Err(unusual()),
                        };
                        if *op == Token::NotEq {
                            Requirement::NotIn(key, vec![value])
                        } else {
                            Requirement::In(key, vec![value])
                        }
                    }
                    Some(op @ (Token::In | Token::NotIn)) => {
                        let negate = *op == Token::NotIn;
                        if tokens.get(i + 1) != Some(&Token::Open) {
                            return Err(unusual());
                        }
                        i += 2;
                        let mut values = Vec::new();
                        loop {
                            let v = ident(tokens.get(i)).ok_or_else(unusual)?;
                            values.push(v);
                            i += 1;
                            match tokens.get(i) {
                                Some(Token::Comma) => i += 1,
                                Some(Token::Close) => {
                                    i += 1;
                                    break;
                                }
                                _ => return Err(unusual()),
                            }
                        }
                        if negate {
                            Requirement::NotIn(key, values)
                        } else {
                            Requirement::In(key, values)
                        }
                    }
                    _ => return Err(unusual()),
                }
            };
            let (key, values): (&String, &[String]) = match &req {
                Requirement::In(k, v) | Requirement::NotIn(k, v) => (k, v),
                Requirement::Exists(k) | Requirement::DoesNotExist(k) => (k, &[]),
            };
            if !valid_key(key) || is_internal(key) || !values.iter().all(|v| valid_value(v)) {
                return Err(unusual());
            }
            reqs.push(req);
            match tokens.get(i) {
                None => {}
                Some(Token::Comma) if i + 1 < tokens.len() => i += 1,
                _ => return Err(unusual()),
            }
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether a `metadata.labels` (or `annotations`) map matches; `Err` when a value it
    /// reads is not a string (kustomize reads the YAML text, which is not kept here).
    pub(crate) fn matches(&self, map: Option<&Node>) -> Result<bool, crate::Unsupported> {
        let get = |key: &str| -> Result<Option<&str>, crate::Unsupported> {
            match map.and_then(Node::as_map).and_then(|m| m.get(key)) {
                None => Ok(None),
                Some(Node::Str(s)) => Ok(Some(s)),
                Some(_) => Err(format!("a selector on `{key}` whose value is not a string").into()),
            }
        };
        for req in &self.0 {
            let ok = match req {
                Requirement::In(k, vals) => get(k)?.is_some_and(|v| vals.iter().any(|x| x == v)),
                Requirement::NotIn(k, vals) => get(k)?.is_none_or(|v| !vals.iter().any(|x| x == v)),
                Requirement::Exists(k) => get(k)?.is_some(),
                Requirement::DoesNotExist(k) => get(k)?.is_none(),
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A selector compiled (`types.NewSelectorRegex`: group, version, kind, name and namespace
/// are anchored regular expressions; an empty field matches anything).
pub(crate) struct SelectorRegex {
    group: Option<Regex>,
    version: Option<Regex>,
    kind: Option<Regex>,
    name: Option<Regex>,
    namespace: Option<Regex>,
    labels: LabelSelector,
    annotations: LabelSelector,
    /// No group, version, kind, name or namespace (`ResId.IsEmpty`).
    id_empty: bool,
    /// No label or annotation selector.
    meta_empty: bool,
}

impl SelectorRegex {
    /// Compiles a selector; `Err` says what is not reproduced.
    pub(crate) fn new(selector: &Selector) -> Result<Self, crate::Unsupported> {
        let compile =
            |field: &str, pattern: &Option<String>| -> Result<Option<Regex>, crate::Unsupported> {
                pattern
                    .as_ref()
                    .filter(|p| !p.is_empty())
                    .map(|p| {
                        // RE2 and the regex crate share their syntax but for a few escapes and
                        // classes: a pattern using `\\` is left to kustomize.
                        if p.contains('\\') {
                            return Err(format!("a target {field} regex with escapes `{p}`").into());
                        }
                        Regex::new(&format!("^(?:{p})$"))
                            .map_err(|_| format!("a target {field} regex `{p}`").into())
                    })
                    .transpose()
            };
        let parse =
            |field: &str, text: &Option<String>| -> Result<LabelSelector, crate::Unsupported> {
                match text {
                    None => Ok(LabelSelector::default()),
                    Some(t) => LabelSelector::parse(t)
                        .map_err(|w| format!("{w} in a target {field}").into()),
                }
            };
        let r = SelectorRegex {
            group: compile("group", &selector.group)?,
            version: compile("version", &selector.version)?,
            kind: compile("kind", &selector.kind)?,
            name: compile("name", &selector.name)?,
            namespace: compile("namespace", &selector.namespace)?,
            labels: parse("labelSelector", &selector.labels)?,
            annotations: parse("annotationSelector", &selector.annotations)?,
            id_empty: false,
            meta_empty: false,
        };
        Ok(SelectorRegex {
            id_empty: r.group.is_none()
                && r.version.is_none()
                && r.kind.is_none()
                && r.name.is_none()
                && r.namespace.is_none(),
            meta_empty: r.labels.0.is_empty() && r.annotations.0.is_empty(),
            ..r
        })
    }

    /// Whether it has no group, version, kind, name or namespace.
    pub(crate) fn id_is_empty(&self) -> bool {
        self.id_empty
    }

    /// Whether it has no label or annotation selector.
    pub(crate) fn meta_is_empty(&self) -> bool {
        self.meta_empty
    }

    /// `MatchGvk`.
    pub(crate) fn match_gvk(&self, gvk: &Gvk) -> bool {
        let m = |re: &Option<Regex>, have: &str| re.as_ref().is_none_or(|re| re.is_match(have));
        m(&self.group, &gvk.group) && m(&self.version, &gvk.version) && m(&self.kind, &gvk.kind)
    }

    /// `MatchName`.
    pub(crate) fn match_name(&self, name: &str) -> bool {
        self.name.as_ref().is_none_or(|re| re.is_match(name))
    }

    /// `MatchNamespace` (`None`: a namespace whose kind's scope is not known here).
    pub(crate) fn match_namespace(
        &self,
        namespace: Option<&str>,
    ) -> Result<bool, crate::Unsupported> {
        match (&self.namespace, namespace) {
            (None, _) => Ok(true),
            (Some(re), Some(ns)) => Ok(re.is_match(ns)),
            (Some(_), None) => Err("a target namespace on a kind of unknown scope".into()),
        }
    }

    /// `MatchesLabelSelector` and `MatchesAnnotationSelector` of the resource.
    pub(crate) fn match_meta(&self, r: &Resource) -> Result<bool, crate::Unsupported> {
        Ok(self
            .labels
            .matches(r.node.get_path(&["metadata", "labels"]))?
            && self
                .annotations
                .matches(r.node.get_path(&["metadata", "annotations"]))?)
    }

    /// `resWrangler.Select` for one resource (patch targets): the original or current
    /// effective namespace, the original or current name, the current group, version and
    /// kind, then labels and annotations.
    pub(crate) fn selects_for_patch(&self, r: &Resource) -> Result<bool, crate::Unsupported> {
        if self.namespace.is_some() {
            let org = r.org_id();
            // A previous id keeps its effective namespace.
            let org_ns = org.namespace;
            let cur_ns = r.effective_namespace();
            if !self.match_namespace(org_ns.as_deref())? && !self.match_namespace(Some(&cur_ns))? {
                return Ok(false);
            }
        }
        if !self.match_name(r.org_name()) && !self.match_name(r.name()) {
            return Ok(false);
        }
        if !self.match_gvk(&r.gvk()) {
            return Ok(false);
        }
        self.match_meta(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::Map;

    fn labels(pairs: &[(&str, &str)]) -> Node {
        Node::Map(Map(pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), Node::Str((*v).to_string())))
            .collect()))
    }

    // kyaml/yaml/internal/k8sgen/pkg/labels/selector.go: Parse and Requirement.Matches.
    #[test]
    fn label_selector_operators_match_as_apimachinery() {
        let l = labels(&[("app", "web"), ("tier", "front"), ("empty", "")]);
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(Some(&l)).unwrap();
        assert!(m(""));
        assert!(m("app=web"));
        assert!(m("app==web"));
        assert!(!m("app!=web"));
        assert!(m("missing!=x"));
        assert!(m("app in (web, api)"));
        assert!(!m("app notin (web)"));
        assert!(m("missing notin (web)"));
        assert!(m("app,tier"));
        assert!(m("!missing"));
        assert!(!m("!app"));
        assert!(m("app=web, tier in (front)"));
        assert!(m("empty="));
        assert!(!m("missing in (x)"));
    }

    #[test]
    fn selectors_kustomize_may_read_otherwise_are_unsupported() {
        for s in [
            "a>1",
            "a in ()",
            "a=b=c",
            "a,",
            "in=x",
            "a=(b)",
            "config.kubernetes.io/index=1",
            "a=-b",
            "a=!b",
        ] {
            assert!(LabelSelector::parse(s).is_err(), "{s}");
        }
    }
}
