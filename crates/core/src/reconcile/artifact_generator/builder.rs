//! One artifact assembled as source-watcher's builder does it (`internal/builder/builder.go`
//! `Build`): the copy operations in order over the sources' trees, then the archive's ignore
//! rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use crate::reconcile::trees::{PathMap, SourceTree};
use crate::source::glob::{doublestar_match, fs_glob, join, Listing};

use super::{CopyError, CopyOp, Generator, Output, Unknown};

/// The artifact being assembled: each file from (source tree, path in it), each folder.
#[derive(Default)]
struct Staging {
    files: BTreeMap<String, (Arc<SourceTree>, String)>,
    dirs: BTreeSet<String>,
    /// Folders copied from a folder of a source, with the repository path of that folder.
    dir_origin: BTreeMap<String, Option<String>>,
}

impl Staging {
    /// `createDirRecursive`: the folder and its parents.
    fn mkdir(&mut self, dir: &str) -> Result<(), CopyError> {
        if dir == "." || dir.is_empty() {
            return Ok(());
        }
        let mut at = String::new();
        for part in dir.split('/') {
            at = join(&at, part);
            if self.files.contains_key(&at) {
                return Err(format!("cannot create folder '{at}': a file is there").into());
            }
            self.dirs.insert(at.clone());
        }
        Ok(())
    }

    fn put(
        &mut self,
        op: &CopyOp,
        tree: &Arc<SourceTree>,
        src: &str,
        dest: &str,
    ) -> Result<(), Unknown> {
        if self.dirs.contains(dest) {
            return Err(Unknown::Failed(format!(
                "failed to copy file '{src}' to '{dest}': a folder is there"
            )));
        }
        // shouldMergeFile: only onto an existing file.
        if op.strategy == "Merge" && self.files.contains_key(dest) {
            return Err(Unknown::External(format!(
                "copy '{}' merges '{src}' onto '{dest}' (strategy Merge, a YAML merge), which \
                 fluxsim does not simulate",
                op.from
            )));
        }
        if let Some((parent, _)) = dest.rsplit_once('/') {
            self.mkdir(parent).map_err(|e| Unknown::Failed(e.into()))?;
        }
        self.files
            .insert(dest.to_string(), (tree.clone(), src.to_string()));
        Ok(())
    }

    /// `copyDirWithRoots`: the folder `src` of the source, recursively, as `dest`.
    fn copy_dir(
        &mut self,
        op: &CopyOp,
        tree: &Arc<SourceTree>,
        src: &str,
        dest: &str,
        exclude_base: &str,
    ) -> Result<(), Unknown> {
        self.mkdir(dest).map_err(|e| Unknown::Failed(e.into()))?;
        self.dir_origin
            .insert(dest.to_string(), tree.map.folder(src));
        let listing = tree.listing();
        let mut skipped: Vec<String> = Vec::new();
        for (path, is_dir) in listing.walk(src) {
            if skipped.iter().any(|s| path.starts_with(&format!("{s}/"))) {
                continue;
            }
            if should_exclude_path(&path, exclude_base, &op.exclude) {
                if is_dir {
                    skipped.push(path);
                }
                continue;
            }
            let rel = if src == "." {
                path.clone()
            } else {
                path[src.len() + 1..].to_string()
            };
            let target = join(dest, &rel);
            if is_dir {
                self.mkdir(&target).map_err(|e| Unknown::Failed(e.into()))?;
                self.dir_origin.insert(target, tree.map.folder(&path));
            } else {
                self.put(op, tree, &path, &target)?;
            }
        }
        Ok(())
    }

    /// `copyFileWithRoots`: a file or a folder of the source.
    fn copy_entry(
        &mut self,
        op: &CopyOp,
        tree: &Arc<SourceTree>,
        src: &str,
        dest: &str,
        exclude_base: &str,
    ) -> Result<(), Unknown> {
        if tree.listing().is_dir(src) {
            self.copy_dir(op, tree, src, dest, exclude_base)
        } else {
            self.put(op, tree, src, dest)
        }
    }
}

/// `filepath.Base`.
fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `containsGlobChars`.
fn contains_glob_chars(path: &str) -> bool {
    path.contains(['*', '?', '[', ']'])
}

/// `sourceSelectionRoot`: the literal folders before the first glob element.
fn source_selection_root(pattern: &str) -> String {
    let clean = crate::source::clean_relative(pattern).unwrap_or_default();
    let parts: Vec<&str> = clean
        .split('/')
        .take_while(|p| !contains_glob_chars(p))
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// `shouldExcludePath`.
fn should_exclude_path(file: &str, base_path: &str, patterns: &[String]) -> bool {
    if should_exclude(file, patterns) {
        return true;
    }
    let rel = if base_path == "." || base_path.is_empty() {
        return false;
    } else if let Some(r) = file.strip_prefix(&format!("{base_path}/")) {
        r
    } else {
        return false;
    };
    rel != file && should_exclude(rel, patterns)
}

/// `shouldExclude`: doublestar on the path, and on the name for patterns without `/`.
fn should_exclude(file: &str, patterns: &[String]) -> bool {
    patterns.iter().any(|p| {
        doublestar_match(p, file) == Some(true)
            || (!p.contains('/') && doublestar_match(p, base(file)) == Some(true))
    })
}

/// `calculateGlobDestination`.
fn glob_destination(pattern: &str, matched: &str, dest: &str) -> String {
    if let Some(prefix) = pattern.strip_suffix("/**") {
        if let Some(rel) = matched.strip_prefix(&format!("{prefix}/")) {
            return join(dest, rel);
        }
    }
    join(dest, matched)
}

/// `validateGlobPattern`: at most 20 alternatives in `{}` groups.
fn validate_glob_pattern(pattern: &str) -> Result<(), CopyError> {
    let (mut commas, mut depth, mut escaped) = (0, 0usize, false);
    for c in pattern.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth > 0 => commas += 1,
            _ => {}
        }
    }
    if commas > 20 {
        return Err(format!(
            "pattern has {commas} alternatives in '{{}}' groups, at most 20 are allowed"
        )
        .into());
    }
    Ok(())
}

/// `Build`: the copy operations in order, then the archive's ignore rules.
pub(super) fn build(
    g: &Generator,
    out: &Output,
    sources: &BTreeMap<String, Result<Arc<SourceTree>, Unknown>>,
) -> Result<SourceTree, Unknown> {
    let mut staging = Staging::default();
    for op in &out.copy {
        apply_copy(op, sources, &mut staging).map_err(|e| match e {
            Unknown::Failed(e) => Unknown::Failed(format!(
                "failed to apply copy operation from '{}' to '{}': {e}",
                op.from, op.to
            )),
            other @ Unknown::External(_) => other,
        })?;
    }
    // Storage.Archive(..., SourceIgnoreFilter(nil, nil)): the default patterns apply.
    let files: BTreeMap<String, (Arc<SourceTree>, String)> = staging
        .files
        .into_iter()
        .filter(|(f, _)| !crate::source::excluded_by_default(f, false))
        .collect();
    let dirs: BTreeSet<String> = staging
        .dirs
        .into_iter()
        .filter(|d| !crate::source::excluded_by_default(d, true))
        .collect();
    let mut identity = format!(
        "ExternalArtifact/{}/{} of {}/{}\n",
        g.id.namespace, out.name, g.id.namespace, g.id.name
    );
    let mut links = BTreeMap::new();
    let mut file_map = BTreeMap::new();
    for (dest, (tree, src)) in &files {
        let _ = writeln!(identity, "{dest}\0{}\0{src}", tree.identity);
        links.insert(
            PathBuf::from(dest),
            (tree.fs.clone(), tree.fs.root().join(src)),
        );
        file_map.insert(dest.clone(), tree.map.file(src));
    }
    for d in &dirs {
        let _ = writeln!(identity, "{d}/");
    }
    let dir_map = folder_map(&dirs, &file_map, &staging.dir_origin);
    let label = format!(
        "ExternalArtifact/{}/{}, made by ArtifactGenerator {}/{}",
        g.id.namespace, out.name, g.id.namespace, g.id.name
    );
    let tree = crate::source::Tree::linked(links, dirs, None)
        .map_err(|e| Unknown::Failed(e.to_string()))?;
    Ok(SourceTree::made(
        crate::digest::sha256_hex(identity.as_bytes()),
        tree,
        PathMap::Files {
            files: file_map,
            dirs: dir_map,
        },
        label,
    ))
}

/// The repository folder of each folder of the artifact: the source folder it was copied
/// from, else the one folder all its files come from.
fn folder_map(
    dirs: &BTreeSet<String>,
    files: &BTreeMap<String, Option<String>>,
    copied: &BTreeMap<String, Option<String>>,
) -> BTreeMap<String, Option<String>> {
    let mut out = BTreeMap::new();
    for d in dirs.iter().map(String::as_str).chain(std::iter::once(".")) {
        if let Some(Some(origin)) = copied.get(d) {
            out.insert(d.to_string(), Some(origin.clone()));
            continue;
        }
        let parent_of = |p: &str| p.rsplit_once('/').map_or(".", |(a, _)| a).to_string();
        let origins: BTreeSet<Option<String>> = files
            .iter()
            .filter(|(f, _)| parent_of(f) == d)
            .map(|(_, o)| o.as_deref().map(parent_of))
            .collect();
        let origin = match origins.len() {
            1 => origins.into_iter().next().flatten(),
            _ => None,
        };
        out.insert(d.to_string(), origin);
    }
    out
}

/// `parseCopySource` and `parseCopyDestinationRelative`: the source alias, the pattern in
/// it, and the destination folder in the artifact.
fn parse_copy(op: &CopyOp) -> Result<(&str, &str, String), Unknown> {
    let failed = |m: String| Unknown::Failed(m);
    // parseCopySource
    let rest = op.from.strip_prefix('@').ok_or_else(|| {
        failed(format!(
            "invalid copy source '{}': source must start with '@'",
            op.from
        ))
    })?;
    let (alias, pattern) = rest.split_once('/').ok_or_else(|| {
        failed(format!(
            "invalid copy source '{}': source format must be '@alias/pattern'",
            op.from
        ))
    })?;
    validate_glob_pattern(pattern)
        .map_err(|e| failed(format!("invalid copy source '{}': {e}", op.from)))?;
    // parseCopyDestinationRelative
    let dest = op.to.strip_prefix("@artifact/").ok_or_else(|| {
        failed(format!(
            "invalid copy destination '{}': destination must start with '@artifact/'",
            op.to
        ))
    })?;
    let dest = if dest.is_empty() {
        ".".to_string()
    } else if dest.starts_with('/') || dest.split('/').any(|p| p == "..") {
        return Err(failed(format!(
            "invalid copy destination '{}': destination path must stay within the artifact root",
            op.to
        )));
    } else {
        crate::source::clean_relative(dest)
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| ".".into())
    };
    Ok((alias, pattern, dest))
}

/// `applyCopyOperation`.
fn apply_copy(
    op: &CopyOp,
    sources: &BTreeMap<String, Result<Arc<SourceTree>, Unknown>>,
    staging: &mut Staging,
) -> Result<(), Unknown> {
    let failed = |m: String| Unknown::Failed(m);
    let (alias, pattern, dest) = parse_copy(op)?;
    let tree = match sources.get(alias) {
        None => return Err(failed(format!("source alias '{alias}' not found"))),
        Some(Err(e)) => return Err(e.clone()),
        Some(Ok(t)) => t.clone(),
    };
    for p in &op.exclude {
        if validate_glob_pattern(p).is_err() || doublestar_match(p, ".").is_none() {
            return Err(failed(format!("invalid exclude pattern '{p}'")));
        }
    }
    match op.strategy.as_str() {
        "" | "Overwrite" | "Merge" => {}
        "Extract" => {
            return Err(Unknown::External(format!(
                "copy '{}' extracts tarballs (strategy Extract), which fluxsim does not simulate",
                op.from
            )))
        }
        other => return Err(failed(format!("unknown copy strategy '{other}'"))),
    }
    let listing: &Listing = tree.listing();
    if !contains_glob_chars(pattern) {
        // applySingleSourceCopy: os.Root refuses a path leaving the source.
        let src = match crate::source::clean_relative(pattern) {
            Some(s) if !pattern.starts_with('/') => {
                if s.is_empty() {
                    ".".to_string()
                } else {
                    s
                }
            }
            _ => {
                return Err(failed(format!(
                    "failed to stat source '{pattern}': path escapes from parent"
                )))
            }
        };
        if listing.is_dir(&src) {
            return staging.copy_entry(op, &tree, &src, &join(&dest, base(&src)), &src);
        }
        if !listing.is_file(&src) {
            if op.optional {
                return Ok(());
            }
            return Err(failed(format!("source '{src}' does not exist")));
        }
        if should_exclude_path(&src, ".", &op.exclude) {
            return Ok(());
        }
        let target = if op.to.ends_with('/') || staging.dirs.contains(&dest) {
            join(&dest, base(&src))
        } else {
            dest
        };
        return staging.put(op, &tree, &src, &target);
    }
    let matches = fs_glob(listing, pattern).map_err(|_| {
        failed(format!(
            "invalid glob pattern '{pattern}': syntax error in pattern"
        ))
    })?;
    if matches.is_empty() {
        if op.optional {
            return Ok(());
        }
        return Err(failed(format!(
            "no files match pattern '{pattern}' in source '{alias}'"
        )));
    }
    let exclude_base = source_selection_root(pattern);
    let kept: Vec<String> = matches
        .into_iter()
        .filter(|m| m != "." && m != "..")
        .filter(|m| !should_exclude_path(m, &exclude_base, &op.exclude))
        .collect();
    if kept.is_empty() {
        if op.optional {
            return Ok(());
        }
        return Err(failed(format!(
            "all files matching pattern '{pattern}' in source '{alias}' were excluded"
        )));
    }
    for m in kept {
        let target = glob_destination(pattern, &m, &dest);
        staging.copy_entry(op, &tree, &m, &target, &exclude_base)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::GROUP;
    use super::*;
    use crate::flux::ObjectId;
    use crate::source::Tree;

    /// A source tree of `files` (path, content), held in a temporary folder.
    fn source(files: &[(&str, &str)]) -> (tempfile::TempDir, Arc<SourceTree>) {
        let dir = crate::testutil::tree(files);
        let fs = crate::testutil::source_fs(dir.path());
        let links = files
            .iter()
            .map(|(f, _)| (PathBuf::from(f), (fs.clone(), fs.root().join(f))))
            .collect();
        let tree = Tree::linked(links, BTreeSet::new(), None).unwrap();
        let t = SourceTree::made("src".into(), tree, PathMap::Same, "src".into());
        (dir, Arc::new(t))
    }

    fn op(from: &str, to: &str) -> CopyOp {
        CopyOp {
            from: from.into(),
            to: to.into(),
            exclude: Vec::new(),
            strategy: String::new(),
            optional: false,
        }
    }

    /// The artifact's files (path -> content) after `ops` over the alias `src`.
    fn run(files: &[(&str, &str)], ops: Vec<CopyOp>) -> Result<BTreeMap<String, String>, Unknown> {
        let (_dir, t) = source(files);
        let g = Generator {
            id: ObjectId {
                group: GROUP.into(),
                kind: "ArtifactGenerator".into(),
                namespace: "flux-system".into(),
                name: "gen".into(),
            },
            sources: BTreeMap::new(),
            outputs: Vec::new(),
            disabled: false,
            invalid: None,
            text: String::new(),
        };
        let out = Output {
            name: "out".into(),
            copy: ops,
        };
        let sources = BTreeMap::from([("src".to_string(), Ok(t))]);
        let built = build(&g, &out, &sources)?;
        Ok(built
            .listing()
            .walk(".")
            .into_iter()
            .filter(|(_, d)| !d)
            .map(|(p, _)| {
                let text = built.fs.read_to_string(&built.fs.root().join(&p)).unwrap();
                (p, text)
            })
            .collect())
    }

    fn names(r: &BTreeMap<String, String>) -> Vec<&str> {
        r.keys().map(String::as_str).collect()
    }

    const TREE: &[(&str, &str)] = &[
        ("apps/base/app.yaml", "base"),
        ("apps/base/deep/db.yaml", "deep"),
        ("apps/prod/kustomization.yaml", "prod"),
        ("apps/README.md", "readme"),
        ("img/logo.png", "png"),
    ];

    // builder.go calculateGlobDestination: `dir/**` strips `dir/`; fs.Glob's `**` is one
    // element, each matched folder copied whole.
    #[test]
    fn copy_of_a_folder_glob_strips_the_prefix_and_copies_matched_folders_whole() {
        let r = run(TREE, vec![op("@src/apps/**", "@artifact/")]).unwrap();
        assert_eq!(
            names(&r),
            [
                "README.md",
                "base/app.yaml",
                "base/deep/db.yaml",
                "prod/kustomization.yaml"
            ]
        );
        let r = run(TREE, vec![op("@src/apps/base/**", "@artifact/base/")]).unwrap();
        assert_eq!(names(&r), ["base/app.yaml", "base/deep/db.yaml"]);
    }

    #[test]
    fn copy_glob_double_star_in_the_middle_matches_one_folder_only() {
        let r = run(TREE, vec![op("@src/apps/**/*.yaml", "@artifact/out/")]).unwrap();
        // Not apps/base/deep/db.yaml: `**` is one path element in fs.Glob; the match keeps
        // its full path under the destination.
        assert_eq!(
            names(&r),
            ["out/apps/base/app.yaml", "out/apps/prod/kustomization.yaml"]
        );
    }

    #[test]
    fn copy_single_file_to_a_slash_keeps_its_name_and_without_one_renames_it() {
        let r = run(TREE, vec![op("@src/apps/base/app.yaml", "@artifact/x/")]).unwrap();
        assert_eq!(names(&r), ["x/app.yaml"]);
        let r = run(
            TREE,
            vec![op("@src/apps/base/app.yaml", "@artifact/x.yaml")],
        )
        .unwrap();
        assert_eq!(names(&r), ["x.yaml"]);
        // Onto an existing folder, it goes inside.
        let r = run(
            TREE,
            vec![
                op("@src/apps/prod/**", "@artifact/x/"),
                op("@src/apps/base/app.yaml", "@artifact/x"),
            ],
        )
        .unwrap();
        assert_eq!(names(&r), ["x/app.yaml", "x/kustomization.yaml"]);
    }

    #[test]
    fn copy_of_a_named_folder_makes_it_a_subfolder_of_the_destination() {
        let r = run(TREE, vec![op("@src/apps/base", "@artifact/dest")]).unwrap();
        assert_eq!(names(&r), ["dest/base/app.yaml", "dest/base/deep/db.yaml"]);
        let r = run(TREE, vec![op("@src/", "@artifact/")]).unwrap();
        // The whole source; the archive drops images by default.
        assert_eq!(r.len(), 4, "{r:?}");
    }

    #[test]
    fn later_copies_overwrite_earlier_ones() {
        let r = run(
            TREE,
            vec![
                op("@src/apps/base/app.yaml", "@artifact/a.yaml"),
                op("@src/apps/prod/kustomization.yaml", "@artifact/a.yaml"),
            ],
        )
        .unwrap();
        assert_eq!(r["a.yaml"], "prod");
    }

    #[test]
    fn excludes_match_the_path_below_the_prefix_and_bare_names() {
        let mut o = op("@src/apps/**", "@artifact/");
        o.exclude = vec!["*.md".into(), "base/deep/**".into()];
        let r = run(TREE, vec![o]).unwrap();
        assert_eq!(names(&r), ["base/app.yaml", "prod/kustomization.yaml"]);
    }

    #[test]
    fn no_match_and_missing_files_fail_unless_optional_and_bad_destinations_are_refused() {
        let e = run(TREE, vec![op("@src/nothing/*.yaml", "@artifact/")]).unwrap_err();
        assert!(
            matches!(&e, Unknown::Failed(m) if m.contains("no files match pattern")),
            "{e:?}"
        );
        let e = run(TREE, vec![op("@src/missing.yaml", "@artifact/")]).unwrap_err();
        assert!(
            matches!(&e, Unknown::Failed(m) if m.contains("does not exist")),
            "{e:?}"
        );
        let mut o = op("@src/missing.yaml", "@artifact/");
        o.optional = true;
        assert!(run(TREE, vec![o]).unwrap().is_empty());
        let e = run(TREE, vec![op("@src/apps/**", "@artifact/../x")]).unwrap_err();
        assert!(matches!(&e, Unknown::Failed(m) if m.contains("within the artifact root")));
        let e = run(TREE, vec![op("@other/apps/**", "@artifact/")]).unwrap_err();
        assert!(matches!(&e, Unknown::Failed(m) if m.contains("alias 'other' not found")));
    }

    #[test]
    fn merge_onto_an_existing_file_and_extract_are_not_simulated() {
        let mut o = op("@src/apps/prod/kustomization.yaml", "@artifact/a.yaml");
        o.strategy = "Merge".into();
        // Onto nothing it is a plain copy.
        assert_eq!(run(TREE, vec![o.clone()]).unwrap().len(), 1);
        let e = run(
            TREE,
            vec![op("@src/apps/base/app.yaml", "@artifact/a.yaml"), o],
        )
        .unwrap_err();
        assert!(matches!(e, Unknown::External(_)));
        let mut x = op("@src/**/*.tgz", "@artifact/");
        x.strategy = "Extract".into();
        assert!(matches!(
            run(TREE, vec![x]).unwrap_err(),
            Unknown::External(_)
        ));
    }
}
