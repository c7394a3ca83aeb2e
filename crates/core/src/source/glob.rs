//! The two glob dialects source-watcher's ArtifactGenerator uses on a source's files: Go's
//! `io/fs.Glob` (`path.Match` per path element, so `**` is `*` and never crosses a `/`) for
//! what a copy operation selects, and `bmatcuk/doublestar/v4`'s `Match` (`**` spans any number
//! of folders, `{a,b}` alternatives) for its `exclude` patterns
//! (`internal/builder/builder.go` in fluxcd/source-watcher).

use std::collections::BTreeSet;

use super::go_match::go_match;

/// The files and folders of a tree (relative, `/`-separated; the root is `.`), as a file
/// system the globs walk.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    files: BTreeSet<String>,
    dirs: BTreeSet<String>,
}

impl Listing {
    /// A listing of `files` and `dirs` (the folders of every file are added).
    #[must_use]
    pub fn new(files: BTreeSet<String>, mut dirs: BTreeSet<String>) -> Listing {
        for f in &files {
            let mut at = f.as_str();
            while let Some((parent, _)) = at.rsplit_once('/') {
                dirs.insert(parent.to_string());
                at = parent;
            }
        }
        dirs.remove(".");
        dirs.remove("");
        Listing { files, dirs }
    }

    /// Whether `path` is a folder (`.` is the root).
    #[must_use]
    pub fn is_dir(&self, path: &str) -> bool {
        path == "." || self.dirs.contains(path)
    }

    /// Whether `path` is a file.
    #[must_use]
    pub fn is_file(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// The entries of folder `dir`, sorted by name, as `fs.ReadDir` gives them: (name, is a
    /// folder). Empty when `dir` is no folder.
    #[must_use]
    pub fn read_dir(&self, dir: &str) -> Vec<(String, bool)> {
        if !self.is_dir(dir) {
            return Vec::new();
        }
        let prefix = if dir == "." {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut out: Vec<(String, bool)> = Vec::new();
        for (set, is_dir) in [(&self.files, false), (&self.dirs, true)] {
            for p in set.range(prefix.clone()..) {
                let Some(rest) = p.strip_prefix(&prefix) else {
                    break;
                };
                if !rest.is_empty() && !rest.contains('/') {
                    out.push((rest.to_string(), is_dir));
                }
            }
        }
        out.sort();
        out
    }

    /// Everything under folder `dir`, in `fs.WalkDir`'s order (lexical, depth first), as
    /// (path, is a folder); `dir` itself is not listed.
    #[must_use]
    pub fn walk(&self, dir: &str) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for (name, is_dir) in self.read_dir(dir) {
            let path = join(dir, &name);
            out.push((path.clone(), is_dir));
            if is_dir {
                out.extend(self.walk(&path));
            }
        }
        out
    }
}

/// A malformed pattern (Go's `path.ErrBadPattern`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPattern;

/// `path.Join` of two clean relative paths (`.` is the root).
#[must_use]
pub fn join(dir: &str, name: &str) -> String {
    match (dir, name) {
        ("." | "", n) => n.to_string(),
        (d, "." | "") => d.to_string(),
        (d, n) => super::clean_relative(&format!("{d}/{n}")).unwrap_or_else(|| format!("{d}/{n}")),
    }
}

/// `io/fs`'s `hasMeta`.
fn has_meta(path: &str) -> bool {
    path.contains(['*', '?', '[', '\\'])
}

/// `fs.ValidPath`: `.` or unrooted elements that are neither empty, `.` nor `..`.
fn valid_path(name: &str) -> bool {
    name == "."
        || name
            .split('/')
            .all(|e| !e.is_empty() && e != "." && e != "..")
}

/// `fs.Glob` over `listing`: the paths matching `pattern`, `**` matching one path element
/// like `*`. Read errors (a path that is no folder or not valid) mean no match, as in Go.
pub fn fs_glob(listing: &Listing, pattern: &str) -> Result<Vec<String>, BadPattern> {
    glob_with_limit(listing, pattern, 0)
}

fn glob_with_limit(
    listing: &Listing,
    pattern: &str,
    depth: usize,
) -> Result<Vec<String>, BadPattern> {
    // fs.Glob's pathSeparatorsLimit.
    if depth > 10_000 {
        return Err(BadPattern);
    }
    if go_match(pattern, "").is_none() {
        return Err(BadPattern);
    }
    if !has_meta(pattern) {
        let exists = valid_path(pattern) && (listing.is_dir(pattern) || listing.is_file(pattern));
        return Ok(if exists {
            vec![pattern.to_string()]
        } else {
            Vec::new()
        });
    }
    let (dir, file) = match pattern.rfind('/') {
        Some(at) => (&pattern[..=at], &pattern[at + 1..]),
        None => ("", pattern),
    };
    let dir = if dir.is_empty() {
        "."
    } else {
        &dir[..dir.len() - 1]
    };
    let mut matches = Vec::new();
    if !has_meta(dir) {
        glob_in(listing, dir, file, &mut matches)?;
        return Ok(matches);
    }
    if dir == pattern {
        return Err(BadPattern);
    }
    for d in glob_with_limit(listing, dir, depth + 1)? {
        glob_in(listing, &d, file, &mut matches)?;
    }
    Ok(matches)
}

fn glob_in(
    listing: &Listing,
    dir: &str,
    pattern: &str,
    matches: &mut Vec<String>,
) -> Result<(), BadPattern> {
    if !valid_path(dir) {
        return Ok(());
    }
    for (name, _) in listing.read_dir(dir) {
        match go_match(pattern, &name) {
            None => return Err(BadPattern),
            Some(true) => matches.push(join(dir, &name)),
            Some(false) => {}
        }
    }
    Ok(())
}

/// `doublestar.Match(pattern, path)`: `None` when the pattern is malformed. A `**` element
/// matches any number of path elements (none included, so `a/**` matches `a`), `*` and `?`
/// never cross a `/`, `[...]` negates with `^` or `!`, `{a,b}` gives alternatives, `\`
/// escapes.
#[must_use]
pub fn doublestar_match(pattern: &str, path: &str) -> Option<bool> {
    let alternatives = expand_braces(pattern)?;
    let names: Vec<&str> = path.split('/').collect();
    let mut any = false;
    for alt in &alternatives {
        let parts: Vec<&str> = alt.split('/').collect();
        if match_parts(&parts, &names)? {
            any = true;
        }
    }
    Some(any)
}

fn match_parts(parts: &[&str], names: &[&str]) -> Option<bool> {
    let Some((first, rest)) = parts.split_first() else {
        return Some(names.is_empty());
    };
    if *first == "**" {
        for skip in 0..=names.len() {
            if match_parts(rest, &names[skip..])? {
                return Some(true);
            }
        }
        return Some(false);
    }
    let Some((name, others)) = names.split_first() else {
        // Still check the rest of the pattern is well formed.
        go_match(&class_negation(first), "")?;
        return Some(false);
    };
    if !go_match(&class_negation(first), name)? {
        return Some(false);
    }
    match_parts(rest, others)
}

/// doublestar also negates a class with `!`, which `path.Match` reads as a literal.
fn class_negation(part: &str) -> String {
    part.replace("[!", "[^")
}

/// Every alternative of the first `{a,b}` group (recursively); `None` when a brace is not
/// closed.
fn expand_braces(pattern: &str) -> Option<Vec<String>> {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    let mut open = None;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'{' => {
                open = Some(i);
                break;
            }
            b'}' => return None,
            _ => {}
        }
        i += 1;
    }
    let Some(start) = open else {
        return Some(vec![pattern.to_string()]);
    };
    let mut depth = 0;
    let mut commas = vec![];
    let mut end = None;
    let mut j = start;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(j);
                    break;
                }
            }
            b',' if depth == 1 => commas.push(j),
            _ => {}
        }
        j += 1;
    }
    let end = end?;
    let mut bounds = vec![start];
    bounds.extend(commas);
    bounds.push(end);
    let (head, tail) = (&pattern[..start], &pattern[end + 1..]);
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        let alt = &pattern[w[0] + 1..w[1]];
        out.extend(expand_braces(&format!("{head}{alt}{tail}"))?);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(files: &[&str]) -> Listing {
        Listing::new(
            files.iter().map(|f| (*f).to_string()).collect(),
            BTreeSet::new(),
        )
    }

    // io/fs glob.go: `**` is `path.Match`'s `*`, one element only.
    #[test]
    fn fs_glob_double_star_matches_one_path_element() {
        let l = listing(&[
            "apps/base/a.yaml",
            "apps/base/deep/b.yaml",
            "apps/c.yaml",
            "apps/.hidden",
        ]);
        assert_eq!(
            fs_glob(&l, "apps/**").unwrap(),
            ["apps/.hidden", "apps/base", "apps/c.yaml"]
        );
        assert_eq!(fs_glob(&l, "apps/**/*.yaml").unwrap(), ["apps/base/a.yaml"]);
        assert_eq!(fs_glob(&l, "*/base").unwrap(), ["apps/base"]);
        assert_eq!(fs_glob(&l, "apps/c.yaml").unwrap(), ["apps/c.yaml"]);
        assert!(fs_glob(&l, "apps/none.yaml").unwrap().is_empty());
        assert!(fs_glob(&l, "../apps/*").unwrap().is_empty());
        assert_eq!(fs_glob(&l, "apps/[").unwrap_err(), BadPattern);
    }

    // doublestar v4 Match, as source-watcher's shouldExclude uses it.
    #[test]
    fn doublestar_spans_folders_and_matches_the_folder_itself() {
        assert_eq!(doublestar_match("**/testdata/**", "testdata"), Some(true));
        assert_eq!(
            doublestar_match("**/testdata/**", "a/testdata/b/c.yaml"),
            Some(true)
        );
        assert_eq!(doublestar_match("**/.*", ".hidden"), Some(true));
        assert_eq!(doublestar_match("*.md", "docs/guide.md"), Some(false));
        assert_eq!(
            doublestar_match("docs/*.{md,txt}", "docs/a.txt"),
            Some(true)
        );
        assert_eq!(doublestar_match("[!a]*", "b"), Some(true));
        assert_eq!(doublestar_match("[*.md", "x"), None);
        assert_eq!(doublestar_match("{a,b", "a"), None);
    }
}
