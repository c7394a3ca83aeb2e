//! The versions the repository's other files say: `flux bootstrap`'s header in a
//! `gotk-components.yaml` that is not rendered, and node configurations (Talos, kind,
//! Ansible).

use std::path::Path;

use super::{Assumed, Basis, FluxVersion, KubeVersion};
use crate::source::SourceFs;

/// The most bytes read of one file that may hold a version.
const MAX_BYTES: usize = 256 * 1024;
/// The most such files read.
const MAX_FILES: usize = 400;

/// What the repository's files (not its Kustomizations) say of versions: the header of a
/// `gotk-components.yaml`, Kubernetes versions in node configuration.
#[derive(Debug, Clone, Default)]
pub struct FileEvidence {
    /// `# Flux Version: v2.4.0` headers: (file, line, version).
    pub flux: Vec<(String, usize, FluxVersion)>,
    /// Kubernetes versions: (file, line, what, version).
    pub kubernetes: Vec<(String, usize, String, KubeVersion)>,
}

impl FileEvidence {
    /// Reads the candidate files among `files` (relative paths of the tree `fs`), within the
    /// repository's read bounds.
    #[must_use]
    pub fn read(fs: &SourceFs, files: &[String]) -> FileEvidence {
        let mut out = FileEvidence::default();
        let candidates = files.iter().filter(|f| is_candidate(f)).take(MAX_FILES);
        for rel in candidates {
            let Ok(bytes) = fs.read(&fs.root().join(rel)) else {
                continue;
            };
            if bytes.len() > MAX_BYTES {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            out.scan(rel, &text);
        }
        out
    }

    fn scan(&mut self, rel: &str, text: &str) {
        let name = Path::new(rel)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        for (i, line) in text.lines().enumerate() {
            let at = i + 1;
            let l = line.trim();
            if name == "gotk-components.yaml" {
                // flux2 `cmd/flux/bootstrap`: "# Flux Version: v2.4.0" in the header.
                if let Some(v) = l
                    .strip_prefix("# Flux Version:")
                    .and_then(FluxVersion::parse)
                {
                    self.flux.push((rel.to_string(), at, v));
                }
                continue;
            }
            for (needle, what) in KUBE_NEEDLES {
                let Some(pos) = l.find(needle) else { continue };
                let rest = &l[pos + needle.len()..];
                let value: String = rest
                    .trim_start_matches([' ', '"', '\''])
                    .chars()
                    .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | ','))
                    .collect();
                if let Some(v) = KubeVersion::parse(&value) {
                    self.kubernetes
                        .push((rel.to_string(), at, format!("{what} `{value}`"), v));
                }
            }
        }
    }

    /// The Flux version the file headers say for a cluster whose folder is `home`: a
    /// header under `home` first, else the only version the repository's headers say.
    #[must_use]
    pub fn flux_for(&self, home: &str) -> Option<Assumed<FluxVersion>> {
        pick(
            self.flux
                .iter()
                .map(|(f, l, v)| (f.as_str(), *l, "header `# Flux Version`".to_string(), *v)),
            home,
        )
    }

    /// The Kubernetes version the node configuration says for a cluster whose folder is
    /// `home` (named `cluster`): under `home` or in a path that names the cluster first,
    /// else the only version the repository says.
    #[must_use]
    pub fn kube_for(&self, home: &str, cluster: &str) -> Option<Assumed<KubeVersion>> {
        let named: Vec<_> = self
            .kubernetes
            .iter()
            .filter(|(f, ..)| f.split('/').any(|c| c == cluster))
            .collect();
        let all = if named.is_empty() {
            self.kubernetes.iter().collect()
        } else {
            named
        };
        pick(
            all.into_iter()
                .map(|(f, l, w, v)| (f.as_str(), *l, w.clone(), *v)),
            home,
        )
    }
}

/// Among `(file, line, what, version)`, those under `home` if any, else all; one version
/// when they agree (the first file's evidence), none when they disagree.
fn pick<'a, T: Copy + PartialEq>(
    found: impl Iterator<Item = (&'a str, usize, String, T)>,
    home: &str,
) -> Option<Assumed<T>> {
    let found: Vec<_> = found.collect();
    let under: Vec<_> = found
        .iter()
        .filter(|(f, ..)| home.is_empty() || f.starts_with(&format!("{home}/")))
        .collect();
    let set = if under.is_empty() {
        found.iter().collect()
    } else {
        under
    };
    let first = set.first()?;
    if set.iter().any(|(_, _, _, v)| *v != first.3) {
        return None;
    }
    Some(Assumed {
        version: first.3,
        basis: Basis::Evidence {
            what: first.2.clone(),
            file: Some(format!("{}:{}", first.0, first.1)),
        },
    })
}

/// Text that names a Kubernetes version in node configuration, and what it is: Talos
/// (talhelper's `talconfig.yaml`, machine configs' images), kind, k3s/RKE2 Ansible roles.
const KUBE_NEEDLES: &[(&str, &str)] = &[
    ("kubernetesVersion:", "kubernetesVersion"),
    ("registry.k8s.io/kube-apiserver:", "image kube-apiserver"),
    ("ghcr.io/siderolabs/kubelet:", "image kubelet"),
    ("kindest/node:", "image kindest/node"),
    ("k3s_version:", "k3s_version"),
    ("rke2_version:", "rke2_version"),
];

/// Whether a file may hold version evidence: a `gotk-components.yaml`, Talos configuration
/// (`talconfig.yaml`, a file under a `talos` folder), a kind config, Ansible variables.
fn is_candidate(rel: &str) -> bool {
    let p = Path::new(rel);
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_dir = |d: &str| {
        p.parent()
            .is_some_and(|parent| parent.components().any(|c| c.as_os_str() == d))
    };
    let text_like = Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["yaml", "yml", "j2", "tmpl", "gotmpl"].contains(&e));
    name == "gotk-components.yaml"
        || name == "talconfig.yaml"
        || (text_like
            && (in_dir("talos")
                || in_dir("group_vars")
                || in_dir("host_vars")
                || name.starts_with("kind")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::versions::{Basis, FluxVersion};

    #[test]
    fn node_configuration_and_bootstrap_headers_say_versions_with_file_and_line() {
        let mut e = FileEvidence::default();
        e.scan(
            "clusters/dev/flux-system/gotk-components.yaml",
            "---\n# This manifest was generated by flux. DO NOT EDIT.\n# Flux Version: v2.3.0\n",
        );
        e.scan(
            "talos/talconfig.yaml",
            "clusterName: home\nkubernetesVersion: v1.31.4\n",
        );
        e.scan(
            "talos/patch.yaml",
            "  image: registry.k8s.io/kube-apiserver:{{ ENV.K8S }}\n",
        );
        let f = e.flux_for("clusters/dev").unwrap();
        assert_eq!(
            f.version,
            FluxVersion {
                minor: 3,
                patch: Some(0)
            }
        );
        assert_eq!(
            f.basis,
            Basis::Evidence {
                what: "header `# Flux Version`".into(),
                file: Some("clusters/dev/flux-system/gotk-components.yaml:3".into())
            }
        );
        let k = e.kube_for("clusters/dev", "dev").unwrap();
        assert_eq!(k.version.to_string(), "1.31.4");
        assert!(
            k.basis.to_string().ends_with("talos/talconfig.yaml:2"),
            "{}",
            k.basis
        );
        // Two clusters' files that disagree, neither under the cluster: nothing is said.
        e.scan(
            "talos/other/controlplane.yaml",
            "image: registry.k8s.io/kube-apiserver:v1.30.1\n",
        );
        assert!(e.kube_for("clusters/dev", "dev").is_none());
        assert!(is_candidate("talos/clusterconfig/node.yaml"));
        assert!(!is_candidate("apps/talos.md"));
    }
}
