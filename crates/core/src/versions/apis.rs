//! The Flux versions the API versions of a render's Flux objects allow (`flux_apis.tsv`),
//! and a Helm-style constraint read as a version.

use super::{Assumed, Basis, FluxVersion, NEWEST_FLUX_MINOR, OLDEST_FLUX_MINOR};

/// The Flux minors whose CRDs serve each Flux API (`group\tversion\tkind\tminors`, the
/// minors comma-separated), taken from the CRDs of every Flux release fluxsim embeds
/// (fluxsim-kubeschema's `flux_api`; a consumers test keeps this copy equal to it, and
/// `UPDATE_EXPECTED=1` rewrites it).
pub const FLUX_API_TABLE: &str = include_str!("../flux_apis.tsv");

/// The minors that serve the Flux API `group`/`version` `kind`, from [`FLUX_API_TABLE`];
/// `None` for an API the table does not hold.
#[must_use]
pub fn flux_api_minors(group: &str, version: &str, kind: &str) -> Option<Vec<u32>> {
    FLUX_API_TABLE.lines().find_map(|l| {
        let mut cells = l.split('\t');
        let (g, v, k, m) = (cells.next()?, cells.next()?, cells.next()?, cells.next()?);
        (g == group && v == version && k == kind)
            .then(|| m.split(',').filter_map(|x| x.parse().ok()).collect())
    })
}

/// A Flux API: group, version, kind.
type Api<'a> = (&'a str, &'a str, &'a str);

/// The presumption when nothing says which Flux a cluster runs but its objects do: the
/// newest minor that serves every Flux API version `used` names (`(group, version, kind)`),
/// when the newest release does not serve them all (a repository written in `v1beta2`
/// sources runs a Flux that serves them); `None` when the newest serves them, or no minor
/// serves them all.
#[must_use]
pub fn presumed_from_apis<'a>(
    used: impl IntoIterator<Item = Api<'a>>,
) -> Option<Assumed<FluxVersion>> {
    let known: Vec<(Api<'_>, Vec<u32>)> = used
        .into_iter()
        .filter_map(|api| flux_api_minors(api.0, api.1, api.2).map(|m| (api, m)))
        .collect();
    let serves = |minor: u32| known.iter().all(|(_, m)| m.contains(&minor));
    if serves(NEWEST_FLUX_MINOR) {
        return None;
    }
    let minor = (OLDEST_FLUX_MINOR..NEWEST_FLUX_MINOR)
        .rev()
        .find(|m| serves(*m))?;
    let mut old: Vec<String> = known
        .iter()
        .filter(|(_, m)| !m.contains(&NEWEST_FLUX_MINOR))
        .map(|((g, v, k), _)| format!("`{g}/{v}` {k}"))
        .collect();
    old.sort();
    old.dedup();
    let more = old.len().saturating_sub(3);
    old.truncate(3);
    if more > 0 {
        old.push(format!("{more} more"));
    }
    Some(Assumed {
        version: FluxVersion { minor, patch: None },
        basis: Basis::Presumed {
            why: format!(
                "nothing in the repository says which Flux runs, and its objects use {} that \
                 Flux v2.{NEWEST_FLUX_MINOR} no longer serves, so v2.{minor}, the newest release \
                 that serves every Flux API the cluster uses (`[versions] flux` in \
                 fluxsim.toml says it)",
                old.join(", ")
            ),
        },
    })
}

/// What a `FluxInstance`'s `spec.distribution.version` (a semver constraint) installs: the
/// newest minor fluxsim knows that satisfies it (`2.x`, `2.4.x`, `~2.4`, `>=2.3 <2.5`,
/// `2.4.1`), the Flux Operator's reading (`fluxcd.controlplane.io/v1` FluxInstance: the
/// newest release of the distribution matching the constraint). `None` when no known minor
/// satisfies it or it cannot be read.
#[must_use]
pub fn from_constraint(constraint: &str) -> Option<FluxVersion> {
    let c = constraint.trim().trim_matches(['"', '\'']);
    if c.is_empty() {
        return None;
    }
    // No operator: equality, a missing or `x` part a wildcard (Masterminds semver, which
    // the operator uses: `2.4` is `2.4.x`, `2.4.1` that release).
    if !c.contains(['<', '>', '~', '^', '=', '!', ' ', ',', '|', '*']) {
        if let Some(v) = FluxVersion::parse(c) {
            return v.is_known().then_some(v);
        }
    }
    let reqs: Vec<semver::VersionReq> = c
        .split("||")
        .filter_map(|alt| {
            semver::VersionReq::parse(&alt.trim().replace(' ', ", ").replace(",,", ",")).ok()
        })
        .collect();
    if reqs.is_empty() {
        return None;
    }
    (OLDEST_FLUX_MINOR..=NEWEST_FLUX_MINOR)
        .rev()
        .find_map(|minor| {
            // Any patch of the minor that satisfies: 0 to 99 (releases stay well below).
            (0..100u64).rev().find_map(|patch| {
                let v = semver::Version::new(2, u64::from(minor), patch);
                reqs.iter()
                    .any(|r| r.matches(&v))
                    .then_some(FluxVersion { minor, patch: None })
            })
        })
}
