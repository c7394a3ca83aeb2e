//! Help as a new user reads it: `-h` short, with the command's own options first and two
//! examples; `--help` long, naming the reference page; the flags named as flux and kubectl
//! name them (`-o`/`--output`, `--path`); `build --cluster a,b` as its help says.

use std::fs;

use crate::common::{crate_path, fluxsim, repo_from};

/// Every subcommand, from the clap definition: one added is checked without a list to edit.
fn commands() -> Vec<String> {
    crate::common::subcommands()
        .iter()
        .map(|c| c.get_name().to_string())
        .collect()
}

#[test]
fn short_help_is_short_with_two_examples_and_the_commands_own_options_first() {
    for c in commands() {
        let c = c.as_str();
        let short = fluxsim(&[c, "-h"]);
        assert_eq!(short.code, 0, "{c}: {}", short.stderr);
        let text = &short.stdout;
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.len() <= 50,
            "`{c} -h` is {} lines:\n{text}",
            lines.len()
        );
        for l in &lines {
            assert!(l.chars().count() <= 80, "`{c} -h` is wider than 80: {l}");
        }
        let examples = &text[text
            .find("\nExamples:\n")
            .unwrap_or_else(|| panic!("`{c} -h` has no examples:\n{text}"))..];
        let runs = examples
            .lines()
            .filter(|l| l.trim_start().starts_with("fluxsim ") || l.contains("| fluxsim "))
            .count();
        assert!(runs >= 2, "`{c} -h`: two examples:\n{examples}");
        // The repository options (shared by every command) come after the command's own.
        if let Some(shared) = text.find("\nRepository options:\n") {
            let own = text.find("\nOptions:\n").expect("an Options section");
            assert!(own < shared, "`{c} -h`: its own options first:\n{text}");
            assert!(
                !text[own..shared].contains("--cluster "),
                "`{c} -h`: --cluster is a repository option:\n{text}"
            );
            // The rare ones only in the long help.
            assert!(!text.contains("--cache-dir"), "`{c} -h`:\n{text}");
        }
        let long = fluxsim(&[c, "--help"]);
        assert_eq!(long.code, 0);
        assert!(
            long.stdout.len() > text.len(),
            "{c}: --help is the long one"
        );
        if c != "completions" {
            let page = format!("docs/commands/{c}.md");
            assert!(
                long.stdout.contains(&format!("Reference: {page}")),
                "`{c} --help` names its page:\n{}",
                long.stdout
            );
            assert!(crate_path(&page).is_file(), "{page}");
        }
    }
}

#[test]
fn o_and_output_are_format_as_kubectl_and_flux_spell_it() {
    let fleet = crate_path("testdata/fleet");
    let dir = fleet.to_str().unwrap();
    let format = fluxsim(&["render", dir, "--format", "json"]);
    assert_eq!(format.code, 0, "{}", format.stderr);
    for alias in [
        &["-o", "json"][..],
        &["--output", "json"],
        &["--output=json"],
    ] {
        let mut args = vec!["render", dir];
        args.extend_from_slice(alias);
        let out = fluxsim(&args);
        assert_eq!(out.code, 0, "{alias:?}: {}", out.stderr);
        assert_eq!(out.stdout, format.stdout, "{alias:?}");
    }
}

/// `fluxsim build kustomization NAME` and `build ks NAME`, as `flux build` takes them, print
/// what `build -k NAME` prints; with `-k` given, or a flag after `ks`, the words keep their
/// clap meaning (a folder named `ks` is a repository).
#[test]
fn build_takes_the_kustomization_as_flux_build_does() {
    let repo = repo_from("testdata/fleet");
    let dir = repo.path().to_str().unwrap();
    let k = fluxsim(&[
        "build",
        "-k",
        "apps-wave-0",
        "--cluster",
        "dev",
        "--path",
        dir,
    ]);
    assert_eq!(k.code, 0, "{}", k.stderr);
    assert!(k.stdout.contains("kind: "), "{}", k.stdout);
    for word in ["kustomization", "ks"] {
        let out = fluxsim(&[
            "build",
            word,
            "apps-wave-0",
            "--cluster",
            "dev",
            "--path",
            dir,
        ]);
        assert_eq!(out.code, 0, "{word}: {}", out.stderr);
        assert_eq!(out.stdout, k.stdout, "{word}");
    }
    // `-k` given too: `ks` is the repository argument, which does not exist.
    let both = fluxsim(&["build", "ks", "-k", "apps-wave-0", "--cluster", "dev"]);
    assert_eq!(both.code, 2, "{}{}", both.stdout, both.stderr);
}

#[test]
fn build_takes_several_clusters_comma_separated_as_its_help_says() {
    let repo = repo_from("testdata/fleet");
    let dir = repo.path().to_str().unwrap();
    let help = fluxsim(&["build", "--help"]);
    assert!(help.stdout.contains("comma-separated"), "{}", help.stdout);
    let one = |c: &str| {
        let out = fluxsim(&["build", dir, "-k", "apps-wave-0", "--cluster", c]);
        assert_eq!(out.code, 0, "{c}: {}", out.stderr);
        out.stdout
    };
    let (dev, prod) = (one("dev"), one("prod"));
    let both = fluxsim(&["build", dir, "-k", "apps-wave-0", "--cluster", "prod,dev"]);
    assert_eq!(both.code, 0, "{}", both.stderr);
    // In the order asked for, each after a comment naming its cluster.
    assert_eq!(
        both.stdout,
        format!(
            "# fluxsim build: flux-system/apps-wave-0 in cluster prod\n{prod}---\n\
             # fluxsim build: flux-system/apps-wave-0 in cluster dev\n{dev}"
        )
    );
    let _ = fs::metadata(repo.path());
}
