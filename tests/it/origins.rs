//! Origin tracking (`RepoOptions::origins`): kustomize's origin annotations say which file
//! each object came from, and are taken out again so digests do not change.

use std::path::Path;

use fluxsim::render::{render_dir, RepoOptions};

fn fleet() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/fleet")
}

fn digests(opts: &RepoOptions) -> Vec<(String, String, String)> {
    let r = render_dir(&fleet(), opts).expect("fleet renders");
    let mut out = Vec::new();
    for c in &r.clusters {
        for k in &c.kustomizations {
            let a = k
                .artifact
                .as_ref()
                .expect("every fleet Kustomization renders");
            out.push((
                c.name.clone(),
                k.kustomization.id.to_string(),
                a.sha256.clone(),
            ));
        }
    }
    out
}

#[test]
fn tracking_origins_does_not_change_any_digest() {
    let plain = digests(&RepoOptions::default());
    let tracked = digests(&RepoOptions {
        origins: true,
        ..RepoOptions::default()
    });
    assert_eq!(plain.len(), 16);
    assert_eq!(plain, tracked);
}

#[test]
fn every_object_has_an_origin_file_in_the_repository() {
    let r = render_dir(
        &fleet(),
        &RepoOptions {
            origins: true,
            ..RepoOptions::default()
        },
    )
    .unwrap();
    let mut seen = 0;
    for c in &r.clusters {
        for k in &c.kustomizations {
            for a in [k.artifact.as_ref(), k.template.as_ref()]
                .into_iter()
                .flatten()
            {
                for o in &a.objects {
                    let origin = o.origin.as_ref().unwrap_or_else(|| {
                        panic!("{} {}: {} has no origin", c.name, k.kustomization.id, o.id)
                    });
                    let file = origin
                        .path
                        .as_ref()
                        .or(origin.configured_in.as_ref())
                        .unwrap();
                    assert!(fleet().join(file).is_file(), "{file} is not a fleet file");
                    seen += 1;
                }
            }
        }
    }
    assert!(seen > 50, "only {seen} objects checked");
}

#[test]
fn origin_of_an_object_in_a_generated_kustomization_and_of_a_generated_configmap() {
    let r = render_dir(
        &fleet(),
        &RepoOptions {
            origins: true,
            ..RepoOptions::default()
        },
    )
    .unwrap();
    let dev = r.clusters.iter().find(|c| c.name == "dev").unwrap();
    let wave0 = dev.find("apps-wave-0").unwrap().artifact.as_ref().unwrap();
    // apps/wave-0 has no kustomization.yaml: Flux generates one listing redis/*.yaml.
    let redis = wave0
        .objects
        .iter()
        .find(|o| o.id.kind == "StatefulSet" && o.id.name.contains("redis"))
        .unwrap();
    let path = redis.origin.as_ref().unwrap().path.clone().unwrap();
    assert!(path.starts_with("apps/wave-0/redis/"), "{path}");
    // postgres/ has a configMapGenerator: its ConfigMap was configured in that file.
    let generated = wave0
        .objects
        .iter()
        .find(|o| o.origin.as_ref().unwrap().configured_in.is_some())
        .unwrap();
    assert_eq!(
        generated.origin.as_ref().unwrap().configured_in.as_deref(),
        Some("apps/wave-0/postgres/kustomization.yaml")
    );
}
