//! The graph's findings: what keeps a cluster's Kustomizations from converging on a cold
//! cluster, and how two clusters' graphs differ.

use std::collections::{BTreeMap, BTreeSet};

use super::config::GraphConfig;
use super::kinds::{self, FluxApis};
use super::model::{is_trigger, object_location, Files, HelmChart, Node, NodeState, Obj, Order};
use super::rules;
use super::simulate::{
    core_providers, flux_apis, namespace_providers, needed_kinds, needed_namespaces,
};
use crate::finding::{Finding, Location, Rule};
use crate::flux::NamespacedName;

/// Everything one cluster's graph is checked with.
pub(crate) struct ClusterCheck<'a> {
    pub(crate) cluster: &'a str,
    pub(crate) nodes: &'a [Node],
    pub(crate) order: &'a Order<'a>,
    pub(crate) config: &'a GraphConfig,
}

impl ClusterCheck<'_> {
    fn finding(&self, rule: &Rule, n: &Node, message: String) -> Finding {
        let mut f = Finding::new(rule, message)
            .in_cluster(self.cluster)
            .in_kustomization(n.id.to_string());
        if let Some(l) = &n.location {
            f = f.at(l.clone());
        }
        f
    }

    /// `, nor does what waits for it: `a`, `b``, or nothing when nothing waits for `id`.
    fn blocked_list(&self, id: &NamespacedName) -> String {
        blocked_tail(self.order.after(id))
    }

    /// Runs every per-cluster check.
    pub(crate) fn run(&self, files: &mut Files) -> Vec<Finding> {
        let mut out = Vec::new();
        self.cycles(&mut out);
        self.missing_dependencies(&mut out);
        self.custom_resources(files, &mut out);
        self.namespaces(files, &mut out);
        self.substitute_from(&mut out);
        self.wait_on_unwaited(&mut out);
        self.never_ready(&mut out);
        out
    }

    /// FS201: strongly connected components of the `dependsOn` graph.
    fn cycles(&self, out: &mut Vec<Finding>) {
        for cycle in dependency_cycles(self.nodes) {
            let path: Vec<&str> = cycle
                .iter()
                .chain(cycle.first())
                .map(|id| id.name.as_str())
                .collect();
            let members: BTreeSet<&NamespacedName> = cycle.iter().collect();
            let mut blocked: Vec<&NamespacedName> = Vec::new();
            for m in &cycle {
                for a in self.order.after(m) {
                    if !members.contains(a) && !blocked.contains(&a) {
                        blocked.push(a);
                    }
                }
            }
            blocked.sort();
            for id in &cycle {
                let Some(n) = self.order.nodes.get(id) else {
                    continue;
                };
                out.push(self.finding(
                    &rules::DEPENDENCY_CYCLE,
                    n,
                    format!(
                        "`{}` is on a dependsOn cycle ({}): none of them ever becomes \
                         Ready{}",
                        id.name,
                        path.join(" -> "),
                        blocked_tail(blocked.iter().copied())
                    ),
                ));
            }
        }
    }

    /// FS202: dependsOn naming nothing.
    fn missing_dependencies(&self, out: &mut Vec<Finding>) {
        for n in self.nodes {
            for d in &n.depends_on {
                if self.order.nodes.contains_key(d) {
                    continue;
                }
                out.push(self.finding(
                    &rules::MISSING_DEPENDENCY,
                    n,
                    format!(
                        "`{}` dependsOn `{d}`, which cluster `{}` never defines: `{}` never \
                         reconciles{}",
                        n.id.name,
                        self.cluster,
                        n.id.name,
                        self.blocked_list(&n.id)
                    ),
                ));
            }
        }
    }

    /// FS203-FS207, FS214, FS215: custom resources and their CRDs.
    fn custom_resources(&self, files: &mut Files, out: &mut Vec<Finding>) {
        let flux = flux_apis(self.nodes);
        for n in self.nodes {
            for (group, kind, obj_id) in needed_kinds(n, &flux, self.config) {
                let obj = n.objects.iter().find(|o| &o.id == obj_id);
                let at = obj
                    .and_then(|o| object_location(files, n, o))
                    .or_else(|| n.location.clone());
                let what = format!("`{obj_id}`");
                if let Some(f) = self.check_kind(n, group, kind, &what, &flux) {
                    out.push(with_location(f, at));
                }
            }
        }
    }

    fn check_kind(
        &self,
        n: &Node,
        group: &str,
        kind: &str,
        what: &str,
        flux: &FluxApis,
    ) -> Option<Finding> {
        let providers: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|m| m.id != n.id && m.crds().any(|(g, k)| g == group && k == kind))
            .collect();
        if providers
            .iter()
            .any(|p| self.order.runs_before(&p.id, &n.id))
        {
            return None;
        }
        let blocked = self.blocked_list(&n.id);
        if !providers.is_empty() {
            let unordered: Vec<&NamespacedName> = providers
                .iter()
                .filter(|p| !self.order.runs_before(&n.id, &p.id))
                .map(|p| &p.id)
                .collect();
            if !unordered.is_empty() {
                return Some(self.finding(
                    &rules::CRD_UNORDERED,
                    n,
                    format!(
                        "{what} in `{}` needs a CRD applied by {}, which is not ordered \
                         before it: on a cold cluster `{}` fails until that one has run",
                        n.id.name,
                        names(unordered),
                        n.id.name
                    ),
                ));
            }
            return Some(self.finding(
                &rules::CRD_APPLIED_LATER,
                n,
                format!(
                    "{what} in `{}` needs a CRD applied by {}, which can only run after \
                     `{}`: its apply fails forever{blocked}",
                    n.id.name,
                    names(providers.iter().map(|p| &p.id)),
                    n.id.name
                ),
            ));
        }
        let Some(t) = self.config.trigger(group, kind) else {
            if kinds::is_flux(group) {
                return Some(self.flux_kind_missing(n, group, what, flux, &blocked));
            }
            return Some(self.presumed_from_helm(n, group, what, &blocked));
        };
        let trigger = t.noun();
        let makes = t.makes();
        let triggers: Vec<&Node> = self
            .nodes
            .iter()
            .filter(|m| m.objects.iter().any(|o| is_trigger(o, t)))
            .collect();
        // Ready waits for the trigger's health with `wait: true`, or with `healthChecks`
        // naming it (checkHealth in kustomization_controller.go).
        let awaits = |m: &Node| {
            m.objects
                .iter()
                .filter(|o| is_trigger(o, t))
                .any(|o| m.awaits(o))
        };
        if triggers
            .iter()
            .any(|m| m.id != n.id && awaits(m) && self.order.ready_before(&m.id, &n.id))
        {
            return None;
        }
        if triggers.is_empty() {
            return Some(self.finding(
                &rules::RUNTIME_CRD_DEADLOCK,
                n,
                format!(
                    "{what} in `{}` needs a CRD that {makes}, and no Kustomization of cluster \
                     `{}` applies one: `{}` never becomes Ready{blocked}",
                    n.id.name, self.cluster, n.id.name
                ),
            ));
        }
        let deadlocked = triggers
            .iter()
            .all(|m| m.id == n.id || self.order.runs_before(&n.id, &m.id));
        if deadlocked {
            let same = triggers.iter().any(|m| m.id == n.id);
            let cause = if same {
                format!(
                    "`{}` applies the {trigger} itself, and Flux dry-runs every object before \
                     applying any, so the apply fails before the {trigger} exists",
                    n.id.name
                )
            } else {
                format!(
                    "the {trigger} is applied by {}, which can only run after `{}`",
                    names(triggers.iter().map(|m| &m.id)),
                    n.id.name
                )
            };
            return Some(self.finding(
                &rules::RUNTIME_CRD_DEADLOCK,
                n,
                format!(
                    "{what} in `{}` needs a CRD that {makes}, but {cause}: the CRD never \
                     appears and `{}` never becomes Ready{blocked}",
                    n.id.name, n.id.name
                ),
            ));
        }
        Some(self.finding(
            &rules::RUNTIME_CRD_NOT_AWAITED,
            n,
            format!(
                "{what} in `{}` needs a CRD that {makes}, but no dependsOn of `{}` waits for \
                 a `wait: true` Kustomization that applies it ({}): on a cold cluster the apply \
                 fails until the controller catches up",
                n.id.name,
                n.id.name,
                names(triggers.iter().filter(|m| m.id != n.id).map(|m| &m.id))
            ),
        ))
    }

    /// FS203 for a Flux kind whose CRD the cluster does not have.
    fn flux_kind_missing(
        &self,
        n: &Node,
        group: &str,
        what: &str,
        flux: &FluxApis,
        blocked: &str,
    ) -> Finding {
        let why = if let FluxApis::Rendered(_) = flux {
            let extra = kinds::flux_extra_component(group).map_or(String::new(), |c| {
                format!(" (`flux bootstrap` installs it only with `--components-extra={c}`)")
            });
            format!(
                "is a Flux kind, but the Flux CRDs that cluster `{}` renders \
                 (gotk-components.yaml) do not include it{extra}",
                self.cluster
            )
        } else {
            format!(
                "is a Flux kind, but cluster `{}` is not bootstrapped (its root is not \
                 `flux-system/flux-system`) and no Kustomization applies Flux's CRDs",
                self.cluster
            )
        };
        self.finding(
            &rules::CRD_MISSING,
            n,
            format!(
                "{what} in `{}` {why}: `{}` never becomes Ready{blocked}",
                n.id.name, n.id.name
            ),
        )
    }

    /// FS214, FS215, FS203: a CRD in no render and no declaration, presumed to come from a
    /// Helm chart when a `HelmRelease` that can run first exists.
    fn presumed_from_helm(&self, n: &Node, group: &str, what: &str, blocked: &str) -> Finding {
        let mut awaited: Vec<Candidate> = Vec::new();
        let mut racy: Vec<Candidate> = Vec::new();
        let mut never: Vec<Candidate> = Vec::new();
        for m in self.nodes {
            for (obj, chart) in m.helm_releases() {
                let mut c = Candidate::new(m, obj, chart, group);
                c.ordered = m.id != n.id && self.order.runs_before(&m.id, &n.id);
                if m.id != n.id && self.order.ready_before(&m.id, &n.id) && m.awaits(obj) {
                    awaited.push(c);
                } else if m.id == n.id || self.order.runs_before(&n.id, &m.id) {
                    never.push(c);
                } else {
                    racy.push(c);
                }
            }
        }
        let declare = |c: &[Candidate]| {
            let chart = c
                .iter()
                .filter(|c| (c.score > 0 || c.ordered) && !c.chart.chart.is_empty())
                .min_by(|a, b| a.rank(b))
                .map_or("CHART", |c| c.chart.chart.as_str());
            format!("`[[helm_crds]] chart = \"{chart}\" groups = [\"{group}\"]`")
        };
        // The best match by name, when it is not among those the finding relies on: said, so
        // a likely race or deadlock is not hidden behind an unrelated chart (never used to
        // clear or raise a finding).
        let likeliest = |chosen: &[Candidate], others: &[&[Candidate]]| -> String {
            let best_chosen = chosen.iter().map(|c| c.score).max().unwrap_or(0);
            let Some(best) = others
                .iter()
                .flat_map(|o| o.iter())
                .filter(|c| c.score > best_chosen)
                .min_by(|a, b| a.rank(b))
            else {
                return String::new();
            };
            let where_ = if *best.node == n.id {
                format!(
                    "is applied by `{}` itself, whose apply fails on this object before the \
                     HelmRelease exists (Flux dry-runs every object first): a deadlock if its \
                     chart carries the CRD",
                    n.id.name
                )
            } else if self.order.runs_before(&n.id, best.node) {
                format!(
                    "runs only after `{}`: a deadlock if its chart carries the CRD",
                    n.id.name
                )
            } else {
                format!(
                    "is not awaited before `{}`: a race if its chart carries the CRD",
                    n.id.name
                )
            };
            format!(
                "; the likeliest by name, {}, {where_}",
                candidates(&mut [*best])
            )
        };
        if !awaited.is_empty() {
            return self.finding(
                &rules::CRD_PRESUMED_FROM_HELM,
                n,
                format!(
                    "{what} in `{}` needs a CRD that no manifest and no fluxsim.toml entry \
                     defines; presumed to come from a Helm chart installed before it: {} \
                     (applied by a Kustomization that waits for it and is Ready before `{}`){}; \
                     declare {} in fluxsim.toml to check the order exactly",
                    n.id.name,
                    candidates(&mut awaited),
                    n.id.name,
                    likeliest(&awaited, &[&racy, &never]),
                    declare(&[awaited.as_slice(), &racy, &never].concat()),
                ),
            );
        }
        if !racy.is_empty() {
            return self.finding(
                &rules::CRD_PRESUMED_FROM_HELM_NOT_AWAITED,
                n,
                format!(
                    "{what} in `{}` needs a CRD that no manifest and no fluxsim.toml entry \
                     defines; if a Helm chart installs it, it is one of {}, none of which `{}` \
                     waits for (no dependsOn on a `wait: true` Kustomization that applies it): \
                     on a cold cluster the apply fails until helm-controller has installed the \
                     chart, then a retry succeeds{}; declare {} in fluxsim.toml to check the \
                     order exactly",
                    n.id.name,
                    candidates(&mut racy),
                    n.id.name,
                    likeliest(&racy, &[&never]),
                    declare(&[racy.as_slice(), &never].concat()),
                ),
            );
        }
        if !never.is_empty() {
            return self.finding(
                &rules::CRD_MISSING,
                n,
                format!(
                    "{what} in `{}` needs a CRD that no Kustomization of cluster `{}` applies \
                     (not a built-in or Flux kind, not in fluxsim.toml), and no HelmRelease \
                     that could install it runs first: {} can only be applied by `{}` itself \
                     (Flux dry-runs every object before applying any, so the apply fails on \
                     this one and the HelmRelease is never applied) or after it: `{}` never \
                     becomes Ready{blocked}",
                    n.id.name,
                    self.cluster,
                    candidates(&mut never),
                    n.id.name,
                    n.id.name
                ),
            );
        }
        self.finding(
            &rules::CRD_MISSING,
            n,
            format!(
                "{what} in `{}` needs a CRD that no Kustomization of cluster `{}` applies (not \
                 a built-in or Flux kind, not in fluxsim.toml, and no HelmRelease could install \
                 it): `{}` never becomes Ready{blocked}",
                n.id.name, self.cluster, n.id.name
            ),
        )
    }

    /// FS213: namespaces not created before the objects in them.
    fn namespaces(&self, files: &mut Files, out: &mut Vec<Finding>) {
        for n in self.nodes {
            for (ns, obj_id) in needed_namespaces(n, self.order) {
                let providers = namespace_providers(ns, n, self.order);
                if providers
                    .iter()
                    .any(|p| self.order.runs_before(&p.id, &n.id))
                {
                    continue;
                }
                let at = n
                    .objects
                    .iter()
                    .find(|o| &o.id == obj_id)
                    .and_then(|o| object_location(files, n, o))
                    .or_else(|| n.location.clone());
                let unordered: Vec<&NamespacedName> = providers
                    .iter()
                    .filter(|p| !self.order.runs_before(&n.id, &p.id))
                    .map(|p| &p.id)
                    .collect();
                let blocked = self.blocked_list(&n.id);
                let (message, race) = if providers.is_empty() {
                    (
                        format!(
                            "`{obj_id}` in `{}` lives in namespace `{ns}`, which no \
                             Kustomization of cluster `{}` creates: its apply fails and `{}` \
                             never becomes Ready{blocked}",
                            n.id.name, self.cluster, n.id.name
                        ),
                        false,
                    )
                } else if unordered.is_empty() {
                    (
                        format!(
                            "`{obj_id}` in `{}` lives in namespace `{ns}`, which {} creates, \
                             but that can only run after `{}`: its apply fails forever{blocked}",
                            n.id.name,
                            names(providers.iter().map(|p| &p.id)),
                            n.id.name
                        ),
                        false,
                    )
                } else {
                    (
                        format!(
                            "`{obj_id}` in `{}` lives in namespace `{ns}`, which {} creates, \
                             not ordered before it: on a cold cluster `{}` fails until that \
                             one has run",
                            n.id.name,
                            names(unordered),
                            n.id.name
                        ),
                        true,
                    )
                };
                let mut f = self.finding(&rules::NAMESPACE_NOT_CREATED_BEFORE, n, message);
                if race {
                    f = f.with_severity(crate::finding::Severity::Warning);
                }
                out.push(with_location(f, at));
            }
        }
    }

    /// FS208/FS209: substituteFrom sources not applied before.
    fn substitute_from(&self, out: &mut Vec<Finding>) {
        for n in self.nodes {
            for s in &n.substitute_from {
                let producers: Vec<&Node> =
                    core_providers(&s.kind, &n.id.namespace, &s.name, self.order);
                if producers
                    .iter()
                    .any(|p| p.id != n.id && self.order.runs_before(&p.id, &n.id))
                {
                    continue;
                }
                let source = format!("{}/{}", s.kind, s.name);
                let by = names(producers.iter().map(|p| &p.id));
                let never = producers
                    .iter()
                    .all(|p| p.id == n.id || self.order.runs_before(&n.id, &p.id));
                let when = if producers.is_empty() {
                    format!(
                        "no Kustomization of cluster `{}` that fluxsim could render applies it",
                        self.cluster
                    )
                } else if never {
                    format!("it is applied by {by}, which can only run after (vars are read before the apply)")
                } else {
                    format!("it is applied by {by}, which is not ordered before it")
                };
                let f = if s.optional {
                    if producers.is_empty() {
                        // Optional and made by nobody: the author expects it to be absent.
                        continue;
                    }
                    self.finding(
                        &rules::OPTIONAL_SUBSTITUTE_FROM_NOT_BEFORE,
                        n,
                        format!(
                            "`{}` substitutes from optional `{source}`, but {when}: on a cold \
                             cluster Flux silently renders `{}` without those vars{}",
                            n.id.name,
                            n.id.name,
                            if never {
                                " every time"
                            } else {
                                " until it appears"
                            }
                        ),
                    )
                } else {
                    self.finding(
                        &rules::SUBSTITUTE_FROM_NOT_BEFORE,
                        n,
                        format!(
                            "`{}` substitutes from `{source}`, but {when}: on a cold cluster \
                             its build fails {}{}",
                            n.id.name,
                            if never || producers.is_empty() {
                                "forever"
                            } else {
                                "until it appears"
                            },
                            self.blocked_list(&n.id)
                        ),
                    )
                };
                out.push(f);
            }
        }
    }

    /// FS211: wait: true on top of wait: false.
    fn wait_on_unwaited(&self, out: &mut Vec<Finding>) {
        for n in self.nodes.iter().filter(|n| n.wait) {
            for d in &n.depends_on {
                let Some(dn) = self.order.nodes.get(d) else {
                    continue;
                };
                if dn.health_checked || dn.state == NodeState::Suspended {
                    continue;
                }
                out.push(self.finding(
                    &rules::WAIT_ON_UNWAITED,
                    n,
                    format!(
                        "`{}` has `wait: true` and dependsOn `{}`, which has `wait: false`: \
                         `{}` is Ready as soon as its objects are applied, not when they are \
                         healthy, so `{}` may start before what it needs runs",
                        n.id.name, d.name, d.name, n.id.name
                    ),
                ));
            }
        }
    }

    /// FS212: failing renders and suspended Kustomizations.
    fn never_ready(&self, out: &mut Vec<Finding>) {
        let explained: BTreeSet<String> = out
            .iter()
            .filter(|f| f.rule == rules::SUBSTITUTE_FROM_NOT_BEFORE.id)
            .filter_map(|f| f.kustomization.clone())
            .collect();
        for n in self.nodes {
            let why = match &n.state {
                // A build failing on a missing substituteFrom source is FS208's finding.
                NodeState::Failed(_) if explained.contains(&n.id.to_string()) => continue,
                NodeState::Failed(e) => format!("fails to render ({e})"),
                NodeState::Suspended => "is suspended".to_string(),
                _ => continue,
            };
            let mut f = self.finding(
                &rules::NEVER_READY,
                n,
                format!(
                    "`{}` {why}: it never becomes Ready{}",
                    n.id.name,
                    self.blocked_list(&n.id)
                ),
            );
            // Suspending a leaf is a choice; suspending what others wait for blocks them.
            if n.state == NodeState::Suspended && self.order.after(&n.id).is_empty() {
                f = f.with_severity(crate::finding::Severity::Warning);
            }
            out.push(f);
        }
    }
}

/// A `HelmRelease` that may install a CRD, with how well its names match the CRD's group.
#[derive(Clone, Copy)]
struct Candidate<'a> {
    node: &'a NamespacedName,
    release: &'a Obj,
    chart: &'a HelmChart,
    /// Name parts the chart or release shares with the group (`cert-manager` and
    /// `cert-manager.io`): a ranking for the message, never evidence.
    score: usize,
    /// Its Kustomization runs before the custom resource's (ranked before unordered ones).
    ordered: bool,
}

impl<'a> Candidate<'a> {
    fn new(m: &'a Node, release: &'a Obj, chart: &'a HelmChart, group: &str) -> Candidate<'a> {
        Candidate {
            node: &m.id,
            release,
            chart,
            score: name_score(group, &[&chart.chart, &release.id.name]),
            ordered: false,
        }
    }

    /// Best name match first, then what runs before, then by Kustomization and release.
    fn rank(&self, other: &Candidate) -> std::cmp::Ordering {
        other
            .score
            .cmp(&self.score)
            .then_with(|| other.ordered.cmp(&self.ordered))
            .then_with(|| self.node.cmp(other.node))
            .then_with(|| self.release.id.namespace.cmp(&other.release.id.namespace))
            .then_with(|| self.release.id.name.cmp(&other.release.id.name))
    }
}

/// How many name parts of `group` one of `names` shares: equal parts, one part the prefix of
/// the other (at least 4 characters: `dragonfly` and `dragonflydb.io`), or a part equal to a
/// whole name without its dashes (`external-dns` and `externaldns.k8s.io`).
fn name_score(group: &str, names: &[&str]) -> usize {
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

/// How many candidates a message names.
const CANDIDATES_SHOWN: usize = 3;

/// `` HelmRelease `ns/name` (chart `c`) in `ks`, ... and N more ``, best match first.
fn candidates(c: &mut [Candidate]) -> String {
    c.sort_by(|a, b| a.rank(b));
    let mut parts: Vec<String> = c
        .iter()
        .take(CANDIDATES_SHOWN)
        .map(|x| {
            // `Skip` leaves the chart's crds/ directory out; CRDs in its templates still
            // install, so the release stays a candidate, marked.
            let skip = if x.chart.install_crds == "Skip" {
                ", `install.crds: Skip`"
            } else {
                ""
            };
            let chart = if x.chart.chart.is_empty() {
                String::new()
            } else {
                format!(" (chart `{}`{skip})", x.chart.chart)
            };
            format!(
                "HelmRelease `{}/{}`{chart} in `{}`",
                x.release.id.namespace, x.release.id.name, x.node.name
            )
        })
        .collect();
    if c.len() > CANDIDATES_SHOWN {
        parts.push(format!("and {} more", c.len() - CANDIDATES_SHOWN));
    }
    parts.join(", ")
}

fn with_location(mut f: Finding, at: Option<Location>) -> Finding {
    f.location = at;
    f
}

/// `; what waits for it never does either: `a`, `b``, or "" when the list is empty.
fn blocked_tail<'a>(ids: impl IntoIterator<Item = &'a NamespacedName>) -> String {
    let list = names(ids);
    if list == "nothing" {
        String::new()
    } else {
        format!("; what waits for it never does either: {list}")
    }
}

/// `` `a`, `b` `` or "nothing".
fn names<'a>(ids: impl IntoIterator<Item = &'a NamespacedName>) -> String {
    let mut v: Vec<&str> = ids.into_iter().map(|i| i.name.as_str()).collect();
    v.sort_unstable();
    v.dedup();
    if v.is_empty() {
        "nothing".to_string()
    } else {
        v.iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The dependsOn cycles: each strongly connected component with more than one member (or a
/// self-edge), as a path starting at its smallest id.
pub(crate) fn dependency_cycles(nodes: &[Node]) -> Vec<Vec<NamespacedName>> {
    let deps: BTreeMap<&NamespacedName, Vec<&NamespacedName>> = nodes
        .iter()
        .map(|n| (&n.id, n.depends_on.iter().collect()))
        .collect();
    let reach = |from: &NamespacedName| -> BTreeSet<&NamespacedName> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&NamespacedName> = deps.get(from).cloned().unwrap_or_default();
        while let Some(at) = stack.pop() {
            if seen.insert(at) {
                stack.extend(deps.get(at).cloned().unwrap_or_default());
            }
        }
        seen
    };
    let reaches: BTreeMap<&NamespacedName, BTreeSet<&NamespacedName>> =
        deps.keys().map(|k| (*k, reach(k))).collect();
    let mut done: BTreeSet<&NamespacedName> = BTreeSet::new();
    let mut cycles = Vec::new();
    for (id, r) in &reaches {
        if done.contains(id) || !r.contains(id) {
            continue;
        }
        // The component: everything `id` reaches that reaches `id` back.
        let comp: BTreeSet<&NamespacedName> = r
            .iter()
            .copied()
            .filter(|m| reaches.get(m).is_some_and(|mr| mr.contains(id)))
            .collect();
        done.extend(comp.iter().copied());
        // The shortest way round through `id`: breadth-first over the component's edges,
        // in id order, until an edge returns to `id`.
        let mut prev: BTreeMap<&NamespacedName, &NamespacedName> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([*id]);
        let mut last = None;
        'search: while let Some(u) = queue.pop_front() {
            let mut next: Vec<&NamespacedName> = deps[u]
                .iter()
                .copied()
                .filter(|d| comp.contains(d))
                .collect();
            next.sort();
            for d in next {
                if d == *id {
                    last = Some(u);
                    break 'search;
                }
                if d != *id && !prev.contains_key(d) {
                    prev.insert(d, u);
                    queue.push_back(d);
                }
            }
        }
        let mut path = Vec::new();
        let mut at = last;
        while let Some(u) = at {
            path.push(u.clone());
            at = if u == *id { None } else { prev.get(u).copied() };
        }
        path.reverse();
        cycles.push(path);
    }
    cycles
}

/// FS210: every pair of clusters, compared Kustomization by Kustomization (by id).
pub(crate) fn compare_clusters(clusters: &[(&str, &[Node])]) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, (a, an)) in clusters.iter().enumerate() {
        for (b, bn) in &clusters[i + 1..] {
            let am: BTreeMap<&NamespacedName, &Node> = an.iter().map(|n| (&n.id, n)).collect();
            let bm: BTreeMap<&NamespacedName, &Node> = bn.iter().map(|n| (&n.id, n)).collect();
            let ids: BTreeSet<&NamespacedName> = am.keys().chain(bm.keys()).copied().collect();
            for id in ids {
                let f = match (am.get(id), bm.get(id)) {
                    (Some(x), None) => only_in(x, a, b),
                    (None, Some(y)) => only_in(y, b, a),
                    (Some(x), Some(y)) => match differences(x, a, y, b) {
                        Some(f) => f,
                        None => continue,
                    },
                    (None, None) => continue,
                };
                out.push(f);
            }
        }
    }
    out
}

fn only_in(n: &Node, here: &str, there: &str) -> Finding {
    let mut f = Finding::new(
        &rules::CLUSTER_GRAPHS_DIFFER,
        format!(
            "`{}` is defined in cluster `{here}` but not in `{there}`",
            n.id.name
        ),
    )
    .in_cluster(here)
    .in_kustomization(n.id.to_string());
    f.location.clone_from(&n.location);
    f
}

/// `spec.path` with the cluster's name as a path component replaced by `{cluster}`: each
/// root points at its own directory (`./clusters/dev`), which is not a difference.
fn normalized_path(path: &str, cluster: &str) -> String {
    let trimmed = path.trim_start_matches("./").trim_end_matches('/');
    trimmed
        .split('/')
        .map(|c| if c == cluster { "{cluster}" } else { c })
        .collect::<Vec<_>>()
        .join("/")
}

fn differences(x: &Node, a: &str, y: &Node, other: &str) -> Option<Finding> {
    let mut diffs = Vec::new();
    let dx: BTreeSet<String> = x.depends_on.iter().map(ToString::to_string).collect();
    let dy: BTreeSet<String> = y.depends_on.iter().map(ToString::to_string).collect();
    let list = |s: &BTreeSet<String>| {
        format!(
            "[{}]",
            s.iter()
                .map(|d| d.rsplit('/').next().unwrap_or(d).to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if dx != dy {
        diffs.push(format!("dependsOn {} vs {}", list(&dx), list(&dy)));
    }
    if x.parent != y.parent {
        let by = |p: &Option<NamespacedName>| {
            p.as_ref()
                .map_or_else(|| "the root".to_string(), |p| format!("`{}`", p.name))
        };
        diffs.push(format!("applied by {} vs {}", by(&x.parent), by(&y.parent)));
    }
    if x.wait != y.wait {
        diffs.push(format!("wait {} vs {}", x.wait, y.wait));
    }
    if x.prune != y.prune {
        diffs.push(format!("prune {} vs {}", x.prune, y.prune));
    }
    // Each cluster root points at its own directory by design.
    let roots = x.parent.is_none() && y.parent.is_none();
    if !roots && normalized_path(&x.path, a) != normalized_path(&y.path, other) {
        diffs.push(format!("path `{}` vs `{}`", x.path, y.path));
    }
    if diffs.is_empty() {
        return None;
    }
    let there = y
        .location
        .as_ref()
        .map_or(String::new(), |l| format!(" ({other}: {l})"));
    let mut finding = Finding::new(
        &rules::CLUSTER_GRAPHS_DIFFER,
        format!(
            "`{}` differs between clusters `{a}` and `{other}`: {}{there}",
            x.id.name,
            diffs.join("; ")
        ),
    )
    .in_cluster(a)
    .in_kustomization(x.id.to_string());
    finding.location.clone_from(&x.location);
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::model::nn;

    fn dep(name: &str, deps: &[&str]) -> Node {
        let mut n = Node::bare(name);
        n.depends_on = deps.iter().map(|d| nn(d)).collect();
        n
    }

    // kustomize-controller requeues a Kustomization whose dependency is not Ready
    // (checkDependencies): on a cycle that is forever.
    #[test]
    fn dependency_cycle_is_found_once_as_a_path() {
        let nodes = vec![
            dep("a", &["b"]),
            dep("b", &["c"]),
            dep("c", &["a"]),
            dep("d", &["a"]),
        ];
        let c = dependency_cycles(&nodes);
        assert_eq!(c, vec![vec![nn("a"), nn("b"), nn("c")]]);
    }

    fn runtime_findings(health_checks: Vec<(String, String)>) -> Vec<Finding> {
        use crate::flux::ObjectId;
        use crate::graph::model::Obj;
        let obj = |kind: &str, name: &str| Obj {
            id: ObjectId {
                group: "cdi.kubevirt.io".into(),
                kind: kind.into(),
                namespace: "default".into(),
                name: name.into(),
            },
            file: None,
            defines: None,
            cluster_scoped: false,
            helm: None,
        };
        let mut cdi = dep("cdi", &[]);
        let mut crd = obj("CustomResourceDefinition", "cdis.cdi.kubevirt.io");
        crd.id.group = "apiextensions.k8s.io".into();
        crd.defines = Some(("cdi.kubevirt.io".into(), "CDI".into()));
        cdi.objects = vec![crd, obj("CDI", "cdi")];
        cdi.health_checked = !health_checks.is_empty();
        cdi.health_checks = health_checks;
        let mut volumes = dep("volumes", &["cdi"]);
        volumes.objects = vec![obj("DataVolume", "disk")];
        let nodes = vec![cdi, volumes];
        let config = GraphConfig::parse(
            "[[runtime_crds]]\ngroup = \"cdi.kubevirt.io\"\nkinds = [\"DataVolume\"]\n\
             created_by = { group = \"cdi.kubevirt.io\", kind = \"CDI\" }\n",
        )
        .unwrap();
        let order = Order::new(&nodes);
        let mut files = Files::new(std::path::Path::new("/nonexistent"));
        ClusterCheck {
            cluster: "test",
            nodes: &nodes,
            order: &order,
            config: &config,
        }
        .run(&mut files)
    }

    // kustomize-controller checkHealth: with `wait: false`, Ready waits for the objects
    // listed in spec.healthChecks.
    #[test]
    fn runtime_crd_trigger_named_in_health_checks_is_awaited() {
        let f = runtime_findings(vec![("CDI".into(), "cdi".into())]);
        assert!(f.is_empty(), "{f:#?}");
        let f = runtime_findings(vec![("CDI".into(), "other".into())]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert_eq!(f[0].rule, "FS207");
        let f = runtime_findings(Vec::new());
        assert_eq!(f[0].rule, "FS207");
    }

    // helm-controller: `install.crds: Skip` leaves out the chart's crds/ directory, but CRDs
    // in its templates still install: the release stays a candidate, marked.
    #[test]
    fn candidates_are_listed_best_match_first_and_marked_when_they_skip_crds() {
        use crate::flux::ObjectId;
        use crate::graph::model::HelmChart;
        let release = |name: &str| Obj {
            id: ObjectId {
                group: "helm.toolkit.fluxcd.io".into(),
                kind: "HelmRelease".into(),
                namespace: "infra".into(),
                name: name.into(),
            },
            file: None,
            defines: None,
            cluster_scoped: false,
            helm: None,
        };
        let infra = dep("infra", &[]);
        let (a, b) = (release("app"), release("cert-manager"));
        let plain = HelmChart {
            chart: "app".into(),
            install_crds: "Create".into(),
        };
        let skip = HelmChart {
            chart: "cert-manager".into(),
            install_crds: "Skip".into(),
        };
        let mut c = [
            Candidate::new(&infra, &a, &plain, "cert-manager.io"),
            Candidate::new(&infra, &b, &skip, "cert-manager.io"),
        ];
        assert_eq!(
            candidates(&mut c),
            "HelmRelease `infra/cert-manager` (chart `cert-manager`, `install.crds: Skip`) in \
             `infra`, HelmRelease `infra/app` (chart `app`) in `infra`"
        );
    }

    #[test]
    fn charts_are_ranked_by_the_name_parts_they_share_with_the_group() {
        assert_eq!(name_score("cert-manager.io", &["cert-manager", "cm"]), 2);
        assert_eq!(name_score("dragonflydb.io", &["dragonfly-operator"]), 1);
        assert_eq!(name_score("externaldns.k8s.io", &["external-dns"]), 1);
        assert_eq!(
            name_score("monitoring.coreos.com", &["kube-prometheus-stack"]),
            0
        );
        assert_eq!(name_score("external-secrets.io", &["app"]), 0);
    }

    #[test]
    fn cycle_path_is_the_shortest_way_back_to_its_start() {
        let nodes = vec![dep("a", &["b"]), dep("b", &["c", "a"]), dep("c", &["a"])];
        assert_eq!(dependency_cycles(&nodes), vec![vec![nn("a"), nn("b")]]);
    }

    #[test]
    fn self_dependency_is_a_cycle() {
        assert_eq!(dependency_cycles(&[dep("a", &["a"])]), vec![vec![nn("a")]]);
    }

    #[test]
    fn root_paths_naming_their_cluster_are_not_a_difference() {
        assert_eq!(
            normalized_path("./clusters/dev", "dev"),
            normalized_path("./clusters/prod/", "prod")
        );
        assert_ne!(
            normalized_path("./apps/a", "dev"),
            normalized_path("./apps/b", "prod")
        );
    }

    #[test]
    fn clusters_differ_in_the_parent_that_applies_a_kustomization() {
        let mut a = dep("apps", &[]);
        a.parent = Some(nn("root"));
        let mut b = dep("apps", &[]);
        b.parent = Some(nn("infra"));
        let f = compare_clusters(&[("dev", &[a]), ("prod", &[b])]);
        assert_eq!(f.len(), 1, "{f:#?}");
        assert!(
            f[0].message.contains("applied by `root` vs `infra`"),
            "{}",
            f[0].message
        );
    }

    #[test]
    fn cluster_roots_may_point_at_their_own_directories() {
        let mut a = dep("flux-system", &[]);
        a.path = "./clusters/eu-1".into();
        let mut b = dep("flux-system", &[]);
        b.path = "./fleet/us".into();
        assert!(compare_clusters(&[("dev", &[a]), ("prod", &[b])]).is_empty());
    }

    #[test]
    fn clusters_differ_in_wait_and_dependencies() {
        let dev = vec![dep("apps", &["infra"]), dep("infra", &[])];
        let mut apps = dep("apps", &[]);
        apps.wait = true;
        let prod = vec![apps];
        let f = compare_clusters(&[("dev", &dev), ("prod", &prod)]);
        assert_eq!(f.len(), 2, "{f:#?}");
        assert!(
            f[0].message.contains("dependsOn [infra] vs []"),
            "{}",
            f[0].message
        );
        assert!(
            f[0].message.contains("wait false vs true"),
            "{}",
            f[0].message
        );
        assert!(f[1]
            .message
            .contains("`infra` is defined in cluster `dev` but not in `prod`"));
    }
}
