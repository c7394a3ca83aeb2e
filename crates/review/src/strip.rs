//! Noise filters: fields dropped from both sides before objects are compared, and counted
//! ("12 changes hidden by the default filters").
//!
//! The default set hides what a chart version bump changes in every object it renders
//! without changing what runs: the `helm.sh/chart`, `chart` and `app.kubernetes.io/version`
//! labels and the `checksum/*` annotations (Helm's idiom to roll pods when a ConfigMap
//! changes: the ConfigMap's own diff shows that change), in every `metadata` of the object
//! (its own, its pod template's, a CronJob's job template's ...). `--no-default-strip` turns
//! it off ([`Filters::without_defaults`]).
//!
//! A user path ([`Filters::strip`]) is written as fluxsim's `--strip-field`
//! (`src/compare/strip.rs` `parse_path`): segments separated by `.`, a segment in double
//! quotes may hold dots (`metadata.annotations."example.com/checksum"`), `*` is any key or
//! list item, a number is a list item's position. Read the same way here, with two
//! additions: a list item may be named by its merge keys or position as a report shows it
//! (`spec.template.spec.containers[name=app].env`, `args[0]`, `containers[*]`), and a
//! quoted segment may hold `\"` and `\\`. A trailing `*` empties a list as it empties a
//! mapping. Label keys ([`Filters::strip_label`], fluxsim's `--strip-label`) are dropped from
//! every `metadata.labels` of the object.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::keys::merge_keys;
use crate::path::{key_value, Path, Segment};

/// Why a strip path cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--strip `{path}`: {why} (write segments separated by `.`, quote one holding a dot: metadata.annotations.\"example.com/checksum\"; name a list item as containers[name=app] or args[0])")]
pub struct PathError {
    path: String,
    why: &'static str,
}

/// One step of a strip path.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pat {
    /// A mapping key, or (a number) a list item's position: the `--strip-field` reading.
    Key(String),
    /// `*`: every key or item.
    Any,
    /// `[2]`: the list item at a position.
    Index(usize),
    /// `[name=app]`: the list items whose fields have these values.
    Match(Vec<(String, String)>),
}

/// How a metadata map's key is matched by a default filter.
#[derive(Debug, Clone, PartialEq, Eq)]
enum KeyPat {
    Exact(String),
    Prefix(String),
}

impl KeyPat {
    fn matches(&self, k: &str) -> bool {
        match self {
            KeyPat::Exact(e) => k == e,
            KeyPat::Prefix(p) => k.starts_with(p.as_str()),
        }
    }
}

/// Who asked for a field to be hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Source {
    Default,
    User,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Rule {
    /// A path from the root of the object.
    Path(Vec<Pat>),
    /// Keys of every `metadata.<map>` in the object (`labels`, `annotations`).
    Meta { map: &'static str, key: KeyPat },
}

/// The default filters, as a person reads them (the summary and `--help` list these).
pub const DEFAULT_FILTERS: &[&str] = &[
    "label helm.sh/chart",
    "label chart",
    "label app.kubernetes.io/version",
    "annotations checksum/*",
];

fn default_rules() -> Vec<Rule> {
    let label = |k: &str| Rule::Meta {
        map: "labels",
        key: KeyPat::Exact(k.to_string()),
    };
    vec![
        label("helm.sh/chart"),
        label("chart"),
        label("app.kubernetes.io/version"),
        Rule::Meta {
            map: "annotations",
            key: KeyPat::Prefix("checksum/".to_string()),
        },
    ]
}

/// What is dropped from every object before it is compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filters {
    defaults: bool,
    user: Vec<Rule>,
    /// The user's paths as given (for the report).
    given: Vec<String>,
}

impl Default for Filters {
    fn default() -> Self {
        Self::new()
    }
}

/// How many changes the filters hid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Hidden {
    /// By the default set.
    pub default: usize,
    /// By the user's `--strip` paths and labels.
    pub user: usize,
}

impl Hidden {
    /// Both counts.
    #[must_use]
    pub fn total(self) -> usize {
        self.default + self.user
    }
}

impl std::ops::AddAssign for Hidden {
    fn add_assign(&mut self, o: Self) {
        self.default += o.default;
        self.user += o.user;
    }
}

/// An object with its filtered fields removed, and what was removed where.
#[derive(Debug, Clone)]
pub(crate) struct Stripped {
    pub(crate) value: Value,
    removed: BTreeMap<String, (Value, Source)>,
}

impl Filters {
    /// The default set, no user path.
    #[must_use]
    pub fn new() -> Self {
        Self {
            defaults: true,
            user: Vec::new(),
            given: Vec::new(),
        }
    }

    /// Nothing filtered.
    #[must_use]
    pub fn none() -> Self {
        Self::new().without_defaults()
    }

    /// Without the default set (`--no-default-strip`).
    #[must_use]
    pub fn without_defaults(mut self) -> Self {
        self.defaults = false;
        self
    }

    /// Whether the default set is on.
    #[must_use]
    pub fn defaults(&self) -> bool {
        self.defaults
    }

    /// The user's paths and labels, as given.
    #[must_use]
    pub fn user_filters(&self) -> &[String] {
        &self.given
    }

    /// Adds a path (`--strip PATH`).
    pub fn strip(&mut self, path: &str) -> Result<(), PathError> {
        self.user.push(Rule::Path(parse(path)?));
        self.given.push(path.to_string());
        Ok(())
    }

    /// Adds a label key dropped from every `metadata.labels` (`--strip-label KEY`).
    pub fn strip_label(&mut self, key: &str) {
        self.user.push(Rule::Meta {
            map: "labels",
            key: KeyPat::Exact(key.to_string()),
        });
        self.given.push(format!("label {key}"));
    }

    /// `object` without the filtered fields.
    #[must_use]
    pub fn apply(&self, object: &Value) -> Value {
        self.stripped(object).value
    }

    pub(crate) fn stripped(&self, object: &Value) -> Stripped {
        let mut out = Stripped {
            value: object.clone(),
            removed: BTreeMap::new(),
        };
        let defaults = if self.defaults {
            default_rules()
        } else {
            Vec::new()
        };
        let rules = defaults
            .iter()
            .map(|r| (r, Source::Default))
            .chain(self.user.iter().map(|r| (r, Source::User)));
        for (rule, source) in rules {
            let mut removed = Vec::new();
            match rule {
                Rule::Path(pats) => remove_path(&mut out.value, &Path::root(), pats, &mut removed),
                Rule::Meta { map, key } => {
                    remove_meta(&mut out.value, &Path::root(), map, key, &mut removed);
                }
            }
            for (p, v) in removed {
                out.removed.entry(p.to_string()).or_insert((v, source));
            }
        }
        out
    }
}

/// How many filtered fields differ between two sides of an object: each a change the filters
/// hid.
pub(crate) fn hidden_between(base: &Stripped, head: &Stripped) -> Hidden {
    let mut h = Hidden::default();
    let paths: std::collections::BTreeSet<&String> =
        base.removed.keys().chain(head.removed.keys()).collect();
    for p in paths {
        let (a, b) = (base.removed.get(p), head.removed.get(p));
        if a.map(|x| &x.0) != b.map(|x| &x.0) {
            let source = a.or(b).map_or(Source::User, |x| x.1);
            match source {
                Source::Default => h.default += 1,
                Source::User => h.user += 1,
            }
        }
    }
    h
}

/// The segment a list item is shown with: its merge keys, else its position.
fn item_segment(field: Option<&str>, items: &[Value], i: usize) -> Segment {
    match merge_keys(field, &[items]) {
        Some(keys) => Segment::Match(
            keys.iter()
                .filter_map(|k| items[i].get(*k).map(|v| ((*k).to_string(), key_value(v))))
                .collect(),
        ),
        None => Segment::Index(i),
    }
}

fn item_matches(item: &Value, pairs: &[(String, String)]) -> bool {
    pairs.iter().all(|(k, v)| match item.get(k) {
        Some(x) => key_value(x) == *v,
        None => k == "protocol" && v == "TCP",
    })
}

fn remove_path(v: &mut Value, at: &Path, pats: &[Pat], removed: &mut Vec<(Path, Value)>) {
    let Some((first, rest)) = pats.split_first() else {
        return;
    };
    match v {
        Value::Object(map) => {
            let keys: Vec<String> = match first {
                Pat::Key(k) => map.contains_key(k).then(|| k.clone()).into_iter().collect(),
                Pat::Any => map.keys().cloned().collect(),
                Pat::Index(_) | Pat::Match(_) => Vec::new(),
            };
            for k in keys {
                let here = at.key(&k);
                if rest.is_empty() {
                    if let Some(old) = map.remove(&k) {
                        removed.push((here, old));
                    }
                } else if let Some(child) = map.get_mut(&k) {
                    remove_path(child, &here, rest, removed);
                }
            }
        }
        Value::Array(items) => {
            let field = at.last_key().map(str::to_string);
            let chosen: Vec<usize> = (0..items.len())
                .filter(|&i| match first {
                    Pat::Key(k) => k.parse::<usize>().ok() == Some(i),
                    Pat::Any => true,
                    Pat::Index(n) => *n == i,
                    Pat::Match(pairs) => item_matches(&items[i], pairs),
                })
                .collect();
            let segments: Vec<Segment> = chosen
                .iter()
                .map(|&i| item_segment(field.as_deref(), items, i))
                .collect();
            if rest.is_empty() {
                for (&i, seg) in chosen.iter().zip(segments).rev() {
                    removed.push((at.child(seg), items.remove(i)));
                }
            } else {
                for (&i, seg) in chosen.iter().zip(segments) {
                    remove_path(&mut items[i], &at.child(seg), rest, removed);
                }
            }
        }
        _ => {}
    }
}

/// Drops the keys `key` matches from every `metadata.<map>` inside `v`; a map left empty by
/// it goes too (so that a label set that held only a chart label is not shown as `{}`).
fn remove_meta(
    v: &mut Value,
    at: &Path,
    map_name: &str,
    key: &KeyPat,
    removed: &mut Vec<(Path, Value)>,
) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Object(meta)) = map.get_mut("metadata") {
                if let Some(Value::Object(m)) = meta.get_mut(map_name) {
                    let hit: Vec<String> = m.keys().filter(|k| key.matches(k)).cloned().collect();
                    let base = at.key("metadata").key(map_name);
                    for k in hit {
                        if let Some(old) = m.remove(&k) {
                            removed.push((base.key(&k), old));
                        }
                    }
                    if m.is_empty() {
                        meta.remove(map_name);
                    }
                }
            }
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                if let Some(child) = map.get_mut(&k) {
                    remove_meta(child, &at.key(&k), map_name, key, removed);
                }
            }
        }
        Value::Array(items) => {
            let field = at.last_key().map(str::to_string);
            let segments: Vec<Segment> = (0..items.len())
                .map(|i| item_segment(field.as_deref(), items, i))
                .collect();
            for (item, seg) in items.iter_mut().zip(segments) {
                remove_meta(item, &at.child(seg), map_name, key, removed);
            }
        }
        _ => {}
    }
}

/// Reads a strip path (see the module documentation).
fn parse(path: &str) -> Result<Vec<Pat>, PathError> {
    let fail = |why| PathError {
        path: path.to_string(),
        why,
    };
    let chars: Vec<char> = path.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    if chars.is_empty() {
        return Err(fail("an empty path"));
    }
    loop {
        // One segment: a quoted or plain key (may be empty before `[`), then `[...]` groups.
        let mut key = String::new();
        let mut quoted = false;
        if chars.get(i) == Some(&'"') {
            quoted = true;
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(fail("an unclosed quote")),
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\')) => {
                        key.push(chars[i + 1]);
                        i += 2;
                    }
                    Some(&c) => {
                        key.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while let Some(&c) = chars.get(i) {
                if c == '.' || c == '[' {
                    break;
                }
                key.push(c);
                i += 1;
            }
        }
        let mut groups = Vec::new();
        while chars.get(i) == Some(&'[') {
            let (pat, next) = parse_group(&chars, i + 1).map_err(fail)?;
            groups.push(pat);
            i = next;
        }
        if quoted || !key.is_empty() {
            if key.is_empty() {
                return Err(fail("an empty segment"));
            }
            steps.push(if !quoted && key == "*" {
                Pat::Any
            } else {
                Pat::Key(key)
            });
        } else if groups.is_empty() {
            return Err(fail("an empty segment"));
        }
        steps.extend(groups);
        match chars.get(i) {
            None => break,
            Some('.') if i + 1 == chars.len() => return Err(fail("a trailing `.`")),
            Some('.') => i += 1,
            Some(_) => return Err(fail("a quote or `]` not followed by `.`")),
        }
    }
    Ok(steps)
}

/// One `[...]` group from `start` (after the `[`): the pattern and the index after the `]`.
fn parse_group(chars: &[char], start: usize) -> Result<(Pat, usize), &'static str> {
    let mut i = start;
    let mut pairs = Vec::new();
    let mut word = String::new();
    let mut key: Option<String> = None;
    loop {
        match chars.get(i) {
            None => return Err("an unclosed `[`"),
            Some('"') => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("an unclosed quote"),
                        Some('"') => break,
                        Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\')) => {
                            word.push(chars[i + 1]);
                            i += 1;
                        }
                        Some(&c) => word.push(c),
                    }
                    i += 1;
                }
            }
            Some('=') if key.is_none() => key = Some(std::mem::take(&mut word)),
            Some(&c @ (',' | ']')) => {
                match key.take() {
                    Some(k) if !k.is_empty() => pairs.push((k, std::mem::take(&mut word))),
                    Some(_) => return Err("a list item selector without a key"),
                    None if pairs.is_empty() && c == ']' => {
                        let pat = if word == "*" {
                            Pat::Any
                        } else {
                            Pat::Index(word.parse().map_err(|_| {
                                "a list item that is not `*`, a position or key=value"
                            })?)
                        };
                        return Ok((pat, i + 1));
                    }
                    None => return Err("a list item selector without `=`"),
                }
                if c == ']' {
                    return Ok((Pat::Match(pairs), i + 1));
                }
            }
            Some(&c) => word.push(c),
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strip_paths_read_as_fluxsims_strip_field() {
        assert_eq!(
            parse("metadata.annotations.\"example.com/checksum\"").unwrap(),
            [
                Pat::Key("metadata".into()),
                Pat::Key("annotations".into()),
                Pat::Key("example.com/checksum".into())
            ]
        );
        assert_eq!(
            parse("spec.template.spec.containers.*.env").unwrap()[4],
            Pat::Any
        );
        assert!(parse("a..b").is_err());
        assert!(parse("a.\"b").is_err());
        assert!(parse("").is_err());
        assert!(parse("a.").is_err());
    }

    #[test]
    fn strip_paths_take_list_items_as_reports_show_them() {
        assert_eq!(
            parse("spec.containers[name=app].env").unwrap(),
            [
                Pat::Key("spec".into()),
                Pat::Key("containers".into()),
                Pat::Match(vec![("name".into(), "app".into())]),
                Pat::Key("env".into())
            ]
        );
        assert_eq!(
            parse("ports[containerPort=80,protocol=TCP]").unwrap()[1],
            Pat::Match(vec![
                ("containerPort".into(), "80".into()),
                ("protocol".into(), "TCP".into())
            ])
        );
        assert_eq!(parse("args[1]").unwrap()[1], Pat::Index(1));
        assert_eq!(
            parse("a[name=\"x.y]\"].b").unwrap()[1],
            Pat::Match(vec![("name".into(), "x.y]".into())])
        );
        assert!(parse("a[name").is_err());
        assert!(parse("a[x]").is_err());
    }

    #[test]
    fn default_filters_drop_chart_labels_and_checksums_everywhere() {
        let v = json!({"metadata": {"labels": {"helm.sh/chart": "x-1", "app": "x"},
                                    "annotations": {"checksum/config": "abc"}},
            "spec": {"template": {"metadata": {"labels": {"chart": "x-1"},
                                               "annotations": {"checksum/secret": "d", "keep": "k"}}}}});
        let s = Filters::new().stripped(&v);
        assert_eq!(
            s.value,
            json!({"metadata": {"labels": {"app": "x"}},
                   "spec": {"template": {"metadata": {"annotations": {"keep": "k"}}}}})
        );
        assert_eq!(
            s.removed.keys().collect::<Vec<_>>(),
            [
                "metadata.annotations.checksum/config",
                "metadata.labels.\"helm.sh/chart\"",
                "spec.template.metadata.annotations.checksum/secret",
                "spec.template.metadata.labels.chart"
            ]
        );
    }

    #[test]
    fn hidden_changes_are_the_filtered_fields_that_differ() {
        let f = Filters::new();
        let a =
            f.stripped(&json!({"metadata": {"labels": {"helm.sh/chart": "x-1", "chart": "same"}}}));
        let b = f.stripped(
            &json!({"metadata": {"labels": {"helm.sh/chart": "x-2", "chart": "same"},
                                                "annotations": {"checksum/c": "1"}}}),
        );
        assert_eq!(
            hidden_between(&a, &b),
            Hidden {
                default: 2,
                user: 0
            }
        );
    }

    #[test]
    fn user_paths_remove_keys_items_and_everything_under_a_star() {
        let mut f = Filters::none();
        f.strip("spec.template.spec.containers[name=app].env")
            .unwrap();
        f.strip("spec.args.0").unwrap();
        f.strip("data.*").unwrap();
        let v = json!({"spec": {"args": ["a", "b"], "template": {"spec": {"containers": [
            {"name": "app", "env": [1]}, {"name": "side", "env": [2]}]}}}, "data": {"a": "1", "b": "2"}});
        let s = f.stripped(&v);
        assert_eq!(
            s.value,
            json!({"spec": {"args": ["b"], "template": {"spec": {"containers": [
                {"name": "app"}, {"name": "side", "env": [2]}]}}}, "data": {}})
        );
        assert_eq!(
            s.removed.keys().collect::<Vec<_>>(),
            [
                "data.a",
                "data.b",
                "spec.args[0]",
                "spec.template.spec.containers[name=app].env"
            ]
        );
    }

    #[test]
    fn strip_label_drops_the_label_from_every_metadata() {
        let mut f = Filters::none();
        f.strip_label("team");
        let v = json!({"metadata": {"labels": {"team": "a", "app": "x"}},
            "spec": {"selector": {"matchLabels": {"team": "kept"}},
                     "template": {"metadata": {"labels": {"team": "a"}}}}});
        assert_eq!(
            f.apply(&v),
            json!({"metadata": {"labels": {"app": "x"}},
                   "spec": {"selector": {"matchLabels": {"team": "kept"}}, "template": {"metadata": {}}}})
        );
    }
}
