//! Which bootstrap sources may install a CRD group, by the names of their releases and
//! charts.

use super::{BootstrapSource, Installs};

/// How many name parts of `group` one of `names` shares: equal parts, one part the prefix of
/// the other (at least 4 characters: `dragonfly` and `dragonflydb.io`), or a part equal to a
/// whole name without its dashes (`external-dns` and `externaldns.k8s.io`).
#[must_use]
pub fn name_score(group: &str, names: &[&str]) -> usize {
    let parts = |s: &str| -> Vec<String> {
        s.split(['.', '-', '_'])
            .filter(|p| p.len() > 1 && !GENERIC_NAME_PARTS.contains(p))
            .map(str::to_string)
            .collect()
    };
    let mut mine: Vec<String> = names.iter().flat_map(|n| parts(n)).collect();
    mine.extend(names.iter().map(|n| n.replace(['-', '_'], "")));
    let close = |a: &str, b: &str| {
        a == b || (a.len().min(b.len()) >= 4 && (a.starts_with(b) || b.starts_with(a)))
    };
    let mut g = parts(group);
    g.dedup();
    g.iter()
        .filter(|gp| mine.iter().any(|m| close(gp, m)))
        .count()
}

/// Name parts too common to rank a chart by.
const GENERIC_NAME_PARTS: &[&str] = &["io", "com", "org", "net", "dev", "k8s", "sh", "x"];

/// Charts whose names do not say the API groups of the CRDs they carry, with those groups:
/// the Prometheus Operator's CRDs (`monitoring.coreos.com`) ship in prometheus-community's
/// `kube-prometheus-stack` and `prometheus-operator-crds` charts (their `crds/` folders),
/// the Gateway API's in the `gateway-api` CRD charts.
pub const KNOWN_CHART_GROUPS: &[(&str, &[&str])] = &[
    ("kube-prometheus-stack", &["monitoring.coreos.com"]),
    ("prometheus-operator-crds", &["monitoring.coreos.com"]),
    ("gateway-api-crds", &["gateway.networking.k8s.io"]),
];

/// The hints for `group`: the files that define its CRDs, then the releases and charts known
/// to carry them or whose names match it, best first; each a phrase (`` `bootstrap/helmfile/
/// apps.yaml` installs release `external-secrets` ``).
#[must_use]
pub fn hints_for(group: &str, sources: &[BootstrapSource]) -> Vec<String> {
    let mut defines = Vec::new();
    let mut named: Vec<(usize, String)> = Vec::new();
    let known = |names: &[&str]| {
        KNOWN_CHART_GROUPS
            .iter()
            .any(|(c, groups)| names.contains(c) && groups.contains(&group))
    };
    for s in sources {
        match &s.what {
            Installs::Crds { groups } if groups.contains(group) => defines.push(format!(
                "`{}` defines CRDs of `{group}`{}",
                s.file,
                if s.via.is_empty() {
                    " (no Kustomization applies it)".to_string()
                } else {
                    s.via_tail()
                }
            )),
            Installs::Release { name, chart, .. } => {
                let chart_name = chart.rsplit('/').next().unwrap_or(chart);
                let score = if known(&[name, chart_name]) {
                    usize::MAX
                } else {
                    name_score(group, &[name, chart_name])
                };
                if score > 0 {
                    named.push((score, format!("`{}` installs release `{name}`", s.file)));
                }
            }
            Installs::Chart { name } => {
                let score = if known(&[name]) {
                    usize::MAX
                } else {
                    name_score(group, &[name])
                };
                if score > 0 {
                    named.push((score, format!("`{}` is chart `{name}`", s.file)));
                }
            }
            _ => {}
        }
    }
    named.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    named.dedup_by(|a, b| a.1 == b.1);
    defines
        .into_iter()
        .chain(named.into_iter().map(|(_, h)| h))
        .collect()
}
