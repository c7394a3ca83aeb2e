//! The embedded Kubernetes schemas, one file per supported minor version
//! (`schemas/kube-1.NN.json.gz`, made by `scripts/gen-kube-schemas` from the published
//! `api/openapi-spec/v3` of `k8s.io/kubernetes`), and the catalog of kinds read from them.

use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::schema::{Arena, NodeId, Source};

/// A Kubernetes minor version whose schemas are embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KubeVersion {
    /// Kubernetes 1.34 (schemas of v1.34.4).
    V1_34,
    /// Kubernetes 1.35 (schemas of v1.35.4).
    V1_35,
    /// Kubernetes 1.36 (schemas of v1.36.3).
    V1_36,
}

impl KubeVersion {
    /// Every embedded version, oldest first.
    pub const ALL: [KubeVersion; 3] = [KubeVersion::V1_34, KubeVersion::V1_35, KubeVersion::V1_36];

    /// The default: the newest Kubernetes that Flux v2.9 supports (its release notes list
    /// 1.34, 1.35 and 1.36).
    pub const DEFAULT: KubeVersion = KubeVersion::V1_36;

    /// `1.34`, `1.35`, `1.36`.
    pub fn as_str(self) -> &'static str {
        match self {
            KubeVersion::V1_34 => "1.34",
            KubeVersion::V1_35 => "1.35",
            KubeVersion::V1_36 => "1.36",
        }
    }

    /// Reads `1.35`, `v1.35` or `1.35.2` (the patch level is ignored: the API does not change
    /// within a minor version).
    pub fn parse(s: &str) -> Result<KubeVersion, UnsupportedVersion> {
        let t = s.trim().trim_start_matches('v');
        let minor: String = t.split('.').take(2).collect::<Vec<_>>().join(".");
        KubeVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == minor)
            .ok_or_else(|| UnsupportedVersion(s.to_string()))
    }

    fn compressed(self) -> &'static [u8] {
        match self {
            KubeVersion::V1_34 => include_bytes!("../schemas/kube-1.34.json.gz"),
            KubeVersion::V1_35 => include_bytes!("../schemas/kube-1.35.json.gz"),
            KubeVersion::V1_36 => include_bytes!("../schemas/kube-1.36.json.gz"),
        }
    }
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--kube-version` that has no embedded schemas.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Kubernetes version `{0}` has no embedded schemas (supported: 1.34, 1.35, 1.36)")]
pub struct UnsupportedVersion(pub String);

/// A kind the catalog serves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KindInfo {
    pub(crate) root: NodeId,
    pub(crate) namespaced: bool,
}

/// The built-in kinds of one Kubernetes version, compiled.
#[derive(Debug)]
pub(crate) struct Catalog {
    pub(crate) version: KubeVersion,
    /// The full release the schemas come from (`1.36.3`).
    pub(crate) release: String,
    pub(crate) definitions: Map<String, Value>,
    pub(crate) arena: Arena,
    /// `(group, version, kind)` → kind.
    kinds: HashMap<(String, String, String), KindInfo>,
    /// Groups with at least one kind (`""` for core).
    groups: HashMap<String, Vec<String>>,
}

impl Catalog {
    /// The catalog of a version, read and compiled once per process.
    pub(crate) fn get(version: KubeVersion) -> &'static Catalog {
        static CATALOGS: [OnceLock<Catalog>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let i = KubeVersion::ALL
            .iter()
            .position(|v| *v == version)
            .unwrap_or(0);
        CATALOGS[i].get_or_init(|| Catalog::load(version))
    }

    fn load(version: KubeVersion) -> Catalog {
        let mut text = Vec::new();
        // The embedded files are ours: a failure here is a build defect, caught by the tests.
        flate2::read::GzDecoder::new(version.compressed())
            .read_to_end(&mut text)
            .expect("embedded schema file decompresses");
        let mut doc: Value = serde_json::from_slice(&text).expect("embedded schema file is JSON");
        let release = doc["version"].as_str().unwrap_or_default().to_string();
        let definitions = match doc.get_mut("definitions").map(Value::take) {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        let mut arena = Arena::default();
        let mut kinds = HashMap::new();
        let mut groups: HashMap<String, Vec<String>> = HashMap::new();
        let source = Source {
            definitions: &definitions,
        };
        if let Some(Value::Object(list)) = doc.get("kinds") {
            for (key, info) in list {
                let mut parts = key.splitn(3, '/');
                let (Some(group), Some(ver), Some(kind)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let Some(name) = info["schema"].as_str() else {
                    continue;
                };
                let Ok(root) = arena.named(&source, name) else {
                    continue;
                };
                kinds.insert(
                    (group.to_string(), ver.to_string(), kind.to_string()),
                    KindInfo {
                        root,
                        namespaced: info["namespaced"].as_bool().unwrap_or(false),
                    },
                );
                groups
                    .entry(group.to_string())
                    .or_default()
                    .push(ver.to_string());
            }
        }
        Catalog {
            version,
            release,
            definitions,
            arena,
            kinds,
            groups,
        }
    }

    pub(crate) fn kind(&self, group: &str, version: &str, kind: &str) -> Option<KindInfo> {
        self.kinds
            .get(&(group.to_string(), version.to_string(), kind.to_string()))
            .copied()
    }

    /// Is this an API group the Kubernetes API server itself serves?
    pub(crate) fn has_group(&self, group: &str) -> bool {
        self.groups.contains_key(group)
    }

    /// The versions in which the catalog serves `group`'s `kind`.
    pub(crate) fn versions_of(&self, group: &str, kind: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .kinds
            .keys()
            .filter(|(g, _, k)| g == group && k == kind)
            .map(|(_, v, _)| v.clone())
            .collect();
        v.sort();
        v
    }

    /// Is `group`/`kind` namespaced, in any version the catalog knows?
    pub(crate) fn namespaced(&self, group: &str, kind: &str) -> Option<bool> {
        self.kinds
            .iter()
            .find(|((g, _, k), _)| g == group && k == kind)
            .map(|(_, i)| i.namespaced)
    }
}
