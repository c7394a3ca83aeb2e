//! FS203-FS207, FS214, FS215: custom resources and the CRDs (or the operators and Helm
//! charts that make them) they need applied first.

use super::{names, with_location, ClusterCheck};
use crate::finding::Finding;
use crate::flux::NamespacedName;
use crate::graph::config::{Trigger, Triggers};
use crate::graph::kinds::{self, FluxApis};
use crate::graph::nodes::{is_trigger, object_location, Files, HelmChart, Node, Obj};
use crate::graph::rules;
use crate::graph::simulate::{flux_apis, needed_kinds};

impl ClusterCheck<'_> {
    /// FS203-FS207, FS214, FS215: custom resources and their CRDs.
    pub(super) fn custom_resources(&self, files: &mut Files, out: &mut Vec<Finding>) {
        let flux = flux_apis(self.nodes);
        for n in self.nodes {
            for (group, kind, obj_id) in needed_kinds(n, &flux, self.config) {
                let obj = n.objects.iter().find(|o| &o.id == obj_id);
                let at = obj
                    .and_then(|o| object_location(files, n, o))
                    .or_else(|| n.location.clone());
                let what = format!("`{obj_id}`");
                if let Some(f) = self.check_kind(n, group, kind, &what, &flux) {
                    let f = f
                        .about("object", obj_id.to_string())
                        .about("kind", format!("{kind}.{group}"));
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
        // What the cluster's bootstrap installs exists from the start, whatever else
        // applies the CRD later.
        if !kinds::is_flux(group) {
            if let Some(why) = self.boot.crd_group(group) {
                return Some(self.finding(
                    &rules::PRESUMED_FROM_BOOTSTRAP,
                    n,
                    format!(
                        "{what} in `{}` needs a CRD of `{group}` that no Kustomization applies \
                         before it; presumed installed by the cluster's bootstrap before Flux \
                         runs: {why}",
                        n.id.name
                    ),
                ));
            }
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
                         before it: on a cold cluster `{}` fails until that one has run; {}",
                        n.id.name,
                        names(unordered),
                        n.id.name,
                        self.retries(n)
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
        self.runtime_crd(n, t, what, &blocked)
    }

    /// FS205-FS207: a kind whose CRD an operator makes at run time (fluxsim.toml's
    /// `[[runtime_crds]]`, `[[helm_crds]]`): is what triggers it applied and awaited first?
    fn runtime_crd(&self, n: &Node, t: Trigger<'_>, what: &str, blocked: &str) -> Option<Finding> {
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
                 fails until the controller catches up; {}",
                n.id.name,
                n.id.name,
                names(triggers.iter().filter(|m| m.id != n.id).map(|m| &m.id)),
                self.retries(n)
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
                "is a Flux kind that the Flux cluster `{}` runs does not serve",
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
        // What declares a group the cluster's bootstrap installs before Flux (a helmfile,
        // `kubectl apply` of CRDs): said whenever the group is not in any manifest.
        let bootstrap = format!(
            "; if the cluster's bootstrap installs them before Flux, declare \
             `[bootstrap] crd_groups = [\"{group}\"]`"
        );
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
                    self.likeliest(n, &awaited, &[&racy, &never]),
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
                     chart, then a retry succeeds ({}){}; declare {} in fluxsim.toml to check \
                     the order exactly{bootstrap}",
                    n.id.name,
                    candidates(&mut racy),
                    n.id.name,
                    self.retries(n),
                    self.likeliest(n, &racy, &[&never]),
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
                     becomes Ready{blocked}{bootstrap}",
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
                 it): `{}` never becomes Ready{blocked}{bootstrap}",
                n.id.name, self.cluster, n.id.name
            ),
        )
    }
    // The best match by name, when it is not among those the finding relies on: said, so
    // a likely race or deadlock is not hidden behind an unrelated chart (never used to
    // clear or raise a finding).
    fn likeliest(&self, n: &Node, chosen: &[Candidate], others: &[&[Candidate]]) -> String {
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

pub(crate) use crate::bootstrap::name_score;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::graph::nodes::{nn, Order};

    fn dep(name: &str, deps: &[&str]) -> Node {
        let mut n = Node::bare(name);
        n.depends_on = deps.iter().map(|d| nn(d)).collect();
        n
    }

    fn runtime_findings(health_checks: Vec<(String, String)>) -> Vec<Finding> {
        use crate::flux::ObjectId;
        use crate::graph::nodes::Obj;
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
            makes: None,
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
        let config = Config::parse(
            "[[runtime_crds]]\ngroup = \"cdi.kubevirt.io\"\nkinds = [\"DataVolume\"]\n\
             created_by = { group = \"cdi.kubevirt.io\", kind = \"CDI\" }\n",
            "fluxsim.toml",
        )
        .unwrap();
        let order = Order::new(&nodes);
        let mut files = Files::new(&crate::source::SourceFs::empty("/nonexistent".into()));
        let boot = crate::graph::bootstrap::BootstrapEvidence::default();
        let sim = crate::graph::simulate::simulate(&nodes, &order, &config, &boot);
        ClusterCheck {
            cluster: "test",
            nodes: &nodes,
            order: &order,
            config: &config,
            boot: &boot,
            sim: &sim,
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
        use crate::graph::nodes::HelmChart;
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
            makes: None,
        };
        let infra = dep("infra", &[]);
        let (a, b) = (release("app"), release("cert-manager"));
        let plain = HelmChart {
            chart: "app".into(),
            install_crds: "Create".into(),
            creates_namespace: None,
        };
        let skip = HelmChart {
            chart: "cert-manager".into(),
            install_crds: "Skip".into(),
            creates_namespace: None,
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
}
