//! Every public envsubst conformance vector (made by running Flux's own Go code) must pass.

use fluxsim::conformance::{parse_vectors, run_vector, VectorOutcome};

fn vectors_path(file: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/conformance")
        .join(file)
}

fn run_mode(mode: &str) {
    run_file("envsubst-public.jsonl", mode);
}

fn run_file(file: &str, mode: &str) {
    let path = vectors_path(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the conformance vectors live in testdata/conformance)",
            path.display()
        )
    });
    let vectors = parse_vectors(&text).expect("vectors parse");
    let mut failures = Vec::new();
    let mut count = 0;
    for v in vectors.iter().filter(|v| v.mode == mode) {
        count += 1;
        if let VectorOutcome::Fail { expected, actual } = run_vector(v) {
            failures.push(format!(
                "{}: input {:?}\n  expected {expected}\n  actual   {actual}",
                v.id, v.input
            ));
        }
    }
    assert!(count > 100, "expected the {mode} vectors, found {count}");
    assert!(
        failures.is_empty(),
        "{} of {count} {mode} vectors failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn all_raw_envsubst_vectors_match_flux() {
    run_mode("raw");
}

#[test]
fn all_flux_postbuild_vectors_match_flux() {
    run_mode("flux");
}

// fluxcd/pkg/envsubst v1.7.1 path/match.go: the trim operators' patterns are matched by
// Flux's own `path` matcher, where `*` and `?` match `/` (`${F##*/}` of `path/to/file` is
// `file`); vectors made by that code (scripts/gen-pattern-vectors).
#[test]
fn envsubst_glob_patterns_cross_slashes_as_flux_matches_them() {
    run_file("envsubst-patterns.jsonl", "raw");
}
