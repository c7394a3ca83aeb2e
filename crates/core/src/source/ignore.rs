//! Source-controller's ignore rules: the default pattern sets, `.sourceignore` files and
//! `spec.ignore`, matched the way go-git's gitignore package does (not the way git does).
//!
//! Flux sources: `fluxcd/pkg` `sourceignore/sourceignore.go` (pattern sets, `ReadPatterns`,
//! `LoadIgnorePatterns`), `sourceignore/gitignore/{pattern,matcher}.go` (a copy of go-git's
//! `plumbing/format/gitignore`), and `SourceIgnoreFilter` in `fluxcd/pkg`
//! `artifact/storage/archive.go` (formerly `source-controller` `internal/controller/storage.go`).
//!
//! Paths are matched relative to the root, as the current `GitRepository` reconciler does by
//! passing the checkout's absolute path as the patterns' domain. (Older reconcilers passed a
//! nil domain with absolute paths, under which anchored patterns such as `/deploy` never
//! matched; fluxsim follows the current behaviour.)

use std::fmt;
use std::path::{Path, PathBuf};

use super::go_match::go_match;

/// `sourceignore.ExcludeVCS`: always applied.
pub(crate) const EXCLUDE_VCS: &str = ".git/,.gitignore,.gitmodules,.gitattributes";
/// `sourceignore.ExcludeExt`, `ExcludeCI`, `ExcludeExtra`: dropped as soon as a user pattern exists.
pub(crate) const EXCLUDE_DEFAULT: &[&str] = &[
    "*.jpg,*.jpeg,*.gif,*.png,*.wmv,*.flv,*.tar.gz,*.zip",
    ".github/,.circleci/,.travis.yml,.gitlab-ci.yml,appveyor.yml,.drone.yml,cloudbuild.yaml,\
     codeship-services.yml,codeship-steps.yml",
    "**/.goreleaser.yml,**/.sops.yaml,**/.flux.yaml",
];
/// `sourceignore.IgnoreFile`.
pub(crate) const IGNORE_FILE: &str = ".sourceignore";

/// Where an ignore pattern came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PatternSource {
    /// source-controller's VCS patterns (`.git/`, `.gitignore`, ...), always in force.
    Vcs,
    /// source-controller's default image, archive and CI patterns, in force only when no
    /// `.sourceignore` pattern and no `spec.ignore` pattern exists.
    Default,
    /// A `.sourceignore` file, by its path relative to the tree root.
    SourceIgnore(PathBuf),
    /// `GitRepository.spec.ignore`.
    SpecIgnore,
    /// `fluxsim build --ignore-paths` (`flux build kustomization --ignore-paths`).
    IgnorePaths,
}

impl fmt::Display for PatternSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Vcs => f.write_str("source-controller's VCS patterns"),
            Self::Default => f.write_str("source-controller's default patterns"),
            Self::SourceIgnore(path) => write!(f, "`{}`", path.display()),
            Self::SpecIgnore => f.write_str("`spec.ignore`"),
            Self::IgnorePaths => f.write_str("`--ignore-paths`"),
        }
    }
}

/// One parsed gitignore line, as go-git's `ParsePattern` reads it.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    /// The line as written (for reports).
    pub(crate) text: String,
    pub(crate) source: PatternSource,
    /// Components of the folder the pattern is scoped to (its `.sourceignore`'s folder).
    domain: Vec<String>,
    parts: Vec<String>,
    inclusion: bool,
    dir_only: bool,
    is_glob: bool,
}

/// Outcome of one pattern against one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatchResult {
    NoMatch,
    Exclude,
    Include,
}

impl Pattern {
    /// go-git `ParsePattern`: `!` negates, trailing spaces go unless escaped, a trailing `/`
    /// means directories only, any other `/` makes the pattern anchored ("glob").
    pub(crate) fn parse(line: &str, domain: &[String], source: PatternSource) -> Self {
        let mut p = line;
        let inclusion = p.starts_with('!');
        if inclusion {
            p = &p[1..];
        }
        if !p.ends_with("\\ ") {
            p = p.trim_end_matches(' ');
        }
        let dir_only = p.ends_with('/');
        if dir_only {
            p = &p[..p.len() - 1];
        }
        Self {
            text: line.to_owned(),
            source,
            domain: domain.to_vec(),
            parts: p.split('/').map(str::to_owned).collect(),
            inclusion,
            dir_only,
            is_glob: p.contains('/'),
        }
    }

    fn matches(&self, path: &[&str], is_dir: bool) -> MatchResult {
        if path.len() <= self.domain.len() {
            return MatchResult::NoMatch;
        }
        if self.domain.iter().zip(path).any(|(d, p)| d != p) {
            return MatchResult::NoMatch;
        }
        let path = &path[self.domain.len()..];
        let hit = if self.is_glob {
            self.glob_match(path, is_dir)
        } else {
            self.simple_name_match(path, is_dir)
        };
        match (hit, self.inclusion) {
            (false, _) => MatchResult::NoMatch,
            (true, true) => MatchResult::Include,
            (true, false) => MatchResult::Exclude,
        }
    }

    /// A pattern without `/` matches any component, not only the last one: `foo` excludes
    /// `a/foo/b.yaml` (go-git `simpleNameMatch`).
    fn simple_name_match(&self, path: &[&str], is_dir: bool) -> bool {
        for (i, name) in path.iter().enumerate() {
            match go_match(&self.parts[0], name) {
                None => return false,
                Some(false) => {}
                Some(true) => return !(self.dir_only && !is_dir && i == path.len() - 1),
            }
        }
        false
    }

    /// An anchored pattern matches a prefix of the path's components, so it also matches
    /// everything below a matched folder (go-git `globMatch`, quirks included: a trailing
    /// `**` also matches the folder's own name, even as a file).
    fn glob_match(&self, path: &[&str], is_dir: bool) -> bool {
        let mut path = path;
        let mut matched = false;
        let mut can_traverse = false;
        for (i, pattern) in self.parts.iter().enumerate() {
            if pattern.is_empty() {
                can_traverse = false;
                continue;
            }
            if pattern == "**" {
                if i == self.parts.len() - 1 {
                    break;
                }
                can_traverse = true;
                continue;
            }
            if pattern.contains("**") {
                return false;
            }
            if path.is_empty() {
                return false;
            }
            if can_traverse {
                can_traverse = false;
                while let Some((first, rest)) = path.split_first() {
                    path = rest;
                    match go_match(pattern, first) {
                        None => return false,
                        Some(true) => {
                            matched = true;
                            break;
                        }
                        Some(false) if path.is_empty() => matched = false,
                        Some(false) => {}
                    }
                }
            } else {
                match go_match(pattern, path[0]) {
                    Some(true) => {}
                    None | Some(false) => return false,
                }
                matched = true;
                path = &path[1..];
            }
        }
        if matched && self.dir_only && !is_dir && path.is_empty() {
            matched = false;
        }
        matched
    }
}

/// `sourceignore.ReadPatterns`: one pattern per line; lines starting with `#` and blank
/// lines are skipped; nothing else is trimmed but the line ending (Go's `bufio.ScanLines`
/// drops a `\r` before `\n`).
pub(crate) fn read_patterns(text: &str, domain: &[String], source: &PatternSource) -> Vec<Pattern> {
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| Pattern::parse(line, domain, source.clone()))
        .collect()
}

fn split_patterns(list: &str, source: &PatternSource) -> Vec<Pattern> {
    split_patterns_in(list, &[], source)
}

fn split_patterns_in(list: &str, domain: &[String], source: &PatternSource) -> Vec<Pattern> {
    list.split(',')
        .map(|p| Pattern::parse(p, domain, source.clone()))
        .collect()
}

/// The filter source-controller archives with (`SourceIgnoreFilter`).
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    /// Lowest priority first: the last pattern that matches decides.
    patterns: Vec<Pattern>,
}

impl Matcher {
    /// `user` holds the `.sourceignore` patterns (outer folders first) then `spec.ignore`.
    /// With no user pattern at all, `NewDefaultMatcher` applies VCS + default patterns;
    /// with any, only VCS patterns stay under them (`SourceIgnoreFilter`'s `len(ps) > 0`).
    pub(crate) fn new(user: Vec<Pattern>) -> Self {
        let mut patterns = split_patterns(EXCLUDE_VCS, &PatternSource::Vcs);
        if user.is_empty() {
            for list in EXCLUDE_DEFAULT {
                patterns.extend(split_patterns(list, &PatternSource::Default));
            }
        }
        patterns.extend(user);
        Self { patterns }
    }

    /// `sourceignore.NewDefaultMatcher(ps, domain)`: the VCS and default patterns scoped to
    /// `domain`, then `user`, whether or not `user` is empty (what Flux's generator filters
    /// with when it is given ignore rules, `fluxcd/pkg/kustomize` `filters.go`).
    pub(crate) fn with_defaults(domain: &[String], user: Vec<Pattern>) -> Self {
        let mut patterns = split_patterns_in(EXCLUDE_VCS, domain, &PatternSource::Vcs);
        for list in EXCLUDE_DEFAULT {
            patterns.extend(split_patterns_in(list, domain, &PatternSource::Default));
        }
        patterns.extend(user);
        Self { patterns }
    }

    /// The pattern that excludes `path` (relative to the root), if any.
    pub(crate) fn excluded_by(&self, path: &Path, is_dir: bool) -> Option<&Pattern> {
        let owned: Vec<String> = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let parts: Vec<&str> = owned.iter().map(String::as_str).collect();
        for pattern in self.patterns.iter().rev() {
            match pattern.matches(&parts, is_dir) {
                MatchResult::NoMatch => {}
                MatchResult::Exclude => return Some(pattern),
                MatchResult::Include => return None,
            }
        }
        None
    }
}

/// go-git's `ParsePattern(line, domain).Match(path, is_dir)` as its name (`NoMatch`,
/// `Exclude`, `Include`): the `pattern` vectors of Flux's sourceignore tests
/// (`testdata/flux-suites/sourceignore.jsonl`).
pub(crate) fn pattern_result(
    line: &str,
    domain: &[String],
    path: &[&str],
    is_dir: bool,
) -> &'static str {
    match Pattern::parse(line, domain, PatternSource::SpecIgnore).matches(path, is_dir) {
        MatchResult::NoMatch => "NoMatch",
        MatchResult::Exclude => "Exclude",
        MatchResult::Include => "Include",
    }
}

/// Whether `sourceignore.NewMatcher(ps)` (or `NewDefaultMatcher(ps, domain)` when `defaults`
/// holds the domain) matches `path`: the `matcher` vectors of Flux's sourceignore tests.
pub(crate) fn matcher_match(
    patterns: &[(String, Vec<String>)],
    defaults: Option<&[String]>,
    path: &[&str],
    is_dir: bool,
) -> bool {
    let user: Vec<Pattern> = patterns
        .iter()
        .map(|(line, domain)| Pattern::parse(line, domain, PatternSource::SpecIgnore))
        .collect();
    let m = match defaults {
        Some(domain) => Matcher::with_defaults(domain, user),
        None => Matcher { patterns: user },
    };
    for pattern in m.patterns.iter().rev() {
        match pattern.matches(path, is_dir) {
            MatchResult::NoMatch => {}
            MatchResult::Exclude => return true,
            MatchResult::Include => return false,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(lines: &str) -> Matcher {
        Matcher::new(read_patterns(lines, &[], &PatternSource::SpecIgnore))
    }

    fn excluded(m: &Matcher, path: &str) -> bool {
        m.excluded_by(Path::new(path), false).is_some()
    }

    // fluxcd/pkg sourceignore/sourceignore.go: ExcludeExt, ExcludeCI, ExcludeExtra.
    #[test]
    fn default_patterns_exclude_images_archives_ci_and_sops_config() {
        let m = Matcher::new(Vec::new());
        for path in [
            "x.png",
            "deep/dir/logo.jpeg",
            "a.tar.gz",
            ".github/workflows/ci.yaml",
            "sub/.github/x.yaml",
            ".travis.yml",
            "apps/.sops.yaml",
            ".flux.yaml",
            ".goreleaser.yml",
        ] {
            assert!(excluded(&m, path), "{path} should be excluded");
        }
        for path in [
            "apps/deploy.yaml",
            "x.png.yaml",
            "kustomization.yaml",
            ".sourceignore",
        ] {
            assert!(!excluded(&m, path), "{path} should be kept");
        }
    }

    // fluxcd/pkg sourceignore/sourceignore.go: ExcludeVCS.
    #[test]
    fn vcs_patterns_exclude_git_metadata_at_any_depth() {
        let m = Matcher::new(Vec::new());
        assert!(excluded(&m, ".gitignore"));
        assert!(excluded(&m, "a/.gitattributes"));
        assert!(excluded(&m, ".git/config"));
        // `.git/` is directory-only: a `.git` file (a worktree link) is not excluded.
        assert!(!excluded(&m, "sub/.git"));
    }

    // artifact/storage/archive.go SourceIgnoreFilter: any user pattern drops the defaults.
    #[test]
    fn any_user_pattern_drops_defaults_but_keeps_vcs() {
        let m = user("nothing-matches-this\n");
        assert!(!excluded(&m, "x.png"));
        assert!(!excluded(&m, ".github/workflows/ci.yaml"));
        assert!(excluded(&m, ".gitignore"));
        assert!(excluded(&m, ".git/HEAD"));
    }

    // sourceignore.go ReadPatterns: comments and blank lines are not patterns.
    #[test]
    fn comment_and_blank_lines_are_not_user_patterns() {
        assert!(read_patterns("# c\n\n   \n", &[], &PatternSource::SpecIgnore).is_empty());
        let m = user("# only a comment\n");
        assert!(excluded(&m, "x.png"));
    }

    // Flux's documented spec.ignore example; go-git matches each file on its own, so a
    // negation re-includes files below an excluded folder (git itself would not).
    #[test]
    fn negation_reincludes_below_an_excluded_root() {
        let m = user("/*\n!/deploy\n/deploy/**/*.md\n");
        assert!(excluded(&m, "README.md"));
        assert!(excluded(&m, "src/main.go"));
        assert!(!excluded(&m, "deploy/app/deploy.yaml"));
        assert!(excluded(&m, "deploy/app/notes.md"));
    }

    #[test]
    fn name_pattern_matches_any_component() {
        let m = user("tmp\n");
        assert!(excluded(&m, "tmp"));
        assert!(excluded(&m, "a/tmp/b.yaml"));
        assert!(!excluded(&m, "a/tmpx/b.yaml"));
    }

    #[test]
    fn dir_only_pattern_skips_a_file_of_that_name() {
        let m = user("build/\n");
        assert!(!excluded(&m, "build"));
        assert!(excluded(&m, "build/x.yaml"));
        assert!(m.excluded_by(Path::new("build"), true).is_some());
    }

    #[test]
    fn anchored_pattern_matches_only_from_its_domain() {
        let domain = vec!["apps".to_owned()];
        let source = PatternSource::SourceIgnore(PathBuf::from("apps/.sourceignore"));
        let m = Matcher::new(read_patterns("/secret.yaml\n", &domain, &source));
        assert!(excluded(&m, "apps/secret.yaml"));
        assert!(!excluded(&m, "secret.yaml"));
        assert!(!excluded(&m, "apps/x/secret.yaml"));
    }

    #[test]
    fn double_star_prefix_matches_at_any_depth() {
        let m = user("**/values.yaml\n");
        assert!(excluded(&m, "values.yaml"));
        assert!(excluded(&m, "a/b/values.yaml"));
        assert!(!excluded(&m, "a/b/values.yml"));
    }

    #[test]
    fn trailing_spaces_are_trimmed_unless_escaped() {
        let m = user("a.yaml   \n");
        assert!(excluded(&m, "a.yaml"));
    }

    #[test]
    fn crlf_line_endings_are_not_part_of_the_pattern() {
        let m = user("a.yaml\r\nb.yaml\r\n");
        assert!(excluded(&m, "a.yaml"));
        assert!(excluded(&m, "b.yaml"));
    }
}
