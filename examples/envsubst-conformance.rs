//! Runs a file of envsubst conformance vectors and lists the failures.
//!
//! `cargo run --release --example envsubst-conformance -- FILE [--mode raw|flux]`
//! ends with `N passed, M failed` and exits 1 when M > 0 (2 when FILE cannot be read).

use std::process::ExitCode;

use fluxsim::conformance::{parse_vectors, run_vector, VectorOutcome};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: envsubst-conformance FILE [--mode raw|flux]");
        return ExitCode::from(2);
    };
    let mode = args
        .iter()
        .position(|a| a == "--mode")
        .and_then(|i| args.get(i + 1));
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let vectors = match parse_vectors(&text) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    for v in vectors.iter().filter(|v| mode.is_none_or(|m| *m == v.mode)) {
        match run_vector(v) {
            VectorOutcome::Pass => passed += 1,
            VectorOutcome::Fail { expected, actual } => {
                failed += 1;
                println!("FAIL {} (mode {}, strict {})", v.id, v.mode, v.strict);
                println!("  input:    {:?}", v.input);
                println!("  vars:     {:?}", v.vars);
                println!("  expected: {expected}");
                println!("  actual:   {actual}");
            }
        }
    }
    println!("{passed} passed, {failed} failed");
    if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
