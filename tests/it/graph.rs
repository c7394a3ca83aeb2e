//! `fluxsim graph` end to end: the example fleet converges in its documented waves, and each
//! fixture under `testdata/graph/<case>` reproduces one cold-start deadlock or hazard, with
//! the Kustomizations (and file and line) it involves named.
//!
//! Fixtures are copied into throw-away git repositories, as in `tests/it/render.rs`.

use serde_json::Value;

use crate::common::{crate_path, fluxsim, repo_from, Output};

/// `fluxsim graph <copy of testdata/graph/CASE> ARGS`.
fn graph(case: &str, args: &[&str]) -> Output {
    let repo = repo_from(&format!("testdata/graph/{case}"));
    let mut all = vec!["graph", repo.path().to_str().unwrap()];
    all.extend_from_slice(args);
    fluxsim(&all)
}

/// The findings of `graph CASE --format json`, with the whole output kept for messages.
fn findings(case: &str) -> (Value, Vec<Value>) {
    let out = graph(case, &["--format", "json", "--fail-on", "info"]);
    assert_eq!(
        out.code, 1,
        "{case}: findings exit 1 with --fail-on info\n{}{}",
        out.stdout, out.stderr
    );
    let json = out.json();
    let f = json["findings"].as_array().unwrap().clone();
    (json, f)
}

/// The findings of one rule.
fn of_rule<'a>(findings: &'a [Value], rule: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["rule"] == rule).collect()
}

/// The 1-based line of the first line of `testdata/graph/CASE/FILE` that is `text` once
/// trimmed.
fn line_of(case: &str, file: &str, text: &str) -> u64 {
    let body =
        std::fs::read_to_string(crate_path(&format!("testdata/graph/{case}/{file}"))).unwrap();
    let i = body
        .lines()
        .position(|l| l.trim() == text)
        .unwrap_or_else(|| panic!("no line `{text}` in {case}/{file}"));
    i as u64 + 1
}

fn assert_at(f: &Value, file: &str, line: u64) {
    assert_eq!(f["location"]["file"], file, "{f:#}");
    assert_eq!(f["location"]["line"], line, "{f:#}");
}

fn message(f: &Value) -> &str {
    f["message"].as_str().unwrap()
}

/// The waves of a cluster in the JSON output.
fn waves(json: &Value, cluster: &str) -> Vec<Vec<String>> {
    let c = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == cluster)
        .unwrap_or_else(|| panic!("no cluster {cluster}"));
    c["waves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            w.as_array()
                .unwrap()
                .iter()
                .map(crate::common::ks)
                .collect()
        })
        .collect()
}

fn w(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|i| format!("flux-system/{i}")).collect()
}

// ---------------------------------------------------------------------------------------
// The fleet
// ---------------------------------------------------------------------------------------

/// The fleet's graph (testdata/fleet/README.md) in cold-start order: the root, platform
/// (CRDs), platform-config (the VIPPool), then the two branches.
fn fleet_waves() -> Vec<Vec<String>> {
    vec![
        w(&["flux-system"]),
        w(&["platform"]),
        w(&["platform-config"]),
        w(&["apps-helm", "apps-wave-0", "platform-config-cdi"]),
        w(&["apps-vms", "apps-wave-1"]),
        w(&["apps-wave-2"]),
    ]
}

#[test]
fn fleet_converges_on_a_cold_cluster_in_its_documented_waves() {
    let out = fluxsim(&["graph", "testdata/fleet", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["findings"], serde_json::json!([]));
    for cluster in ["dev", "prod"] {
        assert_eq!(waves(&json, cluster), fleet_waves(), "{cluster}");
    }
    let clusters = json["clusters"].as_array().unwrap();
    assert!(clusters.iter().all(|c| c["converges"] == true));
    // Every Kustomization points at its declaration.
    let dev = &clusters[0]["kustomizations"];
    let platform = dev
        .as_array()
        .unwrap()
        .iter()
        .find(|k| crate::common::ks(&k["kustomization"]) == "flux-system/platform")
        .unwrap();
    assert_eq!(platform["location"]["file"], "clusters/base/platform.yaml");
    assert_eq!(platform["location"]["line"], 6);
}

#[test]
fn cluster_root_given_on_the_command_line_gives_the_same_waves() {
    let out = fluxsim(&[
        "graph",
        "testdata/fleet",
        "--cluster-root",
        "staging=clusters/prod",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(waves(&out.json(), "staging"), fleet_waves());
}

#[test]
fn fleet_text_prints_the_waves_per_cluster() {
    let out = fluxsim(&["graph", "testdata/fleet", "--cluster", "dev"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let expected = "\
graph: all 9 Kustomizations become Ready (1 cluster); no findings
cluster dev: all 9 Kustomizations become Ready in 6 waves
  wave 0: flux-system/flux-system
  wave 1: flux-system/platform
  wave 2: flux-system/platform-config
  wave 3: flux-system/apps-helm, flux-system/apps-wave-0,
    flux-system/platform-config-cdi
  wave 4: flux-system/apps-vms, flux-system/apps-wave-1
  wave 5: flux-system/apps-wave-2
0 findings (0 errors, 0 warnings, 0 info)
";
    assert_eq!(out.stdout, expected);
}

// ---------------------------------------------------------------------------------------
// Deadlocks and hazards
// ---------------------------------------------------------------------------------------

// kustomize-controller checkDependencies (kustomization_controller.go): a dependency that
// is not Ready requeues the Kustomization; on a cycle, forever.
#[test]
fn dependency_cycle_names_each_member_and_what_waits_for_it() {
    let (json, f) = findings("cycle");
    let cyc = of_rule(&f, "FS201");
    assert_eq!(cyc.len(), 2, "{f:#?}");
    for (fd, name) in cyc.iter().zip(["cycle-a", "cycle-b"]) {
        assert_eq!(
            crate::common::ks(&fd["kustomization"]),
            format!("flux-system/{name}")
        );
        assert_at(
            fd,
            "clusters/test/apps.yaml",
            line_of("cycle", "clusters/test/apps.yaml", &format!("name: {name}")),
        );
        assert!(
            message(fd).contains("cycle-a -> cycle-b -> cycle-a"),
            "{fd:#}"
        );
        assert!(message(fd).contains("`after-cycle`"), "{fd:#}");
    }
    assert_eq!(f.len(), 2, "only the cycle: {f:#?}");
    assert_eq!(
        waves(&json, "test"),
        vec![w(&["flux-system"]), w(&["healthy"])]
    );
}

// checkDependencies: "dependency '%s' not found" requeues forever on a cold cluster.
#[test]
fn missing_dependency_in_one_cluster_names_everything_it_blocks() {
    let (json, f) = findings("missing-root");
    let missing = of_rule(&f, "FS202");
    assert_eq!(missing.len(), 1, "{f:#?}");
    let m = missing[0];
    assert_eq!(m["cluster"], "prod");
    assert_eq!(crate::common::ks(&m["kustomization"]), "flux-system/apps");
    assert_eq!(m["severity"], "error");
    assert_at(
        m,
        "clusters/base/apps.yaml",
        line_of("missing-root", "clusters/base/apps.yaml", "name: apps"),
    );
    assert!(message(m).contains("`flux-system/infra`"), "{m:#}");
    assert!(
        message(m).contains("`web`"),
        "it names what it blocks: {m:#}"
    );
    assert_eq!(
        waves(&json, "dev"),
        vec![
            w(&["flux-system"]),
            w(&["infra"]),
            w(&["apps"]),
            w(&["web"])
        ]
    );
    assert_eq!(waves(&json, "prod"), vec![w(&["flux-system"])]);
}

/// The text report is what a person reads in CI: pinned whole.
#[test]
fn missing_root_text_report_is_pinned() {
    let out = graph("missing-root", &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let expected = "\
graph: 5 of 7 Kustomizations become Ready; 3 findings: 1 error, 1 warning, 1
  info
cluster dev: all 4 Kustomizations become Ready in 4 waves
  wave 0: flux-system/flux-system
  wave 1: flux-system/infra
  wave 2: flux-system/apps
  wave 3: flux-system/web
cluster prod: 2 of 3 Kustomizations never become Ready
  wave 0: flux-system/flux-system
  never ready: flux-system/apps: dependsOn `flux-system/infra`, which this
    cluster never defines
  never ready: flux-system/web: waits for `apps`, which never becomes Ready
clusters/base/apps.yaml:6: error[FS202]: `apps` dependsOn `flux-system/infra`,
    which cluster `prod` never defines: `apps` never reconciles; what waits for
    it never does either: `web` (prod, flux-system/apps)
clusters/base/apps.yaml:22: warning[FS210]: `web` differs between clusters `dev`
    and `prod`: wait true vs false (prod: clusters/base/apps.yaml:22) (dev,
    flux-system/web)
1 info: `--verbose` lists them
3 findings (1 error, 1 warning, 1 info)
";
    assert_eq!(out.stdout, expected);
}

#[test]
fn cluster_graphs_that_differ_are_reported_by_kustomization_name() {
    let (_, f) = findings("missing-root");
    let differ = of_rule(&f, "FS210");
    assert_eq!(differ.len(), 2, "{f:#?}");
    let infra = differ
        .iter()
        .find(|d| crate::common::ks(&d["kustomization"]) == "flux-system/infra")
        .unwrap();
    assert!(
        message(infra).contains("defined in cluster `dev` but not in `prod`"),
        "{infra:#}"
    );
    assert_at(
        infra,
        "clusters/base/infra.yaml",
        line_of("missing-root", "clusters/base/infra.yaml", "name: infra"),
    );
    let web = differ
        .iter()
        .find(|d| crate::common::ks(&d["kustomization"]) == "flux-system/web")
        .unwrap();
    assert!(message(web).contains("wait true vs false"), "{web:#}");
    // The roots' paths (./clusters/dev, ./clusters/prod) name their cluster: no difference.
    assert!(
        !f.iter()
            .any(|d| crate::common::ks(&d["kustomization"]) == "flux-system/flux-system"),
        "{f:#?}"
    );
}

// fluxcd/pkg ssa ApplyAll dry-runs every object before applying any: a custom resource
// without its CRD fails the whole apply, so a CRD from a dependent can never arrive.
#[test]
fn crd_applied_by_a_dependent_deadlocks_and_names_what_it_blocks() {
    let (_, f) = findings("crds");
    let later = of_rule(&f, "FS204");
    assert_eq!(later.len(), 1, "{f:#?}");
    let l = later[0];
    assert_eq!(
        crate::common::ks(&l["kustomization"]),
        "flux-system/widgets"
    );
    assert_at(
        l,
        "apps/widgets/widget.yaml",
        line_of("crds", "apps/widgets/widget.yaml", "name: big-widget"),
    );
    assert!(message(l).contains("`widget-crds`"), "{l:#}");
    assert!(message(l).contains("`widget-users`"), "{l:#}");
}

// kustomize-controller requeues a failed reconcile after its retry interval: a race over a
// CRD fails the first applies and converges once the other Kustomization has run (a slower
// cold start, not a deadlock: info, with the attempts it costs).
#[test]
fn crd_applied_by_an_unordered_sibling_converges_after_retries() {
    let (_, f) = findings("crds");
    let race = of_rule(&f, "FS205");
    assert_eq!(race.len(), 1, "{f:#?}");
    assert_eq!(race[0]["severity"], "info");
    assert!(
        message(race[0]).contains("converges after about 1 failed attempt"),
        "{:#}",
        race[0]
    );
    assert_eq!(
        crate::common::ks(&race[0]["kustomization"]),
        "flux-system/gadgets"
    );
    assert_at(race[0], "apps/gadgets/gadget.yaml", 4);
    assert!(message(race[0]).contains("`gadget-crds`"));
}

#[test]
fn crd_applied_by_no_kustomization_is_an_error() {
    let (_, f) = findings("crds");
    let missing = of_rule(&f, "FS203");
    assert_eq!(missing.len(), 1, "{f:#?}");
    assert_eq!(
        crate::common::ks(&missing[0]["kustomization"]),
        "flux-system/sprockets"
    );
    assert_at(missing[0], "apps/sprockets/sprocket.yaml", 4);
    // The cluster applies no HelmRelease, so no chart can be presumed to bring the CRD.
    assert!(
        message(missing[0]).contains("no HelmRelease could install it"),
        "{:#}",
        missing[0]
    );
}

// fluxcd/pkg ssa ApplyAllStaged: CRDs (and Namespaces) are applied and established first,
// so a CRD and its custom resources may share a Kustomization.
#[test]
fn crd_in_the_same_kustomization_or_an_ancestor_is_fine() {
    let (json, f) = findings("crds");
    for ok in [
        "self-contained",
        "widget-users",
        "gadget-crds",
        "widget-crds",
    ] {
        assert!(
            !f.iter()
                .any(|x| crate::common::ks(&x["kustomization"]) == format!("flux-system/{ok}")),
            "{ok}: {f:#?}"
        );
    }
    assert_eq!(f.len(), 3, "{f:#?}");
    let w1 = &waves(&json, "test")[1];
    assert!(
        w1.contains(&"flux-system/self-contained".to_string()),
        "{w1:?}"
    );
}

#[test]
fn runtime_crd_with_its_trigger_in_the_same_kustomization_deadlocks() {
    let (json, f) = findings("runtime-crd");
    let dead = of_rule(&f, "FS206");
    assert_eq!(dead.len(), 1, "{f:#?}");
    let d = dead[0];
    assert_eq!(crate::common::ks(&d["kustomization"]), "flux-system/virt");
    assert_at(
        d,
        "apps/virt/vm.yaml",
        line_of("runtime-crd", "apps/virt/vm.yaml", "name: unifi"),
    );
    assert!(message(d).contains("`KubeVirt.kubevirt.io`"), "{d:#}");
    assert!(
        message(d).contains("`vms`"),
        "the dependent tier waits forever: {d:#}"
    );
    let never: Vec<&Value> = json["clusters"][0]["kustomizations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| !k["neverReady"].is_null())
        .collect();
    let ids: Vec<String> = never
        .iter()
        .map(|k| crate::common::ks(&k["kustomization"]))
        .collect();
    assert_eq!(ids, ["flux-system/virt", "flux-system/vms"]);
}

#[test]
fn runtime_crd_whose_trigger_no_dependency_waits_for_converges_after_retries() {
    let (_, f) = findings("runtime-crd");
    let racy = of_rule(&f, "FS207");
    assert_eq!(racy.len(), 1, "{f:#?}");
    assert_eq!(
        crate::common::ks(&racy[0]["kustomization"]),
        "flux-system/volumes-racy"
    );
    assert_eq!(racy[0]["severity"], "info");
    assert!(
        message(racy[0]).contains("converges after"),
        "{:#}",
        racy[0]
    );
    assert_at(racy[0], "apps/volumes-racy/datavolume.yaml", 4);
    // `volumes` depends on `cdi`, which waits for the CDI trigger: no finding.
    assert!(
        !f.iter()
            .any(|x| crate::common::ks(&x["kustomization"]) == "flux-system/volumes"),
        "{f:#?}"
    );
}

#[test]
fn runtime_crd_not_declared_in_fluxsim_toml_is_a_missing_crd() {
    let empty = tempfile::NamedTempFile::new().unwrap();
    let out = graph(
        "runtime-crd",
        &[
            "--format",
            "json",
            "--config",
            empty.path().to_str().unwrap(),
        ],
    );
    let f = out.json()["findings"].as_array().unwrap().clone();
    let mut missing: Vec<String> = of_rule(&f, "FS203")
        .iter()
        .map(|x| crate::common::ks(&x["kustomization"]))
        .collect();
    missing.sort_unstable();
    assert_eq!(
        missing,
        [
            "flux-system/virt",
            "flux-system/volumes",
            "flux-system/volumes-racy"
        ],
        "{f:#?}"
    );
}

#[test]
fn invalid_fluxsim_toml_is_an_input_error_with_its_line() {
    // fluxsim.toml is repository content, read as every command reads it: what git tracks.
    let repo = with_config(
        "wait-on-unwaited",
        "[[runtime_crds]]\ngroup = \"g\"\nkinds = [\"K\"]\ncreated_by = { kind = \"T\" }\ncreatedBy = 1\n",
    );
    let out = fluxsim(&["graph", repo.path().to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("fluxsim.toml:5:"), "{}", out.stderr);
}

// kustomize-controller reads substituteFrom objects from the cluster at build time
// (kustomize_varsub.go, via SubstituteVariables in the build): not there yet, not found, and
// the reconcile is retried. From an unordered Kustomization it appears, and a retry
// succeeds (info); from one that waits on the reader it never does (an error).
#[test]
fn substitute_from_a_kustomization_not_ordered_before_converges_and_from_a_dependent_deadlocks() {
    let (_, f) = findings("substitute-from");
    let fs208 = of_rule(&f, "FS208");
    assert_eq!(fs208.len(), 2, "{f:#?}");
    let by = |name: &str| {
        *fs208
            .iter()
            .find(|x| crate::common::ks(&x["kustomization"]) == format!("flux-system/{name}"))
            .unwrap_or_else(|| panic!("no FS208 for {name}: {f:#?}"))
    };
    let late = by("consumer");
    assert_eq!(late["severity"], "info");
    assert!(message(late).contains("`producer`"), "{late:#}");
    assert!(message(late).contains("converges after"), "{late:#}");
    assert_at(
        late,
        "clusters/test/apps.yaml",
        line_of(
            "substitute-from",
            "clusters/test/apps.yaml",
            "name: consumer",
        ),
    );
    let never = by("needy");
    assert_eq!(never["severity"], "error");
    assert!(message(never).contains("`maker`"), "{never:#}");
    assert!(message(never).contains("fails forever"), "{never:#}");
    assert!(
        !f.iter()
            .any(|x| crate::common::ks(&x["kustomization"]) == "flux-system/good"),
        "{f:#?}"
    );
}

#[test]
fn optional_substitute_from_not_ordered_before_is_a_silently_wrong_render() {
    let (_, f) = findings("substitute-from");
    let soft = of_rule(&f, "FS209");
    assert_eq!(soft.len(), 1, "{f:#?}");
    assert_eq!(
        crate::common::ks(&soft[0]["kustomization"]),
        "flux-system/optional-consumer"
    );
    assert!(message(soft[0]).contains("silently"), "{:#}", soft[0]);
    assert_at(
        soft[0],
        "clusters/test/apps.yaml",
        line_of(
            "substitute-from",
            "clusters/test/apps.yaml",
            "name: optional-consumer",
        ),
    );
}

// kustomize-controller checkHealth runs only with spec.wait or spec.healthChecks: without
// them, Ready means applied.
#[test]
fn wait_true_on_a_wait_false_dependency_is_a_note() {
    let (_, f) = findings("wait-on-unwaited");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["rule"], "FS211");
    assert_eq!(
        crate::common::ks(&f[0]["kustomization"]),
        "flux-system/apps"
    );
    assert!(message(&f[0]).contains("`infra`"));
    assert_at(
        &f[0],
        "clusters/test/apps.yaml",
        line_of("wait-on-unwaited", "clusters/test/apps.yaml", "name: apps"),
    );
    // A presumption (the dependent may need only the objects, not their health): info.
    assert_eq!(f[0]["severity"], "info");
    let out = graph("wait-on-unwaited", &["--fail-on", "warning"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
}

// fluxcd/pkg ssa ApplyAllStaged applies Namespaces (with CRDs) first, in the same apply;
// a namespace made by no earlier Kustomization fails the dry-run of every object in it.
#[test]
fn namespace_not_created_before_its_objects_is_reported() {
    let (json, f) = findings("namespaces");
    let ns = of_rule(&f, "FS213");
    assert_eq!(ns.len(), 3, "{f:#?}");
    assert_eq!(f.len(), 3, "{f:#?}");
    let by = |name: &str| {
        *ns.iter()
            .find(|x| crate::common::ks(&x["kustomization"]) == format!("flux-system/{name}"))
            .unwrap_or_else(|| panic!("no FS213 for {name}: {f:#?}"))
    };
    let early = by("early");
    assert_eq!(early["severity"], "error");
    assert!(message(early).contains("`late-namespace`"), "{early:#}");
    assert_at(early, "apps/early/configmap.yaml", 4);
    assert_eq!(by("lost")["severity"], "error");
    assert!(message(by("lost")).contains("`nowhere`"));
    let racy = by("racy");
    // A race: it converges once `team-namespaces` has run (info).
    assert_eq!(racy["severity"], "info");
    assert!(message(racy).contains("`team-namespaces`"), "{racy:#}");
    assert!(message(racy).contains("converges after"), "{racy:#}");
    assert_eq!(
        waves(&json, "test"),
        vec![
            w(&["flux-system"]),
            w(&["own", "team-namespaces"]),
            w(&["ordered", "racy"])
        ]
    );
}

#[test]
fn suspended_or_failing_kustomizations_never_become_ready_nor_what_waits_for_them() {
    let (json, f) = findings("never-ready");
    let never = of_rule(&f, "FS212");
    assert_eq!(never.len(), 3, "{f:#?}");
    let by = |name: &str| {
        *never
            .iter()
            .find(|x| crate::common::ks(&x["kustomization"]) == format!("flux-system/{name}"))
            .unwrap_or_else(|| panic!("no FS212 for {name}: {f:#?}"))
    };
    let paused = by("paused");
    assert_eq!(paused["severity"], "error");
    assert!(message(paused).contains("`after-paused`"), "{paused:#}");
    assert_at(
        paused,
        "clusters/test/apps.yaml",
        line_of("never-ready", "clusters/test/apps.yaml", "name: paused"),
    );
    // Nothing waits for leaf-paused: suspending it is a choice, a warning.
    assert_eq!(by("leaf-paused")["severity"], "warning");
    assert!(message(by("broken")).contains("does-not-exist"));
    // The HelmRelease is a Flux kind: `flux bootstrap` installed its CRD.
    assert_eq!(f.len(), 3, "{f:#?}");
    assert_eq!(
        waves(&json, "test"),
        vec![w(&["flux-system"]), w(&["helm"])]
    );
}

// A cluster whose root reconciles runs Flux, whoever installed it (`flux bootstrap`, the
// Flux Operator, a helmfile, a script): Flux's kinds exist whatever the root is named.
#[test]
fn flux_kinds_exist_whoever_installed_flux() {
    let repo = repo_from("testdata/graph/never-ready");
    let sync = repo.path().join("clusters/test/flux-system.yaml");
    let text = std::fs::read_to_string(&sync).unwrap();
    // Rename the root Kustomization (the second `name: flux-system`, after `kind: Kustomization`).
    let at = text.find("kind: Kustomization").unwrap();
    let renamed = format!(
        "{}{}",
        &text[..at],
        text[at..].replacen("name: flux-system", "name: fleet-root", 1)
    );
    std::fs::write(&sync, renamed).unwrap();
    crate::common::commit_all(repo.path(), "installed by a script");
    let out = fluxsim(&["graph", repo.path().to_str().unwrap(), "--format", "json"]);
    let f = out.json()["findings"].as_array().unwrap().clone();
    assert!(of_rule(&f, "FS203").is_empty(), "{f:#?}");
    assert!(
        !f.iter()
            .any(|x| crate::common::ks(&x["kustomization"]) == "flux-system/helm"),
        "{f:#?}"
    );
}

// ---------------------------------------------------------------------------------------
// CRDs from Helm charts, and Flux's own kinds
// ---------------------------------------------------------------------------------------

/// A copy of `testdata/graph/CASE` with `fluxsim.toml` written and committed.
fn with_config(case: &str, toml: &str) -> tempfile::TempDir {
    let repo = repo_from(&format!("testdata/graph/{case}"));
    std::fs::write(repo.path().join("fluxsim.toml"), toml).unwrap();
    crate::common::commit_all(repo.path(), "fluxsim.toml");
    repo
}

fn findings_in(repo: &tempfile::TempDir) -> Vec<Value> {
    let out = fluxsim(&["graph", repo.path().to_str().unwrap(), "--format", "json"]);
    out.json()["findings"].as_array().unwrap().clone()
}

// helm-controller installs a chart's CRDs (Helm's crds/ directory, `install.crds: Create` by
// default) before its templates; kustomize-controller's checkHealth with `wait: true` makes
// the Kustomization Ready only once the HelmRelease is Ready (installed).
#[test]
fn crd_presumed_from_a_chart_installed_before_is_info_not_error() {
    let (json, f) = findings("helm-crds");
    assert_eq!(f.len(), 2, "{f:#?}");
    let info = of_rule(&f, "FS214");
    assert_eq!(info.len(), 1, "{f:#?}");
    let i = info[0];
    assert_eq!(i["severity"], "info");
    assert_eq!(
        crate::common::ks(&i["kustomization"]),
        "flux-system/issuers"
    );
    assert_at(
        i,
        "apps/issuers/issuer.yaml",
        line_of("helm-crds", "apps/issuers/issuer.yaml", "name: letsencrypt"),
    );
    assert!(
        message(i).contains(
            "HelmRelease `default/cert-manager` (chart `cert-manager`) in `cert-manager`"
        ),
        "{i:#}"
    );
    assert!(
        message(i)
            .contains("`[[helm_crds]] chart = \"cert-manager\" groups = [\"cert-manager.io\"]`"),
        "{i:#}"
    );
    assert!(of_rule(&f, "FS203").is_empty(), "{f:#?}");
    assert_eq!(
        waves(&json, "test"),
        vec![
            w(&["flux-system"]),
            w(&["cert-manager", "monitoring"]),
            w(&["dashboards", "issuers"])
        ]
    );
}

// With `wait: false` a Kustomization is Ready once applied (checkHealth does not run): the
// chart may not be installed yet, so the custom resource's dry-run fails until it is, then a
// retry succeeds (helm-controller installs a chart's crds/ first): a slower cold start.
#[test]
fn crd_presumed_from_a_chart_nothing_waits_for_converges_after_retries() {
    let (_, f) = findings("helm-crds");
    let racy = of_rule(&f, "FS215");
    assert_eq!(racy.len(), 1, "{f:#?}");
    let r = racy[0];
    assert_eq!(r["severity"], "info");
    assert!(message(r).contains("converges after"), "{r:#}");
    assert_eq!(
        crate::common::ks(&r["kustomization"]),
        "flux-system/dashboards"
    );
    assert_at(
        r,
        "apps/dashboards/servicemonitor.yaml",
        line_of(
            "helm-crds",
            "apps/dashboards/servicemonitor.yaml",
            "name: web",
        ),
    );
    // The chart of the Kustomization it depends on is ranked first.
    assert!(
        message(r).contains(
            "one of HelmRelease `default/kube-prometheus-stack` (chart \
             `kube-prometheus-stack`) in `monitoring`, HelmRelease `default/cert-manager`"
        ),
        "{r:#}"
    );
    assert!(
        message(r).contains("chart = \"kube-prometheus-stack\""),
        "{r:#}"
    );
}

#[test]
fn helm_crds_in_fluxsim_toml_replace_the_presumption_with_an_exact_check() {
    let repo = with_config(
        "helm-crds",
        "[[helm_crds]]\nchart = \"cert-manager\"\ngroups = [\"cert-manager.io\"]\n\n\
         [[helm_crds]]\nchart = \"kube-prometheus-stack\"\ngroups = [\"monitoring.coreos.com\"]\n",
    );
    let f = findings_in(&repo);
    // issuers waits for cert-manager (wait: true): declared and ordered, no finding;
    // dashboards depends on monitoring, which does not wait for its HelmRelease: FS207.
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["rule"], "FS207");
    assert_eq!(
        crate::common::ks(&f[0]["kustomization"]),
        "flux-system/dashboards"
    );
    assert!(
        message(&f[0]).contains("HelmRelease of chart `kube-prometheus-stack`"),
        "{:#}",
        f[0]
    );
    assert!(message(&f[0]).contains("(`monitoring`)"), "{:#}", f[0]);
}

// CRDs installed by the cluster's bootstrap before Flux (a helmfile step, say) exist from
// the start: nothing orders them, nothing can deadlock on them.
#[test]
fn bootstrap_crd_groups_in_fluxsim_toml_exist_from_the_start() {
    let repo = with_config("crds", "[bootstrap]\ncrd_groups = [\"example.io\"]\n");
    let out = fluxsim(&["graph", repo.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert_eq!(out.json()["findings"], serde_json::json!([]));
}

// fluxcd/pkg ssa ApplyAll dry-runs every object of a stage before applying any: the custom
// resource fails its dry-run, so the HelmRelease beside it is never applied either.
#[test]
fn chart_in_the_same_kustomization_as_its_custom_resource_deadlocks() {
    let (json, f) = findings("helm-crds-same");
    assert_eq!(f.len(), 1, "{f:#?}");
    let d = &f[0];
    assert_eq!(d["rule"], "FS203");
    assert_eq!(d["severity"], "error");
    assert_eq!(
        crate::common::ks(&d["kustomization"]),
        "flux-system/operator"
    );
    assert_at(
        d,
        "apps/operator/widget.yaml",
        line_of("helm-crds-same", "apps/operator/widget.yaml", "name: big"),
    );
    assert!(
        message(d).contains("HelmRelease `default/widget-operator` (chart `widget-operator`) in `operator` can only be applied by `operator` itself"),
        "{d:#}"
    );
    assert!(message(d).contains("dry-runs every object"), "{d:#}");
    assert_eq!(waves(&json, "test"), vec![w(&["flux-system"])]);
    // Declared, it is the same deadlock, reported as one (FS206).
    let repo = with_config(
        "helm-crds-same",
        "[[helm_crds]]\nchart = \"widget-operator\"\ngroups = [\"widgets.example.io\"]\n",
    );
    let f = findings_in(&repo);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["rule"], "FS206");
    assert!(
        message(&f[0]).contains("applies the HelmRelease of chart `widget-operator` itself"),
        "{:#}",
        f[0]
    );
}

// `flux bootstrap --components-extra=source-watcher` installs the ArtifactGenerator CRD; a
// repository whose gotk-components.yaml is still the placeholder does not say which
// components the bootstrap installs, so Flux's kinds are presumed.
#[test]
fn bootstrapped_cluster_has_flux_extension_kinds() {
    let out = graph("flux-extensions", &["--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let json = out.json();
    assert_eq!(json["findings"], serde_json::json!([]));
    assert_eq!(waves(&json, "test"), vec![w(&["flux-system"]), w(&["web"])]);
}

#[test]
fn flux_kind_missing_from_a_rendered_gotk_components_names_the_extra_component() {
    let repo = repo_from("testdata/graph/flux-extensions");
    std::fs::write(
        repo.path()
            .join("clusters/test/flux-system/gotk-components.yaml"),
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  \
         name: helmreleases.helm.toolkit.fluxcd.io\nspec:\n  group: helm.toolkit.fluxcd.io\n  \
         names:\n    kind: HelmRelease\n    plural: helmreleases\n  scope: Namespaced\n",
    )
    .unwrap();
    crate::common::commit_all(repo.path(), "gotk-components without source-watcher");
    let f = findings_in(&repo);
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["rule"], "FS203");
    assert_eq!(
        crate::common::ks(&f[0]["kustomization"]),
        "flux-system/flux-system"
    );
    assert_at(
        &f[0],
        "clusters/test/artifacts.yaml",
        line_of(
            "flux-extensions",
            "clusters/test/artifacts.yaml",
            "name: monorepo",
        ),
    );
    assert!(
        message(&f[0]).contains("`--components-extra=source-watcher`"),
        "{:#}",
        f[0]
    );
}

// ---------------------------------------------------------------------------------------
// Output formats
// ---------------------------------------------------------------------------------------

#[test]
fn sarif_has_every_graph_rule_and_a_located_result_per_finding() {
    let out = graph("crds", &["--format", "sarif"]);
    assert_eq!(out.code, 1);
    let s = out.json();
    assert_eq!(s["version"], "2.1.0");
    let rules = s["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 16);
    assert_eq!(rules[0]["id"], "FS201");
    let results = s["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let r = results.iter().find(|r| r["ruleId"] == "FS204").unwrap();
    let p = &r["locations"][0]["physicalLocation"];
    assert_eq!(p["artifactLocation"]["uri"], "apps/widgets/widget.yaml");
    assert_eq!(p["region"]["startLine"], 4);
}

#[test]
fn dot_output_has_a_subgraph_per_cluster_and_marks_what_never_becomes_ready() {
    let out = graph("missing-root", &["--format", "dot"]);
    assert_eq!(out.code, 1);
    let dot = &out.stdout;
    assert!(dot.starts_with("digraph fluxsim {\n"), "{dot}");
    assert!(dot.ends_with("}\n"));
    assert!(
        dot.contains("subgraph cluster_0 {\n    label=\"dev\";"),
        "{dot}"
    );
    assert!(
        dot.contains("subgraph cluster_1 {\n    label=\"prod\";"),
        "{dot}"
    );
    assert!(
        dot.contains(
            "\"prod/flux-system/infra\" [label=\"infra\\nmissing\", color=red, style=dashed];"
        ),
        "{dot}"
    );
    assert!(
        dot.contains("\"prod/flux-system/apps\" [label=\"apps\\nnever ready\", color=red];"),
        "{dot}"
    );
    assert!(
        dot.contains("\"dev/flux-system/infra\" -> \"dev/flux-system/apps\";"),
        "{dot}"
    );
    assert!(dot.contains("\"dev/flux-system/flux-system\" -> \"dev/flux-system/infra\" [style=dashed, color=gray];"), "{dot}");
    // dev: 3 applies + 2 dependsOn edges; prod: 2 applies + 2 dependsOn edges; the legend's 2.
    assert_eq!(dot.matches(" -> ").count(), 11, "{dot}");
}

#[test]
fn mermaid_output_is_a_flowchart_with_never_ready_nodes_classed() {
    let out = graph("missing-root", &["--format", "mermaid"]);
    let m = &out.stdout;
    assert!(
        m.starts_with("flowchart LR\n  subgraph c0[\"dev\"]\n"),
        "{m}"
    );
    assert_eq!(m.matches("  end\n").count(), 2, "{m}");
    assert_eq!(m.matches(" --> ").count(), 4, "dependsOn edges: {m}");
    assert_eq!(m.matches(" -.-> ").count(), 5, "applies edges: {m}");
    assert!(m.contains("c1n2[\"infra<br/>missing\"]"), "{m}");
    assert!(m.ends_with("class c1n0,c1n2,c1n3 never\n"), "{m}");
}

#[test]
fn outputs_are_the_same_bytes_whatever_the_jobs() {
    let repo = repo_from("testdata/graph/missing-root");
    let path = repo.path().to_str().unwrap();
    for format in ["text", "json", "dot", "mermaid", "sarif"] {
        let one = fluxsim(&["graph", path, "--format", format, "--jobs", "1"]);
        let two = fluxsim(&["graph", path, "--format", format, "--jobs", "2"]);
        let again = fluxsim(&["graph", path, "--format", format, "--jobs", "2"]);
        assert_eq!(one.stdout, two.stdout, "{format}");
        assert_eq!(two.stdout, again.stdout, "{format}");
    }
}

#[test]
fn unknown_cluster_is_an_input_error() {
    let out = fluxsim(&["graph", "testdata/fleet", "--cluster", "staging"]);
    assert_eq!(out.code, 2, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no cluster named `staging`"),
        "{}",
        out.stderr
    );
}

// A healthy repository whose CRDs come from a bootstrap helmfile (the shape of
// onedr0p/home-ops and bjw-s-labs/home-ops): what the helmfile installs is presumed there
// from the start (FS216, info, naming the release), so the cluster converges and `graph`
// exits 0; nothing is called missing. Declared in fluxsim.toml, it is exact: no finding.
#[test]
fn a_crd_group_from_a_bootstrap_helmfile_is_presumed_installed_before_flux() {
    let repo = repo_from("testdata/shapes/bootstrap-helmfile");
    let out = fluxsim(&["graph", repo.path().to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let text = &out.stdout;
    assert!(
        text.starts_with("graph: all 4 Kustomizations become Ready (1 cluster)"),
        "{text}"
    );
    assert!(!text.contains("crd_groups"), "{text}");
    for l in text.lines() {
        assert!(l.chars().count() <= 80, "wider than 80: {l}");
    }
    let json = fluxsim(&["graph", repo.path().to_str().unwrap(), "-o", "json"]).json();
    assert_eq!(json["missingCrdGroups"], serde_json::json!([]));
    let f = json["findings"].as_array().unwrap();
    let presumed = of_rule(f, "FS216");
    assert_eq!(presumed.len(), 1, "{f:#?}");
    assert_eq!(presumed[0]["severity"], "info");
    assert!(
        message(presumed[0])
            .contains("`bootstrap/helmfile/apps.yaml` installs release `external-secrets`"),
        "{:#}",
        presumed[0]
    );
    // Declared as the report says: every Kustomization becomes Ready.
    std::fs::write(
        repo.path().join("fluxsim.toml"),
        "[bootstrap]\ncrd_groups = [\n  \"external-secrets.io\",\n]\n",
    )
    .unwrap();
    crate::common::commit_all(repo.path(), "declare");
    let out = fluxsim(&["graph", repo.path().to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .starts_with("graph: all 4 Kustomizations become Ready (1 cluster); no findings\n"),
        "{}",
        out.stdout
    );
}

// Flux's cold start as the real repositories run it: a bootstrap script applies Flux,
// the vars the root reads (and applies itself) and a namespace; a chart brings CRDs with no
// `dependsOn`; a HelmRelease's `install.createNamespace` makes a namespace a sibling uses.
// None of it is a deadlock: presumed from the bootstrap (FS216) or converging after
// retries (FS215, FS213 as info), and `graph` exits 0.
#[test]
fn a_bootstrap_script_s_vars_and_namespaces_are_present_and_chart_crds_converge_after_retries() {
    let (json, f) = findings("script-bootstrap");
    assert!(f.iter().all(|x| x["severity"] == "info"), "{f:#?}");
    let presumed = of_rule(&f, "FS216");
    let sources: Vec<&str> = presumed
        .iter()
        .flat_map(|x| x["related"].as_array().unwrap())
        .filter(|r| r["role"] == "source")
        .map(|r| r["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        ["ConfigMap/cluster-settings", "Secret/cluster-secrets"],
        "{presumed:#?}"
    );
    assert!(
        presumed
            .iter()
            .all(|x| message(x).contains("`Taskfile.yaml`")),
        "{presumed:#?}"
    );
    assert!(
        presumed
            .iter()
            .any(|x| message(x).contains("namespace `observability`")),
        "{presumed:#?}"
    );
    let chart = of_rule(&f, "FS215");
    assert_eq!(chart.len(), 1, "{f:#?}");
    assert!(message(chart[0]).contains("converges after about 1 failed attempt, `2m` apart"));
    let ns = of_rule(&f, "FS213");
    assert_eq!(ns.len(), 1, "{f:#?}");
    assert!(
        message(ns[0]).contains("install.createNamespace"),
        "{:#}",
        ns[0]
    );
    // `kubernetes/flux` says nothing: the cluster is named after the repository it syncs.
    assert_eq!(waves(&json, "home-ops").len(), 4, "{json:#}");
    assert_eq!(graph("script-bootstrap", &[]).code, 0);
    // Without the Taskfile nothing says the root's own vars come first: a warning, since the
    // bootstrap that makes the root is presumed to apply them, never an error.
    let repo = repo_from("testdata/graph/script-bootstrap");
    let taskfile = repo.path().join("Taskfile.yaml");
    let text = std::fs::read_to_string(&taskfile).unwrap();
    let kept: String = text
        .split_inclusive('\n')
        .filter(|l| !l.contains("/flux/vars/"))
        .collect();
    std::fs::write(&taskfile, kept).unwrap();
    crate::common::commit_all(repo.path(), "the Taskfile applies no vars");
    let f = findings_in(&repo);
    let own = of_rule(&f, "FS208");
    assert_eq!(own.len(), 2, "{f:#?}");
    assert!(own.iter().all(|x| x["severity"] == "warning"), "{own:#?}");
    assert!(message(own[0]).contains("only it applies"), "{:#}", own[0]);
}

// A chart's CRDs cannot arrive when the only HelmRelease that could bring them waits on the
// custom resource's Kustomization: a real deadlock, an error.
#[test]
fn a_chart_whose_release_waits_on_its_custom_resource_deadlocks() {
    let (json, f) = findings("chart-deadlock");
    let missing = of_rule(&f, "FS203");
    assert_eq!(missing.len(), 1, "{f:#?}");
    assert_eq!(missing[0]["severity"], "error");
    assert!(
        message(missing[0]).contains("`widget-operator`"),
        "{:#}",
        missing[0]
    );
    assert_eq!(waves(&json, "test"), vec![w(&["flux-system"])]);
    assert_eq!(graph("chart-deadlock", &[]).code, 1);
}
