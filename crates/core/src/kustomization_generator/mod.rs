//! Flux's generator: make the kustomization a Flux Kustomization's `spec.path` is built from.
//!
//! As `fluxcd/pkg/kustomize/kustomize_generator.go` does: when the path has no kustomization
//! file, one is made listing every manifest (recursively, stopping at directories that have
//! their own kustomization file); then `targetNamespace`, `namePrefix`, `nameSuffix`,
//! `patches`, `images` (field by field into an entry of the same name), `components` and
//! `buildMetadata` are merged in, and an existing kustomization without `resources` is given
//! `buildMetadata: [originAnnotations]` (Flux's guard against "kustomization.yaml is empty",
//! which keeps the origin annotations in what it applies). Flux writes the result into its copy
//! of the source; fluxsim never writes into the tree it renders from: it writes the file into
//! a private overlay directory whose other entries are symbolic links to the tree.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::source::{BuildIgnore, SourceFs};
use serde_json::{json, Value};

use crate::flux::Kustomization;

/// File names kustomize recognises, in its order of preference (`konfig`).
pub use crate::kustomize::native::KUSTOMIZATION_FILES;
use crate::source::spec_dir;

crate::message_error! {
    /// A manifest file Flux's generator would not list (not a Kubernetes object).
    pub struct ManifestError;
}

/// Why a path cannot be prepared for building.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GenerateError {
    /// `spec.path` does not exist in the source.
    #[error("spec.path `{0}` does not exist in the source")]
    PathNotFound(String),
    /// `spec.path` leaves the source root.
    #[error("spec.path `{0}` is not a directory")]
    NotADirectory(String),
    /// A manifest in a path without kustomization file does not decode.
    #[error("failed to decode Kubernetes YAML from {file}: {message}")]
    BadManifest {
        /// The file, relative to the source root.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// The existing kustomization file does not parse (Flux's generator fails on it).
    #[error("kustomize create failed: {file}: {message}")]
    BadKustomization {
        /// The file, relative to the source root.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A component listed in `spec.components` is missing.
    #[error("component `{0}` not found (set spec.ignoreMissingComponents to skip it)")]
    MissingComponent(String),
    /// Filesystem trouble while preparing the overlay.
    #[error("preparing the build directory: {0}")]
    Io(String),
}

/// The ignore rules `flux build kustomization --ignore-paths` gives Flux's generator for one
/// Kustomization of one cluster (`fluxsim build --ignore-paths`), and the files they bring
/// back into that cluster's source (see `source::Tree::build_ignore`).
#[derive(Debug, Clone)]
pub struct IgnoreFor {
    /// The cluster.
    pub cluster: String,
    /// The Kustomization, `NAME` or `NAMESPACE/NAME`.
    pub kustomization: String,
    /// The patterns as given, one a line.
    pub patterns: String,
    /// The rules.
    pub rules: Arc<BuildIgnore>,
    /// The files the rules bring back, by path relative to the source root, with their bytes.
    pub revealed: Arc<std::collections::BTreeMap<PathBuf, Vec<u8>>>,
}

impl IgnoreFor {
    /// The rules, when they are for `ks` of `cluster`.
    #[must_use]
    pub fn for_kustomization(&self, cluster: &str, ks: &Kustomization) -> Option<&BuildIgnore> {
        let named = self.kustomization == ks.id.to_string() || self.kustomization == ks.id.name;
        (cluster == self.cluster && named).then_some(&*self.rules)
    }
}

/// A directory ready for `kustomize build`.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The folder of `spec.path` in the tree.
    pub source_dir: PathBuf,
    /// `spec.path` relative to the source root, normalised (`.` for the root).
    pub rel_path: String,
    /// Identifies the build within a tree: the path and the kustomization file fluxsim wrote.
    pub key: String,
    /// The kustomization file fluxsim wrote, when it wrote one.
    pub generated: Option<String>,
    /// The user's kustomization asks for origin annotations itself: they are kept.
    pub user_origins: bool,
    /// The kustomization file fluxsim writes for the build (name, content), when it writes
    /// one: it goes into a private overlay folder, made only when a build must run.
    pub file: Option<(String, String)>,
    /// Kustomization files of the tree that the build reads as this content instead (by
    /// their path in the source): the files of [`Self::without_remote`]. Empty otherwise.
    overrides: std::collections::BTreeMap<PathBuf, String>,
    /// The source, which the overlay mirrors.
    fs: SourceFs,
    /// The overlay, once made (kept alive as long as the `Prepared`).
    overlay: std::sync::OnceLock<Result<OnDisk, GenerateError>>,
}

/// Where a build handed to the kustomize binary reads its inputs on disk.
#[derive(Debug, Clone)]
enum OnDisk {
    /// A folder of the build's own (its closure, or a link overlay), removed with it.
    Own(Arc<tempfile::TempDir>),
    /// The copy of what Flux would see of the whole tree (the source's own copy).
    TreeCopy(PathBuf),
}

impl Prepared {
    /// Where to run the build on disk, for the kustomize binary (made on first call): a
    /// private folder holding only the build's input closure (checked to stay in the
    /// source root) with fluxsim's kustomization file, so the binary reads nothing else of
    /// the machine or of the tree. A build whose inputs cannot be pinned down (a remote
    /// base, `helmCharts`) gets what Flux would see of the whole tree instead.
    pub fn dir(&self) -> Result<PathBuf, GenerateError> {
        let io = |e: std::io::Error| GenerateError::Io(e.to_string());
        let made = self
            .overlay
            .get_or_init(|| match self.closure() {
                Ok(closure) => self
                    .closure_copy(&closure)
                    .map(|d| OnDisk::Own(Arc::new(d))),
                Err(e) => {
                    if let Some(msg) = e.security_error() {
                        return Err(GenerateError::Io(msg));
                    }
                    let root = self.fs.on_disk(self.fs.root()).map_err(io)?;
                    match &self.file {
                        Some((name, content)) => {
                            overlay_with_file(&root, &self.rel_path, name, content)
                                .map(|d| OnDisk::Own(Arc::new(d)))
                        }
                        None => Ok(OnDisk::TreeCopy(root)),
                    }
                }
            })
            .clone()?;
        let base = match &made {
            OnDisk::Own(dir) => dir.path(),
            OnDisk::TreeCopy(root) => root.as_path(),
        };
        Ok(if self.rel_path == "." {
            base.to_path_buf()
        } else {
            base.join(&self.rel_path)
        })
    }

    /// A temporary folder laid out as the source root, holding the closure's files (read
    /// through the source's value) and fluxsim's kustomization file.
    fn closure_copy(
        &self,
        closure: &crate::cache::closure::Closure,
    ) -> Result<tempfile::TempDir, GenerateError> {
        let io = |e: std::io::Error| GenerateError::Io(e.to_string());
        let out = crate::scratch::tempdir(crate::scratch::Kind::Overlay).map_err(io)?;
        let generated = self.file.as_ref().map(|(name, _)| {
            if self.rel_path == "." {
                name.clone()
            } else {
                format!("{}/{name}", self.rel_path)
            }
        });
        std::fs::create_dir_all(out.path().join(&self.rel_path)).map_err(io)?;
        let schemas = closure.source_schemas(&self.rel_path);
        for rel in closure.source_files(&self.rel_path) {
            if generated.as_deref() == Some(rel.as_str()) {
                continue;
            }
            let dst = out.path().join(&rel);
            if let Some(parent) = dst.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            // A file the closure lists but cannot read is left out: the build fails on it
            // as it would in place.
            let read = match self.overrides.get(&self.fs.root().join(&rel)) {
                Some(text) => Ok(text.clone().into_bytes()),
                None => self.fs.read(&self.fs.root().join(&rel)),
            };
            if let Ok(bytes) = read {
                // An `openapi: {path: ...}` schema is read by Flux over the built-in one, by
                // the binary alone: the binary gets the two laid over each other.
                let laid_over = schemas
                    .contains(&rel)
                    .then(|| std::str::from_utf8(&bytes).ok())
                    .flatten()
                    .and_then(crate::kustomize::native::laid_over_builtin);
                std::fs::write(&dst, laid_over.map_or(bytes, String::into_bytes)).map_err(io)?;
            }
        }
        if let (Some(rel), Some((_, content))) = (&generated, &self.file) {
            std::fs::write(out.path().join(rel), content).map_err(io)?;
        }
        Ok(out)
    }

    /// What the build reads in process: the source, with the files of the build that exist
    /// only in memory (fluxsim's kustomization file) over it.
    #[must_use]
    pub fn memory_files(&self) -> crate::kustomize::native::vfs::Vfs {
        let mut vfs = crate::kustomize::native::vfs::Vfs::source(self.fs.clone());
        for (path, content) in &self.overrides {
            vfs.insert(path, content.clone());
        }
        if let Some((name, content)) = &self.file {
            vfs.insert(&self.source_dir.join(name), content.clone());
        }
        vfs
    }

    /// Every entry kustomize would fetch over the network in this build's kustomization
    /// files (remote bases and files), in the order the walk meets them.
    #[must_use]
    pub fn remote_entries(&self) -> Vec<crate::cache::remote::RemoteEntry> {
        let file = self.file.as_ref().map(|(n, c)| (n.as_str(), c.as_str()));
        crate::cache::remote::fetches(&self.fs, &self.source_dir, file, &self.overrides).remote
    }

    /// The same build with every entry kustomize would fetch left out of the kustomization
    /// files that name one ([`crate::cache::remote::Fetches::stripped`]), with those
    /// entries; `None` when it fetches nothing. What such a build gives is what the
    /// Kustomization's own files declare, presuming the remote entries add nothing to it.
    #[must_use]
    pub fn without_remote(&self) -> Option<(Prepared, Vec<crate::cache::remote::RemoteEntry>)> {
        let file = self.file.as_ref().map(|(n, c)| (n.as_str(), c.as_str()));
        let fetched =
            crate::cache::remote::fetches(&self.fs, &self.source_dir, file, &self.overrides);
        if fetched.remote.is_empty() {
            return None;
        }
        let mut edits = fetched.stripped();
        let mut local = Prepared {
            key: format!("{}#without-remote", self.key),
            overlay: std::sync::OnceLock::new(),
            ..self.clone()
        };
        if let Some((name, _)) = &self.file {
            let top = crate::source::view::clean(&self.source_dir.join(name));
            if let Some(content) = edits.remove(&top) {
                local.file = Some((name.clone(), content));
            }
        }
        local.overrides.extend(edits);
        Some((local, fetched.remote))
    }

    /// The input closure of the build, found without making the overlay.
    pub fn closure(
        &self,
    ) -> Result<crate::cache::closure::Closure, crate::cache::closure::Uncacheable> {
        crate::cache::closure::closure_with(
            &self.fs,
            &self.source_dir,
            self.file.as_ref().map(|(n, c)| (n.as_str(), c.as_str())),
            &self.overrides,
        )
    }
}

fn existing_kustomization(fs: &SourceFs, dir: &Path) -> Option<PathBuf> {
    KUSTOMIZATION_FILES
        .iter()
        .map(|f| dir.join(f))
        .find(|p| fs.is_file(p))
}

/// The kustomization file `p` as Flux's generator reads it (`yaml.Unmarshal` from
/// `sigs.k8s.io/yaml` into a `Kustomization`): its text, and its content as a mapping (an
/// empty one for an empty file or `null`).
fn read_existing(fs: &SourceFs, p: &Path) -> Result<(String, Value), GenerateError> {
    let rel = p
        .strip_prefix(fs.root())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned();
    let bad = |message: String| GenerateError::BadKustomization {
        file: rel.clone(),
        message,
    };
    let text = fs.read_to_string(p).map_err(|e| bad(e.to_string()))?;
    let doc = crate::manifest::parse_shared(&text).map_err(|e| bad(e.to_string()))?;
    match &*doc {
        Value::Object(_) => Ok((text, (*doc).clone())),
        Value::Null => Ok((text, json!({}))),
        _ => Err(bad(
            "the kustomization is not a mapping (json: cannot unmarshal it into a Kustomization)"
                .to_string(),
        )),
    }
}

/// Lists the manifests Flux's generator would put in `resources`, as `./rel/path` (without
/// those `ignore` skips: `scanManifests`' `shouldIgnoreFile`).
fn scan_resources(
    fs: &SourceFs,
    dir: &Path,
    ignore: Option<&BuildIgnore>,
) -> Result<Vec<String>, GenerateError> {
    let mut out = Vec::new();
    walk(fs, dir, dir, ignore, &mut out)?;
    Ok(out)
}

fn walk(
    fs: &SourceFs,
    base: &Path,
    dir: &Path,
    ignore: Option<&BuildIgnore>,
    out: &mut Vec<String>,
) -> Result<(), GenerateError> {
    // filepath.Walk visits entries in lexical order (read_dir sorts them).
    let entries = fs
        .read_dir(dir)
        .map_err(|e| GenerateError::Io(format!("{}: {e}", dir.display())))?;
    for entry in entries {
        let path = dir.join(&entry.name);
        let rel = format!(
            "./{}",
            path.strip_prefix(base).unwrap_or(&path).to_string_lossy()
        );
        if entry.is_dir {
            if existing_kustomization(fs, &path).is_some() {
                out.push(rel);
            } else {
                walk(fs, base, &path, ignore, out)?;
            }
            continue;
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        if ext != "yaml" && ext != "yml" {
            continue;
        }
        let in_root = path.strip_prefix(fs.root()).unwrap_or(&path);
        if ignore.is_some_and(|i| i.skips_manifest(in_root)) {
            continue;
        }
        let file = in_root.to_string_lossy().into_owned();
        let text = fs
            .read_to_string(&path)
            .map_err(|e| GenerateError::BadManifest {
                file: file.clone(),
                message: e.to_string(),
            })?;
        check_manifest(&text).map_err(|e| GenerateError::BadManifest {
            file,
            message: e.into(),
        })?;
        out.push(rel);
    }
    Ok(())
}

/// kustomize's resource factory must decode every document of a listed file.
fn check_manifest(text: &str) -> Result<(), ManifestError> {
    for (i, doc) in crate::manifest::split_documents(text).iter().enumerate() {
        let v = crate::manifest::parse_object(doc).map_err(|e| e.to_string())?;
        match v {
            Value::Null => {}
            Value::Object(ref m) if m.contains_key("kind") || m.contains_key("items") => {}
            Value::Object(_) => return Err(format!("document {} has no `kind`", i + 1).into()),
            _ => return Err(format!("document {} is not a mapping", i + 1).into()),
        }
    }
    Ok(())
}

/// The kustomize build option that annotates each object with the file it came from.
pub const ORIGIN_ANNOTATIONS: &str = "originAnnotations";

/// Prepares `ks.spec.path` of the source `fs` for building. With `origins`, the overlay
/// also asks kustomize for `buildMetadata: [originAnnotations]` (see `artifact::strip_origins`,
/// which takes the annotations out again), and `Prepared::user_origins` says whether the
/// user's own kustomization already asked for them (then they are part of what Flux applies).
pub fn prepare(
    fs: &SourceFs,
    ks: &Kustomization,
    origins: bool,
) -> Result<Prepared, GenerateError> {
    prepare_ignoring(fs, ks, origins, None)
}

/// [`prepare`], with the ignore rules `flux build kustomization --ignore-paths` gives Flux's
/// generator (`NewGeneratorWithIgnore`): the manifests they skip are not listed, and the
/// `resources`, `components` and `crds` entries they drop are taken out of the kustomization
/// (`filterKsWithIgnoreFiles`).
pub fn prepare_ignoring(
    fs: &SourceFs,
    ks: &Kustomization,
    origins: bool,
    ignore: Option<&BuildIgnore>,
) -> Result<Prepared, GenerateError> {
    let root = fs.root();
    let rel_path = spec_dir(fs, &ks.path).map_err(|e| GenerateError::Io(e.to_string()))?;
    let dir = if rel_path == "." {
        root.to_path_buf()
    } else {
        root.join(&rel_path)
    };
    if !fs.exists(&dir) {
        return Err(GenerateError::PathNotFound(ks.path.clone()));
    }
    if !fs.is_dir(&dir) {
        return Err(GenerateError::NotADirectory(ks.path.clone()));
    }
    let existing = existing_kustomization(fs, &dir);
    // kustomize_generator.go GenerateManifest reads the kustomization file (yaml.Unmarshal
    // into a Kustomization) before anything else, also when it has nothing to merge in: a
    // file that is not YAML, or not a mapping, fails there ("kustomize create failed").
    let existing_doc = match &existing {
        Some(p) => Some(read_existing(fs, p)?),
        None => None,
    };
    // GenerateManifest: an existing kustomization without `resources` gets
    // `buildMetadata: [originAnnotations]` in place of its own ("to avoid 'kustomization.yaml
    // is empty'"), so every object it builds carries its origin in what Flux applies.
    let no_resources = existing_doc.as_ref().is_some_and(|(_, doc)| {
        doc.get("resources")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    });
    // Flux rewrites the file every time; fluxsim writes it only where that changes it.
    let flux_changes =
        existing.is_none() || ks.has_generator_inputs() || no_resources || ignore.is_some();
    if !flux_changes && !origins {
        return Ok(Prepared {
            source_dir: dir,
            key: rel_path.clone(),
            rel_path,
            generated: None,
            user_origins: false,
            file: None,
            fs: fs.clone(),
            overrides: std::collections::BTreeMap::new(),
            overlay: std::sync::OnceLock::new(),
        });
    }
    let mut existing_text = None;
    let (file_name, mut doc) = if let (Some(p), Some((text, doc))) = (&existing, existing_doc) {
        existing_text = Some(text);
        (
            p.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            doc,
        )
    } else {
        let resources = scan_resources(fs, &dir, ignore)?;
        (
            "kustomization.yaml".to_string(),
            json!({
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": resources,
            }),
        )
    };
    if no_resources {
        if let Some(obj) = doc.as_object_mut() {
            obj.insert("buildMetadata".into(), json!([ORIGIN_ANNOTATIONS]));
        }
    }
    if let Some(ignore) = ignore {
        filter_entries(fs, &mut doc, &dir, ignore)?;
    }
    merge_flux_fields(fs, &mut doc, ks, &dir)?;
    let user_origins = wants_origins(&doc);
    let generated =
        flux_changes.then(|| serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n");
    let content = match (&generated, existing_text) {
        (Some(g), _) if !origins || user_origins => g.clone(),
        (None, Some(text)) if user_origins => text,
        (None, Some(text)) if origins && !user_origins && doc.get("buildMetadata").is_none() => {
            // The user's own file, untouched, plus the one line fluxsim needs: re-serialising
            // it could change how kustomize reads it (YAML 1.1 vs 1.2 scalars).
            let sep = if text.ends_with('\n') { "" } else { "\n" };
            format!("{text}{sep}buildMetadata: [{ORIGIN_ANNOTATIONS}]\n")
        }
        _ => {
            if !user_origins {
                if let Some(obj) = doc.as_object_mut() {
                    let list = obj.entry("buildMetadata").or_insert_with(|| json!([]));
                    if let Some(list) = list.as_array_mut() {
                        list.push(json!(ORIGIN_ANNOTATIONS));
                    }
                }
            }
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
    };
    let digest = crate::digest::sha256_hex(content.as_bytes());
    Ok(Prepared {
        source_dir: dir,
        key: format!("{rel_path}#{digest}"),
        rel_path,
        generated,
        user_origins,
        file: Some((file_name, content)),
        fs: fs.clone(),
        overrides: std::collections::BTreeMap::new(),
        overlay: std::sync::OnceLock::new(),
    })
}

/// `filterKsWithIgnoreFiles` (`fluxcd/pkg/kustomize` `filters.go`): each `resources`,
/// `components` and `crds` entry of `doc` (a kustomization of `dir`) that names a file or
/// folder `ignore` drops is taken out; a URL is kept (not a `crds` one: those are never
/// URLs); an entry that names nothing fails, as its `os.Lstat` does.
fn filter_entries(
    fs: &SourceFs,
    doc: &mut Value,
    dir: &Path,
    ignore: &BuildIgnore,
) -> Result<(), GenerateError> {
    let Some(obj) = doc.as_object_mut() else {
        return Ok(());
    };
    for field in ["resources", "components", "crds"] {
        let Some(Value::Array(list)) = obj.get_mut(field) else {
            continue;
        };
        let mut kept = Vec::with_capacity(list.len());
        for entry in list.drain(..) {
            let Some(s) = entry.as_str() else {
                kept.push(entry);
                continue;
            };
            if field != "crds" && is_url(s) {
                kept.push(entry);
                continue;
            }
            let path = crate::source::view::clean(&dir.join(s));
            if !fs.exists(&path) {
                return Err(GenerateError::Io(format!(
                    "lstat {}: no such file or directory",
                    path.strip_prefix(fs.root()).unwrap_or(&path).display()
                )));
            }
            let in_root = path.strip_prefix(fs.root()).unwrap_or(&path);
            if !ignore.drops_entry(in_root, fs.is_dir(&path)) {
                kept.push(entry);
            }
        }
        *list = kept;
    }
    Ok(())
}

/// `filters.go` `isUrl`: Go's `url.ParseRequestURI` takes it, with a scheme.
fn is_url(s: &str) -> bool {
    s.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Whether a kustomization's `buildMetadata` already asks for origin annotations.
fn wants_origins(doc: &Value) -> bool {
    doc.get("buildMetadata")
        .and_then(Value::as_array)
        .is_some_and(|l| l.iter().any(|v| v == ORIGIN_ANNOTATIONS))
}

/// The generator's merge of the Flux spec into the kustomization (kustomize_generator.go).
fn merge_flux_fields(
    fs: &SourceFs,
    doc: &mut Value,
    ks: &Kustomization,
    dir: &Path,
) -> Result<(), GenerateError> {
    let Some(obj) = doc.as_object_mut() else {
        return Ok(());
    };
    if let Some(ns) = &ks.target_namespace {
        obj.insert("namespace".into(), json!(ns));
    }
    if let Some(p) = &ks.name_prefix {
        obj.insert("namePrefix".into(), json!(p));
    }
    if let Some(s) = &ks.name_suffix {
        obj.insert("nameSuffix".into(), json!(s));
    }
    if !ks.patches.is_empty() {
        let list = obj.entry("patches").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            list.extend(ks.patches.iter().cloned());
        }
    }
    if !ks.images.is_empty() {
        let list = obj.entry("images").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            for image in &ks.images {
                merge_image(list, image);
            }
        }
    }
    // `spec.buildMetadata` replaces the kustomization's list (kustomize-controller API v1.9).
    if !ks.build_metadata.is_empty() {
        obj.insert("buildMetadata".into(), json!(ks.build_metadata));
    }
    if !ks.components.is_empty() {
        let mut wanted = Vec::new();
        for c in &ks.components {
            if fs.exists(&dir.join(c)) {
                wanted.push(json!(c));
            } else if !ks.ignore_missing_components {
                return Err(GenerateError::MissingComponent(c.clone()));
            }
        }
        let list = obj.entry("components").or_insert_with(|| json!([]));
        if let Some(list) = list.as_array_mut() {
            list.extend(wanted);
        }
    }
    Ok(())
}

/// One `spec.images` entry merged into the kustomization's `images:` as
/// `kustomize_generator.go` (`GenerateManifest`) merges it: an entry of the same name takes
/// the fields the spec sets, field by field (`newName` alone keeps its `newTag` and `digest`;
/// `newTag` or `digest` replaces both version fields together, as kustomize's image
/// transformer does); otherwise the spec's image is appended. Flux goes through the typed
/// `kustypes.Image` and writes it back with `omitempty`: an empty field is no field.
fn merge_image(list: &mut Vec<Value>, image: &Value) {
    let field = |k: &str| {
        image
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let name = image.get("name").and_then(Value::as_str).unwrap_or("");
    let existing = list
        .iter_mut()
        .find(|i| i.get("name").and_then(Value::as_str).unwrap_or("") == name);
    let Some(Value::Object(slot)) = existing else {
        let mut entry = serde_json::Map::new();
        for k in ["name", "newName", "newTag", "digest"] {
            if let Some(v) = field(k) {
                entry.insert(k.into(), json!(v));
            }
        }
        list.push(Value::Object(entry));
        return;
    };
    if let Some(new_name) = field("newName") {
        slot.insert("newName".into(), json!(new_name));
    }
    if field("newTag").is_some() || field("digest").is_some() {
        for k in ["newTag", "digest"] {
            match field(k) {
                Some(v) => slot.insert(k.into(), json!(v)),
                None => slot.remove(k),
            };
        }
    }
}

/// A directory that looks like the tree at `root` (fluxsim's own copy of a source, on disk,
/// read as such) except that `rel_path/file_name` holds `content`: real directories along
/// `rel_path`, symbolic links for everything else.
fn overlay_with_file(
    root: &Path,
    rel_path: &str,
    file_name: &str,
    content: &str,
) -> Result<tempfile::TempDir, GenerateError> {
    let io = |e: std::io::Error| GenerateError::Io(e.to_string());
    let overlay = crate::scratch::tempdir(crate::scratch::Kind::Overlay).map_err(io)?;
    let mut src = root.to_path_buf();
    let mut dst = overlay.path().to_path_buf();
    let parts: Vec<&str> = if rel_path == "." {
        Vec::new()
    } else {
        rel_path.split('/').collect()
    };
    for depth in 0..=parts.len() {
        let next = parts.get(depth).copied();
        for entry in std::fs::read_dir(&src).map_err(io)?.filter_map(Result::ok) {
            let name = entry.file_name();
            let is_next = next.is_some_and(|n| name == std::ffi::OsStr::new(n));
            let is_target_file = next.is_none() && name == std::ffi::OsStr::new(file_name);
            if is_next || is_target_file {
                continue;
            }
            symlink(&entry.path(), &dst.join(&name)).map_err(io)?;
        }
        if let Some(n) = next {
            src = src.join(n);
            dst = dst.join(n);
            std::fs::create_dir(&dst).map_err(io)?;
        }
    }
    std::fs::write(dst.join(file_name), content).map_err(io)?;
    Ok(overlay)
}

#[cfg(unix)]
fn symlink(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(src, dst)
}

#[cfg(not(unix))]
fn symlink(src: &Path, dst: &Path) -> std::io::Result<()> {
    if src.is_dir() {
        std::os::windows::fs::symlink_dir(src, dst)
    } else {
        std::os::windows::fs::symlink_file(src, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_path_parent_segments_are_clamped_at_the_root() {
        let fs = SourceFs::empty(PathBuf::from("/nonexistent-fluxsim-root"));
        let dir = |p: &str| spec_dir(&fs, p).unwrap();
        assert_eq!(dir("./apps/../../../etc"), "etc");
        assert_eq!(dir("./"), ".");
        assert_eq!(dir(""), ".");
        assert_eq!(dir("apps/wave-0/"), "apps/wave-0");
    }

    fn ks(path: &str) -> Kustomization {
        Kustomization::from_json(&json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "k", "namespace": "flux-system"},
            "spec": {"path": path, "sourceRef": {"kind": "GitRepository", "name": "x"}},
        }))
        .unwrap()
    }

    // kustomize_generator.go GenerateManifest: the existing kustomization is read before
    // anything else, even when no spec field is merged in, so Flux fails at "kustomize
    // create", not at the build (checked with scripts/oracle-check).
    #[test]
    fn existing_kustomization_that_is_not_yaml_fails_flux_generator() {
        let root = tempfile::tempdir().unwrap();
        let write = |dir: &str, text: &str| {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
            std::fs::write(root.path().join(dir).join("kustomization.yaml"), text).unwrap();
        };
        write("broken", "resources:\n  - [unclosed\n");
        write("list", "- a\n");
        write("empty", "");
        let fs = crate::testutil::source_fs(root.path());
        let err = prepare(&fs, &ks("./broken"), false).unwrap_err();
        assert!(
            matches!(err, GenerateError::BadKustomization { .. }),
            "{err}"
        );
        assert!(
            err.to_string().starts_with(
                "kustomize create failed: broken/kustomization.yaml: invalid YAML at line 3"
            ),
            "{err}"
        );
        assert!(prepare(&fs, &ks("./list"), false).is_err());
        assert!(prepare(&fs, &ks("./empty"), false).is_ok());
    }

    // kustomize_generator.go GenerateManifest (fluxcd/pkg/kustomize v1.35.6), the cases of its
    // Test_Images: spec.images merge into an entry of the same name field by field.
    #[test]
    fn spec_images_merge_into_an_existing_entry_field_by_field() {
        const D: &str = "sha256:aaaa";
        let merged = |existing: Value, image: Value| {
            let mut list = vec![existing];
            merge_image(&mut list, &image);
            list
        };
        let n = "app";
        // newName alone keeps the version fields.
        assert_eq!(
            merged(
                json!({"name": n, "newTag": "v1", "digest": D}),
                json!({"name": n, "newName": "r/app"})
            ),
            vec![json!({"name": n, "newName": "r/app", "newTag": "v1", "digest": D})]
        );
        // newTag alone keeps newName and clears the digest.
        assert_eq!(
            merged(
                json!({"name": n, "newName": "r/app", "digest": D}),
                json!({"name": n, "newTag": "v2"})
            ),
            vec![json!({"name": n, "newName": "r/app", "newTag": "v2"})]
        );
        // digest alone clears newTag.
        assert_eq!(
            merged(
                json!({"name": n, "newTag": "v1"}),
                json!({"name": n, "digest": D})
            ),
            vec![json!({"name": n, "digest": D})]
        );
        // Both version fields together.
        assert_eq!(
            merged(
                json!({"name": n, "newTag": "v1"}),
                json!({"name": n, "newTag": "v2", "digest": D})
            ),
            vec![json!({"name": n, "newTag": "v2", "digest": D})]
        );
        // A name alone changes nothing; empty fields are no fields.
        assert_eq!(
            merged(
                json!({"name": n, "newName": "r/app", "newTag": "v1"}),
                json!({"name": n, "newTag": ""})
            ),
            vec![json!({"name": n, "newName": "r/app", "newTag": "v1"})]
        );
        // Another name is appended, with the four fields Flux's type has.
        assert_eq!(
            merged(
                json!({"name": n}),
                json!({"name": "other", "newTag": "v3", "newName": ""})
            ),
            vec![json!({"name": n}), json!({"name": "other", "newTag": "v3"})]
        );
    }
}
