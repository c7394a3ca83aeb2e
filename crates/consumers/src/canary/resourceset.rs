//! Where `prove` plants a template canary: a line of a Flux Operator ResourceSet's template
//! (`spec.resources` or `spec.resourcesTemplate`) whose value reaches the objects it
//! generates. The canary is a suffix on that value (as the values canary, `helm::plant`); it
//! must show up in the entry of every ResourceSet declared in that file (in every cluster
//! that renders it) and in the Kustomizations that apply the ResourceSet (their artifact
//! holds the ResourceSet object, template included), and nowhere else. So a diff harness
//! blind to what ResourceSets generate fails its proof.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{ClusterRender, KustomizationRender, RepoRender};

/// (cluster, artifact id) pairs.
type Targets = BTreeSet<(String, String)>;

/// A template canary to plant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateCanary {
    /// The file that declares the ResourceSet, relative to the repository root.
    pub file: String,
    /// The line (0-based) whose value gets the canary.
    pub line: usize,
    /// (cluster, artifact id) of every artifact it must show up in.
    pub expected: Targets,
}

/// The ResourceSet object `entry` renders, as its parent's template holds it (with its
/// origin), and the parent.
fn declared<'a>(
    c: &'a ClusterRender,
    entry: &KustomizationRender,
) -> Option<(&'a KustomizationRender, String)> {
    let rset = crate::model::resourceset_of(entry)?;
    let parent = c
        .kustomizations
        .iter()
        .find(|k| Some(&k.kustomization.id) == entry.parent.as_ref())?;
    let file = parent
        .template
        .iter()
        .flat_map(|a| &a.objects)
        .find(|o| {
            crate::flux::is_resourceset(&o.object)
                && o.id.name == rset.name
                && (o.id.namespace == rset.namespace
                    || (o.id.namespace.is_empty() && rset.namespace == "default"))
        })?
        .origin
        .as_ref()?
        .path
        .clone()?;
    Some((parent, file))
}

/// The template canary for `head` (rendered with origins), when some rendered ResourceSet's
/// file has a line that fits.
#[must_use]
pub fn template_canary(head: &RepoRender) -> Option<TemplateCanary> {
    // file -> (expected artifacts, outputs of its ResourceSets, the entries)
    let mut files: BTreeMap<String, (Targets, Vec<&KustomizationRender>)> = BTreeMap::new();
    for c in &head.clusters {
        for r in c
            .kustomizations
            .iter()
            .filter(|k| crate::model::is_resourceset_entry(k) && k.artifact.is_some())
        {
            let Some((parent, file)) = declared(c, r) else {
                continue;
            };
            let e = files.entry(file).or_default();
            e.0.insert((c.name.clone(), parent.kustomization.id.to_string()));
            e.0.insert((c.name.clone(), r.kustomization.id.to_string()));
            e.1.push(r);
        }
    }
    for (file, (expected, entries)) in files {
        let Ok(text) = head.tree.fs().read_to_string(&head.tree.root().join(&file)) else {
            continue;
        };
        if let Some(line) = pick_line(&text, &entries) {
            return Some(TemplateCanary {
                file,
                line,
                expected,
            });
        }
    }
    None
}

/// Keys whose value names an object or decides what another render reads: a suffix there
/// would rename an object (a change that is not the canary's) or change a child's build.
const AVOID: &[&str] = &[
    "name",
    "namespace",
    "apiVersion",
    "kind",
    "path",
    "targetNamespace",
    "namePrefix",
    "nameSuffix",
    "url",
    "chart",
    "version",
    "interval",
    "timeout",
    "retryInterval",
    "serviceAccountName",
];

/// A `key: value` line inside a ResourceSet document's `resources` or `resourcesTemplate`
/// whose value is a plain string, whose literal parts (around `<< ... >>`) are in the
/// objects the ResourceSets generate, and only in objects that are not Flux Kustomizations
/// or HelmReleases (whose change would reach the renders they make). Lines without `<<`
/// first.
fn pick_line(text: &str, entries: &[&KustomizationRender]) -> Option<usize> {
    let re = regex::Regex::new(r"^\s*(?:-\s+)?([A-Za-z0-9_./-]+):[ \t]+(\S.*?)\s*$")
        .expect("static regex");
    let action = regex::Regex::new(r"<<.*?>>").expect("static regex");
    let typed = regex::Regex::new(r"(?i)^(-?[0-9][0-9._]*|true|false|null|yes|no|on|off|~)$")
        .expect("static regex");
    let objects: Vec<(bool, &str)> = entries
        .iter()
        .flat_map(|r| r.artifact.iter().flat_map(|a| &a.objects))
        .map(|o| {
            let flux_applier = (o.id.group == crate::flux::KUSTOMIZE_GROUP
                && o.id.kind == "Kustomization")
                || o.id.is_helm_release();
            (flux_applier, o.yaml.as_str())
        })
        .collect();
    let reaches = |v: &str| {
        let parts: Vec<&str> = action.split(v).filter(|p| !p.is_empty()).collect();
        if parts.is_empty() {
            return false;
        }
        let holding: Vec<bool> = objects
            .iter()
            .filter(|(_, y)| parts.iter().all(|p| y.contains(p)))
            .map(|(flux, _)| *flux)
            .collect();
        !holding.is_empty() && holding.iter().all(|flux| !flux)
    };
    let mut in_template = false;
    let mut template_indent = 0usize;
    let mut candidates: Vec<(usize, bool)> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let indent = l.len() - l.trim_start().len();
        let trimmed = l.trim();
        if crate::goyaml::stream::is_document_start(l) {
            in_template = false;
            continue;
        }
        if !in_template
            && (trimmed.starts_with("resources:") || trimmed.starts_with("resourcesTemplate:"))
        {
            in_template = true;
            template_indent = indent;
            continue;
        }
        if in_template
            && !trimmed.is_empty()
            && indent <= template_indent
            && !trimmed.starts_with('-')
        {
            in_template = false;
        }
        if !in_template {
            continue;
        }
        let Some(c) = re.captures(l) else {
            continue;
        };
        let (key, v) = (c.get(1)?.as_str(), c.get(2)?.as_str());
        if AVOID.contains(&key)
            || v.starts_with([
                '"', '\'', '{', '[', '|', '>', '&', '*', '!', '%', '@', '`', '#',
            ])
            || v.contains(" #")
            || v.contains('$')
            || typed.is_match(v)
            || v.starts_with("<<") && v.ends_with(">>") && action.find_iter(v).count() == 1
        {
            continue;
        }
        if reaches(v) {
            candidates.push((i, v.contains("<<")));
        }
    }
    candidates
        .iter()
        .find(|(_, templated)| !templated)
        .or_else(|| candidates.first())
        .map(|(i, _)| *i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(objects: &[(&str, &str)]) -> KustomizationRender {
        let yaml = objects.iter().fold(String::new(), |mut t, (_, y)| {
            t.push_str("---\n");
            t.push_str(y);
            t
        });
        let artifact = crate::artifact::Artifact::from_kustomize_output(yaml).unwrap();
        let kustomization = crate::flux::Kustomization::from_json(&serde_json::json!({
            "apiVersion": crate::model::RSET_API_VERSION, "kind": "ResourceSet",
            "metadata": {"name": "x/rset/a/b", "namespace": "flux-system"},
            "spec": {"path": ""}}))
        .unwrap();
        crate::model::KustomizationRender {
            artifact: Some(artifact),
            ..crate::model::KustomizationRender::new(
                kustomization,
                None,
                crate::model::Status::Rendered,
            )
        }
    }

    #[test]
    fn the_template_canary_line_is_a_plain_value_that_reaches_a_generated_object() {
        let text = "apiVersion: fluxcd.controlplane.io/v1\nkind: ResourceSet\nmetadata:\n  name: apps\nspec:\n  inputs:\n    - tenant: web\n  resources:\n    - apiVersion: v1\n      kind: ConfigMap\n      metadata:\n        name: << inputs.tenant >>\n        labels:\n          team: platform\n      data:\n        greeting: hello << inputs.tenant >>\n    - apiVersion: kustomize.toolkit.fluxcd.io/v1\n      kind: Kustomization\n      metadata:\n        name: << inputs.tenant >>\n      spec:\n        prune: enabled-flag\n";
        let r = entry(&[
            ("cm", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    team: platform\n  name: web\ndata:\n  greeting: hello web\n"),
            ("ks", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: web\nspec:\n  prune: enabled-flag\n"),
        ]);
        // `team: platform` has no action and reaches the ConfigMap; `tenant: web` is an
        // input, not the template; `prune` reaches only a Kustomization.
        assert_eq!(pick_line(text, &[&r]), Some(13));
        let text = text.replace("team: platform", "team: \"platform\"");
        assert_eq!(pick_line(&text, &[&r]), Some(15));
    }
}
