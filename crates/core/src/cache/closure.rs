//! The input closure of a build: every file `kustomize build DIR` can read, found by reading
//! the kustomization files, and its digest, which keys the content-addressed build cache.
//!
//! Written by hand because it is fluxsim's own (kustomize has no "list my inputs"). It is
//! deliberately conservative, for the cache's sake: every string anywhere in a kustomization
//! file that names an existing file or folder next to it counts as an input (so `resources`,
//! `components`, patches' `path`, generator `files`/`envs`, `configurations`, `openapi.path`,
//! replacements and transformer files are all covered without listing fields); a folder with
//! a kustomization file is followed, a folder without one counts with everything under it.
//! An input too many only costs a cache miss; one too few would serve a stale build.
//!
//! What a build fetches is decided apart, exactly, on the fields kustomize reads
//! ([`super::remote`]): a remote entry there makes the build [`Uncacheable::Network`], and
//! `helmCharts` (charts are downloaded) [`Uncacheable::Remote`]; a string elsewhere (a
//! `namespace:` beside a folder of that name holding a URL) never does.
//!
//! The closure is also the security check for builds handed to the kustomize binary, which
//! reads the disk itself: a path named by a kustomization that leaves the source root (a
//! relative path climbing above it, or an absolute path to an existing file elsewhere, such
//! as `/etc/passwd` or the repository's own `.git/config`) fails the build before the binary
//! runs, as Flux's secure file system fails it (fluxcd/pkg `kustomize/filesys/fs_secure.go`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::source::view::clean;
use crate::source::SourceFs;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::digest::hex;
use fluxsim_kustomize::KUSTOMIZATION_FILES;

/// The most a build may read, all its files together (each file is bounded by
/// [`crate::source::MAX_FILE_BYTES`] too).
pub const MAX_BUILD_BYTES: u64 = 1 << 30;

/// The files a build reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closure {
    /// Each input file, by its path relative to the built folder (`../base/x.yaml`), with
    /// the SHA-256 of its content.
    pub files: BTreeMap<String, String>,
    /// The files of `files` a kustomization names as its `openapi: {path: ...}` schema.
    pub schemas: BTreeSet<String>,
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

    /// [`Self::schemas`] relative to the source root, as [`Self::source_files`] gives them.
    #[must_use]
    pub fn source_schemas(&self, build_dir: &str) -> BTreeSet<String> {
        self.schemas
            .iter()
            .filter_map(|p| crate::source::clean_relative(&format!("{build_dir}/{p}")))
            .collect()
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
    /// `helmCharts`: kustomize-controller does not enable Helm, so the build fails; it is
    /// not cached, and reaches nothing.
    Remote(String),
    /// Something kustomize would fetch over the network (a remote base, a URL in a file
    /// field): only built when the network is allowed.
    Network {
        /// The kustomization file naming it, relative to the built folder.
        kustomization: String,
        /// What it names, as written.
        url: String,
    },
    /// The build reads more than [`MAX_BUILD_BYTES`]: refused before any builder runs.
    TooLarge {
        /// The bytes its files hold.
        bytes: u64,
    },
    /// A kustomization names a path outside the source root: Flux refuses to read it.
    Outside {
        /// The kustomization file, relative to the built folder.
        kustomization: String,
        /// The path as the kustomization writes it.
        path: String,
    },
}

impl Uncacheable {
    /// Flux's error for a path outside the root (fs_secure.go), naming the kustomization;
    /// `None` for a remote input, which is no error.
    #[must_use]
    pub fn security_error(&self) -> Option<String> {
        match self {
            Uncacheable::Remote(_) | Uncacheable::Network { .. } => None,
            Uncacheable::TooLarge { bytes } => Some(format!(
                "the build reads {} MiB, more than fluxsim's bound of {} MiB per build",
                bytes >> 20,
                MAX_BUILD_BYTES >> 20
            )),
            Uncacheable::Outside {
                kustomization,
                path,
            } => Some(format!(
                "{kustomization}: fs-security-constraint read {path}: path '{path}' is not in or below the source root"
            )),
        }
    }
}

/// Finds the input closure of building `dir` of the source `fs` as if its kustomization file
/// were `file` (name, content): the closure of a generated overlay, found without making the
/// overlay. Everything must stay in the source root ([`Uncacheable::Outside`] otherwise); a
/// remote input makes it [`Uncacheable::Network`] (or `helmCharts`
/// [`Uncacheable::Remote`]) once every local path has been checked.
pub fn closure_in(
    fs: &SourceFs,
    dir: &Path,
    file: Option<(&str, &str)>,
) -> Result<Closure, Uncacheable> {
    closure_with(fs, dir, file, &BTreeMap::new())
}

/// [`closure_in`], each kustomization file of `overrides` (by its path in the source) read as
/// the content there instead of the file's (a build with its remote entries left out).
pub fn closure_with(
    fs: &SourceFs,
    dir: &Path,
    file: Option<(&str, &str)>,
    overrides: &BTreeMap<PathBuf, String>,
) -> Result<Closure, Uncacheable> {
    let mut c = Closure {
        files: BTreeMap::new(),
        schemas: BTreeSet::new(),
    };
    let mut walk = Walk {
        fs,
        overrides,
        seen: BTreeSet::new(),
        bytes: 0,
    };
    visit_dir(dir, "", file, &mut c, &mut walk)?;
    let fetched = super::remote::fetches(fs, dir, file, overrides);
    if let Some(first) = fetched.remote.into_iter().next() {
        return Err(Uncacheable::Network {
            kustomization: first.kustomization,
            url: first.url,
        });
    }
    match fetched.helm {
        Some(why) => Err(Uncacheable::Remote(why)),
        None => Ok(c),
    }
}

/// What a closure walk carries along.
struct Walk<'a> {
    /// The source, whose root nothing may leave.
    fs: &'a SourceFs,
    /// Kustomization files read as this content instead of the file's (by path, cleaned).
    overrides: &'a BTreeMap<PathBuf, String>,
    /// Folders already visited (resolved).
    seen: BTreeSet<std::path::PathBuf>,
    /// The bytes of the files added so far.
    bytes: u64,
}

impl Walk<'_> {
    /// Whether the candidate `cand`, named in a kustomization of `dir`, leaves the root: it
    /// climbs above it, or is an absolute path to something that exists elsewhere (an
    /// absolute string that names nothing, such as a JSON patch's `/spec/replicas`, is no
    /// path).
    ///
    /// An absolute path to an existing file counts even inside the root: Flux reads the
    /// source from an artifact folder of its own, so such a path never names the source
    /// there, while the kustomize binary would read it where it is (the repository's
    /// `.git/config`, which is not in the source). Whether it exists is asked of the
    /// machine's disk, on purpose: that is where the kustomize binary would read it.
    fn leaves_root(&self, dir: &Path, cand: &str) -> bool {
        let p = clean(&dir.join(cand));
        if Path::new(cand).is_absolute() {
            return std::fs::symlink_metadata(&p).is_ok();
        }
        !self.fs.contains(&p)
    }
}

fn add_file(
    walk: &mut Walk<'_>,
    path: &Path,
    rel: &str,
    c: &mut Closure,
) -> Result<(), Uncacheable> {
    let rel = crate::source::clean_relative(rel).unwrap_or_else(|| rel.to_string());
    if c.files.contains_key(&rel) {
        return Ok(());
    }
    // An unreadable file counts with an empty digest: the build will fail on it anyway.
    let bytes = match walk.overrides.get(&clean(path)) {
        Some(text) => Ok(text.clone().into_bytes()),
        None => walk.fs.read(path),
    };
    let sha = bytes
        .map(|b| {
            walk.bytes += b.len() as u64;
            hex(&Sha256::digest(&b))
        })
        .unwrap_or_default();
    c.files.insert(rel, sha);
    if walk.bytes > MAX_BUILD_BYTES {
        return Err(Uncacheable::TooLarge { bytes: walk.bytes });
    }
    Ok(())
}

fn visit_dir(
    dir: &Path,
    rel: &str,
    file: Option<(&str, &str)>,
    c: &mut Closure,
    walk: &mut Walk<'_>,
) -> Result<(), Uncacheable> {
    let fs = walk.fs;
    let canonical = fs.canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    if !walk.seen.insert(canonical) {
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
        .find(|f| fs.is_file(&dir.join(f)) || walk.overrides.contains_key(&clean(&dir.join(f))))
    {
        let kpath = dir.join(kfile);
        add_file(walk, &kpath, &join(kfile), c)?;
        let text = match walk.overrides.get(&clean(&kpath)) {
            Some(text) => text.clone(),
            None => fs.read_to_string(&kpath).unwrap_or_default(),
        };
        ((*kfile).to_string(), text)
    } else {
        // A folder without a kustomization: everything under it counts.
        for e in fs.read_dir(dir).unwrap_or_default() {
            let name = e.name.to_string_lossy().into_owned();
            let p = dir.join(&e.name);
            if e.is_dir {
                visit_dir(&p, &join(&name), None, c, walk)?;
            } else if fs.is_file(&p) {
                add_file(walk, &p, &join(&name), c)?;
            }
        }
        return Ok(());
    };
    let kfile = kfile.as_str();
    let Ok(doc) = crate::manifest::parse_shared(&text) else {
        return Ok(());
    };
    if let Some(schema) = doc
        .get("openapi")
        .and_then(|o| o.get("path"))
        .and_then(Value::as_str)
        .filter(|p| !is_remote(p) && fs.is_file(&dir.join(p)))
    {
        let rel = join(schema);
        c.schemas
            .insert(crate::source::clean_relative(&rel).unwrap_or(rel));
    }
    let mut strings = Vec::new();
    collect_strings(&doc, &mut strings);
    // The file fields of the plugin configurations `generators`, `transformers` and
    // `validators` list: kustomize loads them with this kustomization's loader
    // (`kusttarget.go` `configureExternalTransformers`: `LoadTransformers(kt.ldr, ...)`), so
    // a PatchTransformer's `path: patch.yaml` is read next to this kustomization file.
    strings.extend(plugin_config_files(fs, dir, &doc));
    for s in strings {
        // Generator entries are `key=path` or `path`.
        let candidates = [s.split_once('=').map(|(_, p)| p), Some(s.as_str())];
        for cand in candidates.into_iter().flatten() {
            if cand.is_empty() || cand.len() > 4096 || cand.contains('\0') || cand.contains('\n') {
                continue;
            }
            if is_remote(cand) {
                continue;
            }
            if walk.leaves_root(dir, cand) {
                return Err(Uncacheable::Outside {
                    kustomization: join(kfile),
                    path: cand.to_string(),
                });
            }
            let p = dir.join(cand);
            if fs.is_dir(&p) {
                visit_dir(&p, &join(cand), None, c, walk)?;
            } else if fs.is_file(&p) {
                add_file(walk, &p, &join(cand), c)?;
            }
        }
    }
    Ok(())
}

/// The files the plugin configurations of the kustomization `doc` (in `dir`) name in their
/// file fields ([`super::remote::plugin_references`]): inline configurations, configuration files, and the
/// files of a folder listed there (a kustomization of configurations, every file under it
/// taken as one). Paths are as written, relative to `dir`.
fn plugin_config_files(fs: &SourceFs, dir: &Path, doc: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut take = |r: &str| out.push(r.to_string());
    for field in ["generators", "transformers", "validators"] {
        let entries = doc
            .get(field)
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for entry in entries.filter_map(Value::as_str) {
            if entry.contains('\n') {
                super::remote::plugin_references(entry, &mut take);
                continue;
            }
            if is_remote(entry) || entry.len() > 4096 || entry.contains('\0') {
                continue;
            }
            let p = clean(&dir.join(entry));
            if !fs.contains(&p) {
                continue;
            }
            let mut files = Vec::new();
            if fs.is_file(&p) {
                files.push(p);
            } else if fs.is_dir(&p) {
                files_under(fs, &p, &mut files);
            }
            for f in files {
                if let Ok(text) = fs.read_to_string(&f) {
                    super::remote::plugin_references(&text, &mut take);
                }
            }
        }
    }
    out
}

/// Every file under the folder `dir` of `fs`.
fn files_under(fs: &SourceFs, dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in fs.read_dir(dir).unwrap_or_default() {
        let p = dir.join(&e.name);
        if e.is_dir {
            files_under(fs, &p, out);
        } else {
            out.push(p);
        }
    }
}

/// Whether the closure takes `s` for a URL rather than a path of the tree: a URL of any
/// scheme, a go-getter `git::` or `ext::` prefix, an SCP-style `user@host:path`, or GitHub's
/// `github.com/org/repo` shorthand. Such a string is never read from the disk nor checked
/// as a path leaving the root. Deliberately wider than kustomize's own parse; whether a
/// build fetches it is [`super::remote`]'s exact decision, on kustomize's fields.
fn is_remote(s: &str) -> bool {
    let s = s.trim();
    if s.contains('\n') {
        return false;
    }
    let scheme_like = |prefix: &str| {
        !prefix.is_empty()
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
    };
    if s.find("://").is_some_and(|i| scheme_like(&s[..i])) {
        return true;
    }
    if s.find("::").is_some_and(|i| scheme_like(&s[..i])) {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    if lower.starts_with("github.com/") || lower.starts_with("github.com:") {
        return true;
    }
    // `git@github.com:org/repo`: a user, a host, a colon, before any slash.
    let head = s.split('/').next().unwrap_or_default();
    head.split_once('@')
        .is_some_and(|(user, host)| !user.is_empty() && host.contains(':'))
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
    use crate::testutil::{source_fs, tree};

    /// The closure of building `dir` of the folder `t`, as a source.
    fn closure(dir: &Path) -> Result<Closure, Uncacheable> {
        let fs = source_fs(dir.parent().expect("a folder of the source"));
        closure_in(&fs, &fs.root().join(dir.file_name().expect("a name")), None)
    }

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

    // kustomize api/internal/target/kusttarget.go configureExternalTransformers: a builtin
    // plugin configuration's file fields are read with the listing kustomization's loader,
    // so `path: patch.yaml` of a PatchTransformer listed in `transformers` is next to the
    // kustomization (kustomize-controller's `file-transformer` testdata).
    #[test]
    fn builtin_plugin_config_files_are_in_the_closure_relative_to_the_kustomization() {
        let t = tree(&[
            (
                "app/kustomization.yaml",
                "resources: [cm.yaml]\ntransformers: [patch-transformer.yaml, configs]\ngenerators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata: {name: g}\n  files: [k=inline.txt]\n",
            ),
            ("app/cm.yaml", "a"),
            (
                "app/patch-transformer.yaml",
                "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: p}\npath: patch.yaml\n",
            ),
            ("app/patch.yaml", "b"),
            ("app/inline.txt", "c"),
            ("app/configs/kustomization.yaml", "resources: [smp.yaml]\n"),
            (
                "app/configs/smp.yaml",
                "apiVersion: builtin\nkind: PatchStrategicMergeTransformer\nmetadata: {name: s}\npaths: [smp-patch.yaml]\n",
            ),
            ("app/smp-patch.yaml", "d"),
            ("app/unused.yaml", "not read"),
        ]);
        let c = closure(&t.path().join("app")).unwrap();
        let files: Vec<&str> = c.files.keys().map(String::as_str).collect();
        assert_eq!(
            files,
            vec![
                "cm.yaml",
                "configs/kustomization.yaml",
                "configs/smp.yaml",
                "inline.txt",
                "kustomization.yaml",
                "patch-transformer.yaml",
                "patch.yaml",
                "smp-patch.yaml",
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

    // fluxcd/pkg kustomize/filesys/fs_secure.go: kustomize-controller builds on a file
    // system that refuses every path outside the artifact root.
    #[test]
    fn a_path_leaving_the_source_root_fails_the_closure_naming_the_kustomization() {
        let t = tree(&[
            (
                "repo/app/kustomization.yaml",
                "configMapGenerator:\n- name: c\n  files: [passwd=../../../../../../../../etc/passwd]\n",
            ),
            ("repo/abs/kustomization.yaml", "resources: [/etc/passwd]\n"),
            ("repo/up/kustomization.yaml", "resources: [../../secret.yaml]\n"),
            ("secret.yaml", "kind: Secret\n"),
            (
                "repo/ok/kustomization.yaml",
                "resources: [../app2]\npatches:\n- target: {kind: Deployment}\n  patch: '[{\"op\": \"remove\", \"path\": \"/spec/replicas\"}]'\n- path: /spec/template\n",
            ),
            ("repo/app2/kustomization.yaml", "resources: []\n"),
        ]);
        let fs = source_fs(&t.path().join("repo"));
        let root = fs.root();
        for (dir, kustomization, path) in [
            (
                "app",
                "kustomization.yaml",
                "../../../../../../../../etc/passwd",
            ),
            ("abs", "kustomization.yaml", "/etc/passwd"),
            ("up", "kustomization.yaml", "../../secret.yaml"),
        ] {
            let err = closure_in(&fs, &root.join(dir), None).unwrap_err();
            assert_eq!(
                err,
                Uncacheable::Outside {
                    kustomization: kustomization.into(),
                    path: path.into()
                },
                "{dir}"
            );
            assert!(err.security_error().unwrap().contains("is not in or below"));
        }
        // Absolute strings that name nothing on disk (JSON patch paths) are no paths.
        assert!(closure_in(&fs, &root.join("ok"), None).is_ok());
    }

    #[test]
    fn a_remote_input_does_not_hide_a_later_path_outside_the_root() {
        let t = tree(&[(
            "repo/k/kustomization.yaml",
            // Block style: in a flow sequence YAML 1.1 (yaml.v2, which kustomize reads its
            // kustomization with) ends a plain scalar at `?`.
            "resources:\n- https://github.com/x/y//z?ref=v1\n- ../../../etc/passwd\n",
        )]);
        let fs = source_fs(&t.path().join("repo"));
        assert!(matches!(
            closure_in(&fs, &fs.root().join("k"), None),
            Err(Uncacheable::Outside { .. })
        ));
    }

    // The cache stays conservative (the folder a `namespace:` names counts as an input, a
    // cache miss at worst), the network decision does not: kustomize never reads that
    // folder, so its URL makes nothing uncacheable (`remote.rs`).
    #[test]
    fn a_folder_only_a_non_file_field_names_is_an_input_but_its_url_is_never_fetched() {
        let t = tree(&[
            (
                "apps/kustomization.yaml",
                "namespace: tekton-operator\nresources: [cm.yaml]\n",
            ),
            ("apps/cm.yaml", "kind: ConfigMap\n"),
            (
                "apps/tekton-operator/kustomization.yaml",
                "resources:\n- https://github.com/tektoncd/operator/releases/download/v0.70.0/release.yaml\nhelmCharts:\n- name: c\n",
            ),
        ]);
        let c = closure(&t.path().join("apps")).unwrap();
        assert!(
            c.files.contains_key("tekton-operator/kustomization.yaml"),
            "{:?}",
            c.files
        );
    }

    #[test]
    fn remote_bases_and_helm_charts_are_uncacheable() {
        let t = tree(&[
            (
                "r/kustomization.yaml",
                "resources:\n- https://github.com/x/y//z?ref=v1\n",
            ),
            (
                "h/kustomization.yaml",
                "helmCharts:\n- name: c\n  repo: https://charts\n",
            ),
        ]);
        assert_eq!(
            closure(&t.path().join("r")),
            Err(Uncacheable::Network {
                kustomization: "kustomization.yaml".into(),
                url: "https://github.com/x/y//z?ref=v1".into()
            })
        );
        assert!(matches!(
            closure(&t.path().join("h")),
            Err(Uncacheable::Remote(_))
        ));
    }
}
