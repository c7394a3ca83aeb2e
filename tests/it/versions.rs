//! The one list of pinned versions (`versions.env`) and what must agree with it: the Rust
//! code's `REPRODUCED_*` constants, the table of docs/fidelity.md, the scripts that install the tools,
//! the oracle's `go.mod`. (`scripts/pin-check` checks the list itself against the Flux
//! release, through the Go module proxy.)

use std::collections::BTreeMap;

use crate::common::crate_path;

/// `versions.env`: `NAME=value` lines, in file order.
fn pins() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(crate_path("versions.env")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, value) = l
                .split_once('=')
                .unwrap_or_else(|| panic!("not NAME=value: {l}"));
            assert!(
                !value.is_empty() && !value.contains([' ', '"', '\'']),
                "versions.env: {l}"
            );
            (name.to_string(), value.to_string())
        })
        .collect()
}

fn pin(name: &str) -> String {
    pins()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("versions.env has no {name}"))
        .1
}

#[test]
fn reproduced_kustomize_and_helm_are_the_pinned_ones() {
    assert_eq!(fluxsim::kustomize::REPRODUCED_KUSTOMIZE, pin("KUSTOMIZE"));
    assert_eq!(fluxsim::helm::template::REPRODUCED_HELM, pin("HELM"));
}

#[test]
fn fidelity_doc_table_lists_every_pin_at_its_version() {
    let readme = std::fs::read_to_string(crate_path("docs/fidelity.md")).unwrap();
    let start = readme
        .find("<!-- versions.env")
        .expect("docs/fidelity.md has the versions table");
    let end = readme[start..].find("<!-- /versions.env -->").unwrap() + start;
    let table: BTreeMap<String, String> = readme[start..end]
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            match cells.as_slice() {
                ["", name, version, ..] if name.starts_with('`') => {
                    Some((name.trim_matches('`').to_string(), version.to_string()))
                }
                _ => None,
            }
        })
        .collect();
    let pins: BTreeMap<String, String> = pins().into_iter().collect();
    assert_eq!(
        table, pins,
        "the versions table of docs/fidelity.md and versions.env differ"
    );
}

#[test]
fn install_tools_and_dockerfile_read_the_pins() {
    for file in ["scripts/install-tools", "Dockerfile"] {
        let text = std::fs::read_to_string(crate_path(file)).unwrap();
        assert!(
            text.contains("versions.env"),
            "{file} does not read versions.env"
        );
        for (name, value) in pins() {
            assert!(
                !text.contains(&value),
                "{file} writes {value} ({name}) itself instead of reading versions.env"
            );
        }
    }
}

// The oracle must build with what the controllers build with: the direct requirements of
// oracle/go.mod are the pinned Flux and kustomize modules (scripts/pin-check compares the whole
// file with kustomize-controller's go.mod).
#[test]
fn oracle_go_mod_requires_the_pinned_modules() {
    let go_mod = std::fs::read_to_string(crate_path("oracle/go.mod")).unwrap();
    for (module, name) in [
        ("github.com/fluxcd/pkg/kustomize", "FLUXCD_PKG_KUSTOMIZE"),
        ("github.com/fluxcd/pkg/envsubst", "FLUXCD_PKG_ENVSUBST"),
        ("github.com/fluxcd/pkg/ssa", "FLUXCD_PKG_SSA"),
        (
            "github.com/fluxcd/pkg/sourceignore",
            "FLUXCD_PKG_SOURCEIGNORE",
        ),
        ("sigs.k8s.io/kustomize/api", "KUSTOMIZE_API"),
    ] {
        let wanted = format!("{module} {}", pin(name));
        assert!(
            go_mod.lines().any(|l| l.trim().starts_with(&wanted)),
            "oracle/go.mod does not require {wanted} ({name})"
        );
    }
}
