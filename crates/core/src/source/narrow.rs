//! A tree filtered again by other ignore rules: a GitRepository's own `spec.ignore` over a
//! tree read without it ([`Tree::narrowed`]), and `flux build --ignore-paths` with the
//! `.sourceignore` files of a Kustomization's folder ([`Tree::build_ignore`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::entry::{read_contents, Content, Kind};
use super::exclusion::{Excluded, Exclusion};
use super::ignore::{read_patterns, Matcher, PatternSource, IGNORE_FILE};
use super::plan::{ignored, plan};
use super::tree::{view_name, Holder, Tree};
use super::{slash_path, SourceError, SourceOptions};

impl Tree {
    /// This tree as a GitRepository whose `spec.ignore` is `spec_ignore` archives it: the
    /// same source filtered again with `spec.ignore` after the `.sourceignore` patterns
    /// (`reconcileArtifact` appends it last, so its negations re-include what a
    /// `.sourceignore` excluded, and once it holds a pattern source-controller's default
    /// patterns are dropped), as a view under a name of its own: the files this tree shows
    /// are read through it, the others from where the tree was read (nothing is copied).
    /// A tree not read from a folder or a revision (made of other trees) is only narrowed.
    pub fn narrowed(&self, spec_ignore: &str) -> Result<Tree, SourceError> {
        let Some(unfiltered) = &self.unfiltered else {
            return self.narrowed_view(spec_ignore);
        };
        let opts = SourceOptions {
            include_untracked: false,
            spec_ignore: Some(spec_ignore.to_owned()),
        };
        let plan = plan(&unfiltered.dir, unfiltered.entries.clone(), &opts)?;
        let mut shown = BTreeSet::new();
        let mut reincluded = Vec::new();
        for (path, content, _) in &plan.copies {
            if self.fs.is_file(&self.root().join(path)) {
                shown.insert(path.clone());
            } else {
                reincluded.push((path.clone(), content.clone()));
            }
        }
        // Files this tree has that its source had not (added to it by `changed`, for a
        // canary) go through the same rules.
        let known: BTreeSet<&PathBuf> = unfiltered.entries.iter().map(|e| &e.path).collect();
        let mut files: Vec<PathBuf> = plan.copies.iter().map(|(p, _, _)| p.clone()).collect();
        for f in &self.files {
            if !known.contains(f) && plan.matcher.excluded_by(f, false).is_none() {
                shown.insert(f.clone());
                files.push(f.clone());
            }
        }
        files.sort();
        let mut changes = BTreeMap::new();
        read_contents(&unfiltered.dir, &reincluded, |path, bytes| {
            changes.insert(path.clone(), bytes);
        })?;
        let mut folders: BTreeSet<String> = plan.folders.iter().map(|f| slash_path(f)).collect();
        for path in &files {
            folders.extend(
                path.ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .map(slash_path),
            );
        }
        let (name, root) = view_name()?;
        let fs = self
            .fs
            .narrowed(
                root.clone(),
                shown,
                folders.iter().map(PathBuf::from).collect(),
            )
            .changed(root, &changes);
        Ok(Tree {
            fs,
            dir: Holder::View { _name: name },
            files,
            folders,
            excluded: plan.excluded,
            revision: self.revision.clone(),
            digests: OnceLock::new(),
            unfiltered: self.unfiltered.clone(),
        })
    }

    /// [`Self::narrowed`] of a tree without its unfiltered source: the files of this tree
    /// that no pattern of `spec_ignore` excludes.
    fn narrowed_view(&self, spec_ignore: &str) -> Result<Tree, SourceError> {
        let matcher = Matcher::new(read_patterns(spec_ignore, &[], &PatternSource::SpecIgnore));
        let mut excluded = self.excluded.clone();
        let mut files = Vec::new();
        for f in &self.files {
            match matcher.excluded_by(f, false) {
                Some(pattern) => excluded.push(Excluded {
                    path: f.clone(),
                    reason: ignored(pattern),
                }),
                None => files.push(f.clone()),
            }
        }
        excluded.sort();
        // As the archive holds them: the folders the patterns keep, and every kept file's.
        let mut folders: BTreeSet<String> = self
            .folders
            .iter()
            .filter(|d| matcher.excluded_by(Path::new(d), true).is_none())
            .cloned()
            .collect();
        for f in &files {
            folders.extend(
                f.ancestors()
                    .skip(1)
                    .filter(|a| !a.as_os_str().is_empty())
                    .map(slash_path),
            );
        }
        let (name, root) = view_name()?;
        let fs = self.fs.narrowed(
            root,
            files.iter().cloned().collect(),
            folders.iter().map(PathBuf::from).collect(),
        );
        Ok(Tree {
            fs,
            dir: Holder::View { _name: name },
            files,
            folders,
            excluded,
            revision: self.revision.clone(),
            digests: OnceLock::new(),
            unfiltered: None,
        })
    }

    /// The ignore rules `flux build kustomization --ignore-paths PATTERNS` gives Flux's
    /// generator for the Kustomization whose `spec.path` is the folder `dir` of this tree
    /// (`fluxcd/pkg/kustomize` `NewGeneratorWithIgnore`, `GenerateManifest`): the
    /// `.sourceignore` files at and below `dir` (`LoadIgnorePatterns`, depth first, each scoped
    /// to its folder), then `ignore_paths` scoped to `dir`, over the VCS and default patterns
    /// (`NewDefaultMatcher`); the last matching pattern decides. With them, the files of `dir`
    /// that one of those `.sourceignore` files left out of this tree and the rules keep (a
    /// negation in `ignore_paths`), with their bytes: `flux build` reads a checkout, where they
    /// are.
    pub fn build_ignore(
        &self,
        dir: &str,
        ignore_paths: &str,
    ) -> Result<(BuildIgnore, BTreeMap<PathBuf, Vec<u8>>), SourceError> {
        let dir = Path::new(if dir == "." { "" } else { dir });
        let domain: Vec<String> = dir
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let under = |p: &Path| p.starts_with(dir);
        let is_ignore_file = |p: &Path| {
            p.file_name().is_some_and(|n| n == IGNORE_FILE)
                && !p.components().any(|c| c.as_os_str() == ".git")
                && p.parent().is_some_and(under)
        };
        // The `.sourceignore` files of `dir`, from the source before the ignore rules (they
        // may exclude themselves), else from this tree.
        let mut ignore_files: Vec<(PathBuf, Content)> = match &self.unfiltered {
            Some(u) => u
                .entries
                .iter()
                .filter_map(|e| match &e.kind {
                    Kind::File { content, .. } if is_ignore_file(&e.path) => {
                        Some((e.path.clone(), content.clone()))
                    }
                    _ => None,
                })
                .collect(),
            None => self
                .files
                .iter()
                .filter(|f| is_ignore_file(f))
                .map(|f| (f.clone(), Content::WorkTree(self.root().join(f))))
                .collect(),
        };
        ignore_files.sort_by(|(a, _), (b, _)| a.parent().cmp(&b.parent()));
        let repo = self
            .unfiltered
            .as_ref()
            .map_or_else(|| self.root().to_path_buf(), |u| u.dir.clone());
        let mut texts = vec![String::new(); ignore_files.len()];
        let listed: Vec<(usize, Content)> = ignore_files
            .iter()
            .enumerate()
            .map(|(i, (_, c))| (i, c.clone()))
            .collect();
        if self.unfiltered.is_some() {
            read_contents(&repo, &listed, |i, bytes| {
                texts[*i] = String::from_utf8_lossy(&bytes).into_owned();
            })?;
        } else {
            for (i, (path, _)) in ignore_files.iter().enumerate() {
                let bytes = self.fs.read(&self.root().join(path)).unwrap_or_default();
                texts[i] = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
        let mut patterns = Vec::new();
        for ((path, _), text) in ignore_files.iter().zip(&texts) {
            let folder: Vec<String> = path
                .parent()
                .into_iter()
                .flat_map(Path::components)
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let source = PatternSource::SourceIgnore(path.clone());
            patterns.extend(read_patterns(text, &folder, &source));
        }
        patterns.extend(read_patterns(
            ignore_paths,
            &domain,
            &PatternSource::IgnorePaths,
        ));
        let rules = BuildIgnore {
            any: !patterns.is_empty(),
            matcher: Matcher::with_defaults(&domain, patterns),
        };
        // What a `.sourceignore` of `dir` kept out of this tree and the rules keep.
        let by_own_ignore_file = |path: &Path| {
            self.excluded.iter().any(|e| {
                e.path == path
                    && matches!(&e.reason, Exclusion::Ignored {
                        source: PatternSource::SourceIgnore(f), ..
                    } if is_ignore_file(f))
            })
        };
        let mut revealed = Vec::new();
        if let Some(u) = &self.unfiltered {
            for e in &u.entries {
                if let Kind::File { content, .. } = &e.kind {
                    if under(&e.path)
                        && !self.fs.is_file(&self.root().join(&e.path))
                        && by_own_ignore_file(&e.path)
                        && rules.matcher.excluded_by(&e.path, false).is_none()
                    {
                        revealed.push((e.path.clone(), content.clone()));
                    }
                }
            }
        }
        let mut bytes = BTreeMap::new();
        read_contents(&repo, &revealed, |path, b| {
            bytes.insert(path.clone(), b);
        })?;
        Ok((rules, bytes))
    }
}

/// The ignore rules `flux build kustomization --ignore-paths` gives Flux's generator for one
/// Kustomization ([`Tree::build_ignore`]): which files its listing skips
/// (`shouldIgnoreFile`) and which entries of its kustomization it drops
/// (`filterKsWithIgnoreFiles`, `fluxcd/pkg/kustomize` `filters.go`).
#[derive(Debug, Clone)]
pub struct BuildIgnore {
    matcher: Matcher,
    /// Some pattern was given or found: `shouldIgnoreFile` skips nothing without one.
    any: bool,
}

impl BuildIgnore {
    /// Whether the generator leaves the manifest `path` (relative to the source root) out of
    /// the `resources` it lists.
    #[must_use]
    pub fn skips_manifest(&self, path: &Path) -> bool {
        self.any && self.matcher.excluded_by(path, false).is_some()
    }

    /// Whether the generator drops a `resources`, `components` or `crds` entry naming
    /// `path` (relative to the source root), a folder when `is_dir`.
    #[must_use]
    pub fn drops_entry(&self, path: &Path, is_dir: bool) -> bool {
        self.matcher.excluded_by(path, is_dir).is_some()
    }
}
