//! The input closure of a build: every file `kustomize build DIR` can read, found by reading
//! the kustomization files, and its digest, which keys the content-addressed build cache.
//!
//! Written by hand because it is fluxsim's own (kustomize has no "list my inputs"). It is
//! deliberately conservative: every string anywhere in a kustomization file that names an
//! existing file or folder next to it counts as an input (so `resources`, `components`,
//! patches' `path`, generator `files`/`envs`, `configurations`, `openapi.path`, replacements
//! and transformer files are all covered without listing fields); a folder with a
//! kustomization file is followed, a folder without one counts with everything under it.
//! What cannot be read offline and byte-stably — a remote base (`https://`, `git@`,
//! `github.com/...`) or `helmCharts` (charts are downloaded) — makes the build uncacheable.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::source::view;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::generate::{hex, KUSTOMIZATION_FILES};

/// The files a build reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closure {
    /// Each input file, by its path relative to the built folder (`../base/x.yaml`), with
    /// the SHA-256 of its content.
    pub files: BTreeMap<String, String>,
}

impl Closure {
    /// The digest of the closure: paths relative to the built folder and contents, so the
    /// same inputs in two temporary copies (base and head, dev and prod) give the same digest.
    #[must_use]
    pub fn digest(&self) -> String {
        let mut h = Sha256::new();
        for (path, sha) in &self.files {
            h.update(path.as_bytes());
            h.update([0]);
            h.update(sha.as_bytes());
            h.update([0]);
        }
        hex(&h.finalize())
    }

    /// The input files relative to the source root, given the built folder's path relative
    /// to it (`.` for the root). Paths that climb above the root are left out.
    #[must_use]
    pub fn source_files(&self, build_dir: &str) -> BTreeSet<String> {
        self.files
            .keys()
            .filter_map(|p| crate::source::clean_relative(&format!("{build_dir}/{p}")))
            .collect()
    }
}

/// Why a build's inputs cannot be pinned down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Uncacheable {
    /// A remote base or chart: the output depends on the network.
    Remote(String),
}

/// Finds the input closure of building `dir`.
pub fn closure(dir: &Path) -> Result<Closure, Uncacheable> {
    closure_with(dir, None)
}

/// Finds the input closure of building `dir` as if its kustomization file were `file`
/// (name, content): the closure of a generated overlay, found without making the overlay.
pub fn closure_with(dir: &Path, file: Option<(&str, &str)>) -> Result<Closure, Uncacheable> {
    let mut c = Closure {
        files: BTreeMap::new(),
    };
    let mut seen = BTreeSet::new();
    visit_dir(dir, "", file, &mut c, &mut seen)?;
    Ok(c)
}

fn add_file(path: &Path, rel: &str, c: &mut Closure) {
    let rel = crate::source::clean_relative(rel).unwrap_or_else(|| rel.to_string());
    if c.files.contains_key(&rel) {
        return;
    }
    // An unreadable file counts with an empty digest: the build will fail on it anyway.
    let sha = view::read(path)
        .map(|b| hex(&Sha256::digest(&b)))
        .unwrap_or_default();
    c.files.insert(rel, sha);
}

fn visit_dir(
    dir: &Path,
    rel: &str,
    file: Option<(&str, &str)>,
    c: &mut Closure,
    seen: &mut BTreeSet<std::path::PathBuf>,
) -> Result<(), Uncacheable> {
    let canonical = view::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !seen.insert(canonical) {
        return Ok(());
    }
    let join = |name: &str| {
        if rel.is_empty() {
            name.to_string()
        } else {
            format!("{rel}/{name}")
        }
    };
    let (kfile, text) = if let Some((name, content)) = file {
        let rel = join(name);
        c.files
            .entry(crate::source::clean_relative(&rel).unwrap_or(rel))
            .or_insert_with(|| hex(&Sha256::digest(content.as_bytes())));
        (name.to_string(), content.to_string())
    } else if let Some(kfile) = KUSTOMIZATION_FILES
        .iter()
        .find(|f| view::is_file(&dir.join(f)))
    {
        let kpath = dir.join(kfile);
        add_file(&kpath, &join(kfile), c);
        (
            (*kfile).to_string(),
            view::read_to_string(&kpath).unwrap_or_default(),
        )
    } else {
        // A folder without a kustomization: everything under it counts.
        for e in view::read_dir(dir).unwrap_or_default() {
            let name = e.name.to_string_lossy().into_owned();
            let p = dir.join(&e.name);
            if e.is_dir {
                visit_dir(&p, &join(&name), None, c, seen)?;
            } else if view::is_file(&p) {
                add_file(&p, &join(&name), c);
            }
        }
        return Ok(());
    };
    let kfile = kfile.as_str();
    let Ok(doc) = crate::manifest::parse_object(&text) else {
        return Ok(());
    };
    if doc.get("helmCharts").is_some() || doc.get("helmChartInflationGenerator").is_some() {
        return Err(Uncacheable::Remote(format!("{}: helmCharts", join(kfile))));
    }
    for field in ["resources", "components", "bases", "crds"] {
        for s in doc
            .get(field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(s) = s.as_str() {
                if is_remote(s) {
                    return Err(Uncacheable::Remote(format!("{}: {s}", join(kfile))));
                }
            }
        }
    }
    let mut strings = Vec::new();
    collect_strings(&doc, &mut strings);
    for s in strings {
        // Generator entries are `key=path` or `path`.
        let candidates = [Some(s.as_str()), s.split_once('=').map(|(_, p)| p)];
        for cand in candidates.into_iter().flatten() {
            if cand.is_empty() || cand.len() > 4096 || cand.contains('\0') || cand.contains('\n') {
                continue;
            }
            let p = dir.join(cand);
            if view::is_dir(&p) {
                visit_dir(&p, &join(cand), None, c, seen)?;
            } else if view::is_file(&p) {
                add_file(&p, &join(cand), c);
            }
        }
    }
    Ok(())
}

fn is_remote(s: &str) -> bool {
    s.contains("://") || s.starts_with("git@") || s.starts_with("github.com/")
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tree;

    #[test]
    fn closure_follows_resources_components_patches_and_generator_files() {
        let t = tree(&[
            (
                "app/kustomization.yaml",
                "resources: [deploy.yaml, ../base]\ncomponents: [../comp]\npatches:\n- path: patch.yaml\nconfigMapGenerator:\n- name: c\n  files: [conf=settings.ini]\n",
            ),
            ("app/deploy.yaml", "a"),
            ("app/patch.yaml", "b"),
            ("app/settings.ini", "c"),
            ("app/unused.yaml", "not read"),
            ("base/kustomization.yaml", "resources: [svc.yaml]\n"),
            ("base/svc.yaml", "d"),
            ("comp/kustomization.yaml", "kind: Component\n"),
        ]);
        let c = closure(&t.path().join("app")).unwrap();
        let files: Vec<&str> = c.files.keys().map(String::as_str).collect();
        assert_eq!(
            files,
            vec![
                "../base/kustomization.yaml",
                "../base/svc.yaml",
                "../comp/kustomization.yaml",
                "deploy.yaml",
                "kustomization.yaml",
                "patch.yaml",
                "settings.ini",
            ]
        );
        assert_eq!(
            c.source_files("app").into_iter().collect::<Vec<_>>(),
            vec![
                "app/deploy.yaml",
                "app/kustomization.yaml",
                "app/patch.yaml",
                "app/settings.ini",
                "base/kustomization.yaml",
                "base/svc.yaml",
                "comp/kustomization.yaml",
            ]
        );
    }

    #[test]
    fn closure_digest_is_the_same_for_the_same_inputs_elsewhere_and_changes_with_content() {
        let files = [
            ("k/kustomization.yaml", "resources: [a.yaml]\n"),
            ("k/a.yaml", "x"),
        ];
        let (one, two) = (tree(&files), tree(&files));
        let d1 = closure(&one.path().join("k")).unwrap().digest();
        assert_eq!(d1, closure(&two.path().join("k")).unwrap().digest());
        std::fs::write(two.path().join("k/a.yaml"), "y").unwrap();
        assert_ne!(d1, closure(&two.path().join("k")).unwrap().digest());
    }

    #[test]
    fn remote_bases_and_helm_charts_are_uncacheable() {
        let t = tree(&[
            (
                "r/kustomization.yaml",
                "resources: [https://github.com/x/y//z?ref=v1]\n",
            ),
            (
                "h/kustomization.yaml",
                "helmCharts:\n- name: c\n  repo: https://charts\n",
            ),
        ]);
        assert!(matches!(
            closure(&t.path().join("r")),
            Err(Uncacheable::Remote(_))
        ));
        assert!(matches!(
            closure(&t.path().join("h")),
            Err(Uncacheable::Remote(_))
        ));
    }
}
