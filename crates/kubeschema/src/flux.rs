//! The CRDs of Flux's controllers, embedded: most repositories do not hold them (they leave
//! `gotk-components.yaml` out, or the Flux Operator installs Flux), yet Flux's own objects
//! (Kustomizations, sources, HelmReleases) are what a GitOps change edits most.
//! `scripts/gen-flux-crds` makes `schemas/flux-crds.json.gz` from the controllers' modules.

use std::io::Read as _;
use std::sync::OnceLock;

use serde_json::Value;

/// Where the embedded CRDs come from: the controllers of the Flux release, at the versions it
/// ships (only those whose module the Go proxy serves at exactly that version).
pub const FLUX_CRDS_SOURCE: &str =
    "Flux v2.9.5: kustomize-controller v1.9.5, source-controller v1.9.5, helm-controller v1.6.4";

/// The embedded CRDs (Kustomization, GitRepository, OCIRepository, Bucket, HelmRepository,
/// HelmChart, ExternalArtifact, HelmRelease), descriptions stripped.
pub fn flux_crds() -> &'static [Value] {
    static CRDS: OnceLock<Vec<Value>> = OnceLock::new();
    CRDS.get_or_init(|| {
        let mut text = String::new();
        // The file is generated and checked by this crate's tests: it always decodes.
        flate2::read::GzDecoder::new(&include_bytes!("../schemas/flux-crds.json.gz")[..])
            .read_to_string(&mut text)
            .expect("embedded Flux CRDs decode");
        serde_json::from_str(&text).expect("embedded Flux CRDs are JSON")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KubeVersion, Validator};
    use serde_json::json;

    #[test]
    fn flux_crds_embed_the_kinds_flux_objects_are_written_in() {
        let names: Vec<&str> = flux_crds()
            .iter()
            .map(|c| c["metadata"]["name"].as_str().unwrap())
            .collect();
        for want in [
            "kustomizations.kustomize.toolkit.fluxcd.io",
            "gitrepositories.source.toolkit.fluxcd.io",
            "ocirepositories.source.toolkit.fluxcd.io",
            "helmreleases.helm.toolkit.fluxcd.io",
        ] {
            assert!(names.contains(&want), "{names:?}");
        }
        let mut v = Validator::new(KubeVersion::DEFAULT);
        assert!(v.add_crds(flux_crds()).is_empty());
    }

    #[test]
    fn flux_crds_validate_a_kustomization_spec() {
        let mut v = Validator::new(KubeVersion::DEFAULT);
        v.add_crds(flux_crds());
        let ks = json!({
            "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
            "kind": "Kustomization",
            "metadata": {"name": "apps", "namespace": "flux-system"},
            "spec": {"interval": "10m", "path": "./apps", "prune": "yes",
                     "sourceRef": {"kind": "GitRepository", "name": "flux-system"}}
        });
        let report = v.validate(&ks);
        // kustomize-controller v1.9.5 api: `prune` is a boolean.
        assert!(
            report.findings.iter().any(|f| f.path == "spec.prune"),
            "{:#?}",
            report.findings
        );
        let mut ok = ks.clone();
        ok["spec"]["prune"] = json!(true);
        assert!(v.validate(&ok).findings.is_empty());
    }
}
