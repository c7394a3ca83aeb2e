//! Field paths while walking an object, printed three ways: Kubernetes field paths
//! (`spec.containers[0].image`, the crate's `Finding::path`), kube-openapi's names in CRD
//! validation messages (`spec.containers[0].image`, map keys with a dot) and
//! structured-merge-diff's paths in server-side apply messages
//! (`.spec.containers[name="app"].image`).

use std::fmt::Write as _;

/// One step from a value to a child.
#[derive(Debug, Clone)]
pub(crate) enum Seg<'a> {
    /// A declared property.
    Field(&'a str),
    /// A key of a map (`additionalProperties`).
    Key(&'a str),
    /// An element of a list, with its structured-merge-diff name when the list is merged by
    /// key (`[name="app"]`, `[="x"]`).
    Index(usize, Option<String>),
}

/// Kubernetes' `field.Path` form.
pub(crate) fn k8s(path: &[Seg<'_>]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Field(f) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(f);
            }
            Seg::Key(k) => {
                let _ = write!(s, "[{k}]");
            }
            Seg::Index(i, _) => {
                let _ = write!(s, "[{i}]");
            }
        }
    }
    s
}

/// kube-openapi's validation name (map keys joined with a dot).
pub(crate) fn openapi(path: &[Seg<'_>]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Field(f) | Seg::Key(f) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(f);
            }
            Seg::Index(i, _) => {
                let _ = write!(s, "[{i}]");
            }
        }
    }
    s
}

/// structured-merge-diff's `fieldpath.Path` string.
pub(crate) fn smd(path: &[Seg<'_>]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Field(f) | Seg::Key(f) => {
                s.push('.');
                s.push_str(f);
            }
            Seg::Index(_, Some(key)) => s.push_str(key),
            Seg::Index(i, None) => {
                let _ = write!(s, "[{i}]");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_in_the_three_forms() {
        let p = [
            Seg::Field("spec"),
            Seg::Field("containers"),
            Seg::Index(0, Some("[name=\"app\"]".to_string())),
            Seg::Field("env"),
            Seg::Index(2, None),
        ];
        assert_eq!(k8s(&p), "spec.containers[0].env[2]");
        assert_eq!(smd(&p), ".spec.containers[name=\"app\"].env[2]");
        let l = [
            Seg::Field("metadata"),
            Seg::Field("labels"),
            Seg::Key("app.kubernetes.io/name"),
        ];
        assert_eq!(k8s(&l), "metadata.labels[app.kubernetes.io/name]");
        assert_eq!(openapi(&l), "metadata.labels.app.kubernetes.io/name");
    }
}
