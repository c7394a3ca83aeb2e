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
    /// Kubernetes 1.24 (schemas of v1.24.17).
    V1_24,
    /// Kubernetes 1.25 (schemas of v1.25.16).
    V1_25,
    /// Kubernetes 1.26 (schemas of v1.26.15).
    V1_26,
    /// Kubernetes 1.27 (schemas of v1.27.16).
    V1_27,
    /// Kubernetes 1.28 (schemas of v1.28.15).
    V1_28,
    /// Kubernetes 1.29 (schemas of v1.29.15).
    V1_29,
    /// Kubernetes 1.30 (schemas of v1.30.14).
    V1_30,
    /// Kubernetes 1.31 (schemas of v1.31.14).
    V1_31,
    /// Kubernetes 1.32 (schemas of v1.32.13).
    V1_32,
    /// Kubernetes 1.33 (schemas of v1.33.13).
    V1_33,
    /// Kubernetes 1.34 (schemas of v1.34.4).
    V1_34,
    /// Kubernetes 1.35 (schemas of v1.35.4).
    V1_35,
    /// Kubernetes 1.36 (schemas of v1.36.3).
    V1_36,
}

/// Each embedded version: its `1.NN`, and its schema file.
const EMBEDDED: [(KubeVersion, &str, &[u8]); 13] = [
    (
        KubeVersion::V1_24,
        "1.24",
        include_bytes!("../schemas/kube-1.24.json.gz"),
    ),
    (
        KubeVersion::V1_25,
        "1.25",
        include_bytes!("../schemas/kube-1.25.json.gz"),
    ),
    (
        KubeVersion::V1_26,
        "1.26",
        include_bytes!("../schemas/kube-1.26.json.gz"),
    ),
    (
        KubeVersion::V1_27,
        "1.27",
        include_bytes!("../schemas/kube-1.27.json.gz"),
    ),
    (
        KubeVersion::V1_28,
        "1.28",
        include_bytes!("../schemas/kube-1.28.json.gz"),
    ),
    (
        KubeVersion::V1_29,
        "1.29",
        include_bytes!("../schemas/kube-1.29.json.gz"),
    ),
    (
        KubeVersion::V1_30,
        "1.30",
        include_bytes!("../schemas/kube-1.30.json.gz"),
    ),
    (
        KubeVersion::V1_31,
        "1.31",
        include_bytes!("../schemas/kube-1.31.json.gz"),
    ),
    (
        KubeVersion::V1_32,
        "1.32",
        include_bytes!("../schemas/kube-1.32.json.gz"),
    ),
    (
        KubeVersion::V1_33,
        "1.33",
        include_bytes!("../schemas/kube-1.33.json.gz"),
    ),
    (
        KubeVersion::V1_34,
        "1.34",
        include_bytes!("../schemas/kube-1.34.json.gz"),
    ),
    (
        KubeVersion::V1_35,
        "1.35",
        include_bytes!("../schemas/kube-1.35.json.gz"),
    ),
    (
        KubeVersion::V1_36,
        "1.36",
        include_bytes!("../schemas/kube-1.36.json.gz"),
    ),
];

impl KubeVersion {
    /// Every embedded version, oldest first.
    pub const ALL: [KubeVersion; 13] = {
        let mut all = [KubeVersion::V1_24; 13];
        let mut i = 0;
        while i < EMBEDDED.len() {
            all[i] = EMBEDDED[i].0;
            i += 1;
        }
        all
    };

    /// The oldest embedded version.
    pub const OLDEST: KubeVersion = KubeVersion::V1_24;

    /// The newest embedded version.
    pub const NEWEST: KubeVersion = KubeVersion::V1_36;

    /// The default: the newest Kubernetes that Flux v2.9 supports (its release notes list
    /// 1.34, 1.35 and 1.36).
    pub const DEFAULT: KubeVersion = KubeVersion::V1_36;

    /// `1.24` ... `1.36`.
    pub fn as_str(self) -> &'static str {
        EMBEDDED[self.index()].1
    }

    /// The minor number (`36` for 1.36).
    pub fn minor(self) -> u32 {
        KubeVersion::OLDEST_MINOR + self.index() as u32
    }

    /// Reads `1.35`, `v1.35` or `1.35.2` (the patch level is ignored: the API does not change
    /// within a minor version).
    pub fn parse(s: &str) -> Result<KubeVersion, UnsupportedVersion> {
        match parse_minor(s) {
            Some(minor) => KubeVersion::from_minor(minor),
            None => None,
        }
        .ok_or_else(|| UnsupportedVersion(s.to_string()))
    }

    /// The embedded version of Kubernetes 1.`minor`, if any.
    pub fn from_minor(minor: u32) -> Option<KubeVersion> {
        let i = minor.checked_sub(KubeVersion::OLDEST_MINOR)? as usize;
        KubeVersion::ALL.get(i).copied()
    }

    /// The embedded version nearest to a detected one (`1.22`, `v1.38.1`): the version itself
    /// when embedded, else the oldest or the newest embedded. Fails only on what is no
    /// Kubernetes 1.x version.
    pub fn nearest(s: &str) -> Result<Nearest, UnsupportedVersion> {
        let minor = parse_minor(s).ok_or_else(|| UnsupportedVersion(s.to_string()))?;
        let version =
            KubeVersion::from_minor(minor).unwrap_or(if minor < KubeVersion::OLDEST_MINOR {
                KubeVersion::OLDEST
            } else {
                KubeVersion::NEWEST
            });
        Ok(Nearest {
            version,
            exact: version.minor() == minor,
        })
    }

    const OLDEST_MINOR: u32 = 24;

    fn index(self) -> usize {
        self as usize
    }

    fn compressed(self) -> &'static [u8] {
        EMBEDDED[self.index()].2
    }
}

/// The minor of `1.NN`, `v1.NN` or `1.NN.P` (`None` for anything else).
fn parse_minor(s: &str) -> Option<u32> {
    let t = s.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    let mut parts = t.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    if major != "1" || parts.count() > 1 {
        return None;
    }
    minor.parse().ok()
}

/// What [`KubeVersion::nearest`] chose for a detected version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nearest {
    /// The embedded version used.
    pub version: KubeVersion,
    /// Whether it is the detected minor itself (false: the nearest embedded one).
    pub exact: bool,
}

impl std::fmt::Display for KubeVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `--kube-version` that has no embedded schemas.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Kubernetes version `{0}` has no embedded schemas (supported: {oldest} to {newest})",
    oldest = KubeVersion::OLDEST,
    newest = KubeVersion::NEWEST
)]
pub struct UnsupportedVersion(pub String);

/// The life of one built-in Kubernetes API (group, version, kind) across the embedded minors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeApiLifecycle {
    /// The embedded minors that serve it, oldest first.
    pub served: Vec<KubeVersion>,
    /// The first embedded minor after a serving one that no longer serves it.
    pub removed_in: Option<KubeVersion>,
}

impl KubeApiLifecycle {
    /// Whether `version` serves it.
    pub fn served_in(&self, version: KubeVersion) -> bool {
        self.served.contains(&version)
    }

    /// The oldest embedded minor that serves it (an API 1.24 serves may be older).
    pub fn first_served(&self) -> Option<KubeVersion> {
        self.served.first().copied()
    }
}

/// The lifecycle of the built-in `group`/`version` `kind` (`autoscaling`, `v2beta2`,
/// `HorizontalPodAutoscaler`; `""` for the core group) across the embedded minors, from the
/// small table `scripts/gen-kube-schemas` makes with the schemas (no catalog is read); `None`
/// when no embedded minor serves it.
pub fn kube_api(group: &str, version: &str, kind: &str) -> Option<KubeApiLifecycle> {
    static TABLE: OnceLock<HashMap<String, Vec<KubeVersion>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut text = Vec::new();
        // Generated with the schema files and checked against them by this crate's tests.
        flate2::read::GzDecoder::new(&include_bytes!("../schemas/kube-apis.json.gz")[..])
            .read_to_end(&mut text)
            .expect("embedded API table decompresses");
        let doc: Value = serde_json::from_slice(&text).expect("embedded API table is JSON");
        let mut table = HashMap::new();
        if let Some(Value::Object(kinds)) = doc.get("kinds") {
            for (key, minors) in kinds {
                let served = minors
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|m| KubeVersion::parse(m.as_str()?).ok())
                    .collect();
                table.insert(key.clone(), served);
            }
        }
        table
    });
    let served: &Vec<KubeVersion> = table.get(&format!("{group}/{version}/{kind}"))?;
    let first = *served.first()?;
    let removed_in = KubeVersion::ALL
        .into_iter()
        .find(|v| *v > first && !served.contains(v));
    Some(KubeApiLifecycle {
        served: served.clone(),
        removed_in,
    })
}

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
        static CATALOGS: [OnceLock<Catalog>; KubeVersion::ALL.len()] =
            [const { OnceLock::new() }; KubeVersion::ALL.len()];
        CATALOGS[version.index()].get_or_init(|| Catalog::load(version))
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

#[cfg(test)]
mod tests {
    use super::*;

    // scripts/gen-kube-schemas makes schemas/kube-apis.json.gz from the schema files: each
    // kind (the meta types left out) is listed with exactly the versions whose file has it.
    #[test]
    fn the_api_table_lists_what_each_embedded_schema_file_serves() {
        let mut from_files: HashMap<String, Vec<KubeVersion>> = HashMap::new();
        for version in KubeVersion::ALL {
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(version.compressed())
                .read_to_end(&mut text)
                .unwrap();
            let doc: Value = serde_json::from_slice(&text).unwrap();
            assert!(doc["version"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{version}.")));
            for (key, info) in doc["kinds"].as_object().unwrap() {
                let schema = info["schema"].as_str().unwrap();
                if !schema.starts_with("io.k8s.apimachinery.pkg.apis.meta.v1.") {
                    from_files.entry(key.clone()).or_default().push(version);
                }
            }
        }
        assert!(from_files.len() > 200, "{}", from_files.len());
        for (key, served) in &from_files {
            let mut parts = key.splitn(3, '/');
            let (g, v, k) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            assert_eq!(&kube_api(g, v, k).unwrap().served, served, "{key}");
        }
    }
}
