//! One kustomization's build (`api/internal/target/kusttarget.go`): accumulate resources,
//! then components, then run generators and transformers; at the root, add the hash
//! suffixes, fix the name references (`nameref`), sort in legacy order and print.

use std::path::{Path, PathBuf};

use super::configmap_secret_generator::generate;
use super::filters::apply_patch;
use super::filters::{
    add_annotations, add_labels, add_prefix_suffix, apply_replacements, set_images, set_namespace,
    set_replicas,
};
use super::kustfile::{self, KustKind, Kustomization};
use super::node::Node;
use super::openapi::{set_custom_paths, BuildScope, CustomSchema, OpenApiField, SchemaState};
use super::printer::print_resource;
use super::reader::{read_documents_marked, EmptyNulls, ReadError};
use super::resource::{absorb_all, sort_legacy, Accumulator, Resource};
use super::vfs::Vfs;
use super::NativeError;

/// Builds the kustomization in `dir` and prints it as `kustomize build` does.
pub(crate) fn build_root(dir: &Path, vfs: &Vfs) -> Result<String, NativeError> {
    let dir = canonical(vfs, dir)?;
    let mut stack = Vec::new();
    let mut resources = Vec::new();
    // Flux resets kyaml's schema before each build, with the built-in one loaded.
    let mut schema = SchemaState::default();
    let _scope = BuildScope::enter();
    accumulate(
        vfs,
        &dir,
        None,
        None,
        &mut resources,
        &mut stack,
        &mut schema,
    )?;
    finish(&mut resources).map_err(|e| match e {
        // The root-level checks name a resource: say which build it belongs to.
        NativeError::Unsupported { feature, file } => NativeError::Unsupported {
            feature: format!("{feature} (resource `{file}`)"),
            file: kustfile::find(vfs, &dir)
                .ok()
                .flatten()
                .unwrap_or_else(|| dir.clone())
                .display()
                .to_string(),
        },
        other @ (NativeError::Failed(_) | NativeError::Bound(_)) => other,
    })?;
    sort_legacy(&mut resources);
    let mut out = String::new();
    for (i, r) in resources.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(&print_resource(&r.node));
    }
    Ok(out)
}

/// What the root build does last (`MakeCustomizedResMap`): hash suffixes and name
/// references, then the checks on what this builder would not print as kustomize does.
fn finish(resources: &mut [Resource]) -> Result<(), NativeError> {
    super::filters::apply_hash_suffixes(resources)?;
    super::filters::fix_back_references(resources)?;
    for r in resources.iter_mut() {
        check_metadata_strings(r)?;
        if super::printer::has_unstable_key_order(&r.node) {
            return Err(NativeError::unsupported(
                "keys that go-yaml v2 sorts in a random order",
                r.name(),
            ));
        }
    }
    Ok(())
}

/// The annotation `buildMetadata: [originAnnotations]` asks for (`utils.OriginAnnotationKey`).
const ORIGIN_ANNOTATION: &str = "config.kubernetes.io/origin";

/// `Origin.Append` for a local path: Go's `path.Join`, which cleans the result.
fn origin_join(origin: &str, entry: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let rooted = origin.starts_with('/') || (origin.is_empty() && entry.starts_with('/'));
    for seg in origin.split('/').chain(entry.split('/')) {
        match seg {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if rooted => {}
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// `path` as kyaml marshals it inside the origin annotation, when that is the path itself:
/// any path that YAML would quote or read as something else is left to kustomize.
fn plain_origin_path(path: &str, file: &str) -> Result<String, NativeError> {
    // A folder in it, or an extension (a dot then a letter that cannot make a number, as
    // `1.e5` does), keeps it from reading as a number; only those forms are taken as plain.
    let has_extension = path
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'.' && w[1].is_ascii_alphabetic() && !matches!(w[1], b'e' | b'E'));
    let plain = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'))
        && path
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_'))
        && (path.contains('/') || has_extension);
    if plain {
        Ok(path.to_string())
    } else {
        Err(NativeError::unsupported(
            &format!("an origin path YAML may quote ({path})"),
            file,
        ))
    }
}

/// kustomize resolves every loader root through symbolic links (`ConfirmDir`).
fn canonical(vfs: &Vfs, dir: &Path) -> Result<PathBuf, NativeError> {
    vfs.canonicalize(dir)
        .map_err(|e| NativeError::Failed(format!("{}: {e}", dir.display())))
}

fn display(k: &Kustomization) -> String {
    k.file.display().to_string()
}

/// `KustTarget.accumulateTarget` for the kustomization in `dir`, into `acc`.
///
/// `origin` is where the folder is, seen from the root (kustomize's `Origin.Path`), when the
/// root asks for origin annotations: `None` for the root itself, whose `buildMetadata` decides.
#[allow(
    clippy::too_many_lines,
    reason = "mirrors KustTarget.accumulateTarget: resources, components, generators, transformers in kustomize's order"
)]
fn accumulate(
    vfs: &Vfs,
    dir: &Path,
    expect: Option<KustKind>,
    origin: Option<&str>,
    acc: &mut Vec<Resource>,
    stack: &mut Vec<PathBuf>,
    schema: &mut SchemaState,
) -> Result<(), NativeError> {
    let is_root = stack.is_empty();
    if stack.iter().any(|d| d == dir) {
        return Err(NativeError::Failed(format!(
            "cycle detected: {} includes itself",
            dir.display()
        )));
    }
    stack.push(dir.to_path_buf());
    let k = kustfile::load(vfs, dir)?;
    let file = display(&k);
    let root_origin = (is_root && k.origin_annotations).then(String::new);
    let origin = if is_root {
        root_origin.as_deref()
    } else {
        origin
    };
    // The root may be a Component (kustomize builds it like a Kustomization).
    if expect.is_some_and(|e| e != k.kind) {
        return Err(NativeError::unsupported(
            "a Component used as a Kustomization (or the reverse)",
            &file,
        ));
    }
    set_openapi(vfs, &k, is_root, schema)?;
    // Only appends happen while the resources are read: one index serves them all.
    let mut appending = Accumulator::new(acc);
    let mut read = prefetch(vfs, &k).into_iter();
    for entry in &k.resources {
        let docs = read.next().flatten();
        accumulate_resource(vfs, &k, entry, origin, docs, &mut appending, stack, schema)?;
    }
    for entry in &k.components {
        if entry.contains("://") || entry.starts_with("github.com/") {
            return Err(NativeError::unsupported("a remote component", &file));
        }
        let cdir = canonical(vfs, &k.dir.join(entry))?;
        if !vfs.is_dir(&cdir) {
            return Err(NativeError::unsupported(
                "a component that is a file",
                &file,
            ));
        }
        let sub_origin = origin.map(|o| origin_join(o, entry));
        accumulate(
            vfs,
            &cdir,
            Some(KustKind::Component),
            sub_origin.as_deref(),
            acc,
            stack,
            schema,
        )?;
    }
    let mut generated = Vec::new();
    for g in &k.config_maps {
        generated.push((generate(vfs, g, false, &k.dir, &file)?, g.behavior));
    }
    for g in &k.secrets {
        generated.push((generate(vfs, g, true, &k.dir, &file)?, g.behavior));
    }
    if let Some(o) = origin {
        // `runGenerators`: a generated object's origin is the kustomization file that
        // configured it, and the builtin generator.
        let name = k
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let configured_in = plain_origin_path(&origin_join(o, &name), &file)?;
        for (r, _) in &mut generated {
            let generator = if r.kind() == "Secret" {
                "SecretGenerator"
            } else {
                "ConfigMapGenerator"
            };
            r.set_annotation(
                ORIGIN_ANNOTATION,
                &format!(
                    "configuredIn: {configured_in}\nconfiguredBy:\n  apiVersion: builtin\n  kind: {generator}\n"
                ),
            );
        }
    }
    absorb_all(acc, generated, &file)?;
    // configureBuiltinTransformers order: patchesStrategicMerge, patches, namespace,
    // prefix/suffix, labels (each `labels` entry, then commonLabels), annotations,
    // patchesJson6902, replicas, images, replacements.
    for p in k.patches_strategic_merge.iter().chain(&k.patches) {
        apply_patch(acc, p, &file, schema.schemas())?;
    }
    if let Some(ns) = &k.namespace {
        set_namespace(acc, ns, &file)?;
    }
    add_prefix_suffix(acc, &k.name_prefix, &k.name_suffix, &file)?;
    let common_keys: Vec<&String> = k.common_labels.iter().map(|(k, _)| k).collect();
    for set in &k.labels {
        if set.pairs.iter().any(|(key, _)| common_keys.contains(&key)) {
            return Err(NativeError::unsupported(
                "a label in both labels and commonLabels",
                &file,
            ));
        }
        add_labels(acc, &set.pairs, set.include_selectors, &file)?;
    }
    add_labels(acc, &k.common_labels, true, &file)?;
    add_annotations(acc, &k.common_annotations, &file)?;
    for p in &k.patches_json6902 {
        apply_patch(acc, p, &file, schema.schemas())?;
    }
    for (name, count) in &k.replicas {
        set_replicas(acc, name, *count, &file)?;
    }
    for image in &k.images {
        set_images(acc, image, &file)?;
    }
    apply_replacements(acc, &k.replacements, &file)?;
    stack.pop();
    Ok(())
}

/// The kustomization's `openapi:` field, as `krusty/kustomizer.go` `Run` (the root, `reset`)
/// and `kusttarget.go` `accumulateDirectory` (the others) hand it to `openapi.SetSchema`:
/// the `path` file is read through the loader first (a missing one fails even where the
/// field is then ignored), then parsed only if it is to be used ([`super::openapi`]).
fn set_openapi(
    vfs: &Vfs,
    k: &Kustomization,
    is_root: bool,
    schema: &mut SchemaState,
) -> Result<(), NativeError> {
    if k.openapi.is_empty() {
        return Ok(());
    }
    let file = display(k);
    let mut field = OpenApiField::default();
    let mut text = None;
    for (key, value) in &k.openapi {
        match key.as_str() {
            "version" => field.version = Some(value.clone()),
            "path" => {
                if value.is_empty() || value.contains("://") {
                    return Err(NativeError::unsupported(
                        &format!("an openapi path that is empty or remote (`{value}`)"),
                        &file,
                    ));
                }
                let path = crate::vfs::clean(&k.dir.join(value));
                let t = vfs.read_to_string(&path).map_err(|e| match e.kind() {
                    // fileloader.Load through Flux's secure file system: Go's words.
                    std::io::ErrorKind::NotFound => NativeError::Failed(format!(
                        "open {}: no such file or directory",
                        path.display()
                    )),
                    // A read refused by the secure file system names the kustomization asking.
                    std::io::ErrorKind::PermissionDenied => {
                        NativeError::Failed(format!("{file}: {e}"))
                    }
                    _ => NativeError::unsupported(
                        &format!("an openapi path that cannot be read (`{value}`)"),
                        &file,
                    ),
                })?;
                text = Some((value, t));
            }
            // A map of strings; kustomize reads no other key.
            _ => {}
        }
    }
    if !is_root && schema.is_set() {
        return Ok(());
    }
    let mut scopes = None;
    if let Some((path, t)) = text {
        let custom = CustomSchema::parse(&t).map_err(|w| {
            NativeError::unsupported(&format!("the openapi schema `{path}`: {w}"), &file)
        })?;
        if !custom.scopes().is_empty() {
            // kyaml/resid/gvk.go NewGvk keeps the scope it was made with: a schema set
            // midway changes the answer for ids made after it only.
            if !is_root {
                return Err(NativeError::unsupported(
                    &format!(
                        "the openapi schema `{path}`: `paths` naming kinds, in an included kustomization (the namespace scope of kinds would change midway through the build)"
                    ),
                    &file,
                ));
            }
            scopes = Some(custom.scopes().clone());
        }
        field.schema = Some(custom);
    }
    schema
        .set_schema(field, is_root)
        .map_err(|e| NativeError::Failed(e.into()))?;
    // The root's schema is set before anything is built (krusty/kustomizer.go Run).
    if let Some(scopes) = scopes {
        set_custom_paths(scopes);
    }
    Ok(())
}

/// The documents of the resource files of `k`, each read on its own, in parallel, when `k`
/// lists many (a root that applies hundreds of files is built alone): one entry per
/// resource, `None` where the entry is not a file the tree holds (a folder, a remote or
/// missing one), which [`accumulate_resource`] reads itself. Reading a text is a function of
/// the text alone, so what `accumulate_resource` does with the result, errors included,
/// is the same in either case; empty below [`PREFETCH_FROM`] resources.
#[allow(clippy::type_complexity, reason = "one read result per resource entry")]
fn prefetch(
    vfs: &Vfs,
    k: &Kustomization,
) -> Vec<Option<Result<Vec<(Node, EmptyNulls)>, ReadError>>> {
    use rayon::prelude::*;
    if k.resources.len() < PREFETCH_FROM {
        return Vec::new();
    }
    k.resources
        .par_iter()
        .map(|entry| {
            let path = k.dir.join(entry);
            if entry.contains("://") || !vfs.is_file(&path) {
                return None;
            }
            let text = vfs.read_to_string(&path).ok()?;
            Some(read_documents_marked(&text))
        })
        .collect()
}

/// From how many resources a kustomization's files are read in parallel.
const PREFETCH_FROM: usize = 16;

#[allow(
    clippy::too_many_arguments,
    reason = "the build's state (stack, schema) travels with each resource as in accumulate"
)]
fn accumulate_resource(
    vfs: &Vfs,
    k: &Kustomization,
    entry: &str,
    origin: Option<&str>,
    read: Option<Result<Vec<(Node, EmptyNulls)>, ReadError>>,
    acc: &mut Accumulator<'_>,
    stack: &mut Vec<PathBuf>,
    schema: &mut SchemaState,
) -> Result<(), NativeError> {
    let file = display(k);
    if entry.contains("://") || entry.starts_with("github.com/") || entry.starts_with("git@") {
        return Err(NativeError::unsupported("a remote resource", &file));
    }
    let path = k.dir.join(entry);
    if vfs.is_dir(&path) {
        let sub_dir = canonical(vfs, &path)?;
        if kustfile::find(vfs, &sub_dir)?.is_none() {
            return Err(NativeError::Failed(format!(
                "accumulating resources: {} has no kustomization file",
                sub_dir.display()
            )));
        }
        let mut sub = Vec::new();
        let sub_origin = origin.map(|o| origin_join(o, entry));
        accumulate(
            vfs,
            &sub_dir,
            Some(KustKind::Kustomization),
            sub_origin.as_deref(),
            &mut sub,
            stack,
            schema,
        )?;
        return acc.append_all(sub);
    }
    let read = if let Some(read) = read {
        read
    } else {
        let text = vfs.read_to_string(&path).map_err(|e| {
            // A read refused by the secure file system names the kustomization asking.
            let by = if e.kind() == std::io::ErrorKind::PermissionDenied {
                format!("{file}: ")
            } else {
                String::new()
            };
            NativeError::Failed(format!("{by}accumulating resources from '{entry}': {e}"))
        })?;
        read_documents_marked(&text)
    };
    let shown = path.display().to_string();
    let docs = read.map_err(|e| match e {
        // saphyr and go-yaml disagree on some malformed input: let kustomize judge it.
        ReadError::Syntax(m) => {
            NativeError::unsupported(&format!("YAML the native reader rejects ({m})"), &shown)
        }
        ReadError::Unsupported(w) => NativeError::unsupported(&w, &shown),
        ReadError::Bound(b) => NativeError::Bound(format!("reading {shown}: {b}")),
    })?;
    let mut resources = Vec::new();
    // `accumulateFile`: every object of a file gets the file's origin as it is read.
    let annotation = origin
        .map(|o| plain_origin_path(&origin_join(o, entry), &shown).map(|p| format!("path: {p}\n")))
        .transpose()?;
    for (d, empty_null) in docs {
        let mut r = Resource::from_document(d, &shown)?;
        r.empty_null = empty_null;
        if let Some(a) = &annotation {
            r.set_annotation(ORIGIN_ANNOTATION, a);
        }
        resources.push(r);
    }
    acc.append_all(resources)
}

/// kustomize rewrites labels and annotations as `map[string]string` whenever it records ids
/// (a namespace change, for one), turning a non-string value into a string; when it does is
/// not tracked here, so such values are delegated.
fn check_metadata_strings(r: &mut Resource) -> Result<(), NativeError> {
    // kustomize removes its internal annotations at the end and drops the map when it is
    // left empty (a patch may have emptied it too).
    if let Some(Node::Map(meta)) = r.node.as_map_mut().and_then(|m| m.get_mut("metadata")) {
        match meta.get("annotations") {
            Some(Node::Map(a)) if a.is_empty() => {
                meta.remove("annotations");
            }
            None | Some(Node::Map(_)) => {}
            Some(_) => {
                return Err(NativeError::unsupported(
                    "metadata.annotations that is not a mapping",
                    r.name(),
                ))
            }
        }
        if !matches!(meta.get("labels"), None | Some(Node::Map(_))) {
            return Err(NativeError::unsupported(
                "metadata.labels that is not a mapping",
                r.name(),
            ));
        }
    }
    for field in ["labels", "annotations"] {
        if let Some(m) = r.node.get_path(&["metadata", field]).and_then(Node::as_map) {
            if m.0.iter().any(|(_, v)| !matches!(v, Node::Str(_))) {
                return Err(NativeError::unsupported(
                    &format!("a metadata.{field} value that is not a string"),
                    r.name(),
                ));
            }
        }
    }
    Ok(())
}
