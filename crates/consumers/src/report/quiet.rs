//! Findings as a text report lists them by default (quiet): errors and warnings, a finding
//! repeated across clusters as one entry that names them, at most [`PER_RULE`] entries a
//! rule, and info only counted. `--verbose` lists every finding as it is. This is display
//! only: JSON and SARIF keep every finding, and the exit level (`--fail-on`) counts every
//! finding, listed or not.
//!
//! The other grouping of this module is a change's apply hazards (FS310-FS332 of `diff`
//! and `prove`): those of one cluster from one source file, one rule, are one hazard that
//! lists its Kustomizations ([`by_source`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::escape::OneLine;
use super::findings::finding_text;
use super::layout::Layout;
use crate::finding::{Finding, Location, Severity};

/// How many entries of one rule a quiet report lists before `and N more`.
pub const PER_RULE: usize = 20;

/// How many other places an entry names before `and N more places`.
const PLACES_SHOWN: usize = 3;

/// How many clusters an entry names before `and N more`.
const CLUSTERS_SHOWN: usize = 8;

/// What a quiet listing printed, and what it only counted.
#[derive(Debug, Default)]
pub struct Listing {
    /// The entries, then a line per rule that had more than [`PER_RULE`].
    pub text: String,
    /// Info findings left out (counted in [`Listing::hint`]).
    pub info: usize,
}

impl Listing {
    /// `62 info: `--verbose` lists them`, when info was left out.
    #[must_use]
    pub fn hint(&self) -> Option<String> {
        (self.info > 0).then(|| format!("{} info: `--verbose` lists them\n", self.info))
    }
}

/// The findings as a text report lists them, each line after `indent`: with `--verbose`
/// every finding in the order given, as [`finding_text`] prints it; else quietly (the
/// module's doc): errors, then warnings, in the order given, alike findings as one entry.
#[must_use]
pub fn listing<'f>(
    findings: impl IntoIterator<Item = &'f Finding>,
    indent: &str,
    layout: Layout,
) -> Listing {
    let findings: Vec<&Finding> = findings.into_iter().collect();
    if layout.verbose {
        return Listing {
            text: findings
                .iter()
                .map(|f| finding_text(f, &f.message, indent, layout))
                .collect(),
            info: 0,
        };
    }
    let info = findings
        .iter()
        .filter(|f| f.severity == Severity::Info)
        .count();
    let mut listed: Vec<&Finding> = findings
        .into_iter()
        .filter(|f| f.severity > Severity::Info)
        .collect();
    listed.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let mut out = String::new();
    let mut shown: BTreeMap<&str, usize> = BTreeMap::new();
    let mut hidden: BTreeMap<&str, usize> = BTreeMap::new();
    for g in alike(&listed) {
        let rule = g.members[0].rule;
        let n = shown.entry(rule).or_default();
        if *n >= PER_RULE {
            *hidden.entry(rule).or_default() += g.members.len();
            continue;
        }
        *n += 1;
        out.push_str(&g.text(indent, layout));
    }
    for (rule, n) in hidden {
        out.push_str(&layout.wrap(
            indent,
            &format!(
                "and {n} more {rule} finding{} (--verbose, or -o json)",
                if n == 1 { "" } else { "s" }
            ),
            &format!("{indent}    "),
        ));
    }
    Listing { text: out, info }
}

/// Findings alike but for their clusters (and where they are): one entry of a quiet
/// report. Either the same finding of several clusters (the message naming each finding's
/// own cluster names them all), or findings of one cluster that differ in the one other
/// cluster their message names (`defined in `update` but not in `prod-eu`, `staging``).
#[derive(Debug)]
pub struct Group<'f> {
    /// In the order given.
    pub members: Vec<&'f Finding>,
    /// The message cut where it names a cluster: `fills.len() + 1` pieces.
    pieces: Vec<String>,
    /// Per cut, the clusters named there by the members, each once, in order.
    fills: Vec<Vec<String>>,
}

/// A cut of a message: where it names, in backticks, the finding's own cluster or another
/// one the finding is about (`related` `cluster`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Cut {
    Own,
    Other(String),
}

/// The message of `f` cut where it names a cluster in backticks: the pieces between, and
/// the cuts.
fn template(f: &Finding) -> (Vec<String>, Vec<Cut>) {
    let others: Vec<&str> = f.related("cluster");
    let mut pieces = vec![String::new()];
    let mut cuts = Vec::new();
    // Between an odd and an even backtick is code; code that is a cluster's name is a cut.
    for (i, part) in f.message.split('`').enumerate() {
        let last = pieces.last_mut().expect("one piece");
        if i > 0 {
            last.push('`');
        }
        let cut = if i % 2 == 0 {
            None
        } else if f.cluster.as_deref() == Some(part) {
            Some(Cut::Own)
        } else if others.contains(&part) {
            Some(Cut::Other(part.to_string()))
        } else {
            None
        };
        match cut {
            Some(c) => {
                cuts.push(c);
                pieces.push(String::new());
            }
            None => last.push_str(part),
        }
    }
    (pieces, cuts)
}

/// Adds each of `names` to `list` once.
fn add_once(list: &mut Vec<String>, names: impl IntoIterator<Item = String>) {
    for n in names {
        if !list.contains(&n) {
            list.push(n);
        }
    }
}

/// Findings with the same rule, severity, Kustomization and message cut at the same
/// clusters (each with where it is in the list given), the pieces and the cuts.
type Same<'f> = (Vec<(usize, &'f Finding)>, Vec<String>, Vec<Cut>);

/// What a quiet report groups first: findings the same but for their own cluster.
type SameKey<'a> = (&'a str, Severity, Option<&'a str>, Vec<String>, Vec<Cut>);

/// What a quiet report groups next: findings of one cluster cut at the same places.
type Shape<'a> = (
    &'a str,
    Severity,
    Option<&'a str>,
    Option<&'a str>,
    Vec<String>,
    Vec<bool>,
);

/// The findings the same in all but their own cluster, in the order of the first of each.
fn same_but_own<'f>(findings: &[&'f Finding]) -> Vec<Same<'f>> {
    let mut same: Vec<Same<'f>> = Vec::new();
    let mut index: BTreeMap<SameKey<'f>, usize> = BTreeMap::new();
    for (at, f) in findings.iter().enumerate() {
        let (pieces, cuts) = template(f);
        let key = (
            f.rule,
            f.severity,
            f.kustomization.as_deref(),
            pieces.clone(),
            cuts.clone(),
        );
        if let Some(&i) = index.get(&key) {
            same[i].0.push((at, f));
        } else {
            index.insert(key, same.len());
            same.push((vec![(at, f)], pieces, cuts));
        }
    }
    same
}

/// Which of `same` join another (index to the index of the one they join): those of one
/// cluster whose messages differ in the other cluster they name at one cut, and nowhere
/// else.
fn joined(same: &[Same<'_>]) -> BTreeMap<usize, usize> {
    let mut shapes: BTreeMap<Shape<'_>, Vec<usize>> = BTreeMap::new();
    for (i, (members, pieces, cuts)) in same.iter().enumerate() {
        let first = members[0].1;
        let cluster = first.cluster.as_deref();
        if members.iter().any(|(_, f)| f.cluster.as_deref() != cluster)
            || !cuts.iter().any(|c| matches!(c, Cut::Other(_)))
        {
            continue;
        }
        let shape = cuts.iter().map(|c| matches!(c, Cut::Own)).collect();
        shapes
            .entry((
                first.rule,
                first.severity,
                first.kustomization.as_deref(),
                cluster,
                pieces.clone(),
                shape,
            ))
            .or_default()
            .push(i);
    }
    let mut out = BTreeMap::new();
    for list in shapes.values().filter(|l| l.len() > 1) {
        let cuts = |i: usize| &same[i].2;
        let differ = (0..cuts(list[0]).len())
            .filter(|&j| list.iter().any(|&i| cuts(i)[j] != cuts(list[0])[j]))
            .count();
        if differ <= 1 {
            for &i in &list[1..] {
                out.insert(i, list[0]);
            }
        }
    }
    out
}

/// The findings grouped as a quiet report lists them: the same rule, severity and
/// Kustomization, and the same message but for the clusters it names ([`Group`]). Groups
/// are in the order of their first finding, and so are the members of each.
#[must_use]
pub fn alike<'f>(findings: &[&'f Finding]) -> Vec<Group<'f>> {
    let same = same_but_own(findings);
    let joins = joined(&same);
    let mut groups: Vec<(Vec<(usize, &'f Finding)>, Group<'f>)> = Vec::new();
    let mut at: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, (members, pieces, cuts)) in same.into_iter().enumerate() {
        let clusters: Vec<String> = members
            .iter()
            .filter_map(|(_, f)| f.cluster.clone())
            .collect();
        let fills = cuts.iter().map(|c| match c {
            Cut::Own => clusters.clone(),
            Cut::Other(name) => vec![name.clone()],
        });
        let g = if let Some(&g) = joins.get(&i).and_then(|head| at.get(head)) {
            groups[g].0.extend(members);
            g
        } else {
            at.insert(i, groups.len());
            let group = Group {
                members: Vec::new(),
                pieces,
                fills: vec![Vec::new(); cuts.len()],
            };
            groups.push((members, group));
            groups.len() - 1
        };
        for (fill, names) in groups[g].1.fills.iter_mut().zip(fills) {
            add_once(fill, names);
        }
    }
    groups
        .into_iter()
        .map(|(mut members, mut g)| {
            members.sort_by_key(|(at, _)| *at);
            g.members = members.into_iter().map(|(_, f)| f).collect();
            g
        })
        .collect()
}

impl Group<'_> {
    /// The clusters of the members, each once, in order.
    #[must_use]
    pub fn clusters(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in self.members.iter().filter_map(|f| f.cluster.as_deref()) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// The message with every cluster the members name at each cut.
    #[must_use]
    pub fn message(&self) -> String {
        let mut out = self.pieces[0].clone();
        for (names, piece) in self.fills.iter().zip(&self.pieces[1..]) {
            // The cut stands between the backticks of one name: `a`, `b`, `c`.
            out.push_str(&names.join("`, `"));
            out.push_str(piece);
        }
        out
    }

    /// The entry: as [`finding_text`] prints one finding; for several, every cluster
    /// (`clusters dev, prod; flux-system/apps`) and the other places.
    #[must_use]
    pub fn text(&self, indent: &str, layout: Layout) -> String {
        let first = self.members[0];
        if self.members.len() == 1 {
            return finding_text(first, &first.message, indent, layout);
        }
        let place = first
            .location
            .as_ref()
            .map(|l| format!("{}: ", OneLine(l)))
            .unwrap_or_default();
        let mut text = format!(
            "{place}{}[{}]: {}",
            first.severity,
            first.rule,
            self.message()
        );
        let clusters = self.clusters();
        let owner = first.kustomization.as_deref().map(OneLine);
        match (clusters.len(), owner) {
            (0, Some(k)) => {
                let _ = write!(text, " ({k})");
            }
            (0, None) => {}
            (1, Some(k)) => {
                let _ = write!(text, " ({}, {k})", OneLine(clusters[0]));
            }
            (1, None) => {
                let _ = write!(text, " ({})", OneLine(clusters[0]));
            }
            (_, k) => {
                let _ = write!(text, " (clusters {}", names(&clusters, CLUSTERS_SHOWN));
                if let Some(k) = k {
                    let _ = write!(text, "; {k}");
                }
                text.push(')');
            }
        }
        let mut others: Vec<&Location> = Vec::new();
        for l in self.members[1..].iter().filter_map(|f| f.location.as_ref()) {
            if first.location.as_ref() != Some(l) && !others.contains(&l) {
                others.push(l);
            }
        }
        if !others.is_empty() {
            let shown: Vec<String> = others
                .iter()
                .take(PLACES_SHOWN)
                .map(|l| OneLine(l).to_string())
                .collect();
            let _ = write!(text, "; also at {}", shown.join(", "));
            if others.len() > PLACES_SHOWN {
                let _ = write!(
                    text,
                    " and {}",
                    crate::text::plural(others.len() - PLACES_SHOWN, "more place")
                );
            }
        }
        layout.wrap(indent, &text, &format!("{indent}    "))
    }
}

/// `a, b, c and 5 more`: the first `max` names, each on one line.
fn names(list: &[&str], max: usize) -> String {
    let mut out = list
        .iter()
        .take(max)
        .map(|c| OneLine(c).to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if list.len() > max {
        let _ = write!(out, " and {} more", list.len() - max);
    }
    out
}

/// A change's apply hazards of one cluster, one rule and severity, from one source file:
/// what one edit of a shared file (a component, a base) does to every Kustomization that
/// builds it.
#[derive(Debug)]
pub struct SourceGroup<'f> {
    /// In the order given; the first is the one shown.
    pub members: Vec<&'f Finding>,
}

impl SourceGroup<'_> {
    /// The Kustomizations of the members, each once, in order.
    #[must_use]
    pub fn kustomizations(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for k in self
            .members
            .iter()
            .filter_map(|f| f.kustomization.as_deref())
        {
            if !out.contains(&k) {
                out.push(k);
            }
        }
        out
    }
}

/// The hazards grouped by cluster, rule, severity and source file (a hazard of no file is
/// a group of its own), in the order of their first finding.
#[must_use]
pub fn by_source(findings: &[Finding]) -> Vec<SourceGroup<'_>> {
    type Key<'a> = (Option<&'a str>, &'a str, Severity, &'a str);
    let mut groups: Vec<SourceGroup<'_>> = Vec::new();
    let mut index: BTreeMap<Key<'_>, usize> = BTreeMap::new();
    for f in findings {
        let Some(file) = f.location.as_ref().map(|l| l.file.as_str()) else {
            groups.push(SourceGroup { members: vec![f] });
            continue;
        };
        let key = (f.cluster.as_deref(), f.rule, f.severity, file);
        if let Some(&i) = index.get(&key) {
            groups[i].members.push(f);
        } else {
            index.insert(key, groups.len());
            groups.push(SourceGroup { members: vec![f] });
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Rule;

    const W: Rule = Rule {
        id: "FS900",
        name: "test-warning",
        severity: Severity::Warning,
        summary: "A test rule.",
        help: "Nothing to do.",
    };
    const I: Rule = Rule {
        id: "FS901",
        name: "test-info",
        severity: Severity::Info,
        summary: "A test rule.",
        help: "Nothing to do.",
    };

    fn missing(here: &str, there: &str) -> Finding {
        Finding::new(
            &W,
            format!("`apps` is defined in cluster `{here}` but not in `{there}`"),
        )
        .in_cluster(here)
        .in_kustomization("flux-system/apps")
        .about("cluster", there)
    }

    #[test]
    fn a_quiet_listing_counts_info_and_verbose_lists_it() {
        let f = [
            Finding::new(&I, "note one").in_cluster("dev"),
            Finding::new(&W, "boom").in_cluster("dev"),
            Finding::new(&I, "note two").in_cluster("dev"),
        ];
        let quiet = listing(&f, "", Layout::default());
        assert_eq!(quiet.text, "warning[FS900]: boom (dev)\n");
        assert_eq!(quiet.info, 2);
        assert_eq!(
            quiet.hint().as_deref(),
            Some("2 info: `--verbose` lists them\n")
        );
        let verbose = listing(
            &f,
            "",
            Layout {
                verbose: true,
                wide: false,
            },
        );
        assert_eq!(verbose.text.lines().count(), 3, "{}", verbose.text);
        assert!(verbose.text.contains("info[FS901]: note two"));
        assert_eq!(verbose.hint(), None);
    }

    #[test]
    fn the_same_finding_in_several_clusters_is_one_entry_naming_them() {
        let at = Location::at("apps/x.yaml", 4, 9);
        let f: Vec<Finding> = ["dev", "prod", "staging"]
            .iter()
            .map(|c| {
                Finding::new(&W, "`${X}` ships verbatim")
                    .in_cluster(*c)
                    .in_kustomization("flux-system/apps")
                    .at(at.clone())
            })
            .collect();
        let l = listing(&f, "", Layout::default());
        assert_eq!(
            l.text,
            "apps/x.yaml:4:9: warning[FS900]: `${X}` ships verbatim (clusters dev, prod,\n    \
             staging; flux-system/apps)\n"
        );
    }

    #[test]
    fn findings_per_pair_of_clusters_are_one_per_kustomization_listing_the_clusters() {
        let f = [
            missing("update", "prod-eu"),
            missing("update", "prod-us"),
            missing("update", "staging"),
        ];
        let l = listing(&f, "", Layout::default());
        assert_eq!(
            l.text,
            "warning[FS900]: `apps` is defined in cluster `update` but not in `prod-eu`,\n    \
             `prod-us`, `staging` (update, flux-system/apps)\n"
        );
        // The other way round: each cluster's own file, one entry naming them all.
        let mut back: Vec<Finding> = ["prod-eu", "prod-us"]
            .iter()
            .map(|c| missing(c, "update").at(Location::at(format!("clusters/{c}/apps.yaml"), 4, 1)))
            .collect();
        back.push(missing("update", "staging"));
        let wide = Layout {
            wide: true,
            verbose: false,
        };
        let l = listing(&back, "", wide);
        assert_eq!(l.text.matches("warning[FS900]").count(), 2, "{}", l.text);
        assert!(
            l.text
                .contains("cluster `prod-eu`, `prod-us` but not in `update`"),
            "{}",
            l.text
        );
        assert!(
            l.text.contains("also at clusters/prod-us/apps.yaml:4:1"),
            "{}",
            l.text
        );
        assert!(l.text.contains("clusters prod-eu, prod-us;"), "{}", l.text);
    }

    #[test]
    fn findings_of_one_cluster_with_other_messages_stay_apart() {
        let f = [
            Finding::new(&W, "`a` is wrong").in_cluster("dev"),
            Finding::new(&W, "`b` is wrong").in_cluster("dev"),
        ];
        assert_eq!(alike(&f.iter().collect::<Vec<_>>()).len(), 2);
    }

    #[test]
    fn more_than_twenty_entries_of_a_rule_end_in_and_n_more() {
        let f: Vec<Finding> = (0..25)
            .map(|i| Finding::new(&W, format!("boom {i}")).in_cluster("dev"))
            .collect();
        let l = listing(&f, "  ", Layout::default());
        assert_eq!(l.text.matches("warning[FS900]").count(), PER_RULE);
        assert!(
            l.text
                .ends_with("  and 5 more FS900 findings (--verbose, or -o json)\n"),
            "{}",
            l.text
        );
        let all = listing(
            &f,
            "",
            Layout {
                verbose: true,
                wide: false,
            },
        );
        assert_eq!(all.text.matches("warning[FS900]").count(), 25);
    }

    #[test]
    fn errors_are_listed_before_warnings() {
        let f = [
            Finding::new(&W, "second").in_cluster("dev"),
            Finding::new(&W, "first")
                .in_cluster("dev")
                .with_severity(Severity::Error),
        ];
        let l = listing(&f, "", Layout::default());
        assert!(l.text.starts_with("error[FS900]: first"), "{}", l.text);
    }

    #[test]
    fn hazards_of_one_source_file_are_one_group_per_cluster_and_rule() {
        let h = |c: &str, k: &str, file: &str| {
            Finding::new(&W, format!("{k} changes"))
                .in_cluster(c)
                .in_kustomization(k)
                .at(Location::at(file, 3, 1))
        };
        let f = [
            h("home", "apps/a", "components/pvc.yaml"),
            h("home", "apps/b", "components/pvc.yaml"),
            h("home", "apps/c", "apps/c/pvc.yaml"),
            h("lab", "apps/a", "components/pvc.yaml"),
        ];
        let g = by_source(&f);
        assert_eq!(g.len(), 3);
        assert_eq!(g[0].kustomizations(), ["apps/a", "apps/b"]);
        assert_eq!(g[1].kustomizations(), ["apps/c"]);
        assert_eq!(g[2].members[0].cluster.as_deref(), Some("lab"));
    }
}
