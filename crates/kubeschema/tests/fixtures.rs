//! The fixtures of `testdata/validate`: one planted problem per file with its expected
//! findings (`<case>.expected`), and clean variants that must give none.
//! `UPDATE_EXPECTED=1 cargo test -p fluxsim-kubeschema --test fixtures` rewrites the expected
//! files (then read the diff: it is the behaviour).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use kubeschema::{compare_renders, Applied, KubeVersion, Report, Validator};
use serde::Deserialize;
use serde_json::Value;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/validate")
}

fn read_objects(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap();
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| Value::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

fn validator(objects: &[Value]) -> Validator {
    let mut v = Validator::new(KubeVersion::DEFAULT);
    let crds = read_objects(&testdata().join("crds/widgets.yaml"));
    assert!(v.add_crds(&crds).is_empty());
    assert!(v.add_crds(objects).is_empty());
    v
}

fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let _ = writeln!(
            out,
            "{} {} {} :: {}",
            f.rule.id, f.severity, f.path, f.message
        );
    }
    for u in &report.unchecked {
        let _ = writeln!(out, "unchecked {} {} :: {}", u.object, u.path, u.reason);
    }
    out
}

fn check(dir: &str, actual: impl Fn(&Path) -> String) {
    let update = std::env::var_os("UPDATE_EXPECTED").is_some();
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut entries: Vec<PathBuf> = fs::read_dir(testdata().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    entries.sort();
    for case in entries {
        cases += 1;
        let got = actual(&case);
        let expected_path = case.with_extension("expected");
        if update {
            fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let want = fs::read_to_string(&expected_path).unwrap_or_default();
        if got != want {
            failures.push(format!(
                "{}:\n--- expected\n{want}--- got\n{got}",
                case.display()
            ));
        }
    }
    assert!(cases > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn schema_fixtures_give_their_expected_findings() {
    check("schema", |case| {
        let objects = read_objects(case);
        let v = validator(&objects);
        render(&v.validate_all(&objects))
    });
}

#[test]
fn clean_fixtures_give_no_finding() {
    for case in ["schema/clean-builtin.yaml", "schema/clean-custom.yaml"] {
        let objects = read_objects(&testdata().join(case));
        let report = validator(&objects).validate_all(&objects);
        assert!(report.findings.is_empty(), "{case}: {}", render(&report));
    }
}

#[test]
fn every_problem_fixture_has_a_finding_or_an_unchecked_entry() {
    let dir = testdata().join("schema");
    for entry in fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !std::path::Path::new(&name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml"))
            || name.starts_with("clean-")
        {
            continue;
        }
        let objects = read_objects(&path);
        let report = validator(&objects).validate_all(&objects);
        assert!(
            !report.findings.is_empty() || !report.unchecked.is_empty(),
            "{name}: nothing reported"
        );
    }
}

/// A hazards case: the settings of the Kustomization and the objects on each side.
#[derive(Deserialize)]
struct HazardCase {
    #[serde(default)]
    force: bool,
    #[serde(default = "yes")]
    prune: bool,
    #[serde(default)]
    base: Vec<Value>,
    #[serde(default)]
    head: Vec<Value>,
    /// Owner of the head objects when it differs from the base's (a move).
    #[serde(default)]
    head_owner: Option<String>,
}

fn yes() -> bool {
    true
}

fn applied(v: &[(Value, String)], force: bool, prune: bool) -> Vec<Applied<'_>> {
    v.iter()
        .map(|(o, w)| Applied {
            object: o,
            force,
            prune,
            owner: w,
        })
        .collect()
}

#[test]
fn hazard_fixtures_give_their_expected_findings() {
    check("hazards", |case| {
        let text = fs::read_to_string(case).unwrap();
        let c: HazardCase = serde_yaml_ng::from_str(&text).unwrap();
        let owner = c
            .head_owner
            .clone()
            .unwrap_or_else(|| "flux-system/apps".to_string());
        let side = |objects: &'_ [Value], owner: &str| -> Vec<(Value, String)> {
            objects
                .iter()
                .map(|o| (o.clone(), owner.to_string()))
                .collect()
        };
        let base = side(&c.base, "flux-system/apps");
        let head = side(&c.head, &owner);
        let (force, prune) = (c.force, c.prune);
        let (b, h) = (applied(&base, force, prune), applied(&head, force, prune));
        let findings = compare_renders(&b, &h);
        render(&Report {
            findings,
            unchecked: Vec::new(),
        })
    });
}
