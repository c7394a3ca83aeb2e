//! Flux Operator ResourceSets (`testdata/resourcesets`): each case's entry holds what
//! `flux-operator build rset` prints for it (the case's `expected.yaml`, written by
//! `scripts/resourceset-oracle`), with the operator's apply-time changes; the Kustomizations a
//! ResourceSet generates render in turn; `diff` shows a template change object by object and
//! `prove` plants a canary in a template. Needs flux-operator v0.59.0 (`scripts/install-tools`)
//! and kustomize on PATH; no network.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{
    commit_all, copy_dir, crate_path, fluxsim, fluxsim_in, git, ks, kustomization, yaml_objects,
};

const FIXTURE: &str = "testdata/resourcesets";

/// The cases with an oracle, and the `(namespace, name)` of their ResourceSet.
fn cases() -> Vec<(String, String, String)> {
    let dir = crate_path(FIXTURE).join("cases");
    let mut out = Vec::new();
    for e in fs::read_dir(&dir).unwrap().flatten() {
        let case = e.file_name().to_string_lossy().into_owned();
        if !e.path().join("oracle.args").exists() {
            continue;
        }
        let rset = yaml_objects(&fs::read_to_string(e.path().join("rset.yaml")).unwrap())
            .into_iter()
            .next()
            .unwrap();
        out.push((
            case,
            rset["metadata"]["namespace"].as_str().unwrap().to_string(),
            rset["metadata"]["name"].as_str().unwrap().to_string(),
        ));
    }
    out.sort();
    out
}

/// Renders the fixture with `--out`; the output folder and the render's JSON.
fn render_fixture() -> (tempfile::TempDir, Value) {
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("out");
    let run = fluxsim(&[
        "render",
        FIXTURE,
        "--format",
        "json",
        "--out",
        path.to_str().unwrap(),
    ]);
    // The template-error case fails: a finding.
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    (out, run.json())
}

/// Objects by `apiVersion kind namespace/name`.
fn by_id(objects: Vec<Value>) -> BTreeMap<String, Value> {
    objects
        .into_iter()
        .map(|o| {
            let id = format!(
                "{} {} {}/{}",
                o["apiVersion"].as_str().unwrap_or_default(),
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            );
            (id, o)
        })
        .collect()
}

const COPY_FROM: &str = "fluxcd.controlplane.io/copyFrom";

// flux-operator cmd/cli/build_resourceset.go is the oracle: the objects of each case's entry
// are the ones `flux-operator build rset` prints (ownership labels and commonMetadata
// included), but for what the operator changes at apply time with the cluster's objects
// (internal/copier: copyFrom's data), checked on its own.
#[test]
fn each_resourceset_renders_what_flux_operator_build_rset_prints() {
    let (out, json) = render_fixture();
    let mut compared = 0;
    for (case, ns, name) in cases() {
        let dir = crate_path(FIXTURE).join("cases").join(&case);
        let Ok(expected) = fs::read_to_string(dir.join("expected.yaml")) else {
            continue;
        };
        let entry = format!("{case}/rset/{ns}/{name}");
        let k = kustomization(&json, "test", &entry);
        assert_eq!(k["status"], "rendered", "{case}: {k:#}");
        let file = out
            .path()
            .join("out/test/flux-system")
            .join(format!("{entry}.yaml"));
        let ours = by_id(yaml_objects(&fs::read_to_string(&file).unwrap()));
        let mut theirs = by_id(yaml_objects(&expected));
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{case}"
        );
        for (id, o) in &ours {
            let t = theirs.get_mut(id).unwrap();
            if o["metadata"]["annotations"][COPY_FROM].is_string() {
                // The copied data is the source's (checked below); the rest is the CLI's.
                assert!(t.get("data").is_none(), "{case} {id}");
                let mut o = o.clone();
                o.as_object_mut().unwrap().remove("data");
                assert_eq!(&o, t, "{case} {id}");
            } else {
                assert_eq!(o, t, "{case} {id}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 25, "only {compared} objects compared");
}

// The oracle files are what the CLI prints today: a newer flux-operator, or a fixture edited
// without running scripts/resourceset-oracle, fails here.
#[test]
fn the_oracle_files_are_what_flux_operator_build_rset_prints() {
    let cases_dir = crate_path(FIXTURE).join("cases");
    for (case, _, _) in cases() {
        let args = fs::read_to_string(cases_dir.join(&case).join("oracle.args")).unwrap();
        let out = Command::new("flux-operator")
            .args(["build", "rset"])
            .args(args.split_whitespace())
            .current_dir(&cases_dir)
            .output()
            .expect("flux-operator is installed (scripts/install-tools)");
        let dir = cases_dir.join(&case);
        if out.status.success() {
            let expected = fs::read_to_string(dir.join("expected.yaml")).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim_end(),
                expected.trim_end(),
                "{case}: run scripts/resourceset-oracle"
            );
        } else {
            let expected = fs::read_to_string(dir.join("expected-error.txt")).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stderr).trim_end(),
                expected.trim_end(),
                "{case}"
            );
        }
    }
}

// flux-operator internal/controller/resourceset_controller.go: a build error stalls the
// ResourceSet with the builder's message; fluxsim fails its entry with that message, naming
// the file and line that declare it, and renders everything else.
#[test]
fn a_template_error_fails_the_entry_with_the_operator_s_message_and_its_file() {
    let (_out, json) = render_fixture();
    let k = kustomization(&json, "test", "template-error/rset/flux-system/broken");
    assert_eq!(k["status"], "failed");
    let error = k["error"].as_str().unwrap();
    let expected =
        fs::read_to_string(crate_path(FIXTURE).join("cases/template-error/expected-error.txt"))
            .unwrap();
    let words = expected.trim().trim_start_matches('✗').trim();
    assert!(error.contains(words), "{error}\nnot: {words}");
    assert!(
        error.starts_with("ResourceSet flux-system/broken (cases/template-error/rset.yaml:5): "),
        "{error}"
    );
    // The rest rendered.
    assert_eq!(
        kustomization(&json, "test", "inline/rset/flux-system/tenants")["status"],
        "rendered"
    );
}

// The Kustomizations a ResourceSet generates are applied by it, and rendered as any other:
// their vars come from the ResourceSet's inputs and from a ConfigMap it copies
// (fluxcd.controlplane.io/copyFrom, internal/copier/resources.go) from the cluster.
#[test]
fn kustomizations_a_resourceset_generates_render_with_the_data_it_copies() {
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("out");
    let run = fluxsim(&[
        "render",
        FIXTURE,
        "--format",
        "json",
        "--out",
        path.to_str().unwrap(),
    ]);
    let json = run.json();
    for (tenant, image) in [("frontend", "nginx:1.27"), ("backend", "redis:7.4")] {
        let k = json["clusters"][0]["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["namespace"] == tenant && k["name"] == tenant)
            .unwrap();
        assert_eq!(k["status"], "rendered", "{k:#}");
        assert_eq!(k["namespace"], tenant);
        let objects = yaml_objects(
            &fs::read_to_string(path.join(format!("test/{tenant}/{tenant}.yaml"))).unwrap(),
        );
        let container = &objects[0]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], image);
        assert_eq!(container["env"][0]["value"], "info", "{container:#}");
        assert_eq!(container["env"][1]["value"], "eu-west-1");
        assert_eq!(objects[0]["metadata"]["namespace"], tenant);
    }
    let entry = yaml_objects(
        &fs::read_to_string(
            path.join("test/flux-system/kustomizations/rset/flux-system/tenants.yaml"),
        )
        .unwrap(),
    );
    let copied = entry
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["namespace"] == "backend")
        .unwrap();
    assert_eq!(
        copied["data"],
        serde_json::json!({"LOG_LEVEL": "info", "REGION": "eu-west-1"})
    );
    // The graph knows who applies them: the ResourceSet's entry, applied by its parent.
    let graph = fluxsim(&["graph", FIXTURE, "--format", "json"]).json();
    let edges = graph["clusters"][0]["edges"].as_array().unwrap();
    let applies = |from: &str, to: &str| {
        edges
            .iter()
            .any(|e| e["kind"] == "applies" && ks(&e["from"]) == from && ks(&e["to"]) == to)
    };
    assert!(
        applies(
            "flux-system/kustomizations",
            "flux-system/kustomizations/rset/flux-system/tenants"
        ),
        "{edges:#?}"
    );
    assert!(applies(
        "flux-system/kustomizations/rset/flux-system/tenants",
        "backend/backend"
    ));
}

/// A git repository holding the fixture, with `edit` applied to its files before the commit.
fn fixture_repo(edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("fluxsim-test-rset-")
        .tempdir()
        .unwrap();
    copy_dir(&crate_path(FIXTURE), tmp.path());
    edit(tmp.path());
    git(tmp.path(), &["init", "-q", "-b", "main"]);
    commit_all(tmp.path(), "fixture");
    tmp
}

// A provider that needs a service (GitHubPullRequest) and no [[resourceset.inputs]] for it:
// rendered with placeholders of the fields its type exports, said in a note and in the
// summary line.
#[test]
fn a_pull_request_provider_without_samples_renders_with_placeholders_and_says_so() {
    let repo = fixture_repo(|root| fs::remove_file(root.join("fluxsim.toml")).unwrap());
    // One line a note (`--wide`): the default text wraps at 80 columns.
    let run = fluxsim_in(Some(repo.path()), &["render", ".", "--wide"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "pull-requests/rset/preview/previews note: placeholder inputs for GitHubPullRequest \
             provider preview/app-prs"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "placeholder inputs (no [[resourceset.inputs]] in fluxsim.toml) for \
             test:preview/previews (preview/app-prs)"
        ),
        "{}",
        run.stdout
    );
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("out");
    fluxsim_in(
        Some(repo.path()),
        &["render", ".", "--out", path.to_str().unwrap()],
    );
    let objects = yaml_objects(
        &fs::read_to_string(path.join("test/flux-system/pull-requests/rset/preview/previews.yaml"))
            .unwrap(),
    );
    // One stand-in pull request: `id` 0, the provider's defaultValues filling the rest.
    assert!(
        objects
            .iter()
            .any(|o| o["kind"] == "Namespace" && o["metadata"]["name"] == "app-preview-0"),
        "{objects:#?}"
    );
    let hr = objects.iter().find(|o| o["kind"] == "HelmRelease").unwrap();
    assert_eq!(hr["spec"]["chart"]["spec"]["chart"], "app");
    assert_eq!(
        hr["spec"]["values"]["ingress"]["host"],
        "pr-0.preview.example.com"
    );
}

// Without flux-operator, each ResourceSet's entry fails saying how to install it; every
// Kustomization still renders.
#[test]
fn without_flux_operator_resourcesets_fail_saying_how_to_install_it() {
    let run = fluxsim(&[
        "render",
        FIXTURE,
        "--format",
        "json",
        "--flux-operator",
        "/nonexistent/flux-operator",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let json = run.json();
    let k = kustomization(&json, "test", "inline/rset/flux-system/tenants");
    assert_eq!(k["status"], "failed");
    let error = k["error"].as_str().unwrap();
    assert!(
        error.contains("install the Flux Operator CLI v0.59.0 as `flux-operator`")
            && error.contains("scripts/install-tools"),
        "{error}"
    );
    assert_eq!(kustomization(&json, "test", "inline")["status"], "rendered");
}

// A change to a template changes the generated objects: `diff` shows them in the
// ResourceSet's entry, object by object, beside the ResourceSet object in its parent.
#[test]
fn diff_of_a_template_change_shows_the_generated_objects_that_change() {
    let repo = fixture_repo(|_| {});
    let file = repo.path().join("cases/inline/rset.yaml");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        text.replace(
            "inputs.tenant inputs.tier | slugify",
            "inputs.tier inputs.tenant | slugify",
        ),
    )
    .unwrap();
    let run = fluxsim_in(
        Some(repo.path()),
        &["diff", "--base", "HEAD", "--format", "json"],
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let json = run.json();
    let changed: Vec<&Value> = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["change"] == "changed")
        .collect();
    let names: Vec<String> = changed.iter().map(|k| ks(&k["kustomization"])).collect();
    assert_eq!(
        names,
        [
            "flux-system/inline",
            "flux-system/inline/rset/flux-system/tenants"
        ],
        "{json:#}"
    );
    // The Kustomizations the `template` case's ResourceSet generates are external, and that
    // ResourceSet rendered in both revisions: what it makes is known, so the change to
    // another ResourceSet leaves them proven unchanged (compare/external.rs).
    // The 3 HelmReleases of the fixture, whose charts cannot be had offline (rendered by
    // default in a diff), are unchanged in the same way: their HelmRelease and chart source
    // objects are the same bytes in both.
    assert_eq!(json["clusters"][0]["externalUnchanged"], 7, "{json:#}");
    // The text and Markdown name the entry by its ResourceSet and what applies it (issue 43
    // item 4); the JSON keeps the entry's id (above).
    let text = fluxsim_in(Some(repo.path()), &["diff", "--base", "HEAD"]);
    assert!(
        text.stdout
            .contains("-- ResourceSet tenants (from inline): changed"),
        "{}",
        text.stdout
    );
    let md = fluxsim_in(
        Some(repo.path()),
        &["diff", "--base", "HEAD", "--format", "markdown"],
    );
    assert!(
        md.stdout
            .contains("ResourceSet <code>tenants</code> (from <code>inline</code>): changed"),
        "{}",
        md.stdout
    );
    let objects = changed[1]["objects"].as_array().unwrap();
    let diffs: Vec<&str> = objects
        .iter()
        .map(|o| o["diff"].as_str().unwrap())
        .collect();
    assert_eq!(objects.len(), 2, "{objects:#?}");
    assert!(
        diffs
            .iter()
            .any(|d| d.contains("-  slug: frontend-web\n+  slug: web-frontend\n")),
        "{diffs:#?}"
    );
}

// prove's template canary (consumers canary/resourceset.rs): a suffix on a value of a
// ResourceSet's template must show up in the ResourceSet's entry and its parent, and
// nowhere else.
#[test]
fn prove_detects_a_canary_planted_in_a_resourceset_template() {
    let repo = fixture_repo(|root| {
        // Without the case that fails, the proof has no blind spot.
        let cases = root.join("clusters/test/cases.yaml");
        let text = fs::read_to_string(&cases).unwrap();
        let kept: Vec<&str> = text
            .split("---\n")
            .filter(|d| !d.contains("name: template-error"))
            .collect();
        fs::write(&cases, kept.join("---\n")).unwrap();
    });
    let run = fluxsim_in(Some(repo.path()), &["prove", "--base", "HEAD"]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    // The canary's entry, its wrapped lines joined (the report fits 80 columns).
    let text = run.stdout.replace("\n    ", " ");
    let line = text
        .lines()
        .find(|l| l.contains("(template of a ResourceSet)"))
        .unwrap_or_else(|| panic!("no template canary:\n{}", run.stdout));
    assert!(line.contains("detected, restored"), "{line}");
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("PASS")),
        "{}",
        run.stdout
    );
}

// The render is the same bytes whatever the threads: ResourceSets render in parallel.
#[test]
fn resourceset_renders_are_the_same_whatever_the_jobs() {
    let digests = |jobs: &str| -> Vec<(String, Value)> {
        let json = fluxsim(&["render", FIXTURE, "--format", "json", "--jobs", jobs]).json();
        json["clusters"][0]["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| (k["name"].as_str().unwrap().to_string(), k["sha256"].clone()))
            .collect()
    };
    assert_eq!(digests("1"), digests("8"));
}

const OPERATOR_FLEET: &str = "testdata/operator-fleet";

/// The operator fleet rendered with its OCI artifact mapped to the repository, as a git
/// repository with `fluxsim_toml` (when given); the output folder and the render's JSON.
fn render_operator_fleet(fluxsim_toml: Option<&str>) -> (tempfile::TempDir, Value) {
    let repo = tempfile::Builder::new()
        .prefix("fluxsim-test-operator-")
        .tempdir()
        .unwrap();
    copy_dir(&crate_path(OPERATOR_FLEET), repo.path());
    if let Some(text) = fluxsim_toml {
        fs::write(repo.path().join("fluxsim.toml"), text).unwrap();
    }
    git(repo.path(), &["init", "-q", "-b", "main"]);
    commit_all(repo.path(), "fixture");
    let out = repo.path().join("out");
    let run = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--source",
            "OCIRepository/flux-system/flux-system=.",
            "--format",
            "json",
            "--show-secrets",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    // The tenants' own Kustomizations build OCI artifacts that are not here: external, which
    // is not a failure.
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    (repo, run.json())
}

fn objects_at(root: &Path, file: &str) -> Vec<Value> {
    yaml_objects(&fs::read_to_string(root.join("out").join(file)).unwrap())
}

// A fleet in the shape of the Flux Operator's reference fleet (d2-fleet): ResourceSets whose
// inputs the tenants Kustomization substitutes, copyFrom annotations, the repository as an
// OCIRepository. Every object the ResourceSets generate is rendered, with the cluster's own
// values; what the CLI prints for the ResourceSet as applied is what the entry holds.
#[test]
fn a_fleet_the_operator_bootstraps_renders_every_object_its_resourcesets_generate() {
    let (repo, json) = render_operator_fleet(None);
    for (cluster, tag) in [("staging", "latest"), ("production", "v1.4.0")] {
        for entry in [
            "tenants/rset/flux-system/apps",
            "tenants/rset/flux-system/policies",
        ] {
            assert_eq!(kustomization(&json, cluster, entry)["status"], "rendered");
        }
        let ours = objects_at(
            repo.path(),
            &format!("{cluster}/flux-system/tenants/rset/flux-system/apps.yaml"),
        );
        assert_eq!(ours.len(), 10, "{ours:#?}");
        let repo_obj = ours
            .iter()
            .find(|o| o["kind"] == "OCIRepository" && o["metadata"]["namespace"] == "frontend")
            .unwrap();
        assert_eq!(repo_obj["spec"]["ref"]["tag"], tag);
        let info = ours
            .iter()
            .find(|o| o["kind"] == "ConfigMap" && o["metadata"]["namespace"] == "backend")
            .unwrap();
        assert_eq!(info["data"]["ENVIRONMENT"], cluster, "{info:#}");
        let apps = kustomization(&json, cluster, "tenants/rset/flux-system/apps");
        let notes: Vec<&str> = apps["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(
            notes.iter().any(|n| n.starts_with(
                "Secret/frontend/registry-auth copies its data from Secret/flux-system/registry-auth"
            )),
            "{notes:#?}"
        );
        // The oracle: the CLI on the ResourceSet as the tenants Kustomization applies it.
        let parent = objects_at(repo.path(), &format!("{cluster}/flux-system/tenants.yaml"));
        let rset = parent
            .iter()
            .find(|o| o["kind"] == "ResourceSet" && o["metadata"]["name"] == "apps")
            .unwrap();
        let file = repo.path().join(format!("apps-{cluster}.yaml"));
        fs::write(&file, rset.to_string()).unwrap();
        let out = Command::new("flux-operator")
            .args(["build", "rset", "-f"])
            .arg(&file)
            .output()
            .expect("flux-operator is installed (scripts/install-tools)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs = by_id(yaml_objects(&String::from_utf8_lossy(&out.stdout)));
        let ours = by_id(ours);
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>()
        );
        for (id, o) in &ours {
            if !o["metadata"]["annotations"][COPY_FROM].is_string() {
                assert_eq!(o, &theirs[id], "{cluster} {id}");
            }
        }
        // The tenants' Kustomizations are the ResourceSet's children, external.
        let frontend = json["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == cluster)
            .unwrap()["kustomizations"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["namespace"] == "frontend" && k["name"] == "apps")
            .unwrap();
        assert_eq!(frontend["status"], "external", "{frontend:#}");
        assert_eq!(frontend["path"], format!("./{cluster}"));
    }
}

// internal/copier/resources.go: a Secret declared in fluxsim.toml (made by hand on the
// cluster) is copied: its data, and its type where the template gives none.
#[test]
fn a_copy_source_declared_in_fluxsim_toml_is_copied() {
    let (repo, json) = render_operator_fleet(Some(
        "[[bootstrap.objects]]\nkind = \"Secret\"\nnamespace = \"flux-system\"\n\
         name = \"registry-auth\"\nvars = { token = \"s3cr3t\" }\n",
    ));
    let apps = kustomization(&json, "staging", "tenants/rset/flux-system/apps");
    assert!(apps["notes"].as_array().unwrap().is_empty(), "{apps:#}");
    let ours = objects_at(
        repo.path(),
        "staging/flux-system/tenants/rset/flux-system/apps.yaml",
    );
    let secret = ours
        .iter()
        .find(|o| o["kind"] == "Secret" && o["metadata"]["namespace"] == "frontend")
        .unwrap();
    assert_eq!(secret["data"]["token"], "czNjcjN0", "{secret:#}");
    assert_eq!(secret["type"], "kubernetes.io/dockerconfigjson");
    assert!(secret.get("stringData").is_none());
}

// flux-operator resourceset_controller.go checkDependencies: `apps` waits for the
// `policies` ResourceSet to be Ready; the graph orders the entries so, on a cluster the
// FluxInstance bootstraps (the operator's kinds exist from the start).
#[test]
fn the_graph_orders_resourcesets_by_their_depends_on() {
    let repo = tempfile::Builder::new()
        .prefix("fluxsim-test-operator-")
        .tempdir()
        .unwrap();
    copy_dir(&crate_path(OPERATOR_FLEET), repo.path());
    git(repo.path(), &["init", "-q", "-b", "main"]);
    commit_all(repo.path(), "fixture");
    let run = fluxsim_in(
        Some(repo.path()),
        &[
            "graph",
            ".",
            "--source",
            "OCIRepository/flux-system/flux-system=.",
            "--cluster",
            "staging",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let graph = run.json();
    let waves = graph["clusters"][0]["waves"].as_array().unwrap();
    let wave_of = |id: &str| {
        waves
            .iter()
            .position(|w| w.as_array().unwrap().iter().any(|x| ks(x) == id))
            .unwrap_or_else(|| panic!("{id} in no wave: {waves:#?}"))
    };
    let policies = wave_of("flux-system/tenants/rset/flux-system/policies");
    let apps = wave_of("flux-system/tenants/rset/flux-system/apps");
    assert!(policies < apps, "{waves:#?}");
    assert!(wave_of("frontend/apps") > apps);
    let edges = graph["clusters"][0]["edges"].as_array().unwrap();
    assert!(edges.iter().any(|e| e["kind"] == "dependsOn"
        && ks(&e["from"]) == "flux-system/tenants/rset/flux-system/policies"
        && ks(&e["to"]) == "flux-system/tenants/rset/flux-system/apps"));
}

// fluxsim combines the inputs itself when a provider needs a service (the CLI takes only
// Static ones): checked against the CLI on the Permute case, its two Static providers made
// GitHubBranch providers whose fluxsim.toml samples are what the Static ones export
// (internal/inputs/permuter.go: ids from `name=index` parts, inputs scoped by name).
#[test]
fn inputs_fluxsim_combines_are_the_ones_the_operator_combines() {
    let id = fluxsim::resourceset::inputs::id;
    let repo = fixture_repo(|root| {
        let providers = root.join("cases/permute/providers.yaml");
        let text = fs::read_to_string(&providers).unwrap();
        fs::write(
            &providers,
            text.replace("type: Static", "type: GitHubBranch"),
        )
        .unwrap();
        fs::write(
            root.join("fluxsim.toml"),
            format!(
                "[[resourceset.inputs]]\nprovider = \"matrix/eu-region\"\n\
                 inputs = [{{ region = \"eu-west-1\", id = \"{}\" }}]\n\
                 [[resourceset.inputs]]\nprovider = \"matrix/us-region\"\n\
                 inputs = [{{ region = \"us-east-1\", id = \"{}\" }}]\n",
                id("eu-region"),
                id("us-region")
            ),
        )
        .unwrap();
    });
    let out = repo.path().join("out");
    let run = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let json = run.json();
    let k = kustomization(&json, "test", "permute/rset/matrix/env-matrix");
    assert_eq!(k["status"], "rendered", "{k:#}");
    assert!(
        k["notes"][0].as_str().unwrap().starts_with(
            "inputs of GitHubBranch provider matrix/eu-region taken from fluxsim.toml"
        ),
        "{k:#}"
    );
    let ours = by_id(yaml_objects(
        &fs::read_to_string(out.join("test/flux-system/permute/rset/matrix/env-matrix.yaml"))
            .unwrap(),
    ));
    let expected = by_id(yaml_objects(
        &fs::read_to_string(crate_path(FIXTURE).join("cases/permute/expected.yaml")).unwrap(),
    ));
    assert_eq!(ours, expected);
}

/// `compare` judges a ResourceSet's entry by the ResourceSet object as its Kustomization's
/// template holds it: the operator fleet's clusters share `tenants/` (same template, renders
/// that differ by their vars); a staging copy of `tenants/` with another registry makes the
/// `policies` entry's templates differ, and compare shows the ResourceSet's changed field.
#[test]
fn compare_judges_a_resourceset_entry_by_its_resourceset_object() {
    let repo = tempfile::Builder::new()
        .prefix("fluxsim-test-operator-")
        .tempdir()
        .unwrap();
    let root = repo.path();
    copy_dir(&crate_path(OPERATOR_FLEET), root);
    let compare = |root: &Path| {
        let run = fluxsim_in(
            Some(root),
            &[
                "compare",
                ".",
                "--source",
                "OCIRepository/flux-system/flux-system=.",
                "--wide",
            ],
        );
        assert!(run.code <= 1, "{}{}", run.stdout, run.stderr);
        run.stdout
    };
    let row = |out: &str, entry: &str| {
        out.lines()
            .find(|l| l.trim_start().starts_with(entry))
            .unwrap_or_else(|| panic!("no {entry}:\n{out}"))
            .to_string()
    };
    let policies = "flux-system/tenants/rset/flux-system/policies ";
    let shared = compare(root);
    assert!(
        row(&shared, policies).contains("same template, same render"),
        "{shared}"
    );
    assert!(
        row(&shared, "flux-system/tenants/rset/flux-system/apps ")
            .contains("same template; renders differ by vars"),
        "{shared}"
    );
    // Staging's own copy of the tenants, with another registry in the policies ResourceSet.
    copy_dir(&root.join("tenants"), &root.join("tenants-staging"));
    let file = root.join("tenants-staging/policies.yaml");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(
        &file,
        text.replace("registry.example.com", "staging.example.com"),
    )
    .unwrap();
    let ks = root.join("clusters/staging/tenants.yaml");
    let text = fs::read_to_string(&ks).unwrap();
    fs::write(
        &ks,
        text.replace("path: ./tenants", "path: ./tenants-staging"),
    )
    .unwrap();
    let split = compare(root);
    assert!(
        row(&split, policies).contains("templates DIFFER in 1 object"),
        "{split}"
    );
    assert!(
        split.contains("spec.inputs[name=restrict-registries].registry"),
        "{split}"
    );
    // The apps ResourceSet is the same in both: its entry still differs by vars alone.
    assert!(
        row(&split, "flux-system/tenants/rset/flux-system/apps ")
            .contains("same template; renders differ by vars"),
        "{split}"
    );
    assert!(split.contains("staging.example.com"), "{split}");
}
