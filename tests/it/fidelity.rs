//! Behaviours where fluxsim used to differ from Flux (issue 27), end to end on the fixtures of
//! `testdata/fidelity/<case>` (its README lists them); each test names the Flux source file the
//! behaviour comes from, and `scripts/oracle-check testdata/fidelity/*` agrees with Flux's own
//! code on every case.
//!
//! Fixtures are copied into throw-away git repositories, as in `tests/it/render.rs`.

use serde_json::Value;

use crate::common::{fluxsim, repo_from, yaml_objects, Output};

fn fixture(case: &str) -> tempfile::TempDir {
    repo_from(&format!("testdata/fidelity/{case}"))
}

/// `fluxsim build REPO -k NAME EXTRA...`.
fn build(repo: &std::path::Path, name: &str, extra: &[&str]) -> Output {
    let mut args = vec!["build", repo.to_str().unwrap(), "-k", name];
    args.extend_from_slice(extra);
    fluxsim(&args)
}

/// The objects `fluxsim build` prints for one Kustomization, which must render.
fn built(repo: &std::path::Path, name: &str) -> Vec<Value> {
    let r = build(repo, name, &[]);
    assert_eq!(r.code, 0, "{name}: {}", r.stderr);
    yaml_objects(&r.stdout)
}

fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in {objects:#?}"))
}

fn images(objects: &[Value]) -> Vec<String> {
    find(objects, "Deployment", "web")["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["image"].as_str().unwrap().to_string())
        .collect()
}

// fluxcd/pkg/kustomize v1.35.6 kustomize_generator.go GenerateManifest: a `spec.images`
// entry whose name the kustomization's `images:` already lists is merged into it field by
// field; `newTag` and `digest` are replaced together.
#[test]
fn spec_images_merge_field_by_field_into_the_kustomizations_images() {
    const OLD: &str = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
    const NEW: &str = "sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3";
    let repo = fixture("images-merge");
    // newName alone keeps the kustomization's newTag and digest.
    assert_eq!(
        images(&built(repo.path(), "name-only")),
        [
            format!("registry.example/nginx:1.25@{OLD}"),
            "redis:6".into()
        ]
    );
    // newTag alone keeps its newName and drops its digest.
    assert_eq!(
        images(&built(repo.path(), "tag-only")),
        ["mirror.example/nginx:1.27", "redis:6"]
    );
    // digest alone keeps its newName and drops its newTag; another name is appended.
    assert_eq!(
        images(&built(repo.path(), "digest-only")),
        [format!("mirror.example/nginx@{NEW}"), "redis:7".into()]
    );
}

// kustomize-controller v1.9.5 internal/controller/kustomization_controller.go `build`: every
// built object must have an apiVersion, a kind and a name ("check if resources conform to
// the Kubernetes API conventions"), or the build fails, plain files (the generator lists
// them) or an overlay alike (its testdata/invalid/{plain,overlay}).
#[test]
fn objects_without_api_version_or_kind_fail_the_build() {
    let repo = fixture("invalid-objects");
    for name in ["plain", "overlay"] {
        let r = build(repo.path(), name, &[]);
        assert_eq!(r.code, 1, "{name}: {}", r.stdout);
        assert_eq!(
            r.stderr,
            format!(
                "fluxsim: flux-system/{name} failed: failed to decode Kubernetes apiVersion, \
                 kind and name from: {{\"kind\":\"Widget\",\"metadata\":{{\"name\":\"typo\"}},\
                 \"piVersion\":\"example.com/v1\"}}\n"
            )
        );
    }
}

// kustomize api v0.21.1 internal/target/kusttarget.go configureExternalTransformers (as
// kustomize-controller's `file-transformer` testdata uses it): a builtin plugin
// configuration's file fields (`path`, `paths`, `files`, `envs`, a replacement's `path`) are
// read next to the kustomization that lists the configuration.
#[test]
fn builtin_plugin_config_files_are_read_next_to_the_kustomization() {
    let repo = fixture("file-transformer");
    for builder in ["auto", "kustomize"] {
        let r = build(repo.path(), "transformed", &["--builder", builder]);
        assert_eq!(r.code, 0, "{builder}: {}", r.stderr);
        let objects = yaml_objects(&r.stdout);
        let web = find(&objects, "Deployment", "web");
        assert_eq!(
            web["metadata"]["labels"]["patched-by"], "patch-transformer",
            "{builder}"
        );
        assert_eq!(web["spec"]["replicas"], 3, "{builder}");
        assert_eq!(
            web["spec"]["template"]["metadata"]["annotations"]["log-level"],
            "debug"
        );
        let settings = find(&objects, "ConfigMap", "settings-4dc848c27d");
        assert_eq!(settings["data"]["app.properties"], "greeting=hello\n");
    }
}

/// The render of `testdata/fidelity/<case>` through the library, origins tracked or not.
fn render(repo: &std::path::Path, origins: bool) -> fluxsim::model::RepoRender {
    fluxsim::render::render_dir(
        repo,
        &fluxsim::render::RepoOptions {
            origins,
            ..fluxsim::render::RepoOptions::default()
        },
    )
    .expect("renders")
}

/// The artifact's objects of one Kustomization of a render.
fn objects_of(r: &fluxsim::model::RepoRender, name: &str) -> Vec<Value> {
    let k = r.clusters[0].find(name).expect("a Kustomization");
    let a = k
        .artifact
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: {:?}", k.status));
    a.objects.iter().map(|o| (*o.object).clone()).collect()
}

const ORIGIN: &str = "config.kubernetes.io/origin";
const TRANSFORMATIONS: &str = "alpha.config.kubernetes.io/transformations";

fn annotation<'a>(o: &'a Value, key: &str) -> Option<&'a str> {
    o["metadata"]["annotations"][key].as_str()
}

// kustomize-controller API v1.9 `spec.buildMetadata` and fluxcd/pkg/kustomize v1.35.6
// kustomize_generator.go GenerateManifest: the list replaces the kustomization's
// `buildMetadata`, and an existing kustomization without `resources` gets
// `[originAnnotations]` from the generator; kustomize then annotates every object. An origin
// annotation asked for this way is part of what Flux applies, also when fluxsim tracks
// origins itself (audit, graph, diff).
#[test]
fn spec_build_metadata_annotates_objects_as_flux_builds_them() {
    let repo = fixture("build-metadata");
    for origins in [false, true] {
        let rendered = render(repo.path(), origins);
        let one = |name: &str| {
            let objects = objects_of(&rendered, name);
            assert_eq!(objects.len(), 1, "{name}: {objects:#?}");
            objects.into_iter().next().unwrap()
        };
        let plain = one("origins");
        assert_eq!(annotation(&plain, ORIGIN), Some("path: configmap.yaml\n"));
        let overlay = one("transformers");
        assert_eq!(annotation(&overlay, ORIGIN), None, "tracked: {origins}");
        assert!(annotation(&overlay, TRANSFORMATIONS)
            .unwrap()
            .contains("kind: PrefixTransformer"));
        let both = one("both");
        assert!(
            annotation(&both, ORIGIN).is_some() && annotation(&both, TRANSFORMATIONS).is_some()
        );
        // Substituted and given commonMetadata, objects keep them: Flux substitutes without
        // building again (found by scripts/oracle-fuzz).
        let substituted = one("both-substituted");
        assert_eq!(annotation(&substituted, ORIGIN), annotation(&both, ORIGIN));
        assert_eq!(
            annotation(&substituted, TRANSFORMATIONS),
            annotation(&both, TRANSFORMATIONS)
        );
        // No `resources`: the generator asks for origin annotations.
        let generated = one("generators-only");
        assert!(annotation(&generated, ORIGIN)
            .unwrap()
            .contains("kind: ConfigMapGenerator"));
        let c = one("components-only");
        assert_eq!(
            annotation(&c, ORIGIN),
            Some("path: ../component/configmap.yaml\n")
        );
        // spec.buildMetadata replaces what the generator put there.
        assert_eq!(annotation(&one("replaced"), ORIGIN), None);
        // A kustomization with nothing in it builds nothing, without kustomize's "empty" error.
        assert!(objects_of(&rendered, "empty-kustomization").is_empty());
        if origins {
            // fluxsim knows every object's file, where it took its own annotations out and
            // where they stay.
            let origin = |name: &str| {
                let k = rendered.clusters[0].find(name).unwrap();
                let o = k.artifact.as_ref().unwrap().objects[0].origin.clone();
                o.and_then(|o| o.path.or(o.configured_in))
            };
            assert_eq!(
                origin("transformers").as_deref(),
                Some("apps/overlay/service.yaml")
            );
            assert_eq!(
                origin("origins").as_deref(),
                Some("apps/plain/configmap.yaml")
            );
            assert_eq!(
                origin("generators-only").as_deref(),
                Some("apps/generators/kustomization.yaml")
            );
        }
    }
}

// fluxcd/pkg/kustomize v1.35.6 kustomize_generator.go `Build` (resetOpenAPIWithBuiltins) and
// its test TestOpenAPIPathMergesBuiltins: an `openapi: {path: ...}` schema is read over the
// built-in one, so a strategic-merge patch on a DaemonSet still merges `containers` by name
// and `volumeMounts` by `mountPath` (the patch's entry has none: kyaml leaves the list
// empty). The native builder hands this merge to the kustomize binary, which alone would
// read the custom schema alone and replace `containers`: it is given the two laid over each
// other.
#[test]
fn openapi_path_schema_is_read_over_the_built_in_schema() {
    let repo = fixture("openapi-builtins");
    for builder in ["auto", "kustomize"] {
        let r = build(repo.path(), "node-exporter", &["--builder", builder]);
        assert_eq!(r.code, 0, "{builder}: {}", r.stderr);
        let objects = yaml_objects(&r.stdout);
        let ds = find(&objects, "DaemonSet", "monitoring-prometheus-node-exporter");
        let containers = ds["spec"]["template"]["spec"]["containers"]
            .as_array()
            .unwrap();
        assert_eq!(containers.len(), 1, "{builder}");
        assert_eq!(
            containers[0]["image"], "quay.io/prometheus/node-exporter:v1.10.2",
            "{builder}"
        );
        assert_eq!(
            containers[0]["volumeMounts"],
            serde_json::json!([]),
            "{builder}"
        );
    }
}

// source-controller v1.9.5 gitrepository_controller.go reconcileArtifact with fluxcd/pkg
// sourceignore v0.18.0: the `.sourceignore` patterns (LoadIgnorePatterns, depth first), then
// `spec.ignore` last, in one matcher where the last matching pattern decides. `!config.yaml`
// in spec.ignore re-includes `resources/config.yaml` that `resources/.sourceignore` (`/*`)
// excluded; `other.yaml` stays out.
#[test]
fn spec_ignore_negations_reinclude_files_a_nested_sourceignore_excluded() {
    let repo = fixture("ignore-negation");
    let objects = built(repo.path(), "resources");
    assert_eq!(objects.len(), 1, "{objects:#?}");
    assert_eq!(
        find(&objects, "ConfigMap", "config")["data"]["level"],
        "info"
    );
}

fn names(objects: &[Value]) -> Vec<&str> {
    let mut n: Vec<&str> = objects
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect();
    n.sort_unstable();
    n
}

// flux2 v2.9.5 `flux build kustomization --ignore-paths` (internal/build/build.go `generate`:
// NewGeneratorWithIgnore) with fluxcd/pkg/kustomize kustomize_generator.go GenerateManifest
// and filters.go: the `.sourceignore` files of the Kustomization's path, then the given
// patterns (scoped to that path) last, over the default patterns: a negation re-includes a
// file the path's `.sourceignore` excluded, a pattern drops what the generator lists and the
// `resources` entries of an existing kustomization.
#[test]
fn build_ignore_paths_come_after_the_paths_sourceignore_as_flux_build_applies_them() {
    let repo = fixture("build-ignore-paths");
    let with = |name: &str, flags: &[&str]| {
        let r = build(repo.path(), name, flags);
        assert_eq!(r.code, 0, "{name} {flags:?}: {}", r.stderr);
        yaml_objects(&r.stdout)
    };
    // The cluster's source: `/config.yaml` and `extra/` are left out by apps/app/.sourceignore.
    assert_eq!(names(&with("app", &[])), ["deploy", "test"]);
    assert_eq!(
        names(&with("app", &["--ignore-paths", "!config.yaml,test.yaml"])),
        ["config", "deploy"]
    );
    assert_eq!(
        names(&with(
            "app",
            &["--ignore-paths", "!extra/", "--ignore-paths", "deploy.yaml"]
        )),
        ["extra", "test"]
    );
    assert_eq!(
        names(&with("overlay", &["--ignore-paths", "test.yaml"])),
        ["deploy"]
    );
    // An entry the kustomization lists that names nothing fails, as its os.Lstat does.
    let missing = repo.path().join("apps/overlay/test.yaml");
    std::fs::remove_file(&missing).unwrap();
    crate::common::commit_all(repo.path(), "gone");
    let r = build(repo.path(), "overlay", &["--ignore-paths", "x"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("lstat apps/overlay/test.yaml: no such file or directory"),
        "{}",
        r.stderr
    );
}

// kustomize-controller v1.9.5 kustomization_controller.go `reconcile` reads the build back
// with fluxcd/pkg/ssa v0.76.2 utils/object.go ReadObjects before applying: an object a var
// left without a kind fails the Kustomization (apimachinery's "Object 'Kind' is missing"),
// and what is not a Kubernetes object it applies (no name, no apiVersion, a kustomize
// Kustomization kept as a manifest) is left out without a word (utils/is.go).
#[test]
fn built_objects_are_read_back_as_the_controller_reads_them_before_the_apply() {
    let repo = fixture("read-back");
    let r = build(repo.path(), "left-out", &["--show-secrets"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let objects = yaml_objects(&r.stdout);
    assert_eq!(names(&objects), ["kept", "named-"]);
    let json = fluxsim(&["render", repo.path().to_str().unwrap(), "--format", "json"]).json();
    let notes = crate::common::kustomization(&json, "test", "left-out")["notes"].to_string();
    assert!(notes.contains("Kustomization.kustomize.config.k8s.io/leftover is not applied: it is a kustomize Kustomization"), "{notes}");
    assert!(
        notes.contains("Secret/ is not applied: it has no name"),
        "{notes}"
    );
    // A raw line separator in the JSON the reprint reads would be a YAML line break: the
    // string keeps it, as Flux's object (set from a Go map) does.
    let separated = built(repo.path(), "line-separator");
    assert_eq!(
        find(&separated, "ConfigMap", "separated")["data"]["k"],
        "\tbefore \u{2028} after"
    );
    let r = build(repo.path(), "kindless", &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "fluxsim: flux-system/kindless failed: error unmarshaling JSON: while decoding JSON: \
         Object 'Kind' is missing in '{\"apiVersion\":\"v1\",\"data\":{\"a\":\"b\"},\"kind\":null,\
         \"metadata\":{\"name\":\"typed-by-a-var\"}}'\n"
    );
}

// fluxcd/pkg/ssa v0.76.2 utils/object.go ReadObjects: an object with a top-level `items` list
// is read back as a List (apimachinery's Unstructured.IsList) and its items are applied in
// its place (EachListItem), commonMetadata and a Secret's stringData folding included; an
// item that is not an object the API server can name fails the Kustomization at the apply
// (the `sequence-of-maps` YAML re-read vectors).
#[test]
fn an_object_with_an_items_list_is_applied_as_its_items() {
    let repo = fixture("read-back");
    let objects = {
        let r = build(repo.path(), "list", &["--show-secrets"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        yaml_objects(&r.stdout)
    };
    assert_eq!(names(&objects), ["item-a", "item-b", "plain"]);
    assert_eq!(find(&objects, "ConfigMap", "item-a")["data"]["k"], "hello");
    assert_eq!(
        find(&objects, "ConfigMap", "item-a")["metadata"]["labels"]["team"],
        "a"
    );
    assert_eq!(
        find(&objects, "Secret", "item-b")["data"]["token"],
        "dDBrZW4="
    );
    let r = build(repo.path(), "list-of-maps", &[]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "fluxsim: flux-system/list-of-maps failed: apply: an item of a List without apiVersion, \
         kind or name: {\"name\":true,\"v\":1}\n"
    );
}
