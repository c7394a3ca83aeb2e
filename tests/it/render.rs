//! `fluxsim render` and `fluxsim build` end to end: the example fleet (`testdata/fleet`) and
//! the bad inputs (`testdata/bad/<case>`), run through the real binary, plus a few checks
//! through the library where the binary does not expose enough.
//!
//! Fixtures are copied into throw-away git repositories, so a test never depends on what
//! the crate's own checkout tracks, and never writes into it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::common::{
    bad_fixture, commit_all, crate_path, fluxsim, fluxsim_in, git, kustomization, kustomizations,
    read_tree, repo_from, sha256, yaml_objects, Output,
};

const CLUSTERS: [&str; 2] = ["dev", "prod"];

/// The fleet rendered once, with the default flags, shared by the tests that only read it.
struct Baseline {
    /// `--out` of the render.
    out: PathBuf,
    /// `--format json` of the same render.
    json: Value,
    json_text: String,
}

fn baseline() -> &'static Baseline {
    static BASELINE: OnceLock<Baseline> = OnceLock::new();
    BASELINE.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("render-fleet-baseline");
        // A folder left by an older fluxsim (without the `--out` marker) is not replaced.
        let _ = std::fs::remove_dir_all(&out);
        let r = fluxsim(&[
            "render",
            "testdata/fleet",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
            // The artifacts as they are, so that each file is its artifact byte for byte
            // (masked Secrets are checked in tests/it/ship.rs).
            "--show-secrets",
        ]);
        assert_eq!(
            r.code, 0,
            "the fleet renders cleanly: {}\n{}",
            r.stderr, r.stdout
        );
        Baseline {
            out,
            json: r.json(),
            json_text: r.stdout,
        }
    })
}

/// `DIR/<cluster>/<namespace>/<name>.yaml`.
fn artifact_file(out: &Path, cluster: &str, id: &str) -> PathBuf {
    out.join(cluster).join(format!("{id}.yaml"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `render REPO --format json --out DIR` of a repository in a temp dir; DIR is `<tmp>/out`.
fn render_json_out(repo: &Path, extra: &[&str]) -> (tempfile::TempDir, Output) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args = vec![
        "render",
        repo.to_str().unwrap(),
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
        // The artifacts as they are (see `baseline`).
        "--show-secrets",
    ];
    args.extend_from_slice(extra);
    let r = fluxsim(&args);
    (tmp, r)
}

fn status(k: &Value) -> &str {
    k["status"].as_str().unwrap()
}

fn error(k: &Value) -> &str {
    k["error"].as_str().unwrap_or_default()
}

/// A Kustomization's notes, one per line.
fn notes(k: &Value) -> String {
    k["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every file a render wrote, as text, joined (to look for content that must not be there).
fn everything_written(out: &Path) -> String {
    read_tree(out)
        .into_values()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

// ---------------------------------------------------------------------------------------
// The fleet
// ---------------------------------------------------------------------------------------

/// "Objects per Kustomization" from `testdata/fleet/README.md`: name to count.
fn documented_object_counts() -> BTreeMap<String, usize> {
    let readme = read(&crate_path("testdata/fleet/README.md"));
    let start = readme
        .find("Objects per Kustomization")
        .expect("the fleet README lists objects per Kustomization");
    let para = &readme[start..];
    let para = &para[..para.find("\n\n").unwrap_or(para.len())];
    let list = &para[para.find("):").expect("the list follows `):`") + 2..];
    let re = regex::Regex::new(r"([a-z][a-z0-9-]*) (\d+)").unwrap();
    re.captures_iter(list)
        .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
        .collect()
}

#[test]
fn every_fleet_kustomization_renders_in_both_discovered_clusters_with_documented_counts() {
    let b = baseline();
    let names: Vec<&str> = b.json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names, CLUSTERS,
        "both clusters are discovered with no flags"
    );

    let counts = documented_object_counts();
    assert_eq!(
        counts.len(),
        9,
        "the README documents 9 Kustomizations: {counts:?}"
    );
    let all = kustomizations(&b.json);
    for cluster in CLUSTERS {
        let here: BTreeMap<&str, &Value> = all
            .iter()
            .filter(|((c, _), _)| c == cluster)
            .map(|(_, k)| (k["name"].as_str().unwrap(), k))
            .collect();
        assert_eq!(
            here.keys().copied().collect::<BTreeSet<_>>(),
            counts.keys().map(String::as_str).collect::<BTreeSet<_>>(),
            "{cluster}: the Kustomizations the README lists"
        );
        for (name, k) in here {
            assert_eq!(status(k), "rendered", "{cluster}/{name}: {k:#}");
            assert!(k["error"].is_null(), "{cluster}/{name}: {k:#}");
            assert_eq!(
                k["objects"].as_array().unwrap().len(),
                counts[name],
                "{cluster}/{name}: object count"
            );
        }
    }
}

#[test]
fn out_dir_holds_one_file_per_kustomization_whose_digest_matches_sha256sums_and_json() {
    let b = baseline();
    let sums = read(&b.out.join("SHA256SUMS"));
    let listed: BTreeMap<String, String> = sums
        .lines()
        .map(|l| {
            let (digest, file) = l.split_once("  ").expect("`<digest>  <file>` lines");
            (file.to_string(), digest.to_string())
        })
        .collect();

    let mut expected = BTreeSet::from(["SHA256SUMS".to_string()]);
    for ((cluster, id), k) in kustomizations(&b.json) {
        let rel = format!("{cluster}/{id}.yaml");
        let bytes = fs::read(b.out.join(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let digest = sha256(&bytes);
        assert_eq!(k["sha256"], digest.as_str(), "{rel}: the JSON digest");
        assert_eq!(
            listed.get(&rel),
            Some(&digest),
            "{rel}: the SHA256SUMS line"
        );

        // Each object's digest is that of its document in the file, in order.
        let text = String::from_utf8(bytes).unwrap();
        let docs: Vec<&str> = fluxsim::manifest::split_documents(&text);
        let objects = k["objects"].as_array().unwrap();
        assert_eq!(docs.len(), objects.len(), "{rel}: documents");
        for (doc, o) in docs.iter().zip(objects) {
            assert_eq!(o["sha256"], sha256(doc.as_bytes()).as_str(), "{rel}: {o}");
        }
        expected.insert(rel);
    }
    assert_eq!(
        listed.len() + 1,
        expected.len(),
        "SHA256SUMS lists every artifact"
    );
    let written: BTreeSet<String> = read_tree(&b.out).into_keys().collect();
    // The marker lists what fluxsim wrote (`SHA256 BYTES PATH`), so that the next run
    // replaces only that.
    let marker = std::fs::read_to_string(b.out.join(".fluxsim-output")).unwrap();
    let mut in_marker = BTreeSet::new();
    for line in marker.lines().skip(1) {
        let [digest, size, rel] = line.splitn(3, ' ').collect::<Vec<_>>()[..] else {
            panic!("marker line `{line}`");
        };
        let bytes = fs::read(b.out.join(rel)).unwrap();
        assert_eq!(
            (digest, size),
            (sha256(&bytes).as_str(), bytes.len().to_string().as_str()),
            "{rel}"
        );
        in_marker.insert(rel.to_string());
    }
    assert_eq!(
        in_marker, expected,
        "the marker lists every file but itself"
    );
    expected.insert(".fluxsim-output".to_string());
    assert_eq!(written, expected, "nothing else is written");

    let check = Command::new("sha256sum")
        .args(["-c", "--strict", "SHA256SUMS"])
        .current_dir(&b.out)
        .output()
        .expect("sha256sum runs");
    assert!(
        check.status.success(),
        "sha256sum -c: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn jobs_1_and_jobs_4_write_byte_identical_out_trees_and_json() {
    let fleet = crate_path("testdata/fleet");
    let (one_dir, one) = render_json_out(&fleet, &["--jobs", "1"]);
    let (four_dir, four) = render_json_out(&fleet, &["--jobs", "4"]);
    assert_eq!(
        (one.code, four.code),
        (0, 0),
        "{}{}",
        one.stderr,
        four.stderr
    );
    assert_eq!(one.stdout, four.stdout, "JSON");
    let one_tree = read_tree(&one_dir.path().join("out"));
    assert_eq!(
        one_tree,
        read_tree(&four_dir.path().join("out")),
        "--out trees"
    );
    // And the default (one worker per core) agrees with both.
    assert_eq!(
        one.stdout,
        baseline().json_text,
        "JSON against the default --jobs"
    );
    assert_eq!(
        one_tree,
        read_tree(&baseline().out),
        "--out against the default --jobs"
    );
}

/// `data` of `clusters/<cluster>/cluster-vars.yaml`.
fn cluster_vars(cluster: &str) -> BTreeMap<String, String> {
    let text = read(&crate_path(&format!(
        "testdata/fleet/clusters/{cluster}/cluster-vars.yaml"
    )));
    let cm = &yaml_objects(&text)[0];
    cm["data"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect()
}

/// True when `dev` becomes `prod` by replacing some occurrences of the `from` of `pairs`
/// by their `to`, every other byte being equal.
fn explained_by(dev: &str, prod: &str, pairs: &[(String, String)]) -> bool {
    fn go(
        d: &[u8],
        p: &[u8],
        pairs: &[(String, String)],
        i: usize,
        j: usize,
        failed: &mut BTreeSet<(usize, usize)>,
    ) -> bool {
        if i == d.len() && j == p.len() {
            return true;
        }
        if failed.contains(&(i, j)) {
            return false;
        }
        let same = i < d.len() && j < p.len() && d[i] == p[j];
        let ok = (same && go(d, p, pairs, i + 1, j + 1, failed))
            || pairs.iter().any(|(from, to)| {
                d[i..].starts_with(from.as_bytes())
                    && p[j..].starts_with(to.as_bytes())
                    && go(d, p, pairs, i + from.len(), j + to.len(), failed)
            });
        if !ok {
            failed.insert((i, j));
        }
        ok
    }
    go(
        dev.as_bytes(),
        prod.as_bytes(),
        pairs,
        0,
        0,
        &mut BTreeSet::new(),
    )
}

/// The lines of an artifact, with each base64 value (a Secret's `data`, where `stringData`
/// is folded in) decoded into lines of its own, so that differences inside are compared
/// line by line too.
fn comparable_lines(text: &str) -> Vec<String> {
    use base64::Engine as _;
    let mut out = Vec::new();
    for line in text.lines() {
        let decoded = line.split_once(": ").and_then(|(key, value)| {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(value)
                .ok()?;
            Some((key, String::from_utf8(bytes).ok()?))
        });
        match decoded {
            Some((key, value)) if value.contains('\n') => {
                out.extend(value.lines().map(|l| format!("{key} (decoded): {l}")));
            }
            _ => out.push(line.to_string()),
        }
    }
    out
}

#[test]
fn dev_and_prod_artifacts_differ_exactly_where_their_cluster_vars_differ() {
    let b = baseline();
    let (dev, prod) = (cluster_vars("dev"), cluster_vars("prod"));
    assert_eq!(
        dev.keys().collect::<Vec<_>>(),
        prod.keys().collect::<Vec<_>>(),
        "both clusters define the same vars"
    );
    let differing: Vec<&String> = dev.keys().filter(|k| dev[*k] != prod[*k]).collect();
    assert_eq!(differing.len(), 8, "the README says eight vars differ");
    let var_pairs: Vec<(String, String)> = differing
        .iter()
        .map(|k| (dev[*k].clone(), prod[*k].clone()))
        .collect();
    // The root also carries the overlay's own differences (testdata/fleet/README.md).
    let mut root_pairs = var_pairs.clone();
    root_pairs.extend(
        [
            ("./clusters/dev", "./clusters/prod"),
            ("gitea.dev.example.internal", "gitea.prod.example.internal"),
            ("branch: main", "tag: v2.3.1"),
        ]
        .map(|(d, p)| (d.to_string(), p.to_string())),
    );

    let mut checked = 0;
    for ((cluster, id), k) in kustomizations(&b.json) {
        if cluster != "dev" {
            continue;
        }
        let dev_text = read(&artifact_file(&b.out, "dev", &id));
        let prod_text = read(&artifact_file(&b.out, "prod", &id));
        let is_root = id == "flux-system/flux-system";
        let pairs = if is_root { &root_pairs } else { &var_pairs };
        let (dl, pl) = (comparable_lines(&dev_text), comparable_lines(&prod_text));
        assert_eq!(dl.len(), pl.len(), "{id}: the same lines in dev and prod");
        for (n, (d, p)) in dl.iter().zip(&pl).enumerate() {
            if d != p {
                assert!(
                    explained_by(d, p, pairs),
                    "{id} line {}: dev `{d}` and prod `{p}` differ by more than cluster vars",
                    n + 1
                );
                checked += 1;
            }
        }
        if !is_root {
            let uses_differing = k["varsUsed"]
                .as_array()
                .unwrap()
                .iter()
                .any(|v| differing.iter().any(|d| v == d.as_str()));
            assert_eq!(
                dev_text != prod_text,
                uses_differing,
                "{id}: differs between clusters exactly when it uses a var that differs"
            );
        }
    }
    assert!(
        checked > 20,
        "only {checked} differing lines: the fleet should exercise this"
    );
}

/// Renders a committed copy of the fleet after `edit`, and returns which artifacts changed
/// against the baseline with their changed lines (old, new).
fn changes_after(edit: impl FnOnce(&Path)) -> BTreeMap<(String, String), Vec<(String, String)>> {
    let repo = repo_from("testdata/fleet");
    edit(repo.path());
    commit_all(repo.path(), "edit");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let b = baseline();
    let before = kustomizations(&b.json);
    let after = kustomizations(&r.json());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "the same Kustomizations"
    );
    let mut changed = BTreeMap::new();
    for (key, k) in &after {
        if k["sha256"] == before[key]["sha256"] {
            continue;
        }
        let old = read(&artifact_file(&b.out, &key.0, &key.1));
        let new = read(&artifact_file(&tmp.path().join("out"), &key.0, &key.1));
        assert_eq!(
            old.lines().count(),
            new.lines().count(),
            "{key:?}: line count"
        );
        let lines = old
            .lines()
            .zip(new.lines())
            .filter(|(o, n)| o != n)
            .map(|(o, n)| (o.trim().to_string(), n.trim().to_string()))
            .collect();
        changed.insert(key.clone(), lines);
    }
    changed
}

fn replace_in(repo: &Path, rel: &str, from: &str, to: &str) {
    let path = repo.join(rel);
    let text = read(&path);
    assert!(text.contains(from), "{rel} contains `{from}`");
    fs::write(&path, text.replace(from, to)).unwrap();
}

fn in_both_clusters(name: &str) -> [(String, String); 2] {
    CLUSTERS.map(|c| (c.to_string(), format!("flux-system/{name}")))
}

#[test]
fn changing_one_leaf_manifest_changes_exactly_the_artifacts_that_include_it() {
    let changed = changes_after(|repo| {
        replace_in(
            repo,
            "apps/wave-0/redis/configmap.yaml",
            "maxmemory-policy allkeys-lru",
            "maxmemory-policy volatile-lru",
        );
    });
    let expected_line = (
        "maxmemory-policy allkeys-lru".to_string(),
        "maxmemory-policy volatile-lru".to_string(),
    );
    let expected: BTreeMap<_, _> = in_both_clusters("apps-wave-0")
        .into_iter()
        .map(|k| (k, vec![expected_line.clone()]))
        .collect();
    assert_eq!(changed, expected);
}

#[test]
fn changing_a_shared_component_changes_exactly_the_artifacts_of_both_kustomizations_using_it() {
    // components/pod-hardening is used by apps/wave-1/orders and apps/wave-2/web.
    let changed = changes_after(|repo| {
        replace_in(
            repo,
            "components/pod-hardening/kustomization.yaml",
            "runAsUser: 65532",
            "runAsUser: 65533",
        );
    });
    let one_deployment = vec![(
        "runAsUser: 65532".to_string(),
        "runAsUser: 65533".to_string(),
    )];
    let expected: BTreeMap<_, _> = in_both_clusters("apps-wave-1")
        .into_iter()
        .chain(in_both_clusters("apps-wave-2"))
        .map(|k| (k, one_deployment.clone()))
        .collect();
    assert_eq!(changed, expected);
}

#[test]
fn artifacts_without_post_build_equal_kubectl_kustomize_byte_for_byte() {
    let b = baseline();
    let fleet = crate_path("testdata/fleet");
    let mut compared = Vec::new();
    for cluster in CLUSTERS {
        // The Flux Kustomizations as the cluster gets them are objects of the root artifact.
        let root = read(&artifact_file(&b.out, cluster, "flux-system/flux-system"));
        for obj in yaml_objects(&root) {
            if obj["kind"] != "Kustomization" || obj["spec"].get("postBuild").is_some() {
                continue;
            }
            let id = format!(
                "{}/{}",
                obj["metadata"]["namespace"].as_str().unwrap(),
                obj["metadata"]["name"].as_str().unwrap()
            );
            let path = obj["spec"]["path"].as_str().unwrap();
            let dir = fleet.join(path.trim_start_matches("./"));
            assert!(
                dir.join("kustomization.yaml").is_file(),
                "{id}: fluxsim builds {path} as it is, so kubectl can too"
            );
            let kubectl = Command::new("kubectl")
                .args(["kustomize", "--load-restrictor", "LoadRestrictionsNone"])
                .arg(&dir)
                .output()
                .expect("kubectl runs");
            assert!(
                kubectl.status.success(),
                "{}",
                String::from_utf8_lossy(&kubectl.stderr)
            );
            let ours = fs::read(artifact_file(&b.out, cluster, &id)).unwrap();
            assert!(
                ours == kubectl.stdout,
                "{cluster} {id}: the artifact differs from `kubectl kustomize {path}`"
            );
            compared.push(format!("{cluster} {id}"));
        }
    }
    assert_eq!(
        compared,
        [
            "dev flux-system/flux-system",
            "prod flux-system/flux-system"
        ],
        "the fleet's Kustomizations without postBuild are the two roots"
    );
}

fn porcelain(repo: &Path) -> String {
    git(
        repo,
        &[
            "status",
            "--porcelain",
            "--ignored",
            "--untracked-files=all",
        ],
    )
}

#[test]
fn render_leaves_the_users_work_tree_untouched() {
    let repo = repo_from("testdata/fleet");
    let (status_before, files_before) = (porcelain(repo.path()), read_tree(repo.path()));
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().join("out");
    let r = fluxsim_in(
        Some(repo.path()),
        &["render", ".", "--out", out_dir.to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(porcelain(repo.path()), status_before, "git status");
    assert_eq!(
        read_tree(repo.path()),
        files_before,
        "the files and their contents"
    );
    assert!(
        !repo.path().join("apps/wave-0/kustomization.yaml").exists(),
        "the generated kustomization is not written into the user's tree"
    );
}

#[test]
fn sourceignore_keeps_the_broken_scratch_manifest_out_of_the_render() {
    let b = baseline();
    for cluster in CLUSTERS {
        assert_eq!(
            status(kustomization(&b.json, cluster, "apps-wave-0")),
            "rendered"
        );
    }
    assert!(
        !everything_written(&b.out).contains("memcached"),
        "apps/wave-0/scratch/memcached.yaml is ignored"
    );
}

// source-controller filters the archive with the GitRepository's spec.ignore too.
#[test]
fn git_repository_spec_ignore_removes_paths_from_the_source() {
    let repo = repo_from("testdata/fleet");
    for cluster in CLUSTERS {
        let p = repo.path().join(format!("clusters/{cluster}/sync.yaml"));
        let text = fs::read_to_string(&p).unwrap();
        let text = text.replacen(
            "  interval: 1m0s\n",
            "  interval: 1m0s\n  ignore: |\n    /apps/wave-2/\n",
            1,
        );
        fs::write(&p, text).unwrap();
    }
    commit_all(repo.path(), "ignore wave-2 in the GitRepository");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    for cluster in CLUSTERS {
        let wave2 = kustomization(&json, cluster, "apps-wave-2");
        assert_eq!(status(wave2), "failed", "{cluster}: {wave2:#}");
        assert!(error(wave2).contains("./apps/wave-2"), "{}", error(wave2));
        let wave1 = kustomization(&json, cluster, "apps-wave-1");
        assert_eq!(status(wave1), "rendered", "{cluster}: {}", error(wave1));
    }
}

#[test]
fn without_sourceignore_the_scratch_manifest_fails_apps_wave_0_and_its_dependents_still_render() {
    let repo = repo_from("testdata/fleet");
    fs::remove_file(repo.path().join(".sourceignore")).unwrap();
    commit_all(repo.path(), "drop .sourceignore");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(
        r.code, 1,
        "a failed Kustomization is a finding: {}",
        r.stderr
    );
    let json = r.json();
    for cluster in CLUSTERS {
        let wave0 = kustomization(&json, cluster, "apps-wave-0");
        assert_eq!(status(wave0), "failed", "{cluster}: {wave0:#}");
        assert!(
            error(wave0).contains("apps/wave-0/scratch/memcached.yaml"),
            "{cluster}: the error names the file: {}",
            error(wave0)
        );
        // Its dependents render all the same (the steady state: dependsOn orders, it does
        // not change what is applied), with a note naming the failed dependency. Before
        // the steady state they were `blocked`.
        let wave1 = kustomization(&json, cluster, "apps-wave-1");
        assert_eq!(status(wave1), "rendered", "{cluster}: {wave1:#}");
        assert!(
            notes(wave1).contains("dependency `flux-system/apps-wave-0` failed"),
            "{cluster}: {}",
            notes(wave1)
        );
        for name in [
            "apps-wave-2",
            "flux-system",
            "platform",
            "platform-config",
            "platform-config-cdi",
            "apps-vms",
        ] {
            let k = kustomization(&json, cluster, name);
            assert_eq!(status(k), "rendered", "{cluster}/{name}: {}", error(k));
        }
    }
}

#[test]
fn fluxsim_build_prints_exactly_the_artifact_render_writes() {
    let b = baseline();
    let r = fluxsim(&[
        "build",
        "testdata/fleet",
        "--cluster",
        "dev",
        "--kustomization",
        "apps-wave-2",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        read(&artifact_file(&b.out, "dev", "flux-system/apps-wave-2"))
    );
}

/// A builder that records every directory it is asked to build.
struct Recording {
    inner: Box<dyn fluxsim::kustomize::Builder>,
    dirs: Mutex<Vec<PathBuf>>,
}

impl fluxsim::kustomize::Builder for Recording {
    fn build(&self, job: &fluxsim::kustomize::Job<'_>) -> fluxsim::kustomize::Built {
        self.dirs.lock().unwrap().push(job.dir.clone());
        self.inner.build(job)
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

#[test]
fn each_distinct_kustomize_build_runs_once_per_render() {
    let opts = fluxsim::render::RepoOptions::default();
    let builder = Recording {
        inner: fluxsim::render::make_builder(&opts).expect("kustomize or kubectl is installed"),
        dirs: Mutex::new(Vec::new()),
    };
    let tree = fluxsim::source::materialize(
        &crate_path("testdata/fleet"),
        &fluxsim::source::SourceOptions::default(),
    )
    .unwrap();
    let r = fluxsim::render::render_tree(tree, &builder, &opts).unwrap();
    let dirs = builder.dirs.into_inner().unwrap();

    let pairs: Vec<_> = r.clusters.iter().flat_map(|c| &c.kustomizations).collect();
    assert_eq!(pairs.len(), 18);
    // A build's input is its path plus the kustomization fluxsim generated for it.
    let distinct: BTreeSet<(Option<String>, Option<String>)> = pairs
        .iter()
        .map(|k| (k.build_path.clone(), k.generated.clone()))
        .collect();
    // The two roots differ; the eight Kustomizations of clusters/base are shared.
    assert_eq!(distinct.len(), 2 + 8, "{distinct:#?}");
    // Substituted objects are printed again by kustomize in their own temp directory.
    let is_reprint = |d: &&PathBuf| d.to_string_lossy().contains("fluxsim-postbuild-");
    let source_builds = dirs.iter().filter(|d| !is_reprint(d)).count();
    assert_eq!(
        source_builds,
        distinct.len(),
        "each distinct build once: {dirs:#?}"
    );
    assert!(
        source_builds < pairs.len(),
        "dev and prod share their builds"
    );
    let substituted = pairs.iter().filter(|k| k.substituted).count();
    assert!(dirs.iter().filter(is_reprint).count() <= substituted);

    // What the summary line reports is what ran.
    assert_eq!(r.builds_run, dirs.len());
    let verbose = fluxsim::report::layout::Layout {
        wide: false,
        verbose: true,
    };
    let table = fluxsim::report::render_table(&r, verbose);
    // With --verbose, the last line says how the render was made; its builds are one word
    // apart unless wrapped: the text is read unwrapped.
    let summary = table.replace("\n  ", " ");
    let summary = summary.lines().last().unwrap();
    assert!(
        summary.contains(&format!(" {} kustomize builds ", dirs.len()))
            || summary.contains(&format!(" {} builds ", dirs.len())),
        "{summary}"
    );
}

// ---------------------------------------------------------------------------------------
// Substitution
// ---------------------------------------------------------------------------------------

#[test]
fn strict_substitution_fails_an_undefined_var_naming_the_var_and_the_object() {
    let repo = bad_fixture("undefined-var");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    let app = kustomization(&json, "test", "app");
    assert_eq!(status(app), "failed");
    assert!(error(app).contains("UNDEFINED"), "{}", error(app));
    assert!(
        error(app).contains("ConfigMap/default/settings"),
        "{}",
        error(app)
    );
}

// Issue 38: a substitution failure names the file and line the `${...}` is written at (as
// `--audit` does), keeping Flux's message (fluxcd/pkg envsubst: `missing closing brace`,
// `variable not set (strict mode)`); envsubst's own place is in the object as printed.
#[test]
fn a_substitution_failure_names_the_file_and_line_of_its_expression() {
    let repo = bad_fixture("indexed-expansion");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let report = kustomization(&r.json(), "test", "report").clone();
    assert_eq!(status(&report), "failed");
    // The CronJob is the file's second document, renamed by namePrefix.
    assert_eq!(
        error(&report),
        "CronJob.batch/default/team-report: variable substitution failed: \
         apps/report/report.yaml:31:37: ${STEPS[0]}: missing closing brace (indexed \
         expansions are not supported; write $${STEPS[0]} to leave it to the shell)"
    );
    // `fluxsim build` says the same.
    let built = fluxsim(&["build", repo.path().to_str().unwrap(), "-k", "report"]);
    assert_eq!(built.code, 1);
    assert!(
        built
            .stderr
            .contains("variable substitution failed: apps/report/report.yaml:31:37: ${STEPS[0]}"),
        "{}",
        built.stderr
    );

    let repo = bad_fixture("undefined-var");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    let app = kustomization(&r.json(), "test", "app").clone();
    assert!(
        error(&app).starts_with(
            "ConfigMap/default/settings: variable substitution failed: \
             apps/app/configmap.yaml:9:16: ${UNDEFINED}: variable not set (strict mode): \
             \"UNDEFINED\" ("
        ),
        "{}",
        error(&app)
    );
}

#[test]
fn no_strict_renders_an_undefined_var_as_empty() {
    let repo = bad_fixture("undefined-var");
    let (tmp, r) = render_json_out(repo.path(), &["--no-strict"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = read(&artifact_file(
        &tmp.path().join("out"),
        "test",
        "flux-system/app",
    ));
    let cm = &yaml_objects(&text)[0];
    assert_eq!(cm["data"]["undefined"], "[]");
    assert_eq!(cm["data"]["defined"], "present");
}

#[test]
fn substitute_disabled_objects_keep_their_vars_verbatim() {
    let repo = bad_fixture("substitute-disabled");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = read(&artifact_file(
        &tmp.path().join("out"),
        "test",
        "flux-system/templates",
    ));
    let by_name: BTreeMap<String, Value> = yaml_objects(&text)
        .into_iter()
        .map(|o| (o["metadata"]["name"].as_str().unwrap().to_string(), o))
        .collect();
    assert_eq!(by_name["by-annotation"]["data"]["greeting"], "${GREETING}");
    assert_eq!(
        by_name["by-annotation"]["data"]["template"], "server_name ${UNSET};",
        "an unset var in a disabled object does not fail strict mode"
    );
    assert_eq!(by_name["by-label"]["data"]["greeting"], "${GREETING}");
    assert_eq!(by_name["substituted"]["data"]["greeting"], "hello");
}

// fluxcd/pkg kustomize/kustomize_varsub.go LoadVariables: a substituteFrom source that is
// not optional and not on the cluster fails the Kustomization with the API server's
// NotFound (`post build failed for '<object>': substitute from 'ConfigMap/x' error:
// configmaps "x" not found`); an optional one is skipped. A Secret an ExternalSecret or a
// SealedSecret makes at run time exists then: its unknown values are placeholders.
// A bootstrap step the repository shows makes the source before Flux runs (a Taskfile's
// `kubectl create configmap`): Flux finds it, its values unknown offline (placeholders),
// never "nothing makes it".
#[test]
fn a_substitute_from_source_a_bootstrap_command_makes_renders_with_placeholders() {
    let repo = bad_fixture("substitute-from-missing");
    std::fs::write(
        repo.path().join("Taskfile.yaml"),
        "version: '3'\ntasks:\n  bootstrap:\n    cmds:\n      - kubectl -n flux-system create \
         configmap absent-vars --from-env-file=.env\n",
    )
    .unwrap();
    commit_all(repo.path(), "a bootstrap task");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    let json = r.json();
    let needs = kustomization(&json, "test", "needs-vars");
    assert_eq!(status(needs), "rendered", "{needs:#}");
    assert!(
        notes(needs).contains("the cluster's bootstrap, before Flux runs (`Taskfile.yaml`"),
        "{}",
        notes(needs)
    );
}

#[test]
fn a_substitute_from_source_nothing_makes_fails_as_flux_fails_it_and_run_time_ones_render() {
    let repo = bad_fixture("substitute-from-missing");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    let needs = kustomization(&json, "test", "needs-vars");
    assert_eq!(status(needs), "failed", "{needs:#}");
    // Flux's words, led by the object it substitutes first, then the file declaring the
    // Kustomization and what to do.
    assert!(
        error(needs).starts_with(
            "ConfigMap/default/needs-vars: substitute from 'ConfigMap/absent-vars' error: \
             configmaps \"absent-vars\" not found (clusters/test/apps.yaml:7: \
             `flux-system/needs-vars` reads ConfigMap `flux-system/absent-vars`, which no \
             Kustomization of this cluster applies"
        ),
        "{}",
        error(needs)
    );
    assert!(
        error(needs).contains(
            "declare it in fluxsim.toml ([[bootstrap.objects]] kind = \"ConfigMap\", \
             namespace = \"flux-system\", name = \"absent-vars\", vars = { ... }), else mark \
             it `optional: true`)"
        ),
        "{}",
        error(needs)
    );
    let optional = kustomization(&json, "test", "optional-vars");
    assert_eq!(status(optional), "rendered", "{}", error(optional));
    assert_eq!(optional["unknownVars"], serde_json::json!([]));
    let out = tmp.path().join("out");
    let text = read(&artifact_file(&out, "test", "flux-system/optional-vars"));
    assert_eq!(yaml_objects(&text)[0]["data"]["greeting"], "hello");
    // Made at run time: placeholders name the Secret and the var; a SealedSecret's plain
    // template value is known.
    for (name, secret, var) in [
        ("from-external-secret", "runtime-vars", "TOKEN"),
        ("from-sealed-secret", "sealed-vars", "PASSWORD"),
    ] {
        let k = kustomization(&json, "test", name);
        assert_eq!(status(k), "rendered", "{k:#}");
        let placeholder = format!("fluxsim-unknown:Secret/flux-system/{secret}:{var}");
        assert_eq!(
            k["unknownVars"],
            serde_json::json!([{"name": var,
                "sources": [format!("Secret/flux-system/{secret}")], "placeholder": placeholder}]),
            "{name}"
        );
        assert!(notes(k).contains("is made at run time by"), "{}", notes(k));
        let text = read(&artifact_file(&out, "test", &format!("flux-system/{name}")));
        let data = &yaml_objects(&text)[0]["data"];
        assert!(
            data.as_object()
                .unwrap()
                .values()
                .any(|v| *v == placeholder.as_str()),
            "{data}"
        );
    }
    let text = read(&artifact_file(
        &out,
        "test",
        "flux-system/from-sealed-secret",
    ));
    assert_eq!(yaml_objects(&text)[0]["data"]["domain"], "example.net");

    // `--strict-sources` fails what is made at run time too; optional stays skipped.
    let (_tmp, r) = render_json_out(repo.path(), &["--strict-sources"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    assert_eq!(status(kustomization(&json, "test", "needs-vars")), "failed");
    let sealed = kustomization(&json, "test", "from-sealed-secret");
    assert_eq!(status(sealed), "failed");
    assert!(
        error(sealed).contains("is made at run time by SealedSecret/flux-system/sealed-vars"),
        "{}",
        error(sealed)
    );
    assert_eq!(
        status(kustomization(&json, "test", "optional-vars")),
        "rendered"
    );
}

// fluxcd/pkg kustomize/kustomize_varsub.go SubstituteVariables: an object marked
// `substitute: disabled` is returned before LoadVariables runs, so when no object is
// substituted a missing source is never read and nothing fails.
#[test]
fn a_missing_source_is_never_read_when_every_object_is_marked_substitute_disabled() {
    let repo = bad_fixture("substitute-from-missing");
    let file = repo.path().join("apps/needs-vars/configmap.yaml");
    let text = fs::read_to_string(&file).unwrap().replace(
        "  namespace: default\n",
        "  namespace: default\n  annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled\n",
    );
    fs::write(&file, text).unwrap();
    crate::common::commit_all(repo.path(), "nothing substituted");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let needs = kustomization(&r.json(), "test", "needs-vars").clone();
    assert_eq!(status(&needs), "rendered", "{needs:#}");
    let text = read(&artifact_file(
        &tmp.path().join("out"),
        "test",
        "flux-system/needs-vars",
    ));
    assert_eq!(yaml_objects(&text)[0]["data"]["target"], "${TARGET}");
}

// ---------------------------------------------------------------------------------------
// Bad inputs
// ---------------------------------------------------------------------------------------

#[test]
fn missing_spec_path_fails_that_kustomization_naming_the_path() {
    let repo = bad_fixture("missing-path");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    let k = kustomization(&json, "test", "missing-dir");
    assert_eq!(status(k), "failed");
    assert!(error(k).contains("./apps/does-not-exist"), "{}", error(k));
    assert_eq!(status(kustomization(&json, "test", "healthy")), "rendered");
}

// The Kustomization CRD types spec.path `string`: the API server refuses `path: 42` (and a
// list, a map) before kustomize-controller sees the object; it never rendered the source root.
#[test]
fn a_spec_path_that_is_not_a_string_fails_that_kustomization_naming_its_file() {
    let repo = bad_fixture("path-not-a-string");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    for (name, line, what) in [
        ("a-number", 6, "an integer (`42`)"),
        ("a-list", 20, "a list (`[\"./apps/healthy\"]`)"),
        ("a-map", 34, "a map (`{\"dir\":\"./apps/healthy\"}`)"),
    ] {
        let k = kustomization(&json, "test", name);
        assert_eq!(status(k), "failed", "{name}");
        assert!(k["sha256"].is_null(), "{name}");
        assert_eq!(
            error(k),
            format!(
                "clusters/test/apps.yaml:{line}: spec.path must be a string, not {what}: the API \
                 server refuses this Kustomization (the CRD's schema types spec.path string)"
            ),
            "{name}"
        );
    }
    assert_eq!(status(kustomization(&json, "test", "healthy")), "rendered");
}

#[test]
fn unparsable_kustomization_yaml_fails_only_that_kustomization() {
    let repo = bad_fixture("bad-kustomization-yaml");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let json = r.json();
    let broken = kustomization(&json, "test", "broken");
    assert_eq!(status(broken), "failed");
    assert!(broken["sha256"].is_null());
    assert_eq!(status(kustomization(&json, "test", "healthy")), "rendered");
}

#[test]
fn unparsable_kustomization_yaml_error_names_the_file() {
    let repo = bad_fixture("bad-kustomization-yaml");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    let json = r.json();
    let broken = kustomization(&json, "test", "broken");
    assert!(
        error(broken).contains("apps/broken/kustomization.yaml"),
        "{}",
        error(broken)
    );
}

#[test]
fn a_failing_render_is_deterministic_too() {
    let repo = bad_fixture("bad-kustomization-yaml");
    let (_a, first) = render_json_out(repo.path(), &[]);
    let (_b, second) = render_json_out(repo.path(), &[]);
    assert_eq!(first.stdout, second.stdout);
    let json = first.json();
    let e = error(kustomization(&json, "test", "broken"));
    assert!(!e.contains("run.go"), "no klog header in: {e}");
}

#[test]
fn dependency_cycle_members_render_with_a_note_naming_the_cycle() {
    // Before the steady state both were `blocked`; `graph` keeps reporting the cycle (FS201).
    let repo = bad_fixture("dependency-cycle");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    for (name, path) in [
        ("cycle-a", "cycle-a -> cycle-b -> cycle-a"),
        ("cycle-b", "cycle-b -> cycle-a -> cycle-b"),
    ] {
        let k = kustomization(&json, "test", name);
        assert_eq!(status(k), "rendered", "{name}: {k:#}");
        assert!(
            notes(k).contains(&format!("on a dependency cycle: {path}")),
            "{name}: the cycle from itself in: {}",
            notes(k)
        );
    }
    assert_eq!(status(kustomization(&json, "test", "healthy")), "rendered");
}

#[test]
fn depends_on_a_kustomization_that_does_not_exist_renders_with_a_note_naming_it() {
    // Before the steady state `orphan` and `downstream` were `blocked`; the missing target
    // stays a finding of `graph` (FS202).
    let repo = bad_fixture("missing-dependency");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let orphan = kustomization(&json, "test", "orphan");
    assert_eq!(status(orphan), "rendered");
    assert!(
        notes(orphan).contains("`flux-system/ghost`"),
        "{}",
        notes(orphan)
    );
    assert!(
        notes(orphan).contains("no Kustomization"),
        "{}",
        notes(orphan)
    );
    assert!(!notes(orphan).contains("cycle"), "{}", notes(orphan));
    assert_eq!(status(kustomization(&json, "test", "healthy")), "rendered");
}

#[test]
fn a_dependent_of_a_kustomization_with_a_missing_dependency_renders_and_is_not_on_a_cycle() {
    let repo = bad_fixture("missing-dependency");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    let json = r.json();
    let downstream = kustomization(&json, "test", "downstream");
    assert_eq!(status(downstream), "rendered");
    // Its own dependency rendered: nothing to say about it.
    assert_eq!(notes(downstream), "", "{downstream:#}");
}

#[test]
fn kustomizations_from_other_sources_are_external_and_not_rendered() {
    let repo = bad_fixture("external-sources");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "external is not a failure: {}", r.stderr);
    let json = r.json();
    for (name, source) in [
        ("from-other-git", "GitRepository/flux-system/vendor-charts"),
        ("from-oci", "OCIRepository/flux-system/podinfo"),
    ] {
        let k = kustomization(&json, "test", name);
        assert_eq!(status(k), "external", "{name}");
        assert!(error(k).contains(source), "{name}: {}", error(k));
        assert!(k["sha256"].is_null() && k["objects"] == Value::Array(vec![]));
        let file = artifact_file(
            &tmp.path().join("out"),
            "test",
            &format!("flux-system/{name}"),
        );
        assert!(!file.exists(), "{name}: no artifact file");
    }
    assert_eq!(status(kustomization(&json, "test", "local")), "rendered");
    // This repository's ./deploy is not the vendor's.
    assert!(!everything_written(&tmp.path().join("out")).contains("must-not-render"));
}

#[test]
fn v1beta2_kustomizations_are_reconciled() {
    let repo = bad_fixture("v1beta2");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    let legacy = kustomization(&json, "test", "legacy");
    assert_eq!(status(legacy), "rendered", "{}", error(legacy));
    assert_eq!(legacy["substituted"], true);
    let text = read(&artifact_file(
        &tmp.path().join("out"),
        "test",
        "flux-system/legacy",
    ));
    assert_eq!(
        yaml_objects(&text)[0]["data"]["greeting"],
        "hello-from-v1beta2"
    );
}

/// The symlink-out fixture with its two committed symlinks to a directory outside the
/// repository, which holds valid manifests: were they followed, they would render.
fn symlink_fixture() -> (tempfile::TempDir, tempfile::TempDir) {
    let repo = bad_fixture("symlink-out");
    let outside = tempfile::tempdir().unwrap();
    let manifest = |name: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n\
             data:\n  stolen: OUTSIDE-CONTENT\n"
        )
    };
    fs::write(outside.path().join("leak.yaml"), manifest("outside-file")).unwrap();
    fs::create_dir(outside.path().join("dir")).unwrap();
    fs::write(
        outside.path().join("dir/configmap.yaml"),
        manifest("outside-dir"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("leak.yaml"),
        repo.path().join("apps/leaky/leak.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("dir"), repo.path().join("apps/outside"))
        .unwrap();
    commit_all(repo.path(), "symlinks out of the repository");
    let tracked = git(repo.path(), &["ls-files", "-s", "apps"]);
    assert_eq!(
        tracked.lines().filter(|l| l.starts_with("120000 ")).count(),
        2,
        "both symlinks are committed as symlinks:\n{tracked}"
    );
    (repo, outside)
}

#[test]
fn symlinks_out_of_the_repository_are_not_followed() {
    let (repo, _outside) = symlink_fixture();
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stdout.contains("OUTSIDE-CONTENT") && !r.stdout.contains("outside-"));
    assert!(!everything_written(&tmp.path().join("out")).contains("OUTSIDE-CONTENT"));
    let json = r.json();
    let leaky = kustomization(&json, "test", "leaky");
    assert_eq!(status(leaky), "failed", "the listed file is missing");
    assert!(error(leaky).contains("leak.yaml"), "{}", error(leaky));
    let escaped = kustomization(&json, "test", "escaped");
    assert_eq!(status(escaped), "failed", "spec.path is not in the source");
    assert!(
        error(escaped).contains("./apps/outside"),
        "{}",
        error(escaped)
    );
    assert_eq!(status(kustomization(&json, "test", "healthy")), "rendered");
}

/// `diff --audit --graph` read both revisions' files again for their file and line lookups:
/// symlinks out of the repository stay unread there too, in the work tree and in a revision.
#[test]
fn diff_audit_and_graph_do_not_follow_symlinks_out_of_the_repository() {
    let (repo, _outside) = symlink_fixture();
    for args in [
        &["diff", "--base", "HEAD", "--audit", "--graph", "-o", "json"][..],
        &[
            "diff", "--base", "HEAD~1", "--head", "HEAD", "--audit", "--graph", "-o", "json",
        ][..],
        &[
            "prove",
            "--base",
            "HEAD~1",
            "--audit",
            "--graph",
            "--allow-blind",
            "-o",
            "json",
        ][..],
    ] {
        let r = crate::common::fluxsim_in(Some(repo.path()), args);
        assert!(r.code <= 1, "{args:?}: {}{}", r.stdout, r.stderr);
        for leak in ["OUTSIDE-CONTENT", "outside-file", "outside-dir"] {
            assert!(
                !r.stdout.contains(leak) && !r.stderr.contains(leak),
                "{args:?} read {leak}:\n{}{}",
                r.stdout,
                r.stderr
            );
        }
        assert!(r.json()["audit"].is_array(), "{args:?}: {}", r.stdout);
        assert!(r.json()["graph"].is_array(), "{args:?}: {}", r.stdout);
    }
}

#[test]
fn a_kustomize_binary_that_does_not_exist_exits_2_naming_what_to_install() {
    let r = fluxsim(&[
        "render",
        "testdata/fleet",
        "--kustomize",
        "/nonexistent/kustomize",
        "--builder",
        "auto",
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(r.stderr.contains("install kustomize"), "{}", r.stderr);
    assert!(r.stderr.contains("kubectl"), "{}", r.stderr);
    assert!(r.stderr.contains("/nonexistent/kustomize"), "{}", r.stderr);
}

#[test]
fn no_kustomize_or_kubectl_on_path_exits_2_naming_what_to_install() {
    // `--builder kustomize` needs the binary before any build. (`--builder auto` looks for it
    // at the first build it hands over: tests/it/kustomize_version.rs.)
    let bin = crate::common::path_with_git_only();
    let out = Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args(["render", "testdata/fleet", "--builder", "kustomize"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PATH", bin.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("install kustomize"), "{stderr}");
    assert!(stderr.contains("--kustomize PATH"), "{stderr}");
}

#[test]
fn the_native_builder_renders_the_fleet_with_no_kustomize_installed() {
    let bin = crate::common::path_with_git_only();
    let run = |builder: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_fluxsim"))
            .args([
                "render",
                "testdata/fleet",
                "--format",
                "json",
                "--builder",
                builder,
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("PATH", bin.path())
            .env("FLUXSIM_CACHE_DIR", tempfile::tempdir().unwrap().path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = run("native");
    assert_eq!(code, Some(0), "{stderr}{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let with_kustomize = fluxsim(&[
        "render",
        "testdata/fleet",
        "--format",
        "json",
        "--builder",
        "kustomize",
    ]);
    let digests = |j: &serde_json::Value| -> Vec<serde_json::Value> {
        kustomizations(j)
            .values()
            .map(|k| k["sha256"].clone())
            .collect()
    };
    assert_eq!(digests(&json), digests(&with_kustomize.json()));
}

#[test]
fn out_dir_that_is_the_repository_does_not_delete_it() {
    let repo = repo_from("testdata/fleet");
    let before = read_tree(repo.path());
    let r = fluxsim_in(Some(repo.path()), &["render", ".", "--out", "."]);
    assert!(
        repo.path().is_dir(),
        "the repository itself is gone (exit {}, {})",
        r.code,
        r.stderr
    );
    let after = read_tree(repo.path());
    let lost: Vec<&String> = before.keys().filter(|f| !after.contains_key(*f)).collect();
    assert!(
        lost.is_empty() && repo.path().join(".git").is_dir(),
        "exit {}, {}; files lost: {lost:?}",
        r.code,
        r.stderr
    );
    assert_eq!(r.code, 2, "an input error: {}", r.stderr);
    assert!(
        r.stderr.contains("refusing to write") && r.stderr.contains("repository being rendered"),
        "{}",
        r.stderr
    );
}

#[test]
fn out_dir_with_files_fluxsim_did_not_write_is_refused_and_kept() {
    let repo = repo_from("testdata/fleet");
    let out = tempfile::tempdir().unwrap();
    let release = out.path().join("release");
    std::fs::create_dir(&release).unwrap();
    std::fs::write(release.join("SHA256SUMS"), "0  fluxsim.tar.gz\n").unwrap();
    std::fs::write(release.join("fluxsim.tar.gz"), "keep me").unwrap();
    let before = read_tree(out.path());
    let r = fluxsim_in(
        Some(repo.path()),
        &["render", ".", "--out", release.to_str().unwrap()],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("fluxsim did not write it") && r.stderr.contains("release"),
        "{}",
        r.stderr
    );
    assert_eq!(
        read_tree(out.path()),
        before,
        "nothing beside or in it changed"
    );
    // The same folder once emptied is fluxsim's to fill, and to replace on the next run.
    std::fs::remove_file(release.join("SHA256SUMS")).unwrap();
    std::fs::remove_file(release.join("fluxsim.tar.gz")).unwrap();
    for _ in 0..2 {
        let r = fluxsim_in(
            Some(repo.path()),
            &["render", ".", "--out", release.to_str().unwrap()],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let names: Vec<String> = read_tree(out.path()).into_keys().collect();
    assert!(names.iter().all(|n| n.starts_with("release/")), "{names:?}");
    assert!(names.contains(&"release/SHA256SUMS".to_string()));
}

// Two clusters that collide in every way a name can: the same GitRepository
// `flux-system/flux-system` with different `spec.ignore`, the same root `flux-system/cluster`,
// root folders with the same last component. Each renders as its own world.
#[test]
fn colliding_clusters_are_separate_worlds_named_by_what_tells_them_apart() {
    let repo = repo_from("testdata/clusters/colliding");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let json = r.json();
    let names: Vec<&str> = json["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["main", "storage"]);
    for cluster in ["main", "storage"] {
        let root = kustomization(&json, cluster, "cluster");
        assert_eq!(status(root), "rendered");
        assert_eq!(root["path"], format!("./kubernetes/{cluster}/flux"));
    }
    // Each cluster's GitRepository decides what it sees: main ignores extra.yaml.
    let objects = |cluster: &str| -> Vec<String> {
        kustomization(&json, cluster, "apps")["objects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(objects("main"), ["web"]);
    assert_eq!(objects("storage"), ["extra", "web"]);
    // And its own vars.
    for cluster in ["main", "storage"] {
        let text = fs::read_to_string(
            tmp.path()
                .join(format!("out/{cluster}/flux-system/apps.yaml")),
        )
        .unwrap();
        assert!(text.contains(&format!("cluster: {cluster}\n")), "{text}");
    }
}

// A kustomization that a bootstrap script or Ansible applies (`kubectl apply -k
// clusters/dev`) is a cluster root when it yields Flux Kustomizations that nothing else
// reaches; the base it includes is not one.
#[test]
fn an_apply_set_that_no_flux_kustomization_reaches_is_a_cluster_root() {
    let repo = repo_from("testdata/discover/apply-set");
    let (tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let json = r.json();
    let found: BTreeSet<(String, String)> = kustomizations(&json).into_keys().collect();
    let want: BTreeSet<(String, String)> = [
        ("dev", "flux-system/debug"),
        ("dev", "flux-system/flux-system"),
        ("dev", "flux-system/web"),
        ("prod", "flux-system/flux-system"),
        ("prod", "flux-system/web"),
    ]
    .into_iter()
    .map(|(c, k)| (c.to_string(), k.to_string()))
    .collect();
    assert_eq!(found, want);
    assert_eq!(
        kustomization(&json, "dev", "flux-system")["path"],
        "./clusters/dev"
    );
    for env in ["dev", "prod"] {
        let text =
            fs::read_to_string(tmp.path().join(format!("out/{env}/flux-system/web.yaml"))).unwrap();
        assert!(text.contains(&format!("env: {env}\n")), "{text}");
    }
}

/// The (cluster, Kustomization, status) a render of the fixture `testdata/discover/<case>`
/// gives.
fn discovered(case: &str, extra: &[&str]) -> BTreeSet<(String, String, String)> {
    let repo = repo_from(&format!("testdata/discover/{case}"));
    let (_tmp, r) = render_json_out(repo.path(), extra);
    assert!(r.code == 0 || r.code == 1, "{}{}", r.stdout, r.stderr);
    kustomizations(&r.json())
        .into_iter()
        .map(|((c, k), v)| (c, k, v["status"].as_str().unwrap().to_string()))
        .collect()
}

fn triples(want: &[(&str, &str, &str)]) -> BTreeSet<(String, String, String)> {
    want.iter()
        .map(|(c, k, s)| ((*c).to_string(), (*k).to_string(), (*s).to_string()))
        .collect()
}

// Reachability is read on the kustomization files' text, whatever a build does: cluster-1's
// root lists a remote base beside `../../overlays/cluster-1` (so it needs the network and is
// not built; its own files, read with the remote base left out, still give `apps`), and
// `clusters/kustomization.yaml` and `overlays/kustomization.yaml` only gather the clusters'
// folders (for CI). Neither is a cluster: every Flux Kustomization they reach is applied by
// a real cluster's root already.
#[test]
fn a_kustomization_gathering_the_clusters_folders_is_no_cluster_even_when_a_build_needs_the_network(
) {
    assert_eq!(
        discovered("gathering", &[]),
        triples(&[
            ("cluster-1", "flux-system/apps", "rendered"),
            ("cluster-1", "flux-system/flux-system", "needs-network"),
            ("cluster-2", "flux-system/apps", "rendered"),
            ("cluster-2", "flux-system/flux-system", "rendered"),
        ])
    );
}

// `spec.path` of a Kustomization on a mapped source is inside the mapped folder: the folder
// it builds (`kubernetes/overlays/cluster-1`) is reached, not a cluster of its own.
#[test]
fn a_folder_reached_through_a_mapped_source_is_no_cluster() {
    assert_eq!(
        discovered("mapped-source", &[]),
        triples(&[
            ("cluster-1", "flux-system/apps", "rendered"),
            ("cluster-1", "flux-system/flux-system", "rendered"),
            ("cluster-1", "flux-system/web", "rendered"),
        ])
    );
}

// What an ArtifactGenerator copies (`@repo/deploy/**`) is built from the artifact: the
// kustomization in `deploy/prod` is reached, not a cluster.
#[test]
fn a_folder_an_artifact_generator_copies_is_no_cluster() {
    assert_eq!(
        discovered("generated-artifact", &[]),
        triples(&[
            ("prod", "flux-system/apps", "rendered"),
            ("prod", "flux-system/flux-system", "rendered"),
            ("prod", "flux-system/web", "rendered"),
        ])
    );
}

// `path: ./overlays/${CLUSTER_NAME}` is filled in by the root's postBuild: the folders it
// can name are reached (and the native builder reads the path as the string it is).
#[test]
fn a_folder_a_substituted_spec_path_can_name_is_no_cluster() {
    let repo = repo_from("testdata/discover/templated-path");
    let (_tmp, r) = render_json_out(repo.path(), &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let json = r.json();
    let found: BTreeSet<(String, String)> = kustomizations(&json).into_keys().collect();
    let want: BTreeSet<(String, String)> = [
        ("staging", "flux-system/apps"),
        ("staging", "flux-system/flux-system"),
        ("staging", "flux-system/web"),
    ]
    .into_iter()
    .map(|(c, k)| (c.to_string(), k.to_string()))
    .collect();
    assert_eq!(found, want);
    assert_eq!(
        kustomization(&json, "staging", "flux-system")["builtBy"],
        "native"
    );
}

// The Flux Operator syncs `cluster/base`: never `base`; and a lone cluster whose folders say
// nothing (`cluster`) is named after the repository its instance syncs
// (`ssh://git@example.internal/fleet.git`).
#[test]
fn a_cluster_is_named_by_its_path_s_first_name_that_is_not_a_generic_folder() {
    assert_eq!(
        discovered("generic-names", &[]),
        triples(&[
            ("fleet", "flux-system/cluster-apps", "rendered"),
            ("fleet", "flux-system/flux-system", "rendered"),
        ])
    );
}

#[test]
fn no_cluster_root_lists_the_folders_holding_flux_kustomizations_with_the_flag_to_copy() {
    let repo = repo_from("testdata/discover/no-root");
    let r = fluxsim(&["render", repo.path().to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no cluster root found"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("Folders that hold Flux Kustomizations:\n  --cluster-root deploy=deploy"),
        "{}",
        r.stderr
    );
    // And the line works as printed.
    let ok = fluxsim(&[
        "render",
        repo.path().to_str().unwrap(),
        "--cluster-root",
        "deploy=deploy",
    ]);
    assert_eq!(ok.code, 0, "{}{}", ok.stdout, ok.stderr);
}

// `fluxsim render | head`: a reader that goes away ends the output quietly, with the
// command's own status (print! would panic and exit 101).
#[test]
fn a_closed_stdout_ends_the_output_quietly_with_the_commands_status() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .args(["render", "testdata/fleet", "--format", "json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

// A build the native builder hands to kustomize says why, in JSON and in the text report,
// so a user sees which feature cost them the binary.
#[test]
fn a_delegated_build_names_the_feature_that_needed_kustomize() {
    let repo = repo_from("testdata/fleet");
    let dir = repo.path().join("platform");
    let k = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        format!("{k}sortOptions:\n  order: legacy\n"),
    )
    .unwrap();
    crate::common::commit_all(repo.path(), "sortOptions");
    let r = fluxsim_in(
        Some(repo.path()),
        &[
            "render",
            ".",
            "--format",
            "json",
            "--no-cache",
            "--builder",
            "auto",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let json = r.json();
    for cluster in CLUSTERS {
        let k = kustomization(&json, cluster, "platform");
        assert_eq!(k["builtBy"], "kustomize", "{k:#}");
        let why = k["delegated"].as_str().unwrap_or_default();
        assert!(why.contains("sortOptions"), "{cluster}: {why}");
        // The file as the repository names it, wherever the checkout is.
        assert!(
            why.contains("(in platform/kustomization.yaml)"),
            "{cluster}: {why}"
        );
    }
    assert_eq!(
        kustomization(&json, "dev", "apps-wave-1")["delegated"],
        Value::Null
    );
    // Which feature needed kustomize: how the render was made, said with --verbose.
    let text = fluxsim_in(
        Some(repo.path()),
        &["render", ".", "--no-cache", "--verbose", "--wide"],
    );
    assert!(
        text.stdout
            .contains("platform built by kustomize, not natively:")
            && text.stdout.contains("sortOptions"),
        "{}",
        text.stdout
    );
}
