//! The per-object rules: what each `${...}` in a Kustomization's template does once Flux
//! substitutes it (FS101–FS105), or that it ships verbatim (FS106, FS107).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::Value;

use super::expr::{self, Ref};
use super::place::{Needle, ObjectRef, Place, Sources};
use super::rules::{
    BASH_OPERATOR, EVALUATION_FAILS, NOT_AUDITED, SHELL_VAR_IN_SCRIPT, SUBSTITUTION_DISABLED,
    TYPE_CHANGE, UNDEFINED_VAR, UNSUPPORTED_EXPANSION, VERBATIM_LITERAL,
};
use super::{substitutes, template_of, AuditOptions, PathSummary};
use crate::artifact::ArtifactObject;
use crate::finding::{Finding, Location, Rule, Severity};
use crate::flux::{ObjectId, KUSTOMIZE_GROUP};
use crate::reconcile::{ClusterRender, KustomizationRender, Status};

/// One step of a path into an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
}

/// A string in an object (a value, or a mapping key), with where it sits.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    /// From the object's root.
    pub(crate) path: Vec<Seg>,
    /// The string.
    pub(crate) value: String,
    /// It is a mapping key, not a value.
    pub(crate) key: bool,
    /// It is (part of) a script a shell runs.
    pub(crate) script: bool,
}

/// `spec.containers[0].args[1]`.
pub(crate) fn path_text(path: &[Seg]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Seg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Seg::Index(i) => {
                let _ = write!(out, "[{i}]");
            }
        }
    }
    out
}

/// Every string of an object, keys included, in the object's (sorted) key order.
pub(crate) fn string_leaves(obj: &Value) -> Vec<Leaf> {
    fn walk(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<Leaf>) {
        match v {
            Value::String(s) => out.push(Leaf {
                path: path.clone(),
                value: s.clone(),
                key: false,
                script: false,
            }),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(item, path, out);
                    path.pop();
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    path.push(Seg::Key(k.clone()));
                    if k.contains("${") {
                        out.push(Leaf {
                            path: path.clone(),
                            value: k.clone(),
                            key: true,
                            script: false,
                        });
                    }
                    walk(item, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(obj, &mut Vec::new(), &mut out);
    for leaf in &mut out {
        leaf.script = !leaf.key && is_script(obj, &leaf.path, &leaf.value);
    }
    out
}

fn key_at(path: &[Seg], i: usize) -> Option<&str> {
    match path.get(i) {
        Some(Seg::Key(k)) => Some(k.as_str()),
        _ => None,
    }
}

/// `[.., containers, i, command|args, j]`: the position of `containers`, when it is one.
fn container_arg(path: &[Seg]) -> Option<usize> {
    let n = path.len();
    if n < 4 || !matches!(path[n - 1], Seg::Index(_)) || !matches!(path[n - 3], Seg::Index(_)) {
        return None;
    }
    let list = key_at(path, n - 2)?;
    let containers = key_at(path, n - 4)?;
    (matches!(list, "command" | "args")
        && matches!(
            containers,
            "containers" | "initContainers" | "ephemeralContainers"
        ))
    .then_some(n - 4)
}

/// Whether a string is run by a shell: cloud-init user data, a `script` field, a container
/// whose command is `sh -c` (or bash ...), or text that reads as a script.
fn is_script(obj: &Value, path: &[Seg], value: &str) -> bool {
    let named = path.iter().any(|s| {
        matches!(s, Seg::Key(k) if matches!(
            k.to_ascii_lowercase().as_str(),
            "userdata" | "user-data" | "user_data" | "script"
        ))
    });
    named || shell_container_arg(obj, path) || expr::looks_like_script(value)
}

fn shell_container_arg(obj: &Value, path: &[Seg]) -> bool {
    let Some(at) = container_arg(path) else {
        return false;
    };
    let Some(container) = lookup(obj, &path[..at + 2]) else {
        return false;
    };
    let words: Vec<&str> = ["command", "args"]
        .iter()
        .filter_map(|f| container.get(*f).and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let shell = words.iter().any(|w| {
        let base = w.rsplit('/').next().unwrap_or(w);
        matches!(base, "sh" | "bash" | "ash" | "dash" | "zsh" | "ksh")
    });
    let dash_c = words
        .iter()
        .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'));
    shell && dash_c
}

/// The value at a path.
pub(crate) fn lookup<'v>(v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, s| match s {
        Seg::Key(k) => v.get(k),
        Seg::Index(i) => v.get(i),
    })
}

/// Fields the API server only accepts as strings: a non-string there fails the apply.
fn is_string_field(kind: &str, path: &[Seg]) -> bool {
    let n = path.len();
    let top = key_at(path, 0);
    (n == 2 && top == Some("data") && matches!(kind, "ConfigMap" | "Secret"))
        || (n == 2 && top == Some("stringData") && kind == "Secret")
        || (n >= 3
            && key_at(path, n - 3) == Some("metadata")
            && matches!(key_at(path, n - 2), Some("labels" | "annotations")))
        || (n >= 3
            && key_at(path, n - 1) == Some("value")
            && matches!(path[n - 2], Seg::Index(_))
            && key_at(path, n - 3) == Some("env"))
        || container_arg(path).is_some()
}

/// How a JSON value reads in a message.
fn describe(v: &Value) -> String {
    match v {
        Value::Bool(b) => format!("the boolean `{b}`"),
        Value::Number(n) => format!("the number `{n}`"),
        Value::Null => "null".to_string(),
        Value::Object(_) => "a mapping".to_string(),
        Value::Array(_) => "a list".to_string(),
        Value::String(s) => format!("the string `{s}`"),
    }
}

/// A plain scalar whose YAML 1.1 type a YAML 1.2 or JSON reader would not expect: booleans
/// spelled `yes`/`on`/`y`..., numbers with a leading zero (octal), `:` (base 60), `_`, a sign
/// or a base prefix, infinities and NaN, and anything that reads as null.
fn surprising(v: &Value, text: &str) -> bool {
    let t = text.trim();
    match v {
        Value::Bool(_) => !matches!(t, "true" | "false"),
        Value::Number(_) => {
            let d = t.trim_start_matches(['-', '+']);
            let lower = d.to_ascii_lowercase();
            t.starts_with('+')
                || (d.len() > 1 && d.starts_with('0') && d.as_bytes()[1].is_ascii_digit())
                || t.contains([':', '_'])
                || lower.starts_with("0x")
                || lower.starts_with("0b")
                || lower.starts_with("0o")
                || lower.contains("inf")
                || lower.contains("nan")
        }
        Value::Null => true,
        _ => false,
    }
}

/// A value that, dropped into YAML text, can change its structure.
fn yaml_special(v: &str) -> bool {
    v.contains(": ")
        || v.contains(" #")
        || v.ends_with(':')
        || v.starts_with([
            '*', '&', '!', '|', '>', '[', ']', '{', '}', '%', '@', '`', '"', '\'', '#', ',', '?',
        ])
        || v.starts_with("- ")
}

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
struct Occurrences(BTreeMap<String, usize>);

impl Occurrences {
    fn next<'a>(&mut self, text: &'a str) -> Needle<'a> {
        let n = self.0.entry(text.to_string()).or_default();
        let nth = *n;
        *n += 1;
        Needle {
            text,
            nth,
            whole_word: false,
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
            for sf in k
                .kustomization
                .post_build
                .iter()
                .flat_map(|pb| &pb.substitute_from)
            {
                let id = ObjectId {
                    group: String::new(),
                    kind: sf.kind.clone(),
                    namespace: k.kustomization.id.namespace.clone(),
                    name: sf.name.clone(),
                };
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

    fn push(&mut self, k: &KustomizationRender, rule: &Rule, message: String, location: Location) {
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
                        without_temp_dirs(why)
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
            let disabled = crate::postbuild::substitution_disabled(&o.object);
            if subst && !disabled {
                self.audit_substituted(k, o, known, &mut used, files);
            } else if o.yaml.contains("${") {
                self.audit_verbatim(k, o, disabled, files);
            }
        }
        self.used.insert(index, used);
    }

    /// FS106 / FS107: an object Flux does not substitute, with `${...}` in it (FS107 when it
    /// says so itself with the `substitute: disabled` annotation or label).
    fn audit_verbatim(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        disabled: bool,
        files: &mut Sources<'_>,
    ) {
        self.checks += 1;
        let snippets = expr::literal_snippets(&o.yaml);
        let Some(first) = snippets.first() else {
            return;
        };
        let listed = super::list_names(snippets.iter().map(String::as_str), 3);
        let ks = &k.kustomization;
        let (rule, severity, why) = if disabled {
            (
                &SUBSTITUTION_DISABLED,
                Severity::Info,
                "it is labelled or annotated `kustomize.toolkit.fluxcd.io/substitute: \
                 disabled`"
                    .to_string(),
            )
        } else {
            // What the shell wants when every reference sits in a script: only worth knowing.
            let leaves = string_leaves(&o.object);
            let all_script = leaves
                .iter()
                .filter(|l| l.value.contains("${"))
                .all(|l| l.script)
                && !snippets.iter().any(|s| s.starts_with("$$"));
            let why = if ks.post_build.is_none() {
                format!("Kustomization `{}` has no postBuild", ks.id)
            } else {
                format!(
                    "the postBuild of Kustomization `{}` defines no var and its \
                     substituteStrategy is not `Always`, so Flux does not substitute",
                    ks.id
                )
            };
            (
                &VERBATIM_LITERAL,
                if all_script {
                    Severity::Info
                } else {
                    Severity::Warning
                },
                why,
            )
        };
        let place = place_in(
            files,
            k,
            o,
            Some(Needle {
                text: first,
                nth: 0,
                whole_word: false,
            }),
        );
        let verb = if snippets.len() == 1 { "ships" } else { "ship" };
        let message = format!("{listed} {verb} verbatim in {}: {why}", o.id);
        self.findings.push(
            finding_for(&self.cluster.name, k, rule, message, place.location)
                .with_severity(severity),
        );
    }

    /// FS101–FS105 on an object Flux substitutes.
    fn audit_substituted(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        known: bool,
        used: &mut BTreeSet<String>,
        files: &mut Sources<'_>,
    ) {
        let leaves: Vec<Leaf> = string_leaves(&o.object)
            .into_iter()
            .filter(|l| l.value.contains("${"))
            .collect();
        // FS101: Flux parses the object's whole text (kustomize_varsub.go runs envsubst on
        // res.AsYAML()); what its parser rejects fails the Kustomization.
        let (_, errors) = expr::scan(&o.yaml);
        let mut blocking = !errors.is_empty();
        let mut seen = Occurrences::default();
        for e in &errors {
            self.checks += 1;
            let in_script = leaves.iter().any(|l| l.script && l.value.contains(&e.expr));
            let place = place_in(files, k, o, Some(seen.next(&e.expr)));
            let message = format!(
                "`{}` in {}: {}, so Flux fails the whole Kustomization ({}){}",
                e.expr,
                o.id,
                e.flux_message(),
                e.hint(),
                if in_script {
                    "; it sits in a script, so it is surely meant for the shell"
                } else {
                    ""
                }
            );
            self.push(k, &UNSUPPORTED_EXPANSION, message, place.location);
        }
        let consequence = if self.opts.strict {
            "the Kustomization fails (strict substitution, the default since \
             kustomize-controller v1.9.0)"
        } else {
            "Flux replaces it with an empty string (strict substitution is off)"
        };
        let mut seen = Occurrences::default();
        for leaf in &leaves {
            let (refs, _) = expr::scan(&leaf.value);
            for r in &refs {
                self.checks += 1;
                used.insert(r.name.clone());
                let needle = seen.next(&r.text);
                let defined = k.vars.contains_key(&r.name);
                // With a source of unknown content, an undefined var may be defined there: only
                // names that read as shell variables are still reported (FS104, a warning).
                let finding = if leaf.script
                    && !defined
                    && (!r.has_default || expr::shell_looking(&r.name))
                    && (known || expr::shell_looking(&r.name))
                {
                    // envsubst substitutes every `${...}`, in scripts too: only `$${` escapes.
                    let (severity, what) = if r.has_default {
                        (
                            Severity::Warning,
                            "Flux replaces it with its default before the shell runs".to_string(),
                        )
                    } else if !known {
                        (
                            Severity::Warning,
                            format!(
                                "unless a source whose content is unknown defines `{}`, {consequence}",
                                r.name
                            ),
                        )
                    } else {
                        blocking = true;
                        (
                            Severity::Error,
                            format!("`{}` is defined nowhere, so {consequence}", r.name),
                        )
                    };
                    Some((
                        &SHELL_VAR_IN_SCRIPT,
                        severity,
                        format!(
                            "`{}` in a script in {} is substituted by Flux, not left to the \
                             shell: {what}; write `${}` for the shell",
                            r.text, o.id, r.text
                        ),
                    ))
                } else if r.op == ":?" || r.op == ":+" {
                    Some((
                        &BASH_OPERATOR,
                        Severity::Warning,
                        bash_operator_message(r, o),
                    ))
                } else if !defined && !r.has_default && known {
                    blocking = true;
                    Some((
                        &UNDEFINED_VAR,
                        Severity::Error,
                        format!(
                            "`{}` in {}: no source defines `{}` for this Kustomization, so \
                             {consequence}",
                            r.text, o.id, r.name
                        ),
                    ))
                } else {
                    None
                };
                if let Some((rule, severity, message)) = finding {
                    let place = place_in(files, k, o, Some(needle));
                    self.findings.push(
                        finding_for(&self.cluster.name, k, rule, message, place.location)
                            .with_severity(severity),
                    );
                }
            }
        }
        if errors.is_empty() {
            blocking |= self.check_evaluation(k, o, files);
        }
        if !blocking {
            self.check_types(k, o, &leaves, files);
        }
    }

    /// FS113: evaluate the object's text as Flux does (undefined vars were judged above, so
    /// without strict mode); an expression that parses but fails to evaluate (Go panics on
    /// a negative substring length, fluxsim's size bound) fails the Kustomization. True when
    /// one does.
    fn check_evaluation(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        files: &mut Sources<'_>,
    ) -> bool {
        self.checks += 1;
        let values: BTreeMap<String, String> = k
            .vars
            .iter()
            .map(|(n, v)| (n.clone(), v.value.clone()))
            .collect();
        let Err(e) = crate::envsubst::eval(o.yaml.as_bytes(), &values, false) else {
            return false;
        };
        let place = place_in(
            files,
            k,
            o,
            Some(Needle {
                text: &e.expr,
                nth: 0,
                whole_word: false,
            }),
        );
        let message = format!(
            "`{}` in {}: {}, so Flux fails the whole Kustomization ({})",
            e.expr,
            o.id,
            e.flux_message(),
            e.hint()
        );
        self.push(k, &EVALUATION_FAILS, message, place.location);
        true
    }

    /// FS105: substitute the object as Flux does and compare each substituted scalar's type
    /// with the template's.
    fn check_types(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        leaves: &[Leaf],
        files: &mut Sources<'_>,
    ) {
        if leaves.is_empty() {
            return;
        }
        let values: BTreeMap<String, String> = k
            .vars
            .iter()
            .map(|(n, v)| (n.clone(), v.value.clone()))
            .collect();
        let encrypted: BTreeSet<&str> = k
            .vars
            .iter()
            .filter(|(_, v)| v.encrypted)
            .map(|(n, _)| n.as_str())
            .collect();
        // The same steps as `postbuild::substitute_text`, non-strict: undefined vars were
        // judged above.
        let Ok(out) = crate::envsubst::eval(o.yaml.as_bytes(), &values, false) else {
            return;
        };
        let after = String::from_utf8(out)
            .map_err(|_| "the result is not valid UTF-8".to_string())
            .and_then(|s| crate::postbuild::yaml_json::yaml_to_json(&s).map_err(|e| e.to_string()))
            .and_then(|j| serde_json::from_str::<Value>(&j).map_err(|e| e.to_string()));
        let leaf_refs: Vec<Vec<Ref>> = leaves.iter().map(|l| expr::scan(&l.value).0).collect();
        let mut seen = Occurrences::default();
        let after = match after {
            Ok(v) => v,
            Err(why) => {
                self.checks += 1;
                // An unknown var (from a source nothing here applies) read as empty proves
                // nothing about the document.
                if leaf_refs
                    .iter()
                    .flatten()
                    .any(|r| !r.has_default && !values.contains_key(&r.name))
                {
                    return;
                }
                // Point at the first reference whose value can change YAML's structure.
                let mut culprit = None;
                for r in leaf_refs.iter().flatten() {
                    let needle = seen.next(&r.text);
                    if culprit.is_none() && values.get(&r.name).is_some_and(|v| yaml_special(v)) {
                        culprit = Some((needle, r));
                    }
                }
                let place = place_in(files, k, o, culprit.as_ref().map(|(n, _)| *n));
                let by = culprit.map_or_else(String::new, |(_, r)| {
                    format!(
                        " (`{}` is `{}`)",
                        r.text,
                        values.get(&r.name).map_or("", String::as_str)
                    )
                });
                let message = format!(
                    "once substituted{by}, {} is no longer YAML Flux can read ({why}): the \
                     Kustomization fails",
                    o.id
                );
                self.findings.push(
                    finding_for(&self.cluster.name, k, &TYPE_CHANGE, message, place.location)
                        .with_severity(Severity::Error),
                );
                return;
            }
        };
        for (leaf, refs) in leaves.iter().zip(&leaf_refs) {
            let needles: Vec<Needle<'_>> = refs.iter().map(|r| seen.next(&r.text)).collect();
            let templated_key = leaf
                .path
                .iter()
                .any(|s| matches!(s, Seg::Key(k) if k.contains("${")));
            if leaf.key || templated_key || refs.is_empty() {
                continue;
            }
            // Unknown values (encrypted, or from a source nothing in the repository applies)
            // cannot be type-checked.
            if refs.iter().any(|r| {
                encrypted.contains(r.name.as_str())
                    || (!r.has_default && !values.contains_key(&r.name))
            }) {
                continue;
            }
            self.checks += 1;
            let got = lookup(&after, &leaf.path);
            let text = crate::envsubst::eval(leaf.value.as_bytes(), &values, false)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            let place = place_in(files, k, o, needles.first().copied());
            let Some((severity, why)) = judge(&o.id.kind, &leaf.path, got, place.quoted, &text)
            else {
                continue;
            };
            let message = format!(
                "`{}` makes `{}` of {} {}{why}",
                refs[0].text,
                path_text(&leaf.path),
                o.id,
                got.map_or_else(
                    || "disappear".to_string(),
                    |v| format!("{} (`{}` read as YAML 1.1)", describe(v), text.trim())
                ),
            );
            self.findings.push(
                finding_for(&self.cluster.name, k, &TYPE_CHANGE, message, place.location)
                    .with_severity(severity),
            );
        }
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

/// A render error with fluxsim's temporary directories taken out, so that the message names
/// files as the repository does and is the same on every run.
fn without_temp_dirs(msg: &str) -> String {
    static TEMP: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    TEMP.get_or_init(|| regex::Regex::new(r"/[^\s'\x22]*/fluxsim-[a-z]+-[A-Za-z0-9]+/").ok())
        .as_ref()
        .map_or_else(
            || msg.to_string(),
            |re| re.replace_all(msg, "").into_owned(),
        )
}

fn bash_operator_message(r: &Ref, o: &ArtifactObject) -> String {
    // envsubst/funcs.go maps `:?` and `:+` to toDefault, like `:-`.
    let bash = if r.op == ":?" {
        "bash would fail when it is unset or empty"
    } else {
        "bash would give the alternate value when it is set"
    };
    format!(
        "`{}` in {}: Flux reads `{}` as a plain default (the value of `{}`, or the default \
         when it is unset or empty); {bash}",
        r.text, o.id, r.op, r.name
    )
}

/// Whether a substituted scalar's type is a hazard, and why.
fn judge(
    kind: &str,
    path: &[Seg],
    got: Option<&Value>,
    quoted: bool,
    text: &str,
) -> Option<(Severity, String)> {
    let Some(got) = got else {
        return Some((
            Severity::Error,
            ": the value changes the document's structure".to_string(),
        ));
    };
    match got {
        Value::String(_) => None,
        Value::Object(_) | Value::Array(_) => Some((
            Severity::Error,
            ": the value changes the document's structure".to_string(),
        )),
        v => {
            if is_string_field(kind, path) {
                Some((
                    Severity::Error,
                    "; the field must be a string, so the apply fails".to_string(),
                ))
            } else if quoted {
                Some((
                    Severity::Warning,
                    "; the template quotes it, but kustomize prints it without the quotes \
                     before Flux substitutes"
                        .to_string(),
                ))
            } else if surprising(v, text) {
                Some((
                    Severity::Warning,
                    "; a YAML 1.2 or JSON reader would not read it so".to_string(),
                ))
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(p: &[&str]) -> Vec<Seg> {
        p.iter()
            .map(|s| match s.parse::<usize>() {
                Ok(i) => Seg::Index(i),
                Err(_) => Seg::Key((*s).to_string()),
            })
            .collect()
    }

    #[test]
    fn string_fields_are_configmap_data_labels_env_and_container_args() {
        assert!(is_string_field("ConfigMap", &keys(&["data", "A"])));
        assert!(is_string_field("Secret", &keys(&["stringData", "A"])));
        assert!(is_string_field(
            "Deployment",
            &keys(&["spec", "template", "metadata", "labels", "x"])
        ));
        assert!(is_string_field(
            "Pod",
            &keys(&["spec", "containers", "0", "env", "1", "value"])
        ));
        assert!(is_string_field(
            "Pod",
            &keys(&["spec", "containers", "0", "args", "2"])
        ));
        assert!(!is_string_field("Deployment", &keys(&["spec", "replicas"])));
    }

    // sigs.k8s.io/yaml reads YAML 1.1: `on` is a boolean, `010` octal; `3` and `true` are
    // what anyone expects.
    #[test]
    fn yaml11_surprises_are_told_from_plain_numbers_and_booleans() {
        assert!(surprising(&json!(true), "on"));
        assert!(surprising(&json!(8), "010"));
        assert!(surprising(&json!(5400), "1:30"));
        assert!(surprising(&Value::Null, "~"));
        assert!(!surprising(&json!(3), "3"));
        assert!(!surprising(&json!(true), "true"));
        assert!(!surprising(&json!(0.5), "0.5"));
    }

    #[test]
    fn shell_c_container_args_and_user_data_are_scripts() {
        let pod = json!({"kind": "Pod", "spec": {"containers": [
            {"command": ["/bin/sh", "-ec"], "args": ["echo ${HOME}"]},
            {"args": ["--level=${LEVEL}"]}]}});
        let leaves = string_leaves(&pod);
        let script: Vec<(String, bool)> = leaves
            .iter()
            .map(|l| (path_text(&l.path), l.script))
            .collect();
        assert!(script.contains(&("spec.containers[0].args[0]".into(), true)));
        assert!(script.contains(&("spec.containers[1].args[0]".into(), false)));
        let vm = json!({"spec": {"volumes": [{"cloudInitNoCloud": {"userData": "x ${a}"}}]}});
        assert!(string_leaves(&vm).iter().any(|l| l.script));
    }

    #[test]
    fn judge_flags_string_fields_quoted_templates_and_structure_changes() {
        let data = keys(&["data", "A"]);
        assert_eq!(
            judge("ConfigMap", &data, Some(&json!(true)), false, "on").map(|j| j.0),
            Some(Severity::Error)
        );
        let repl = keys(&["spec", "replicas"]);
        assert_eq!(
            judge("Deployment", &repl, Some(&json!(3)), false, "3"),
            None
        );
        assert_eq!(
            judge("Deployment", &repl, Some(&json!(3)), true, "3").map(|j| j.0),
            Some(Severity::Warning)
        );
        assert_eq!(
            judge("X", &repl, Some(&json!({"a": "b"})), false, "a: b").map(|j| j.0),
            Some(Severity::Error)
        );
        assert_eq!(
            judge("X", &repl, None, false, "").map(|j| j.0),
            Some(Severity::Error)
        );
    }
}
