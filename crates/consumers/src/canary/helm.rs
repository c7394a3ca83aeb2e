//! Where `prove --helm` plants a values canary: a line of a values file that feeds a
//! HelmRelease (a file of a `configMapGenerator` whose ConfigMap a release reads through
//! `valuesFrom`), whose value reaches the release's output. The canary is a suffix on that
//! value; it must show up in the ConfigMap's Kustomization and in every release that reads
//! it, and nowhere else.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::model::ClusterRender;
use crate::model::RepoRender;

use crate::helm::release::HelmRelease;

/// The text every canary carries, before its nonce.
pub const MARKER: &str = "fluxsim-canary-";

/// (cluster, artifact id) pairs.
type Targets = BTreeSet<(String, String)>;

/// A values canary to plant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValuesCanary {
    /// The values file, relative to the repository root.
    pub file: String,
    /// The line (0-based) whose value gets the canary.
    pub line: usize,
    /// (cluster, artifact id) of every artifact it must show up in.
    pub expected: Targets,
}

/// The nonce of the canary an object carries, when it carries one.
#[must_use]
pub fn marked_nonce(yaml: &str) -> Option<&str> {
    let at = yaml.find(MARKER)? + MARKER.len();
    let rest = yaml.get(at..at + 10)?;
    rest.bytes().all(|b| b.is_ascii_hexdigit()).then_some(rest)
}

/// Plants the canary `nonce` at the end of line `line` of `text`.
#[must_use]
pub fn plant(text: &[u8], line: usize, nonce: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    let mut out = String::with_capacity(text.len() + 32);
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i == line {
            let body = l.trim_end_matches(['\n', '\r']);
            out.push_str(body.trim_end());
            out.push('-');
            out.push_str(MARKER);
            out.push_str(nonce);
            out.push_str(&l[body.len()..]);
        } else {
            out.push_str(l);
        }
    }
    out.into_bytes()
}

/// The values canary for `head` (rendered with origins and `--helm`), when some release
/// reads a values file of the repository.
#[must_use]
pub fn values_canary(head: &RepoRender) -> Option<ValuesCanary> {
    // values file -> (expected artifacts, release outputs it must reach)
    let mut files: BTreeMap<String, (Targets, Vec<String>)> = BTreeMap::new();
    for c in &head.clusters {
        for r in c
            .kustomizations
            .iter()
            .filter(|k| crate::model::is_release(k))
        {
            let Some(output) = r.artifact.as_ref().map(|a| a.yaml.clone()) else {
                continue;
            };
            let Some(hr) = crate::helm::release_of(c, r) else {
                continue;
            };
            for (file, ks) in values_files(head, c, &hr) {
                let e = files.entry(file).or_default();
                e.0.insert((c.name.clone(), ks));
                e.0.insert((c.name.clone(), r.kustomization.id.to_string()));
                e.1.push(output.clone());
            }
        }
    }
    let (file, (expected, outputs)) = files.into_iter().next()?;
    let text = head
        .tree
        .fs()
        .read_to_string(&head.tree.root().join(&file))
        .ok()?;
    let line = pick_line(&text, &outputs)?;
    Some(ValuesCanary {
        file,
        line,
        expected,
    })
}

/// The repository files that `hr`'s valuesFrom ConfigMaps are generated from, each with
/// the Kustomization that applies the ConfigMap.
fn values_files(head: &RepoRender, c: &ClusterRender, hr: &HelmRelease) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for r in hr.values_from.iter().filter(|r| r.kind == "ConfigMap") {
        for k in &c.kustomizations {
            let found = k.template.iter().flat_map(|a| &a.objects).find(|o| {
                o.id.kind == "ConfigMap"
                    && o.id.group.is_empty()
                    && o.id.namespace == hr.id.namespace
                    && o.id.name == r.name
            });
            let Some(kfile) = found
                .and_then(|o| o.origin.as_ref())
                .and_then(|o| o.configured_in.clone())
            else {
                continue;
            };
            if let Some(f) = generator_file(head, &kfile, &r.name, &r.values_key) {
                out.push((f, k.kustomization.id.to_string()));
            }
        }
    }
    out
}

/// The file of kustomization `kfile`'s configMapGenerator `name` that gives key `key`.
fn generator_file(head: &RepoRender, kfile: &str, name: &str, key: &str) -> Option<String> {
    let fs = head.tree.fs();
    let text = fs.read_to_string(&head.tree.root().join(kfile)).ok()?;
    let k = crate::manifest::parse_object(&text).ok()?;
    let dir = kfile.rsplit_once('/').map_or("", |(d, _)| d);
    let generator = k.get("configMapGenerator")?.as_array()?.iter().find(|g| {
        g.get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| name == n || name.starts_with(&format!("{n}-")))
    })?;
    generator
        .get("files")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .find_map(|f| {
            let (k, path) = match f.split_once('=') {
                Some((k, p)) => (k.to_string(), p),
                None => (f.rsplit('/').next().unwrap_or(f).to_string(), f),
            };
            (k == key).then(|| {
                crate::source::clean_relative(&if dir.is_empty() {
                    path.to_string()
                } else {
                    format!("{dir}/{path}")
                })
            })?
        })
}

/// A `key: value` line whose value is a plain string that reaches every output (its literal
/// parts, around `${...}`): a suffix there shows up in the release. Lines without `${` first.
fn pick_line(text: &str, outputs: &[String]) -> Option<usize> {
    let re = regex::Regex::new(r"^\s*[A-Za-z0-9_.-]+:[ \t]+(\S.*?)\s*$").expect("static regex");
    let var = regex::Regex::new(r"\$\{[^}]*\}").expect("static regex");
    let typed = regex::Regex::new(r"(?i)^(-?[0-9][0-9._]*|true|false|null|yes|no|on|off|~)$")
        .expect("static regex");
    let candidates: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| Some((i, re.captures(l)?.get(1)?.as_str())))
        .filter(|(_, v)| {
            !v.starts_with([
                '"', '\'', '{', '[', '|', '>', '&', '*', '!', '%', '@', '`', '#',
            ]) && !v.contains(" #")
                && !typed.is_match(v)
        })
        .filter(|(_, v)| {
            var.split(v)
                .filter(|part| !part.is_empty())
                .all(|part| outputs.iter().all(|o| o.contains(part)))
        })
        .collect();
    candidates
        .iter()
        .find(|(_, v)| !v.contains("${"))
        .or_else(|| candidates.first())
        .map(|(i, _)| *i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_values_canary_is_a_suffix_its_nonce_can_be_read_back_from() {
        let text = b"a: 1\nmessage: hello\nb: x\n";
        let planted = plant(text, 1, "0123456789");
        assert_eq!(
            String::from_utf8(planted.clone()).unwrap(),
            "a: 1\nmessage: hello-fluxsim-canary-0123456789\nb: x\n"
        );
        assert_eq!(
            marked_nonce(&String::from_utf8(planted).unwrap()),
            Some("0123456789")
        );
        assert_eq!(marked_nonce("name: fluxsim-canary-xyz"), None);
    }

    #[test]
    fn the_canary_line_is_a_string_value_that_reaches_the_output() {
        let text = "replicaCount: 2\nenabled: true\nmessage: hello from ${CLUSTER}\nname: web\nq: \"quoted\"\n";
        let out = vec!["value: hello from dev\nname: web\n".to_string()];
        // `name: web` has no var: preferred.
        assert_eq!(pick_line(text, &out), Some(3));
        let out = vec!["value: hello from dev\n".to_string()];
        assert_eq!(pick_line(text, &out), Some(2));
        assert_eq!(pick_line("replicaCount: 2\n", &out), None);
    }
}
