//! Loading a kustomization file (`kustomization.yaml`, `.yml` or `Kustomization`), as
//! kustomize's `KustTarget.Load` does: read with `sigs.k8s.io/yaml` (YAML 1.1, so Flux's
//! JSON files read too), strictly: a field this builder does not reproduce is reported as
//! unsupported, so the build goes to the kustomize binary.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::vfs::Vfs;
use super::NativeError;

/// File names kustomize looks for, in its order (`konfig.RecognizedKustomizationFileNames`).
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Whether a kustomization file is a `Kustomization` or a `Component`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KustKind {
    /// `kind: Kustomization` (or no kind).
    Kustomization,
    /// `kind: Component`.
    Component,
}

/// A label set from `labels:`.
#[derive(Debug, Clone)]
pub(crate) struct LabelSet {
    /// The labels.
    pub(crate) pairs: Vec<(String, String)>,
    /// Also set selectors (and templates) as `commonLabels` does.
    pub(crate) include_selectors: bool,
}

/// A `target:` selector.
#[derive(Debug, Clone, Default)]
pub(crate) struct Selector {
    pub(crate) group: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) namespace: Option<String>,
    /// `labelSelector`.
    pub(crate) labels: Option<String>,
    /// `annotationSelector`.
    pub(crate) annotations: Option<String>,
}

/// Which kind of patch a field accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchKind {
    /// `patches:`: either.
    Any,
    /// `patchesStrategicMerge:`.
    StrategicMerge,
    /// `patchesJson6902:`.
    Json6902,
}

/// One entry of `patches:` (or of the legacy `patchesStrategicMerge` / `patchesJson6902`).
#[derive(Debug, Clone)]
pub(crate) struct PatchSpec {
    /// What the field it came from accepts.
    pub(crate) kind: PatchKind,
    /// The patch text (inline, or read from `path`).
    pub(crate) text: String,
    /// Where it was written, for messages.
    pub(crate) origin: String,
    /// Which resources it applies to.
    pub(crate) target: Option<Selector>,
}

/// `generatorOptions` (global or per generator).
#[derive(Debug, Clone, Default)]
pub(crate) struct GenOptions {
    pub(crate) labels: Vec<(String, String)>,
    pub(crate) annotations: Vec<(String, String)>,
    pub(crate) disable_name_suffix_hash: bool,
    pub(crate) immutable: bool,
}

/// What a generated object does to one already there with its id (`types.GenerationBehavior`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Behavior {
    /// `create` (or unset): the id must be new.
    #[default]
    Create,
    /// `merge`: data, labels and annotations merge into the existing object's.
    Merge,
    /// `replace`: the object replaces the existing one, keeping its name and namespace.
    Replace,
}

/// One `configMapGenerator` or `secretGenerator` entry.
#[derive(Debug, Clone)]
pub(crate) struct GeneratorArgs {
    pub(crate) name: String,
    pub(crate) namespace: Option<String>,
    pub(crate) behavior: Behavior,
    /// `envs` (and the deprecated `env`, appended to them as `FixKustomization` does).
    pub(crate) envs: Vec<String>,
    pub(crate) literals: Vec<String>,
    pub(crate) files: Vec<String>,
    pub(crate) secret_type: Option<String>,
    pub(crate) options: GenOptions,
}

/// `options` of a replacement's source or target (`types.FieldOptions`).
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldOptions {
    pub(crate) delimiter: String,
    pub(crate) index: i64,
    pub(crate) create: bool,
}

/// A replacement's `source` (`types.SourceSelector`): an id selected exactly, a field path.
#[derive(Debug, Clone, Default)]
pub(crate) struct SourceSelector {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) field_path: String,
    pub(crate) options: FieldOptions,
}

/// A replacement's target (`types.TargetSelector`).
#[derive(Debug, Clone)]
pub(crate) struct TargetSelector {
    pub(crate) select: Selector,
    pub(crate) reject: Vec<Selector>,
    pub(crate) field_paths: Vec<String>,
    pub(crate) options: FieldOptions,
}

/// One replacement (`types.Replacement`), inline or read from a `path:` file.
#[derive(Debug, Clone)]
pub(crate) struct Replacement {
    pub(crate) source: Option<SourceSelector>,
    pub(crate) source_value: Option<String>,
    pub(crate) targets: Vec<TargetSelector>,
    /// Where it was written, for messages.
    pub(crate) origin: String,
}

/// One `images:` entry.
#[derive(Debug, Clone)]
pub(crate) struct ImageSpec {
    pub(crate) name: String,
    pub(crate) new_name: Option<String>,
    pub(crate) new_tag: Option<String>,
}

/// A kustomization file, reduced to what the native builder reproduces.
#[derive(Debug, Clone)]
pub(crate) struct Kustomization {
    pub(crate) dir: PathBuf,
    pub(crate) file: PathBuf,
    pub(crate) kind: KustKind,
    pub(crate) resources: Vec<String>,
    pub(crate) components: Vec<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) common_labels: Vec<(String, String)>,
    pub(crate) labels: Vec<LabelSet>,
    pub(crate) common_annotations: Vec<(String, String)>,
    pub(crate) patches: Vec<PatchSpec>,
    pub(crate) patches_strategic_merge: Vec<PatchSpec>,
    pub(crate) patches_json6902: Vec<PatchSpec>,
    pub(crate) config_maps: Vec<GeneratorArgs>,
    pub(crate) secrets: Vec<GeneratorArgs>,
    pub(crate) images: Vec<ImageSpec>,
    pub(crate) name_prefix: String,
    pub(crate) name_suffix: String,
    /// `replicas:` as (name, count).
    pub(crate) replicas: Vec<(String, i64)>,
    /// `replacements:`, files read.
    pub(crate) replacements: Vec<Replacement>,
    /// `buildMetadata: [originAnnotations]` (only the root's counts: kustomize gives every
    /// kustomization it includes the root's `buildMetadata`).
    pub(crate) origin_annotations: bool,
    /// `openapi:` (`path`, `version`; kustomize ignores other keys), read by the target.
    pub(crate) openapi: Vec<(String, String)>,
}

/// Finds the kustomization file of `dir`.
pub(crate) fn find(vfs: &Vfs, dir: &Path) -> Result<Option<PathBuf>, NativeError> {
    let found: Vec<PathBuf> = FILE_NAMES
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| vfs.is_file(p))
        .collect();
    if found.len() > 1 {
        return Err(NativeError::unsupported(
            "more than one kustomization file",
            dir,
        ));
    }
    Ok(found.into_iter().next())
}

/// Loads the kustomization of `dir`.
#[allow(
    clippy::too_many_lines,
    reason = "one field after another, in the order kustomize's Kustomization type lists them"
)]
pub(crate) fn load(vfs: &Vfs, dir: &Path) -> Result<Kustomization, NativeError> {
    let Some(file) = find(vfs, dir)? else {
        return Err(NativeError::Failed(format!(
            "no kustomization file in {}",
            dir.display()
        )));
    };
    let text = vfs
        .read_to_string(&file)
        .map_err(|e| NativeError::Failed(format!("{}: {e}", file.display())))?;
    let doc = goyaml::manifest::parse_shared(&text)
        .map_err(|e| NativeError::Failed(format!("{}: {e}", file.display())))?;
    let unsupported = |what: &str| NativeError::unsupported(what, &file);
    let Value::Object(obj) = &*doc else {
        if doc.is_null() {
            return Err(unsupported("an empty kustomization file"));
        }
        return Err(unsupported("a kustomization file that is not a mapping"));
    };
    let mut k = Kustomization {
        dir: dir.to_path_buf(),
        file: file.clone(),
        kind: KustKind::Kustomization,
        resources: Vec::new(),
        components: Vec::new(),
        namespace: None,
        common_labels: Vec::new(),
        labels: Vec::new(),
        common_annotations: Vec::new(),
        patches: Vec::new(),
        patches_strategic_merge: Vec::new(),
        patches_json6902: Vec::new(),
        config_maps: Vec::new(),
        secrets: Vec::new(),
        images: Vec::new(),
        name_prefix: String::new(),
        name_suffix: String::new(),
        replicas: Vec::new(),
        replacements: Vec::new(),
        origin_annotations: false,
        openapi: Vec::new(),
    };
    for (key, value) in obj {
        if is_empty(value) {
            continue;
        }
        match key.as_str() {
            // apiVersion and metadata are not read (generatorOptions is merged below).
            "apiVersion" | "metadata" | "generatorOptions" => {}
            "kind" => {
                k.kind = match value.as_str() {
                    Some("Kustomization") => KustKind::Kustomization,
                    Some("Component") => KustKind::Component,
                    _ => return Err(unsupported("an unknown kustomization kind")),
                };
            }
            "resources" => k.resources = strings(value).ok_or_else(|| unsupported("resources"))?,
            "components" => {
                k.components = strings(value).ok_or_else(|| unsupported("components"))?;
            }
            "namespace" => {
                k.namespace = Some(
                    value
                        .as_str()
                        .ok_or_else(|| unsupported("a namespace that is not a string"))?
                        .to_string(),
                );
            }
            "commonLabels" => {
                k.common_labels = string_map(value).ok_or_else(|| unsupported("commonLabels"))?;
            }
            "commonAnnotations" => {
                k.common_annotations =
                    string_map(value).ok_or_else(|| unsupported("commonAnnotations"))?;
            }
            "labels" => k.labels = label_sets(value).map_err(|w| unsupported(&w))?,
            "patches" => k.patches = patches(vfs, value, dir).map_err(|w| unsupported(&w))?,
            "patchesStrategicMerge" => {
                k.patches_strategic_merge =
                    strategic_merge_patches(vfs, value, dir).map_err(|w| unsupported(&w))?;
            }
            "patchesJson6902" => {
                k.patches_json6902 = patches(vfs, value, dir).map_err(|w| unsupported(&w))?;
                for p in &mut k.patches_json6902 {
                    p.kind = PatchKind::Json6902;
                    if p.target.is_none() {
                        return Err(unsupported("a patchesJson6902 entry without target"));
                    }
                }
            }
            "configMapGenerator" => {
                k.config_maps = generators(value, false).map_err(|w| unsupported(&w))?;
            }
            "namePrefix" => {
                k.name_prefix = value
                    .as_str()
                    .ok_or_else(|| unsupported("a namePrefix that is not a string"))?
                    .to_string();
            }
            "nameSuffix" => {
                k.name_suffix = value
                    .as_str()
                    .ok_or_else(|| unsupported("a nameSuffix that is not a string"))?
                    .to_string();
            }
            "replicas" => k.replicas = replicas(value).map_err(|w| unsupported(&w))?,
            "replacements" => {
                k.replacements = replacements(vfs, value, dir).map_err(|w| unsupported(&w))?;
            }
            "buildMetadata" => {
                // Only the origin annotations are reproduced (managedByLabel and
                // transformerAnnotations are not).
                let list = strings(value).ok_or_else(|| unsupported("buildMetadata"))?;
                if list.iter().any(|m| m != "originAnnotations") {
                    return Err(unsupported("buildMetadata other than originAnnotations"));
                }
                k.origin_annotations = true;
            }
            "images" => k.images = images(value).map_err(|w| unsupported(&w))?,
            "openapi" => {
                k.openapi = string_map(value)
                    .ok_or_else(|| unsupported("an openapi field that is not a map of strings"))?;
            }
            "secretGenerator" => {
                k.secrets = generators(value, true).map_err(|w| unsupported(&w))?;
            }
            other => return Err(unsupported(&format!("the `{other}` field"))),
        }
    }
    if let Some(global) = obj.get("generatorOptions").filter(|v| !is_empty(v)) {
        let global = gen_options(global).map_err(|w| unsupported(&w))?;
        for g in k.config_maps.iter_mut().chain(k.secrets.iter_mut()) {
            merge_options(&mut g.options, &global);
        }
    }
    Ok(k)
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn string_map(v: &Value) -> Option<Vec<(String, String)>> {
    if v.is_null() {
        return Some(Vec::new());
    }
    v.as_object()?
        .iter()
        .map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
        .collect()
}

fn label_sets(v: &Value) -> Result<Vec<LabelSet>, crate::Unsupported> {
    let list = v.as_array().ok_or("labels")?;
    let mut out = Vec::new();
    for item in list {
        let obj = item.as_object().ok_or("labels")?;
        let mut set = LabelSet {
            pairs: Vec::new(),
            include_selectors: false,
        };
        for (key, value) in obj {
            match key.as_str() {
                "pairs" => set.pairs = string_map(value).ok_or("labels pairs")?,
                "includeSelectors" => {
                    set.include_selectors = value.as_bool().ok_or("labels includeSelectors")?;
                }
                "includeTemplates" if value == &Value::Bool(false) => {}
                "fields" if is_empty(value) => {}
                other => return Err(format!("labels `{other}`").into()),
            }
        }
        out.push(set);
    }
    Ok(out)
}

pub(crate) fn selector(v: &Value) -> Result<Selector, crate::Unsupported> {
    let obj = v.as_object().ok_or("a patch target")?;
    let mut s = Selector::default();
    for (key, value) in obj {
        if is_empty(value) {
            continue;
        }
        let text = value
            .as_str()
            .ok_or_else(|| format!("patch target `{key}`"))?
            .to_string();
        match key.as_str() {
            "group" => s.group = Some(text),
            "version" => s.version = Some(text),
            "kind" => s.kind = Some(text),
            "name" => s.name = Some(text),
            "namespace" => s.namespace = Some(text),
            "labelSelector" => s.labels = Some(text),
            "annotationSelector" => s.annotations = Some(text),
            other => return Err(format!("patch target `{other}`").into()),
        }
    }
    Ok(s)
}

fn patches(vfs: &Vfs, v: &Value, dir: &Path) -> Result<Vec<PatchSpec>, crate::Unsupported> {
    let list = v.as_array().ok_or("patches")?;
    let mut out = Vec::new();
    for item in list {
        let obj = item.as_object().ok_or("patches")?;
        let mut text = None;
        let mut origin = String::from("inline patch");
        let mut target = None;
        for (key, value) in obj {
            match key.as_str() {
                "patch" if !is_empty(value) => {
                    text = Some(value.as_str().ok_or("patch")?.to_string());
                }
                "path" if !is_empty(value) => {
                    let rel = value.as_str().ok_or("patch path")?;
                    if rel.contains("://") {
                        return Err("a remote patch".into());
                    }
                    let p = dir.join(rel);
                    let t = vfs
                        .read_to_string(&p)
                        .map_err(|_| format!("a patch file that cannot be read ({rel})"))?;
                    origin = rel.to_string();
                    if text.is_some() {
                        return Err("a patch with both path and patch".into());
                    }
                    text = Some(t);
                }
                "target" if !value.is_null() => target = Some(selector(value)?),
                "patch" | "path" | "target" => {}
                "options" if is_empty(value) => {}
                other => return Err(format!("patch `{other}`").into()),
            }
        }
        let text = text.ok_or("a patch without patch or path")?;
        out.push(PatchSpec {
            kind: PatchKind::Any,
            text,
            origin,
            target,
        });
    }
    Ok(out)
}

/// `patchesStrategicMerge`: each entry is a patch itself when it reads as YAML objects
/// (`PatchStrategicMergeTransformer.Config` tries that first), else a file.
fn strategic_merge_patches(
    vfs: &Vfs,
    v: &Value,
    dir: &Path,
) -> Result<Vec<PatchSpec>, crate::Unsupported> {
    let list = v.as_array().ok_or("patchesStrategicMerge")?;
    let mut out = Vec::new();
    for item in list {
        let entry = item.as_str().ok_or("patchesStrategicMerge")?;
        let inline = super::reader::read_documents(entry)
            .is_ok_and(|docs| !docs.is_empty() && docs.iter().all(|d| d.as_map().is_some()));
        let (text, origin) = if inline {
            (entry.to_string(), "inline patch".to_string())
        } else {
            if entry.contains("://") {
                return Err("a remote patch".into());
            }
            let t = vfs
                .read_to_string(&dir.join(entry))
                .map_err(|_| format!("a patch file that cannot be read ({entry})"))?;
            (t, entry.to_string())
        };
        out.push(PatchSpec {
            kind: PatchKind::StrategicMerge,
            text,
            origin,
            target: None,
        });
    }
    Ok(out)
}

fn gen_options(v: &Value) -> Result<GenOptions, crate::Unsupported> {
    let obj = v.as_object().ok_or("generatorOptions")?;
    let mut o = GenOptions::default();
    for (key, value) in obj {
        match key.as_str() {
            "labels" => o.labels = string_map(value).ok_or("generatorOptions labels")?,
            "annotations" => {
                o.annotations = string_map(value).ok_or("generatorOptions annotations")?;
            }
            "disableNameSuffixHash" => {
                o.disable_name_suffix_hash = flag(value, "generatorOptions disableNameSuffixHash")?;
            }
            "immutable" => o.immutable = flag(value, "generatorOptions immutable")?,
            other => return Err(format!("generatorOptions `{other}`").into()),
        }
    }
    Ok(o)
}

/// A boolean option (`null` is false, as `omitempty` reads it; anything else but a
/// boolean fails kustomize's strict unmarshal, and is left to it).
fn flag(value: &Value, what: &str) -> Result<bool, crate::Unsupported> {
    match value {
        Value::Null => Ok(false),
        Value::Bool(b) => Ok(*b),
        _ => Err(format!("{what} that is not a boolean").into()),
    }
}

/// `types.MergeGlobalOptionsIntoLocal`: global labels and annotations fill in keys the
/// generator does not set (a key set in both keeps the generator's value); either side
/// turning `disableNameSuffixHash` or `immutable` on turns it on.
fn merge_options(local: &mut GenOptions, global: &GenOptions) {
    for (mine, theirs) in [
        (&mut local.labels, &global.labels),
        (&mut local.annotations, &global.annotations),
    ] {
        for (k, v) in theirs {
            if !mine.iter().any(|(mk, _)| mk == k) {
                mine.push((k.clone(), v.clone()));
            }
        }
    }
    local.disable_name_suffix_hash |= global.disable_name_suffix_hash;
    local.immutable |= global.immutable;
}

fn generators(v: &Value, secret: bool) -> Result<Vec<GeneratorArgs>, crate::Unsupported> {
    let list = v.as_array().ok_or("generators")?;
    let mut out = Vec::new();
    for item in list {
        let obj = item.as_object().ok_or("generators")?;
        let mut env = None;
        let mut g = GeneratorArgs {
            name: String::new(),
            namespace: None,
            behavior: Behavior::Create,
            envs: Vec::new(),
            literals: Vec::new(),
            files: Vec::new(),
            secret_type: None,
            options: GenOptions::default(),
        };
        for (key, value) in obj {
            if is_empty(value) {
                continue;
            }
            match key.as_str() {
                "name" => g.name = value.as_str().ok_or("generator name")?.to_string(),
                "namespace" => {
                    g.namespace = Some(value.as_str().ok_or("generator namespace")?.to_string());
                }
                "behavior" => {
                    g.behavior = match value.as_str() {
                        Some("create") => Behavior::Create,
                        Some("merge") => Behavior::Merge,
                        Some("replace") => Behavior::Replace,
                        _ => {
                            return Err(
                                "a generator behavior other than create, merge or replace".into()
                            )
                        }
                    };
                }
                "envs" => g.envs.extend(strings(value).ok_or("generator envs")?),
                "env" => {
                    env = Some(value.as_str().ok_or("generator env")?.to_string());
                }
                "literals" => g.literals = strings(value).ok_or("generator literals")?,
                "files" => g.files = strings(value).ok_or("generator files")?,
                "options" => g.options = gen_options(value)?,
                "type" if secret => {
                    g.secret_type = Some(value.as_str().ok_or("secret type")?.to_string());
                }
                other => return Err(format!("generator `{other}`").into()),
            }
        }
        // `Kustomization.FixKustomization`: the deprecated `env` goes after `envs`.
        g.envs.extend(env);
        if g.name.is_empty() {
            return Err("a generator without a name".into());
        }
        out.push(g);
    }
    Ok(out)
}

fn images(v: &Value) -> Result<Vec<ImageSpec>, crate::Unsupported> {
    let list = v.as_array().ok_or("images")?;
    let mut out = Vec::new();
    for item in list {
        let obj = item.as_object().ok_or("images")?;
        let mut spec = ImageSpec {
            name: String::new(),
            new_name: None,
            new_tag: None,
        };
        for (key, value) in obj {
            if is_empty(value) {
                continue;
            }
            // A number (`newTag: 1.20`) is not reproduced: kustomize's reading of it is its own.
            let text = value
                .as_str()
                .ok_or_else(|| format!("an image `{key}` that is not a string"))?
                .to_string();
            match key.as_str() {
                "name" => spec.name = text,
                "newName" => spec.new_name = Some(text),
                "newTag" => spec.new_tag = Some(text),
                other => return Err(format!("images `{other}`").into()),
            }
        }
        if spec.name.is_empty() {
            return Err("an image without a name".into());
        }
        out.push(spec);
    }
    Ok(out)
}

fn replicas(v: &Value) -> Result<Vec<(String, i64)>, crate::Unsupported> {
    let list = v.as_array().ok_or("replicas")?;
    let mut out = Vec::new();
    for item in list {
        let obj = item.as_object().ok_or("replicas")?;
        let mut name = None;
        let mut count = None;
        for (key, value) in obj {
            match key.as_str() {
                "name" => name = value.as_str().map(str::to_string),
                "count" => count = value.as_i64(),
                other => return Err(format!("replicas `{other}`").into()),
            }
        }
        match (name, count) {
            (Some(n), Some(c)) if !n.is_empty() => out.push((n, c)),
            _ => return Err("a replicas entry without a name or an integer count".into()),
        }
    }
    Ok(out)
}

/// `replacements:` (`ReplacementTransformerPlugin.Config`): each entry is inline, or a
/// `path:` to a file holding one replacement or a list of them.
fn replacements(vfs: &Vfs, v: &Value, dir: &Path) -> Result<Vec<Replacement>, crate::Unsupported> {
    let list = v.as_array().ok_or("replacements")?;
    let mut out = Vec::new();
    for item in list {
        let obj = item
            .as_object()
            .ok_or("a replacement that is not a mapping")?;
        let path = match obj.get("path") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) if p.is_empty() => None,
            Some(Value::String(p)) => Some(p.clone()),
            Some(_) => return Err("a replacement path that is not a string".into()),
        };
        let Some(rel) = path else {
            out.push(replacement(item, "inline replacement")?);
            continue;
        };
        if obj
            .iter()
            .any(|(k, v)| k != "path" && !v.is_null() && !(k == "targets" && is_empty(v)))
        {
            return Err("a replacement with both path and inline fields".into());
        }
        if rel.contains("://") {
            return Err("a remote replacement file".into());
        }
        let text = vfs
            .read_to_string(&dir.join(&rel))
            .map_err(|_| format!("a replacement file that cannot be read ({rel})"))?;
        let doc = goyaml::yaml_json::yaml_to_value(&text)
            .map_err(|_| format!("a replacement file kustomize may read otherwise ({rel})"))?;
        match &doc {
            Value::Array(items) => {
                for r in items {
                    out.push(replacement(r, &rel)?);
                }
            }
            Value::Object(_) => out.push(replacement(&doc, &rel)?),
            _ => {
                return Err(
                    format!("a replacement file that is not a list or mapping ({rel})").into(),
                )
            }
        }
    }
    Ok(out)
}

fn replacement(v: &Value, origin: &str) -> Result<Replacement, crate::Unsupported> {
    let obj = v.as_object().ok_or("a replacement that is not a mapping")?;
    let mut r = Replacement {
        source: None,
        source_value: None,
        targets: Vec::new(),
        origin: origin.to_string(),
    };
    for (key, value) in obj {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "source" => r.source = Some(source_selector(value)?),
            "sourceValue" => {
                r.source_value = Some(
                    value
                        .as_str()
                        .ok_or("a sourceValue that is not a string")?
                        .to_string(),
                );
            }
            "targets" => {
                for t in value.as_array().ok_or("replacement targets")? {
                    r.targets.push(target_selector(t)?);
                }
            }
            "path" if is_empty(value) => {}
            other => return Err(format!("replacement `{other}`").into()),
        }
    }
    Ok(r)
}

fn field_options(v: &Value) -> Result<FieldOptions, crate::Unsupported> {
    let obj = v.as_object().ok_or("replacement options")?;
    let mut o = FieldOptions::default();
    for (key, value) in obj {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "delimiter" => o.delimiter = value.as_str().ok_or("options.delimiter")?.to_string(),
            "index" => {
                o.index = value
                    .as_i64()
                    .ok_or("an options.index that is not an integer")?;
            }
            "create" => o.create = flag(value, "options.create")?,
            "encoding" if is_empty(value) => {}
            other => return Err(format!("replacement options `{other}`").into()),
        }
    }
    Ok(o)
}

fn source_selector(v: &Value) -> Result<SourceSelector, crate::Unsupported> {
    let obj = v
        .as_object()
        .ok_or("a replacement source that is not a mapping")?;
    let mut s = SourceSelector::default();
    for (key, value) in obj {
        if value.is_null() {
            continue;
        }
        if key == "options" {
            s.options = field_options(value)?;
            continue;
        }
        let text = value
            .as_str()
            .ok_or_else(|| format!("replacement source `{key}` that is not a string"))?
            .to_string();
        match key.as_str() {
            "group" => s.group = text,
            "version" => s.version = text,
            "kind" => s.kind = text,
            "name" => s.name = text,
            "namespace" => s.namespace = text,
            "fieldPath" => s.field_path = text,
            other => return Err(format!("replacement source `{other}`").into()),
        }
    }
    Ok(s)
}

fn target_selector(v: &Value) -> Result<TargetSelector, crate::Unsupported> {
    let obj = v
        .as_object()
        .ok_or("a replacement target that is not a mapping")?;
    let mut select = None;
    let mut reject = Vec::new();
    let mut field_paths = Vec::new();
    let mut options = FieldOptions::default();
    for (key, value) in obj {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "select" => select = Some(selector(value)?),
            "reject" => {
                for r in value.as_array().ok_or("replacement reject")? {
                    reject.push(selector(r)?);
                }
            }
            "fieldPaths" => field_paths = strings(value).ok_or("replacement fieldPaths")?,
            "options" => options = field_options(value)?,
            other => return Err(format!("replacement target `{other}`").into()),
        }
    }
    // kustomize fails a target without `select`: left to it.
    let select = select.ok_or("a replacement target without select")?;
    Ok(TargetSelector {
        select,
        reject,
        field_paths,
        options,
    })
}
