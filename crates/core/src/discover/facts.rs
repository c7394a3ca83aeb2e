//! What discovery reads of one YAML file ([`FileFacts`]): the documents that can make, imply
//! or describe a cluster root, and the kinds of those documents.

use std::path::Path;

use crate::flux::{is_kustomization, str_at, Kustomization, ObjectId};
use crate::source::SourceFs;

pub(crate) fn yaml_files(fs: &SourceFs, dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs.read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = dir.join(&e.name);
        if e.is_dir {
            yaml_files(fs, &p, out);
        } else if is_yaml_file(&p) {
            out.push(p);
        }
    }
}

/// Whether discovery reads the file at this path (relative or not): YAML by its extension.
#[must_use]
pub fn is_yaml_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|x| x.to_str()),
        Some("yaml" | "yml")
    )
}

/// What discovery takes from one YAML file: the documents that can make, imply or describe
/// a cluster root (Flux Kustomizations, GitRepositories, Flux Operator installs), in file
/// order. A function of the file's bytes alone, so it can be kept with a digest of them.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FileFacts(pub Vec<serde_json::Value>);

impl FileFacts {
    /// Reads the facts of a file's text (`None` when it is not UTF-8: no facts).
    #[must_use]
    pub fn of(text: Option<&str>) -> FileFacts {
        let Some(text) = text else {
            return FileFacts::default();
        };
        if !may_hold_facts(text) {
            return FileFacts::default();
        }
        FileFacts::read(text)
    }

    /// The facts of a text, reading every document.
    fn read(text: &str) -> FileFacts {
        let parsed: Vec<serde_json::Value> = crate::manifest::split_documents(text)
            .into_iter()
            .filter_map(|doc| crate::manifest::parse_document(doc).ok())
            .map(std::sync::Arc::unwrap_or_clone)
            .collect();
        // A kustomization file is one document.
        let kustomize = match parsed.as_slice() {
            [only] => kustomize_files(only),
            _ => None,
        };
        let docs = parsed
            .into_iter()
            .filter(|v| {
                let id = ObjectId::of(v);
                operator_sync_path(v, &id).is_some()
                    || is_git_repository(&id)
                    || is_artifact_generator(&id)
                    || is_kustomization(v)
            })
            .chain(kustomize)
            .collect();
        FileFacts(docs)
    }

    /// No document discovery looks at.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Whether reading `text` can give any fact, decided without reading it. A fact is a
/// document whose group holds `fluxcd` (a Flux Kustomization or GitRepository, a Flux
/// Operator install) or a kustomization listing `resources`, `components` or `bases`: the
/// YAML reading of a text only holds a string that the text does not when an escape
/// (`\`, in double quotes) or a tag (`!`, such as `!!binary`) makes it; line folding never
/// joins two words without a space. So a text with none of these words, no `\` and no `!`
/// gives no fact, whatever its documents are (most manifests of a repository).
fn may_hold_facts(text: &str) -> bool {
    const WORDS: [&str; 4] = ["fluxcd", "resources", "components", "bases"];
    text.contains(['\\', '!']) || WORDS.iter().any(|w| text.contains(w))
}

/// What of a kustomize kustomization (or component) an apply set is found by: its
/// `resources`, `components` and `bases`, as a `kustomize.config.k8s.io` document holding only
/// those (the whole document when it is one, as kustomize reads a kustomization file).
fn kustomize_files(v: &serde_json::Value) -> Option<serde_json::Value> {
    let api = v.get("apiVersion").and_then(serde_json::Value::as_str);
    let kind = v.get("kind").and_then(serde_json::Value::as_str);
    if !api.is_none_or(|a| a.starts_with("kustomize.config.k8s.io/"))
        || !kind.is_none_or(|k| k == "Kustomization" || k == "Component")
    {
        return None;
    }
    let mut out = serde_json::json!({
        "apiVersion": api.unwrap_or("kustomize.config.k8s.io/v1beta1"),
        "kind": kind.unwrap_or("Kustomization"),
    });
    let mut any = false;
    for field in ["resources", "components", "bases"] {
        if let Some(list) = v.get(field).filter(|l| l.is_array()) {
            out[field] = list.clone();
            any = true;
        }
    }
    any.then_some(out)
}

/// The local paths a kustomize document lists, when it is one ([`kustomize_files`]).
pub(super) fn kustomize_entries(v: &serde_json::Value) -> Option<(bool, Vec<&str>)> {
    if !str_at(v, &["apiVersion"]).is_some_and(|a| a.starts_with("kustomize.config.k8s.io/")) {
        return None;
    }
    let component = str_at(v, &["kind"]) == Some("Component");
    let entries = ["resources", "components", "bases"]
        .iter()
        .filter_map(|f| v.get(*f).and_then(serde_json::Value::as_array))
        .flatten()
        .filter_map(serde_json::Value::as_str)
        // Remote bases are not in the repository.
        .filter(|e| !e.contains("://") && !e.starts_with("github.com/") && !e.starts_with("git@"))
        .collect();
    Some((component, entries))
}

/// The Flux Kustomization `v` declares, unless the API server would refuse it: such a one is
/// never on a cluster, let alone its root.
pub(super) fn applicable(v: &serde_json::Value) -> Option<Kustomization> {
    Kustomization::from_json(v)
        .ok()
        .filter(|k| k.invalid.is_none())
}

pub(super) fn is_git_repository(id: &ObjectId) -> bool {
    id.kind == "GitRepository" && id.group == "source.toolkit.fluxcd.io"
}

pub(super) fn is_artifact_generator(id: &ObjectId) -> bool {
    id.kind == "ArtifactGenerator" && id.group == "source.extensions.fluxcd.io"
}

/// The sync path a Flux Operator install points at: `FluxInstance.spec.sync.path`, or a
/// HelmRelease's `values.instance.sync.path` (the `flux-instance` chart).
pub(super) fn operator_sync_path<'a>(v: &'a serde_json::Value, id: &ObjectId) -> Option<&'a str> {
    match (id.group.as_str(), id.kind.as_str()) {
        ("fluxcd.controlplane.io", "FluxInstance") => str_at(v, &["spec", "sync", "path"]),
        ("helm.toolkit.fluxcd.io", "HelmRelease") => {
            str_at(v, &["spec", "values", "instance", "sync", "path"])
        }
        _ => None,
    }
}

/// The repository URL a Flux Operator instance syncs (beside [`operator_sync_path`]).
pub(super) fn operator_sync_url<'a>(v: &'a serde_json::Value, id: &ObjectId) -> Option<&'a str> {
    match (id.group.as_str(), id.kind.as_str()) {
        ("fluxcd.controlplane.io", "FluxInstance") => str_at(v, &["spec", "sync", "url"]),
        ("helm.toolkit.fluxcd.io", "HelmRelease") => {
            str_at(v, &["spec", "values", "instance", "sync", "url"])
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The prefilter of `FileFacts::of` only skips texts that give no fact when read: every
    // YAML file of testdata and the corpus-like shapes below, with the words spelled in
    // ways that read as something else.
    #[test]
    fn texts_the_prefilter_skips_give_no_fact_when_read() {
        let mut texts: Vec<String> = vec![
            "apiVersion: kustomize.toolkit.flux\n  cd.io/v1\nkind: Kustomization\nmetadata: {name: a}\nspec: {path: ./x}\n".into(),
            "apiVersion: 'kustomize.toolkit.flux''cd.io/v1'\nkind: Kustomization\n".into(),
            "kind: Kustomization\nresource: [a.yaml]\nbase: [b]\n".into(),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".into(),
        ];
        let mut dirs = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata"
        ))];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if is_yaml_file(&p) {
                    if let Ok(t) = std::fs::read_to_string(&p) {
                        texts.push(t);
                    }
                }
            }
        }
        assert!(texts.len() > 300, "{} texts", texts.len());
        let mut skipped = 0;
        for t in &texts {
            if !may_hold_facts(t) {
                skipped += 1;
                assert!(FileFacts::read(t).is_empty(), "{t}");
            }
            assert_eq!(FileFacts::of(Some(t)), FileFacts::read(t), "{t}");
        }
        assert!(skipped > 50, "{skipped} skipped");
        // An escape or a tag can make the words: such texts are read.
        for t in [
            "apiVersion: \"kustomize.toolkit.\\x66luxcd.io/v1\"\nkind: Kustomization\nmetadata: {name: a}\nspec: {path: ./x}\n",
            "apiVersion: !!binary a3VzdG9taXplLnRvb2xraXQuZmx1eGNkLmlvL3Yx\nkind: Kustomization\nmetadata: {name: a}\nspec: {path: ./x}\n",
        ] {
            assert!(may_hold_facts(t));
            assert!(!FileFacts::of(Some(t)).is_empty(), "{t}");
        }
    }
}
