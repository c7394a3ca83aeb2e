//! `fluxsim envsubst` end to end: stdin to stdout, exit codes, error messages.

use std::io::Write;
use std::process::{Command, Stdio};

struct Run {
    status: i32,
    stdout: String,
    stderr: String,
}

fn envsubst(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluxsim"))
        .arg("envsubst")
        .args(args)
        .env("FLUXSIM_TEST_VAR", "from-env")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    // A usage error exits before reading stdin; the closed pipe is then expected.
    match child.stdin.take().expect("stdin").write_all(stdin) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("writing stdin: {e}"),
        _ => {}
    }
    let out = child.wait_with_output().expect("finishes");
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn substitutes_vars_and_leaves_shell_syntax_alone() {
    let r = envsubst(&["--var", "A=x"], b"a=${A} $A $(date) $${HOME}\n");
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (0, "a=x $A $(date) ${HOME}\n")
    );
}

#[test]
fn environment_is_used_only_with_env_flag() {
    let r = envsubst(&[], b"[${FLUXSIM_TEST_VAR}]");
    assert_eq!(r.stdout, "[]");
    let r = envsubst(&["--env"], b"[${FLUXSIM_TEST_VAR}]");
    assert_eq!(r.stdout, "[from-env]");
}

#[test]
fn var_flag_wins_over_vars_file_which_wins_over_env() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("vars.env");
    std::fs::write(&f, "# comment\nFLUXSIM_TEST_VAR=from-file\nB=file-b\n").unwrap();
    let f = f.to_str().unwrap();
    let r = envsubst(
        &["--env", "--vars", f, "--var", "B=flag-b"],
        b"${FLUXSIM_TEST_VAR} ${B}",
    );
    assert_eq!(r.stdout, "from-file flag-b");
}

#[test]
fn configmap_and_secret_files_give_vars_as_substitute_from_does() {
    let dir = tempfile::tempdir().unwrap();
    let cm = dir.path().join("cm.yaml");
    std::fs::write(
        &cm,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-vars\ndata:\n  DOMAIN: example.com\nbinaryData:\n  BIN: eA==\n",
    )
    .unwrap();
    let secret = dir.path().join("secret.yaml");
    // `data` is base64 ("s3cr3t\n": the newline is removed, as Flux's LoadVariables does).
    std::fs::write(
        &secret,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  TOKEN: czNjcjN0Cg==\nstringData:\n  USER: admin\n",
    )
    .unwrap();
    let r = envsubst(
        &[
            "--strict",
            "--vars",
            cm.to_str().unwrap(),
            "--vars",
            secret.to_str().unwrap(),
        ],
        b"${DOMAIN} ${TOKEN} ${USER} ${BIN:-no-binary-data}",
    );
    assert_eq!(
        (r.status, r.stdout.as_str()),
        (0, "example.com s3cr3t admin no-binary-data")
    );
}

#[test]
fn strict_mode_exits_1_and_names_line_column_and_var() {
    let r = envsubst(&["--strict"], b"a: 1\nb: ${MISSING}\n");
    assert_eq!(r.status, 1);
    assert!(r.stdout.is_empty());
    assert!(
        r.stderr
            .contains("<stdin>:2:4: ${MISSING}: variable not set (strict mode): \"MISSING\""),
        "{}",
        r.stderr
    );
}

#[test]
fn indexed_expansion_exits_1_with_an_actionable_message() {
    let r = envsubst(
        &[],
        b"#!/bin/sh\nfalse | tee x\nif [ ${PIPESTATUS[0]} -ne 0 ]; then exit 1; fi\n",
    );
    assert_eq!(r.status, 1);
    assert!(
        r.stderr.contains("<stdin>:3:6: ${PIPESTATUS[0]}: missing closing brace (indexed expansions are not supported; write $${PIPESTATUS[0]}"),
        "{}",
        r.stderr
    );
}

#[test]
fn invalid_utf8_input_is_a_usage_error() {
    let r = envsubst(&[], b"ok\n\xff\n");
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("not valid UTF-8"), "{}", r.stderr);
}

#[test]
fn missing_vars_file_is_a_usage_error_naming_the_file() {
    let r = envsubst(&["--vars", "/nonexistent/vars.env"], b"x");
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("/nonexistent/vars.env"), "{}", r.stderr);
}

#[test]
fn invalid_var_name_is_a_usage_error() {
    let r = envsubst(&["--var", "my-var=1"], b"x");
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("my-var"), "{}", r.stderr);
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("v.env");
    std::fs::write(&f, "OK=1\n9LIVES=x\n").unwrap();
    let r = envsubst(&["--vars", f.to_str().unwrap()], b"x");
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("v.env:2"), "{}", r.stderr);
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let r = envsubst(&["--no-such-flag"], b"x");
    assert_eq!(r.status, 2);
}
