//! Walking field specs (kustomize `api/filters/fieldspec`): every field a spec's path
//! names in the objects it selects, created when the spec says so.

use crate::konfig::FieldSpec;
use crate::node::{Map, Node};
use crate::resource::{Gvk, Resource};
use crate::NativeError;

/// `Gvk.IsSelected`: empty selector fields match anything.
pub(super) fn selected(gvk: &Gvk, spec: &FieldSpec) -> bool {
    (spec.group.is_empty() || spec.group == gvk.group)
        && (spec.version.is_empty() || spec.version == gvk.version)
        && (spec.kind.is_empty() || spec.kind == gvk.kind)
}

/// What to do at the end of a field-spec path.
#[derive(Clone, Copy)]
pub(super) enum Setter<'a> {
    /// Set these entries in the mapping there (labels, annotations).
    Entries(&'a [(String, String)]),
    /// Set the scalar there to this string (namespace).
    Scalar(&'a str),
}

/// `fieldspec.Filter`: walks `path` (sequences are walked element by element), creating
/// missing fields when the spec says so, and sets the value at the end.
pub(super) fn apply_path(
    node: &mut Node,
    path: &[&str],
    create: bool,
    setter: Setter,
) -> Result<(), crate::Unsupported> {
    let Some((first, rest)) = path.split_first() else {
        return set_value(node, setter);
    };
    match node {
        Node::Seq(items) => {
            for item in items {
                apply_path(item, path, create, setter)?;
            }
            Ok(())
        }
        Node::Map(map) => {
            let (name, is_seq) = match first.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (*first, false),
            };
            let creating = create && !is_seq;
            if map.get(name).is_none() {
                if !creating {
                    return Ok(());
                }
                let new = if rest.is_empty() {
                    match setter {
                        Setter::Entries(_) => Node::Map(Map::default()),
                        Setter::Scalar(_) => Node::Str(String::new()),
                    }
                } else {
                    Node::Map(Map::default())
                };
                map.0.push((name.to_string(), new));
            }
            let Some(field) = map.get_mut(name) else {
                return Ok(());
            };
            if *field == Node::Null {
                if creating && (!rest.is_empty() || matches!(setter, Setter::Entries(_))) {
                    *field = Node::Map(Map::default());
                } else {
                    return Err(format!("a null `{name}` on a field-spec path").into());
                }
            }
            apply_path(field, rest, create, setter)
        }
        _ => Err("a field-spec path through a scalar".into()),
    }
}

pub(super) fn set_value(node: &mut Node, setter: Setter) -> Result<(), crate::Unsupported> {
    match setter {
        Setter::Entries(pairs) => {
            let Node::Map(map) = node else {
                return Err("labels or annotations that are not a mapping".into());
            };
            for (k, v) in pairs {
                map.insert(k, Node::Str(v.clone()));
            }
            Ok(())
        }
        Setter::Scalar(value) => {
            if !matches!(node, Node::Str(_)) {
                return Err("a namespace field that is not a string".into());
            }
            *node = Node::Str(value.to_string());
            Ok(())
        }
    }
}

pub(super) fn apply_specs(
    r: &mut Resource,
    specs: &[&FieldSpec],
    setter: Setter,
    file: &str,
) -> Result<(), NativeError> {
    let gvk = r.gvk();
    for spec in specs {
        if !selected(&gvk, spec) {
            continue;
        }
        let path: Vec<&str> = spec.path.split('/').collect();
        apply_path(&mut r.node, &path, spec.create, setter)
            .map_err(|w| NativeError::unsupported(&w, file))?;
    }
    Ok(())
}
