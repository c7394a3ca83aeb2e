//! When each built-in Kubernetes API was introduced, deprecated and removed, and what
//! replaces it: `k8s.io/api`'s `+k8s:prerelease-lifecycle-gen` tags, read by
//! `scripts/gen-kube-lifecycle` from every release 1.25 to the newest into
//! `schemas/kube-lifecycle.json` (a release deletes a removed API from the module; the older
//! releases still say when).

use std::sync::OnceLock;

use serde::Deserialize;

/// A Kubernetes release as `major.minor`, ordered: any release the tags name (1.8 on), where
/// [`crate::KubeVersion`] is one of the releases whose schemas are embedded (1.24 to 1.36).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeRelease {
    /// `1`.
    pub major: u32,
    /// `26`.
    pub minor: u32,
}

impl KubeRelease {
    /// Reads `1.26` (a patch or `v` is ignored).
    pub fn parse(s: &str) -> Option<KubeRelease> {
        let t = s.trim().trim_start_matches('v');
        let mut parts = t.split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts
            .next()?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()?;
        Some(KubeRelease { major, minor })
    }
}

impl std::fmt::Display for KubeRelease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// What `k8s.io/api` says of one API's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeLifecycle {
    /// The release that introduced it.
    pub introduced: Option<KubeRelease>,
    /// The release that deprecated it (or will).
    pub deprecated: Option<KubeRelease>,
    /// The release that no longer serves it (or will not).
    pub removed: Option<KubeRelease>,
    /// What to use instead: `(group, version, kind)`, the group `""` for core.
    pub replacement: Option<(String, String, String)>,
}

impl KubeLifecycle {
    /// Whether `release` serves it (introduced by then, not removed yet).
    #[must_use]
    pub fn served_in(&self, release: KubeRelease) -> bool {
        self.introduced.is_none_or(|i| i <= release) && self.removed.is_none_or(|r| release < r)
    }

    /// Whether it is deprecated in `release`.
    #[must_use]
    pub fn deprecated_in(&self, release: KubeRelease) -> bool {
        self.deprecated.is_some_and(|d| d <= release)
    }
}

#[derive(Deserialize)]
struct Row {
    group: String,
    version: String,
    kind: String,
    introduced: Option<String>,
    deprecated: Option<String>,
    removed: Option<String>,
    replacement: Option<String>,
}

#[derive(Deserialize)]
struct Table {
    apis: Vec<Row>,
}

fn table() -> &'static [Row] {
    static TABLE: OnceLock<Vec<Row>> = OnceLock::new();
    TABLE.get_or_init(|| {
        // The file is generated and checked by this crate's tests: it always reads.
        let t: Table = serde_json::from_str(include_str!("../schemas/kube-lifecycle.json"))
            .expect("embedded Kubernetes lifecycle table is JSON");
        t.apis
    })
}

/// The lifecycle of the built-in `group`/`version` `kind` (`autoscaling`, `v2beta2`,
/// `HorizontalPodAutoscaler`; `""` for core), as `k8s.io/api` tags it; `None` for an API the
/// tags do not cover (not built in, or stable without tags).
#[must_use]
pub fn kube_lifecycle(group: &str, version: &str, kind: &str) -> Option<KubeLifecycle> {
    let r = table()
        .iter()
        .find(|r| r.group == group && r.version == version && r.kind == kind)?;
    let parse = |s: &Option<String>| s.as_deref().and_then(KubeRelease::parse);
    let replacement = r.replacement.as_deref().map(|s| {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            [v, k] => (String::new(), (*v).to_string(), (*k).to_string()),
            [g, v, k] => ((*g).to_string(), (*v).to_string(), (*k).to_string()),
            _ => (String::new(), String::new(), s.to_string()),
        }
    });
    Some(KubeLifecycle {
        introduced: parse(&r.introduced),
        deprecated: parse(&r.deprecated),
        removed: parse(&r.removed),
        replacement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(s: &str) -> KubeRelease {
        KubeRelease::parse(s).unwrap()
    }

    // k8s.io/api autoscaling/v2beta2 zz_generated.prerelease-lifecycle.go: introduced 1.12,
    // deprecated 1.23, removed 1.26, replaced by autoscaling/v2.
    #[test]
    fn autoscaling_v2beta2_is_deprecated_in_1_23_and_removed_in_1_26_for_v2() {
        let l = kube_lifecycle("autoscaling", "v2beta2", "HorizontalPodAutoscaler").unwrap();
        assert_eq!(l.deprecated, Some(rel("1.23")));
        assert_eq!(l.removed, Some(rel("1.26")));
        assert_eq!(
            l.replacement,
            Some((
                "autoscaling".into(),
                "v2".into(),
                "HorizontalPodAutoscaler".into()
            ))
        );
        assert!(l.served_in(rel("1.25")));
        assert!(!l.served_in(rel("1.26")));
        assert!(l.deprecated_in(rel("1.24")));
    }

    // k8s.io/api flowcontrol/v1beta3: deprecated 1.29, removed 1.32, replaced by v1.
    #[test]
    fn flowcontrol_v1beta3_is_removed_in_1_32() {
        let l = kube_lifecycle("flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema").unwrap();
        assert_eq!(l.removed, Some(rel("1.32")));
        assert!(kube_lifecycle("", "v1", "NoSuchKind").is_none());
    }

    #[test]
    fn releases_order_by_minor() {
        assert!(rel("1.9") < rel("1.26"));
        assert_eq!(rel("v1.31.4").to_string(), "1.31");
    }
}
