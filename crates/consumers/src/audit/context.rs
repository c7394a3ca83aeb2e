//! One cluster's audit under way: its Kustomizations, where their objects come from, which
//! sources are unknown, and the findings so far. The rules themselves are in `checks/`.

use std::collections::{BTreeMap, BTreeSet};

use super::place::{Needle, ObjectRef, Place, Sources};
use super::rules::NOT_AUDITED;
use super::{substitutes, template_of, AuditOptions, PathSummary};
use crate::artifact::ArtifactObject;
use crate::finding::{Finding, Location, Rule};
use crate::flux::{ObjectId, KUSTOMIZE_GROUP};
use crate::model::{ClusterRender, KustomizationRender, Status};

/// The names an object may carry in its source file: as rendered, and without the
/// Kustomization's namePrefix/nameSuffix.
pub(crate) fn source_names(k: &KustomizationRender, name: &str) -> Vec<String> {
    let mut names = vec![name.to_string()];
    let mut bare = name;
    if let Some(p) = &k.kustomization.name_prefix {
        bare = bare.strip_prefix(p.as_str()).unwrap_or(bare);
    }
    if let Some(s) = &k.kustomization.name_suffix {
        bare = bare.strip_suffix(s.as_str()).unwrap_or(bare);
    }
    if bare != name {
        names.push(bare.to_string());
    }
    names
}

/// The build directory of a Kustomization, for findings whose origin is unknown.
pub(crate) fn build_dir(k: &KustomizationRender) -> &str {
    k.build_path.as_deref().unwrap_or(&k.kustomization.path)
}

/// A finding of `rule` for a Kustomization of `cluster`.
pub(crate) fn finding_for(
    cluster: &str,
    k: &KustomizationRender,
    rule: &Rule,
    message: String,
    location: Location,
) -> Finding {
    Finding::new(rule, message)
        .in_cluster(cluster)
        .in_kustomization(k.kustomization.id.to_string())
        .at(location)
}

/// Finds a needle in an object's source.
pub(crate) fn place_in(
    files: &mut Sources<'_>,
    k: &KustomizationRender,
    o: &ArtifactObject,
    needle: Option<Needle<'_>>,
) -> Place {
    let names = source_names(k, &o.id.name);
    files.find(
        ObjectRef {
            origin: o.origin.as_ref(),
            kind: &o.id.kind,
            names: &names,
            fallback_dir: build_dir(k),
        },
        needle,
    )
}

/// Counts occurrences of each needle text, so that the second `${X}` of an object is looked
/// for as the second occurrence in its source document.
#[derive(Default)]
pub(crate) struct Occurrences(BTreeMap<String, usize>);

impl Occurrences {
    pub(crate) fn next<'a>(&mut self, text: &'a str) -> Needle<'a> {
        let n = self.0.entry(text.to_string()).or_default();
        let nth = *n;
        *n += 1;
        Needle {
            text,
            nth,
            whole_word: false,
            code_only: false,
        }
    }
}

/// The audit of one cluster: findings, and what the summary needs per Kustomization.
pub(crate) struct ClusterCtx<'c> {
    /// The cluster's render.
    pub(crate) cluster: &'c ClusterRender,
    pub(crate) opts: AuditOptions,
    pub(crate) findings: Vec<Finding>,
    pub(crate) checks: usize,
    /// Var names referenced by each Kustomization's substituted objects (by index).
    pub(crate) used: BTreeMap<usize, BTreeSet<String>>,
    /// Source files of each Kustomization's objects.
    files_of: BTreeMap<usize, BTreeSet<String>>,
    /// Every object of every template in the cluster, by id: the Kustomization (index) that
    /// applies it and the object.
    pub(crate) placed: BTreeMap<ObjectId, (usize, &'c ArtifactObject)>,
    /// The substituteFrom sources of each Kustomization (by index) that nothing in the
    /// repository applies, as `Kind/name`: its vars are then not all known.
    pub(crate) unknown_sources: BTreeMap<usize, Vec<String>>,
}

impl<'c> ClusterCtx<'c> {
    pub(crate) fn new(cluster: &'c ClusterRender, opts: AuditOptions) -> ClusterCtx<'c> {
        let mut placed = BTreeMap::new();
        for (i, k) in cluster.kustomizations.iter().enumerate() {
            for o in template_of(k).iter().flat_map(|t| &t.objects) {
                placed.entry(o.id.clone()).or_insert((i, o));
            }
        }
        let mut unknown_sources: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for (i, k) in cluster.kustomizations.iter().enumerate() {
            for (id, sf) in k.kustomization.var_sources() {
                if !placed.contains_key(&id) {
                    unknown_sources
                        .entry(i)
                        .or_default()
                        .push(format!("{}/{}", sf.kind, sf.name));
                }
            }
        }
        ClusterCtx {
            cluster,
            opts,
            findings: Vec::new(),
            checks: 0,
            used: BTreeMap::new(),
            files_of: BTreeMap::new(),
            placed,
            unknown_sources,
        }
    }

    /// Whether this cluster's kustomize-controller substitutes strictly (its gate, else its
    /// Flux version's default), unless `--no-strict` said otherwise.
    pub(crate) fn strict(&self) -> bool {
        self.opts.strict && self.cluster.flux_strict
    }

    /// Whether the `index`th Kustomization's vars are all known (every substituteFrom source
    /// is applied by something in the repository).
    pub(crate) fn vars_known(&self, index: usize) -> bool {
        !self.unknown_sources.contains_key(&index)
    }

    /// Whether Flux substitutes the `index`th Kustomization's objects, as far as the
    /// repository tells: when a source is unknown, it may define vars, so yes.
    pub(crate) fn substitutes_at(&self, index: usize) -> bool {
        self.cluster.kustomizations.get(index).is_some_and(|k| {
            substitutes(k) || (k.kustomization.post_build.is_some() && !self.vars_known(index))
        })
    }

    /// Where a Kustomization object itself is defined (the parent's source file), with a
    /// needle inside its document.
    pub(crate) fn place_of_kustomization(
        &self,
        k: &KustomizationRender,
        needle: Option<Needle<'_>>,
        files: &mut Sources<'_>,
    ) -> Location {
        let id = ObjectId {
            group: KUSTOMIZE_GROUP.to_string(),
            kind: "Kustomization".to_string(),
            namespace: k.kustomization.id.namespace.clone(),
            name: k.kustomization.id.name.clone(),
        };
        match self.placed.get(&id) {
            Some((owner, o)) => {
                place_in(files, &self.cluster.kustomizations[*owner], o, needle).location
            }
            None => Location::file(super::place::dir_display(build_dir(k))),
        }
    }

    pub(crate) fn push(
        &mut self,
        k: &KustomizationRender,
        rule: &Rule,
        message: String,
        location: Location,
    ) {
        self.findings
            .push(finding_for(&self.cluster.name, k, rule, message, location));
    }

    /// Audits the objects of the cluster's `index`th Kustomization.
    pub(crate) fn audit_kustomization(&mut self, index: usize, files: &mut Sources<'_>) {
        let cluster = self.cluster;
        let Some(k) = cluster.kustomizations.get(index) else {
            return;
        };
        let Some(t) = template_of(k) else {
            if let Status::Failed(why) | Status::Blocked(why) = &k.status {
                self.checks += 1;
                let location = self.place_of_kustomization(k, None, files);
                let what = if matches!(k.status, Status::Failed(_)) {
                    "failed before substitution"
                } else {
                    "never reconciled"
                };
                self.push(
                    k,
                    &NOT_AUDITED,
                    format!(
                        "Kustomization `{}` {what} and was not audited: {}",
                        k.kustomization.id,
                        crate::scratch::scrub(why)
                    ),
                    location,
                );
            }
            return;
        };
        let subst = self.substitutes_at(index);
        let known = self.vars_known(index);
        let mut used = BTreeSet::new();
        for o in &t.objects {
            if let Some(origin) = &o.origin {
                if let Some(f) = origin.path.as_ref().or(origin.configured_in.as_ref()) {
                    self.files_of.entry(index).or_default().insert(f.clone());
                }
            }
            let disabled = crate::flux::substitution_disabled(&o.object);
            if subst && !disabled {
                self.audit_substituted(k, o, known, &mut used, files);
            } else if o.yaml.contains("${") {
                self.audit_verbatim(k, o, disabled, files);
            }
        }
        self.used.insert(index, used);
    }

    /// The summary lines of this cluster (hazards are counted later, after normalising).
    pub(crate) fn summaries(&self) -> Vec<PathSummary> {
        self.cluster
            .kustomizations
            .iter()
            .enumerate()
            .map(|(i, k)| PathSummary {
                cluster: self.cluster.name.clone(),
                kustomization: k.kustomization.id.to_string(),
                path: k.kustomization.path.clone(),
                status: k.status.as_str(),
                substitutes: self.substitutes_at(i),
                files: self.files_of.get(&i).map_or(0, BTreeSet::len),
                defined: k.vars.len(),
                referenced: self.used.get(&i).map_or(0, BTreeSet::len),
                hazards: 0,
            })
            .collect()
    }
}
