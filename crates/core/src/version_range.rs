//! Chart versions and version ranges as source-controller reads them: versions as
//! `Masterminds/semver` `NewVersion` parses them (a `v` prefix, `1` and `1.2` allowed),
//! ranges as its `NewConstraint` does (`>=1.0.0 <2.0.0`, `,` for and, `||` for or, `~`, `^`,
//! `1.2.x`, `1.2 - 1.4`), with its rule that a prerelease version only satisfies a
//! comparator whose own version is a prerelease.

use std::cmp::Ordering;

crate::message_error! {
    /// A version or range Masterminds/semver refuses (helm-controller's chart version lookup).
    pub struct VersionError;
}

/// A parsed version, ordered by semver precedence (build metadata ignored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    v: semver::Version,
}

impl Version {
    /// Masterminds `NewVersion` (not strict).
    pub fn parse(text: &str) -> Result<Version, VersionError> {
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let (core, build) = t.split_once('+').map_or((t, ""), |(c, b)| (c, b));
        let (nums, pre) = core.split_once('-').map_or((core, ""), |(n, p)| (n, p));
        let parts: Vec<&str> = nums.split('.').collect();
        if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.is_empty()) {
            return Err(format!("invalid semantic version `{text}`").into());
        }
        let mut n = [0_u64; 3];
        for (i, p) in parts.iter().enumerate() {
            n[i] = p
                .parse()
                .map_err(|_| format!("invalid semantic version `{text}`"))?;
        }
        let mut v = semver::Version::new(n[0], n[1], n[2]);
        if !pre.is_empty() {
            v.pre = semver::Prerelease::new(pre).map_err(|e| format!("`{text}`: {e}"))?;
        }
        if !build.is_empty() {
            v.build = semver::BuildMetadata::new(build).map_err(|e| format!("`{text}`: {e}"))?;
        }
        Ok(Version { v })
    }

    fn is_prerelease(&self) -> bool {
        !self.v.pre.is_empty()
    }

    fn cmp_precedence(&self, other: &Version) -> Ordering {
        self.v.cmp_precedence(&other.v)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_precedence(other)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// One comparator: `op version`, the version possibly partial or with wildcards.
#[derive(Debug, Clone)]
struct Comparator {
    op: Op,
    v: Version,
    pre: bool,
}

impl Comparator {
    fn check(&self, v: &Version) -> bool {
        // Masterminds v3: a prerelease version only satisfies a comparator that asks for
        // prereleases (its own version has one).
        if v.is_prerelease() && !self.pre {
            return false;
        }
        let o = v.cmp_precedence(&self.v);
        match self.op {
            Op::Eq => o == Ordering::Equal,
            Op::Ne => o != Ordering::Equal,
            Op::Gt => o == Ordering::Greater,
            Op::Ge => o != Ordering::Less,
            Op::Lt => o == Ordering::Less,
            Op::Le => o != Ordering::Greater,
        }
    }
}

/// A version range: alternatives (`||`) of comparators that must all hold.
#[derive(Debug, Clone)]
pub struct Constraint {
    any: Vec<Vec<Comparator>>,
}

/// A partial version: its numbers (`None` for a missing or wildcard part) and prerelease.
struct Partial {
    nums: [Option<u64>; 3],
    pre: String,
}

fn partial(text: &str) -> Result<Partial, VersionError> {
    let t = text.trim();
    let t = t.strip_prefix('v').unwrap_or(t);
    let core = t.split_once('+').map_or(t, |(c, _)| c);
    let (nums, pre) = core.split_once('-').map_or((core, ""), |(n, p)| (n, p));
    let mut out = [None; 3];
    for (i, p) in nums.split('.').enumerate() {
        if i > 2 {
            return Err(format!("improper constraint: {text}").into());
        }
        out[i] = match p {
            "x" | "X" | "*" => None,
            p => Some(
                p.parse()
                    .map_err(|_| format!("improper constraint: {text}"))?,
            ),
        };
    }
    Ok(Partial {
        nums: out,
        pre: pre.to_string(),
    })
}

fn version_of(n: [u64; 3], pre: &str) -> Result<Version, VersionError> {
    let text = if pre.is_empty() {
        format!("{}.{}.{}", n[0], n[1], n[2])
    } else {
        format!("{}.{}.{}-{pre}", n[0], n[1], n[2])
    };
    Version::parse(&text)
}

/// A comparator of a term; `term_pre` is the prerelease the term was written with (an upper
/// bound it implies, `<1.3.0` of `~1.2.3-0`, asks for prereleases as the term does).
fn cmp(op: Op, n: [u64; 3], pre: &str, term_pre: &str) -> Result<Comparator, VersionError> {
    Ok(Comparator {
        op,
        v: version_of(n, pre)?,
        pre: !term_pre.is_empty(),
    })
}

/// The comparators one `op version` term stands for.
fn term(op: &str, ver: &str) -> Result<Vec<Comparator>, VersionError> {
    let p = partial(ver)?;
    let [ma, mi, pa] = p.nums;
    let pre = p.pre.as_str();
    let lo = [ma.unwrap_or(0), mi.unwrap_or(0), pa.unwrap_or(0)];
    // The first version past a wildcard range (`1.2.x` -> 1.3.0).
    let next = match (ma, mi, pa) {
        (Some(a), None, _) => Some([a.saturating_add(1), 0, 0]),
        (Some(a), Some(b), None) => Some([a, b.saturating_add(1), 0]),
        _ => None,
    };
    Ok(match op {
        "" | "=" => match next {
            _ if ma.is_none() => Vec::new(),
            Some(n) => vec![cmp(Op::Ge, lo, pre, pre)?, cmp(Op::Lt, n, "", pre)?],
            None => vec![cmp(Op::Eq, lo, pre, pre)?],
        },
        "!=" => match next {
            Some(n) => {
                // Outside the range: not expressible as an and; Masterminds treats a
                // wildcard `!=` as "not in the range", checked here as "below or above".
                return Err(format!(
                    "improper constraint: != with a wildcard ({ver}, up to {}.{}.{}) is not \
                     supported",
                    n[0], n[1], n[2]
                )
                .into());
            }
            None if ma.is_none() => vec![cmp(Op::Lt, [0, 0, 0], "", pre)?],
            None => vec![cmp(Op::Ne, lo, pre, pre)?],
        },
        ">" => match next {
            Some(n) => vec![cmp(Op::Ge, n, pre, pre)?],
            None => vec![cmp(Op::Gt, lo, pre, pre)?],
        },
        ">=" | "=>" => vec![cmp(Op::Ge, lo, pre, pre)?],
        "<" => vec![cmp(Op::Lt, lo, pre, pre)?],
        "<=" | "=<" => match next {
            Some(n) => vec![cmp(Op::Lt, n, "", pre)?],
            None => vec![cmp(Op::Le, lo, pre, pre)?],
        },
        "~" | "~>" => {
            // ~1.2.3 := >=1.2.3 <1.3.0; ~1 := >=1.0.0 <2.0.0
            let up = if mi.is_some() {
                [lo[0], lo[1].saturating_add(1), 0]
            } else {
                [lo[0].saturating_add(1), 0, 0]
            };
            vec![cmp(Op::Ge, lo, pre, pre)?, cmp(Op::Lt, up, "", pre)?]
        }
        "^" => {
            // ^1.2.3 := <2.0.0; ^0.2.3 := <0.3.0; ^0.0.3 := <0.0.4; ^0 := <1.0.0
            let up = match (lo, mi, pa) {
                ([0, 0, p], Some(_), Some(_)) => [0, 0, p.saturating_add(1)],
                ([0, m, _], Some(_), _) if m > 0 => [0, m.saturating_add(1), 0],
                ([0, 0, _], Some(_), None) => [0, 1, 0],
                ([a, _, _], _, _) => [a.saturating_add(1), 0, 0],
            };
            vec![cmp(Op::Ge, lo, pre, pre)?, cmp(Op::Lt, up, "", pre)?]
        }
        other => return Err(format!("improper constraint: unknown operator `{other}`").into()),
    })
}

impl Constraint {
    /// Masterminds `NewConstraint`.
    pub fn parse(text: &str) -> Result<Constraint, VersionError> {
        let mut any = Vec::new();
        // Operators may be separated from their version by spaces (`>= 1.2`).
        let spaced = regex::Regex::new(r"(>=|<=|=>|=<|!=|~>|[<>=~^])\s+").expect("static regex");
        for alt in text.split("||") {
            let mut all = Vec::new();
            // `1.2 - 1.4`: a hyphen range.
            let alt = alt.trim();
            if let Some((a, b)) = alt.split_once(" - ") {
                all.extend(term(">=", a.trim())?);
                all.extend(term("<=", b.trim())?);
                any.push(all);
                continue;
            }
            let joined = spaced.replace_all(alt, "$1");
            for t in joined.split([',', ' ']).filter(|t| !t.is_empty()) {
                let at = t
                    .find(|c: char| c.is_ascii_alphanumeric() || c == '*')
                    .ok_or_else(|| format!("improper constraint: {text}"))?;
                all.extend(term(&t[..at], &t[at..])?);
            }
            any.push(all);
        }
        Ok(Constraint { any })
    }

    /// Whether `v` satisfies it.
    #[must_use]
    pub fn check(&self, v: &Version) -> bool {
        self.any.iter().any(|all| {
            // `*` alone is no comparator: it allows every release, not prereleases.
            if all.is_empty() {
                return !v.is_prerelease();
            }
            all.iter().all(|c| c.check(v))
        })
    }
}

/// The index entry source-controller picks for `range` among `versions` (each with its
/// `created` time as written, RFC 3339): an exact string match first, else the highest
/// version satisfying the range (`*` or empty: the highest release), the latest created
/// among equal ones (source-controller `chart_repository.go` getChartVersion).
pub fn pick<'a>(versions: &[(&'a str, &'a str)], range: &str) -> Result<&'a str, VersionError> {
    if !range.is_empty() {
        if let Some((v, _)) = versions.iter().find(|(v, _)| *v == range) {
            return Ok(v);
        }
    }
    let c = if range.is_empty() || range == "*" {
        Constraint::parse("*")?
    } else {
        Constraint::parse(range)?
    };
    let mut matched: Vec<(Version, &str, &str)> = versions
        .iter()
        .filter_map(|(v, created)| Some((Version::parse(v).ok()?, *v, *created)))
        .filter(|(p, _, _)| c.check(p))
        .collect();
    // Highest first; equal versions (build metadata apart) by creation, latest first.
    matched.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.2.cmp(a.2)));
    matched
        .first()
        .map(|(_, v, _)| *v)
        .ok_or_else(|| VersionError(format!("no chart version matching '{range}' found")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(range: &str, v: &str) -> bool {
        Constraint::parse(range)
            .unwrap()
            .check(&Version::parse(v).unwrap())
    }

    // Masterminds/semver v3 constraints (README "Basic Comparisons", "Hyphen Range",
    // "Wildcards", "Tilde", "Caret"), as source-controller uses them.
    #[test]
    fn ranges_follow_masterminds_semver() {
        assert!(ok(">=1.2.0 <2.0.0", "1.9.9") && !ok(">=1.2.0 <2.0.0", "2.0.0"));
        assert!(ok(">= 1.2, < 3.0.0 || >= 4.2.3", "4.5.0"));
        assert!(!ok(">= 1.2, < 3.0.0 || >= 4.2.3", "3.5.0"));
        assert!(ok("1.2 - 1.4.5", "1.4.5") && !ok("1.2 - 1.4.5", "1.4.6"));
        assert!(ok("1.2.x", "1.2.9") && !ok("1.2.x", "1.3.0"));
        assert!(ok("~1.2.3", "1.2.9") && !ok("~1.2.3", "1.3.0"));
        assert!(ok("~1", "1.9.0") && !ok("~1", "2.0.0"));
        assert!(ok("^1.2.3", "1.9.0") && !ok("^1.2.3", "2.0.0"));
        assert!(ok("^0.2.3", "0.2.9") && !ok("^0.2.3", "0.3.0"));
        assert!(ok("^0.0.3", "0.0.3") && !ok("^0.0.3", "0.0.4"));
        // A bare version is an exact match (not cargo's caret).
        assert!(ok("1.2.3", "1.2.3") && !ok("1.2.3", "1.2.4"));
        assert!(ok("v1.2", "1.2.7"), "a partial version is a wildcard");
        assert!(ok("!=1.2.3", "1.2.4") && !ok("!=1.2.3", "1.2.3"));
    }

    // Masterminds v3: prereleases only satisfy comparators that carry a prerelease.
    #[test]
    fn prereleases_match_only_ranges_that_ask_for_them() {
        assert!(!ok("*", "1.0.0-rc.1"));
        assert!(!ok(">=1.0.0", "1.1.0-rc.1"));
        assert!(ok(">=1.0.0-0", "1.1.0-rc.1"));
        assert!(ok("1.1.0-rc.1", "1.1.0-rc.1"));
    }

    // source-controller chart_repository.go getChartVersion: exact match first, then the
    // highest match; `*` (or nothing) is the latest stable release.
    #[test]
    fn the_highest_matching_version_is_picked_and_an_exact_string_wins() {
        let index = [
            ("6.5.0", "2024-01-01T00:00:00Z"),
            ("6.5.4", "2024-02-01T00:00:00Z"),
            ("6.6.0-rc.1", "2024-03-01T00:00:00Z"),
            ("7.0.0", "2024-04-01T00:00:00Z"),
            ("not-a-version", "2024-05-01T00:00:00Z"),
        ];
        assert_eq!(pick(&index, "*").unwrap(), "7.0.0");
        assert_eq!(pick(&index, "").unwrap(), "7.0.0");
        assert_eq!(pick(&index, ">=6.0.0 <7.0.0").unwrap(), "6.5.4");
        assert_eq!(pick(&index, "6.5.x").unwrap(), "6.5.4");
        // Each comparator must ask for prereleases (`<7.0.0` does not).
        assert_eq!(pick(&index, ">=6.5.0-0 <7.0.0").unwrap(), "6.5.4");
        assert_eq!(pick(&index, ">=6.5.0-0 <7.0.0-0").unwrap(), "6.6.0-rc.1");
        assert_eq!(pick(&index, "~6.6.0-0").unwrap(), "6.6.0-rc.1");
        assert_eq!(pick(&index, "not-a-version").unwrap(), "not-a-version");
        let e = pick(&index, ">=8").unwrap_err();
        assert_eq!(e.0, "no chart version matching '>=8' found");
    }

    #[test]
    fn bad_ranges_are_errors_not_panics() {
        assert!(Constraint::parse(">=x.y").is_err());
        assert!(Constraint::parse("~18446744073709551615").is_ok());
        assert!(Constraint::parse("^18446744073709551615.1").is_ok());
        assert!(Constraint::parse("1.2.3.4").is_err());
        assert!(Constraint::parse("?1").is_err());
    }

    #[test]
    fn equal_versions_are_told_apart_by_their_creation_time() {
        let index = [
            ("1.0.0+a", "2024-01-01T00:00:00Z"),
            ("1.0.0+b", "2024-06-01T00:00:00Z"),
        ];
        assert_eq!(pick(&index, "1.0.x").unwrap(), "1.0.0+b");
    }
}
