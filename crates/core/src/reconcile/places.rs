//! Where in the repository a substitution failure is: envsubst says where the `${...}` is in
//! the object as kustomize printed it; a person needs the file and line they wrote it in.
//! Found as `audit` finds its places (`locate`'s `document_range` and `nth_in_lines`): the
//! object's origin when the render tracked origins, else the files its build read that hold
//! a document of its kind and name, and in that document the same occurrence of the
//! expression.

use std::path::Path;

use crate::artifact::ArtifactObject;
use crate::flux::Kustomization;
use crate::locate::{document_range, nth_in_lines, Needle};
use crate::model::KustomizationRender;
use crate::source::SourceFs;

/// The `file:line:column` of the expression envsubst failed on (`e`) in the template object
/// `o` of the Kustomization `ks`, read from `fs` (the repository's own tree; `r.inputs` the
/// files its build read); `None` when no file shows it.
pub(super) fn substitution_place(
    fs: &SourceFs,
    ks: &Kustomization,
    r: &KustomizationRender,
    o: &ArtifactObject,
    e: &crate::envsubst::Error,
) -> Option<String> {
    // The expression as envsubst quotes it (cut at 80 characters: the start is enough).
    let needle = e.expr.strip_suffix("...").unwrap_or(&e.expr);
    if needle.is_empty() {
        return None;
    }
    // Which occurrence of it in the object's text envsubst stopped at.
    let nth = o
        .yaml
        .get(..e.offset.min(o.yaml.len()))
        .map_or(0, |before| before.matches(needle).count());
    let names = names_in_files(ks, &o.id.name);
    let read = |file: &str| fs.read_to_string(&fs.root().join(file)).ok();
    let find = |text: &str, by_name_only: bool| {
        let (start, end, name_line) = document_range(text, &o.id.kind, &names);
        if by_name_only && name_line.is_none() {
            return None;
        }
        [nth, 0].into_iter().find_map(|n| {
            nth_in_lines(
                text,
                Needle {
                    text: needle,
                    nth: n,
                    whole_word: false,
                    code_only: false,
                },
                start,
                end,
            )
        })
    };
    if let Some(file) = o.origin.as_ref().and_then(|g| g.path.as_deref()) {
        let text = read(file)?;
        let (line, column, _) = find(&text, false)?;
        return Some(format!("{file}:{line}:{column}"));
    }
    r.inputs.iter().flatten().find_map(|file| {
        if !crate::discover::is_yaml_file(Path::new(file)) {
            return None;
        }
        let text = read(file)?;
        let (line, column, _) = find(&text, true)?;
        Some(format!("{file}:{line}:{column}"))
    })
}

/// The names an object of `ks`'s build may have in its file: as rendered, and without the
/// Kustomization's `namePrefix` and `nameSuffix`.
fn names_in_files(ks: &Kustomization, rendered: &str) -> Vec<String> {
    let bare = ks
        .name_prefix
        .as_deref()
        .and_then(|p| rendered.strip_prefix(p))
        .unwrap_or(rendered);
    let bare = ks
        .name_suffix
        .as_deref()
        .and_then(|x| bare.strip_suffix(x))
        .unwrap_or(bare);
    let mut names = vec![rendered.to_string()];
    if bare != rendered {
        names.push(bare.to_string());
    }
    names
}

/// `ks`, the object `o` of `r`'s artifact, with the reason it is invalid (if it is) led by
/// the file and line that declare it (see [`declared_in`]).
pub(super) fn invalid_where(
    mut ks: Kustomization,
    fs: Option<&SourceFs>,
    r: &KustomizationRender,
    o: &crate::artifact::ArtifactObject,
) -> Kustomization {
    let Some(why) = ks.invalid.take() else {
        return ks;
    };
    ks.invalid = Some(match declared_in(fs, r, o) {
        Some(place) => format!("{place}: {why}"),
        None => format!("as {} applies it: {why}", r.kustomization.id),
    });
    ks
}

/// Where the Kustomization `o` of `r`'s artifact is declared, as `file:line`: the object's
/// origin when the render tracked it, else the first file `r`'s build read (from `fs`) that
/// declares a Kustomization of its name (as rendered, or without the applying
/// Kustomization's namePrefix and nameSuffix).
pub(super) fn declared_in(
    fs: Option<&SourceFs>,
    r: &KustomizationRender,
    o: &crate::artifact::ArtifactObject,
) -> Option<String> {
    // The name in the file: as rendered, or without the applying Kustomization's affixes.
    let spec = &r.kustomization;
    let bare = o.id.name.as_str();
    let bare = spec
        .name_prefix
        .as_deref()
        .and_then(|p| bare.strip_prefix(p))
        .unwrap_or(bare);
    let bare = spec
        .name_suffix
        .as_deref()
        .and_then(|x| bare.strip_suffix(x))
        .unwrap_or(bare);
    let names = [o.id.name.as_str(), bare];
    let line_in = |fs: &SourceFs, file: &str| {
        let text = fs.read_to_string(&fs.root().join(file)).ok()?;
        names
            .iter()
            .find_map(|n| crate::locate::object_line(&text, "Kustomization", n))
    };
    let origin = o.origin.as_ref().and_then(|g| g.path.clone());
    match (origin, fs) {
        (Some(file), Some(fs)) => Some(match line_in(fs, &file) {
            Some(line) => format!("{file}:{line}"),
            None => file,
        }),
        (Some(file), None) => Some(file),
        (None, Some(fs)) => r
            .inputs
            .iter()
            .flatten()
            .find_map(|file| line_in(fs, file).map(|line| format!("{file}:{line}"))),
        (None, None) => None,
    }
}
