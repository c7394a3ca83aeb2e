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

/// The modules `code` (the file of module `module`) names: `crate::` paths as they are,
/// `super::` (any number of them) and `self::` paths resolved against `module`, each cut to
/// the longest prefix that is one of `files` (a module with its own file; the crate root
/// when none is). A `super::` that climbs above the crate root is left out.
fn imports(module: &[String], code: &str, files: &BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    let mut full: Vec<Vec<String>> = named(code, "crate::");
    for target in named(code, "super::") {
        let ups = 1 + target.iter().take_while(|p| *p == "super").count();
        if ups > module.len() {
            continue;
        }
        let mut path = module[..module.len() - ups].to_vec();
        path.extend(target.into_iter().skip(ups - 1));
        full.push(path);
    }
    for target in named(code, "self::") {
        let mut path = module.to_vec();
        path.extend(target);
        full.push(path);
    }
    full.into_iter()
        .map(|p| {
            (0..=p.len())
                .rev()
                .map(|n| p[..n].to_vec())
                .find(|prefix| files.contains(prefix))
                .unwrap_or_default()
        })
        .collect()
}

/// The import graph of the files under `dir`: file module -> the file modules it names.
/// A module and its own submodules are not an edge either way (`mod.rs` declares and may
/// re-export its children; a child reads its parent's items through `super::`).
fn file_graph(dir: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules = modules(dir);
    let files: BTreeSet<Vec<String>> = modules.iter().map(|(m, _)| m.clone()).collect();
    let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, code) in &modules {
        for to in imports(module, code, &files) {
            let related = to.starts_with(module) || module.starts_with(&to);
            if !related {
                g.entry(module.clone()).or_default().insert(to);
            }
        }
    }
    g
}

/// The module-level import graph of crate `name` (its files under `dir`) at `depth` (1: its
/// top modules, 2: theirs too), `super::` and `self::` imports resolved as `crate::` ones, the
/// edges inside its known circles left out.
fn graph(name: &str, dir: &Path, depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let key = |p: &[String]| p[..p.len().min(depth)].join("::");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, targets) in file_graph_but_known(name, dir) {
        let from = key(&from);
        for target in targets {
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

/// The strongly connected components of `g` with more than one node (each a set of files
/// that import each other round), as `a::b` names, sorted.
fn circles(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<BTreeSet<String>> {
    // Reachability by a walk from every node: the graphs are a few hundred files, so the
    // quadratic walk is simpler to read than Tarjan's algorithm and fast enough.
    let reach = |from: &Vec<String>| -> BTreeSet<Vec<String>> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&Vec<String>> = g.get(from).into_iter().flatten().collect();
        while let Some(n) = stack.pop() {
            if seen.insert(n.clone()) {
                stack.extend(g.get(n).into_iter().flatten());
            }
        }
        seen
    };
    let reached: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        g.keys().map(|n| (n, reach(n))).collect();
    let mut out: BTreeSet<BTreeSet<String>> = BTreeSet::new();
    for (n, r) in &reached {
        if !r.contains(*n) {
            continue;
        }
        let component: BTreeSet<String> = r
            .iter()
            .filter(|m| reached.get(m).is_some_and(|back| back.contains(*n)))
            .map(|m| m.join("::"))
            .collect();
        out.insert(component);
    }
    out.into_iter().collect()
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
            let g = graph(name, &dir, depth);
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
    // The tool box: a consumer runs the Kyverno CLI in it, as the pipeline runs its tools.
    "sandbox",
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

/// The import circles between files that are known and owned by other work, each the crate,
/// its files (module paths, sorted) and the issue that breaks it. Remove an entry when its
/// circle is gone: the test fails on an entry it no longer finds, so the list says what is
/// true today, never more.
const KNOWN_CIRCLES: &[(&str, &str, &str)] = &[];

/// The file import graph of crate `name` with the edges inside its known circles left out.
fn file_graph_but_known(name: &str, dir: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut g = file_graph(dir);
    for (_, files, _) in KNOWN_CIRCLES.iter().filter(|(c, _, _)| *c == name) {
        let inside: BTreeSet<Vec<String>> = files
            .split(' ')
            .map(|f| f.split("::").map(str::to_string).collect())
            .collect();
        for (from, to) in &mut g {
            if inside.contains(from) {
                to.retain(|t| !inside.contains(t));
            }
        }
    }
    g
}

#[test]
fn no_file_imports_one_that_imports_it_back() {
    let mut found = BTreeSet::new();
    for (name, dir) in crates() {
        for c in circles(&file_graph(&dir)) {
            found.insert((name, c.into_iter().collect::<Vec<_>>().join(" ")));
        }
    }
    let known: BTreeSet<(&str, String)> = KNOWN_CIRCLES
        .iter()
        .map(|(c, files, _)| (*c, (*files).to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    assert!(
        new.is_empty(),
        "import circles between files (crate, files; move what they share down to a module \
         both use): {new:?}"
    );
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(
        gone.is_empty(),
        "known circles no longer found (remove them from KNOWN_CIRCLES): {gone:?}"
    );
}

/// Writes `files` (path under the crate's source folder, text) to a fresh folder.
fn planted(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = root().join("target/tmp/layers").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

#[test]
fn a_super_import_cycle_between_files_is_found() {
    let dir = planted(
        "super-cycle",
        &[
            ("lib.rs", "mod a;\n"),
            ("a/mod.rs", "mod b;\nmod c;\npub use b::B;\n"),
            ("a/b.rs", "use super::c::C;\npub struct B(C);\n"),
            (
                "a/c.rs",
                "pub struct C;\nfn f() -> super::b::B { todo!() }\n",
            ),
        ],
    );
    let circles = circles(&file_graph(&dir));
    let want: Vec<BTreeSet<String>> = vec![["a::b", "a::c"].map(str::to_string).into()];
    assert_eq!(circles, want);
    // mod.rs naming its children, and they their parent, is no cycle.
    assert!(!file_graph(&dir).contains_key(&vec!["a".to_string()]));
}

#[test]
fn self_and_nested_super_imports_are_resolved() {
    let dir = planted(
        "self-super",
        &[
            ("lib.rs", "mod x;\nmod y;\n"),
            ("x/mod.rs", "mod deep;\nuse self::deep::D;\n"),
            (
                "x/deep.rs",
                "use super::super::y::{Y, self};\npub struct D;\n",
            ),
            ("y.rs", "pub struct Y;\nuse crate::x::deep::D;\n"),
        ],
    );
    let g = file_graph(&dir);
    let path = |s: &str| s.split("::").map(str::to_string).collect::<Vec<_>>();
    assert_eq!(g[&path("x::deep")], BTreeSet::from([path("y")]));
    assert_eq!(g[&path("y")], BTreeSet::from([path("x::deep")]));
    let circles = circles(&g);
    assert_eq!(circles.len(), 1, "{circles:?}");
}
