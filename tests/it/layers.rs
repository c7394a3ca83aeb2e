//! The architecture as the compiler and this test keep it (ARCHITECTURE.md): the crates
//! depend on each other as the document draws them (so no crate can reach one above it), no
//! module of a crate imports one that imports it back, the consumers name no stage of the
//! pipeline (only the render model and what it is made of), and the pipeline never prints.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The source folder of every crate of the workspace, by package name.
fn crates() -> BTreeMap<&'static str, PathBuf> {
    let root = root();
    BTreeMap::from([
        ("fluxsim", root.join("src")),
        ("fluxsim-consumers", root.join("crates/consumers/src")),
        ("fluxsim-review", root.join("crates/review/src")),
        ("fluxsim-kubeschema", root.join("crates/kubeschema/src")),
        ("fluxsim-core", root.join("crates/core/src")),
        ("fluxsim-kustomize", root.join("crates/kustomize/src")),
        ("fluxsim-goyaml", root.join("crates/goyaml/src")),
        ("fluxsim-envsubst", root.join("crates/envsubst/src")),
    ])
}

/// Every `.rs` file under `dir` but test files, as (module path, code without comments and
/// test code).
fn modules(dir: &Path) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let rust = p.extension().is_some_and(|e| e == "rs");
            if !rust || name == "tests.rs" || name == "testutil.rs" {
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().with_extension("");
            let mut path: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                path.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                path.pop();
            }
            out.push((path, code_of(&std::fs::read_to_string(&p).unwrap())));
        }
    }
    out.sort();
    out
}

/// `text` without its comments and its test code (a `#[cfg(test)]` module runs to the end
/// of its file; a `#[cfg(test)]` import or module declaration is one statement).
fn code_of(text: &str) -> String {
    let mut code: String = text
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
    while let Some(i) = code
        .find("#[cfg(test)]")
        .or_else(|| code.find("#[cfg(all(test"))
    {
        let attribute_end = i + code[i..].find("]\n").map_or(0, |j| j + 1);
        let rest = code[attribute_end..].trim_start();
        let end = if rest.starts_with("mod tests {") {
            code.len()
        } else {
            code[i..].find(';').map_or(code.len(), |j| i + j + 1)
        };
        code.replace_range(i..end, "");
    }
    code
}

/// The paths `code` names under `prefix` (`crate::` or `fluxsim_core::`), braces expanded
/// one level (`crate::{a, b::c}` names `a` and `b::c`).
fn named(code: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let path = |s: &str| -> Vec<String> {
        s.trim()
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap_or("")
            .split("::")
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    let mut at = 0;
    while let Some(i) = code[at..].find(prefix) {
        let start = at + i;
        at = start + prefix.len();
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at..];
        if let Some(inner) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for c in inner.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    out.push(path(&item));
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
        } else {
            out.push(path(rest));
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The module-level import graph of a crate at `depth` (1: its top modules, 2: theirs too).
fn graph(dir: &Path, depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let key = |p: &[String]| p[..p.len().min(depth)].join("::");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, code) in modules(dir) {
        if module.is_empty() {
            continue;
        }
        let from = key(&module);
        for target in named(&code, "crate::") {
            let to = key(&target);
            let related = from == to
                || from.starts_with(&format!("{to}::"))
                || to.starts_with(&format!("{from}::"));
            if !related {
                g.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    g
}

/// A cycle of `g`, if it has one.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == n) {
            let mut c = path[i..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, g, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    g.keys()
        .find_map(|n| visit(n, g, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    for (name, dir) in crates() {
        for depth in [1, 2] {
            let g = graph(&dir, depth);
            assert_eq!(
                cycle(&g),
                None,
                "{name}: an import cycle between its modules (depth {depth})"
            );
        }
    }
}

/// The crate graph ARCHITECTURE.md draws: its `name -> deps` lines.
fn documented_crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    doc.lines()
        .filter_map(|l| {
            let (name, deps) = l.split_once("->")?;
            let name = name.trim();
            (name.starts_with("fluxsim") && !name.contains(' ')).then(|| {
                let deps = deps
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|d| d.starts_with("fluxsim"))
                    .map(str::to_string)
                    .collect();
                (name.to_string(), deps)
            })
        })
        .collect()
}

/// The `fluxsim-*` dependencies each crate's manifest declares.
fn declared_crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    crates()
        .into_iter()
        .map(|(name, src)| {
            let manifest =
                std::fs::read_to_string(src.parent().unwrap().join("Cargo.toml")).unwrap();
            let mut deps = BTreeSet::new();
            let mut in_deps = false;
            for line in manifest.lines() {
                let line = line.trim();
                if line.starts_with('[') {
                    in_deps = line == "[dependencies]";
                } else if in_deps && line.starts_with("fluxsim") {
                    deps.insert(line.split([' ', '=', '.']).next().unwrap().to_string());
                }
            }
            (name.to_string(), deps)
        })
        .collect()
}

#[test]
fn the_crates_depend_on_each_other_as_architecture_md_draws_them() {
    assert_eq!(documented_crate_graph(), declared_crate_graph());
}

/// What the consumers may read of fluxsim-core: the render model and what it is made of,
/// the repository's files as Flux sees them, wording and scratch space; never a stage of
/// the pipeline (`discover`, `reconcile`, `kustomization_generator`, `kustomize`, `cache`, `postbuild`,
/// `render`, ...).
const CONSUMERS_READ: &[&str] = &[
    "artifact",
    "bootstrap",
    "config",
    "envsubst",
    "flux",
    "goyaml",
    "helm",
    "locate",
    "manifest",
    "message_error",
    "model",
    "scratch",
    "source",
    "text",
    "versions",
];

#[test]
fn consumers_read_the_model_not_the_pipeline() {
    let dir = &crates()["fluxsim-consumers"];
    let mut read = BTreeSet::new();
    for (module, code) in modules(dir) {
        for path in named(&code, "fluxsim_core::") {
            read.insert((path[0].clone(), module.join("::")));
        }
    }
    let stages: Vec<_> = read
        .iter()
        .filter(|(m, _)| !CONSUMERS_READ.contains(&m.as_str()))
        .collect();
    assert!(
        stages.is_empty(),
        "consumers name stages of the pipeline (module, where): {stages:?}"
    );
}

#[test]
fn the_pipeline_never_prints() {
    for (name, dir) in crates() {
        if name == "fluxsim" {
            continue;
        }
        for (module, code) in modules(&dir) {
            for what in [
                "print!(",
                "println!(",
                "eprint!(",
                "eprintln!(",
                "dbg!(",
                "io::stdout()",
                "io::stderr()",
            ] {
                let called = code.match_indices(what).any(|(i, _)| {
                    !code[..i]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                assert!(
                    !called,
                    "{name}::{}: `{what}`: only the binary prints",
                    module.join("::")
                );
            }
        }
    }
}
