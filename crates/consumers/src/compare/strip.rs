//! Noise dropped before two objects are compared: `--strip PATH` (`--strip-field`, its old
//! name), `--strip-label KEY` and `fluxsim.toml`'s `[diff] strip` (a chart version label, a
//! checksum annotation that changes on every build).
//!
//! The paths are read and applied by the review's filters (`review::strip`), so that what
//! decides "identical" and what a report hides are the same rule, and a path a report shows
//! (`spec.template.spec.containers[name=app].env`) can be pasted back.

use serde_json::Value;

pub use review::strip::PathError;

/// What to drop from every object before comparing: the user's paths and labels only (the
/// review's default filters hide, they never make a change identical).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strip {
    filters: review::strip::Filters,
    empty: bool,
}

impl Default for Strip {
    fn default() -> Self {
        Self {
            filters: review::strip::Filters::none(),
            empty: true,
        }
    }
}

impl Strip {
    /// Paths (segments separated by `.`, a quoted segment may hold dots, `*` any key or item,
    /// `[name=x]` or `[0]` a list item) and label keys.
    pub fn new(paths: &[String], labels: &[String]) -> Result<Self, PathError> {
        let mut filters = review::strip::Filters::none();
        for p in paths {
            filters.strip(p)?;
        }
        for l in labels {
            filters.strip_label(l);
        }
        Ok(Self {
            filters,
            empty: paths.is_empty() && labels.is_empty(),
        })
    }

    /// Nothing to strip.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.empty
    }

    /// The object without the stripped fields and labels; `None` when nothing was there to
    /// strip.
    #[must_use]
    pub fn apply(&self, object: &Value) -> Option<Value> {
        if self.empty {
            return None;
        }
        let v = self.filters.apply(object);
        (v != *object).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strip_paths_are_dot_separated_with_quoted_segments() {
        let ok = |p: &str| Strip::new(&[p.to_string()], &[]).is_ok();
        assert!(ok("metadata.annotations.\"example.com/checksum\""));
        assert!(ok("spec.template.spec.containers[name=app].env"));
        assert!(!ok("a..b"));
        assert!(!ok("a.\"b"));
        assert!(!ok(""));
    }

    #[test]
    fn strip_removes_the_field_and_wildcards_reach_every_item() {
        let s = Strip::new(
            &[
                "metadata.annotations.\"example.com/checksum\"".into(),
                "spec.template.spec.containers.*.env".into(),
            ],
            &[],
        )
        .unwrap();
        let v = json!({"metadata": {"annotations": {"example.com/checksum": "1", "keep": "x"}},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "env": [1]}, {"name": "b", "env": [2]}]}}}});
        let out = s.apply(&v).unwrap();
        assert_eq!(out["metadata"]["annotations"], json!({"keep": "x"}));
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a"}, {"name": "b"}])
        );
        assert_eq!(s.apply(&json!({"kind": "X"})), None, "nothing to strip");
    }

    #[test]
    fn strip_label_drops_the_label_from_every_metadata() {
        let s = Strip::new(&[], &["helm.sh/chart".into()]).unwrap();
        let v = json!({"metadata": {"labels": {"helm.sh/chart": "x-1.0", "app": "x"}},
            "spec": {"selector": {"matchLabels": {"helm.sh/chart": "kept"}},
                     "template": {"metadata": {"labels": {"helm.sh/chart": "x-1.0"}}}}});
        let out = s.apply(&v).unwrap();
        assert_eq!(out["metadata"]["labels"], json!({"app": "x"}));
        assert_eq!(
            out["spec"]["selector"]["matchLabels"]["helm.sh/chart"],
            "kept"
        );
    }
}
