//! `fluxsim validate`: will it apply? Every rendered object checked against its schema as
//! the API server checks kustomize-controller's server-side apply.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::validate::KubeVersion;
use anyhow::Context as _;

use super::flags::FindingsFormat as Format;
use super::flags::{HelmFlags, RenderFlags};
use super::{Outcome, Output};
use crate::model::RepoRender;
use crate::render::render_dir;
use crate::validate::{self, ValidateOptions};

/// The flags that say what objects are validated against (`validate`, `--validate`).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct SchemaFlags {
    /// The Kubernetes version of the built-in schemas: 1.24 to 1.36 (default: 1.36, the
    /// newest Flux v2.9 supports, or `[validate] kube_version` of fluxsim.toml).
    #[arg(long, value_name = "VERSION", value_parser = kube_version)]
    pub(crate) kube_version: Option<KubeVersion>,
    /// A folder of CRD manifests (YAML or JSON, read recursively) for custom resources whose
    /// CRD the render does not hold. Repeatable; adds to `[validate] schema_dirs`.
    #[arg(long, value_name = "DIR")]
    pub(crate) schema_dir: Vec<PathBuf>,
}

/// The Kubernetes versions with embedded schemas, as errors list them (`1.24, 1.25, ..., 1.36`).
fn supported_versions() -> String {
    KubeVersion::ALL.map(KubeVersion::as_str).join(", ")
}

pub(crate) fn kube_version(s: &str) -> Result<KubeVersion, String> {
    KubeVersion::parse(s).map_err(|_| {
        format!(
            "no schemas for Kubernetes `{s}`: one of {}",
            supported_versions()
        )
    })
}

impl SchemaFlags {
    /// What to validate `r` against: the flags, then the repository's `[validate]` table;
    /// CEL evaluation stops at `timeout` (`--timeout`, as for a build).
    pub(crate) fn options(
        &self,
        r: &RepoRender,
        timeout: std::time::Duration,
    ) -> anyhow::Result<ValidateOptions> {
        let fs = r.tree.fs();
        let config = &r.config;
        // `[validate] kube_version` is read with the cluster's other versions (the render's
        // `versions`, taken to the nearest embedded schemas); it must still name a 1.x release.
        if let Some(v) = &config.validate.kube_version {
            if crate::versions::KubeVersion::parse(v).is_none() {
                anyhow::bail!(
                    "{}: [validate] kube_version `{}`: expected a Kubernetes 1.x release (schemas \
                     embedded: {})",
                    crate::config::CONFIG_FILE,
                    crate::report::escape::OneLine(v),
                    supported_versions()
                );
            }
        }
        let kube_version = self.kube_version;
        let mut files = Vec::new();
        for dir in &config.validate.schema_dirs {
            repo_schema_files(fs, dir, &mut files)?;
        }
        for dir in &self.schema_dir {
            user_schema_files(dir, dir, &mut files)?;
        }
        let extra_crds = validate::crds_of_files(&files)?;
        Ok(ValidateOptions {
            kube_version,
            extra_crds,
            timeout: Some(timeout),
        })
    }
}

/// The schema files of a `[validate] schema_dirs` folder: repository content, so read
/// through the source tree (never outside it), hidden folders skipped.
fn repo_schema_files(
    fs: &crate::source::SourceFs,
    dir: &str,
    out: &mut Vec<(String, String)>,
) -> anyhow::Result<()> {
    let rel = dir.trim_start_matches("./").trim_end_matches('/');
    let inside = Path::new(rel).components().all(|c| {
        matches!(
            c,
            std::path::Component::Normal(_) | std::path::Component::CurDir
        )
    });
    let path = fs.root().join(rel);
    if !inside || !fs.is_dir(&path) {
        anyhow::bail!(
            "{}: [validate] schema_dirs: `{}` is not a folder of the repository",
            crate::config::CONFIG_FILE,
            crate::report::escape::OneLine(dir)
        );
    }
    let mut stack = vec![rel.to_string()];
    while let Some(d) = stack.pop() {
        let mut entries = fs.read_dir(&fs.root().join(&d))?;
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for e in entries {
            let name = e.name.to_string_lossy().into_owned();
            let child = if d.is_empty() {
                name.clone()
            } else {
                format!("{d}/{name}")
            };
            if e.is_dir {
                if !name.starts_with('.') {
                    stack.push(child);
                }
            } else if validate::is_schema_file(&name) {
                if out.len() >= validate::MAX_SCHEMA_FILES {
                    anyhow::bail!(
                        "{}: [validate] schema_dirs: more than {} schema files",
                        crate::config::CONFIG_FILE,
                        validate::MAX_SCHEMA_FILES
                    );
                }
                let text = fs
                    .read_to_string(&fs.root().join(&child))
                    .with_context(|| child.clone())?;
                out.push((child, text));
            }
        }
    }
    Ok(())
}

/// The schema files of a `--schema-dir` folder: the user's, read where the user said, each
/// read bounded; symbolic links are not followed.
fn user_schema_files(
    top: &Path,
    dir: &Path,
    out: &mut Vec<(String, String)>,
) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(dir)
        .with_context(|| format!("--schema-dir {}", dir.display()))?;
    if !meta.is_dir() {
        anyhow::bail!("--schema-dir {}: not a folder", dir.display());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("--schema-dir {}", dir.display()))?
        .collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let ty = e.file_type()?;
        let path = e.path();
        if ty.is_dir() {
            if !name.starts_with('.') {
                user_schema_files(top, &path, out)?;
            }
        } else if ty.is_file() && validate::is_schema_file(&name) {
            if out.len() >= validate::MAX_SCHEMA_FILES {
                anyhow::bail!(
                    "--schema-dir {}: more than {} schema files",
                    top.display(),
                    validate::MAX_SCHEMA_FILES
                );
            }
            let bytes =
                crate::source::read_bounded(&path).with_context(|| path.display().to_string())?;
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow::anyhow!("{}: not UTF-8", path.display()))?;
            out.push((path.display().to_string(), text));
        }
    }
    Ok(())
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) schema: SchemaFlags,
    /// Output format.
    #[arg(
        long,
        short = 'o',
        visible_alias = "output",
        value_enum,
        default_value = "text"
    )]
    pub(crate) format: Format,
    #[command(flatten)]
    pub(crate) fail: super::FailFlags,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
}

pub(crate) fn run(args: &Args, layout: crate::report::layout::Layout) -> Outcome {
    let outcome = outcome(args, layout);
    match args.format {
        Format::Sarif => super::sarif_on_error(outcome, &validate::RULES),
        _ => outcome,
    }
}

fn outcome(args: &Args, layout: crate::report::layout::Layout) -> Outcome {
    let mut opts = args.helm.apply(args.flags.options());
    // Findings point at files and lines through the origins kustomize records.
    opts.origins = true;
    let r = render_dir(&args.flags.repo, &opts)?;
    let v = validate::validate(&r, &args.schema.options(&r, opts.timeout)?);
    let text = match args.format {
        Format::Text => crate::report::validate::validate_text(&r, &v, layout),
        Format::Json => {
            serde_json::to_string_pretty(&crate::report::validate::validate_json(&r, &v))? + "\n"
        }
        Format::Sarif => {
            serde_json::to_string_pretty(&crate::report::findings::findings_sarif(
                &validate::RULES,
                &v.findings,
                &super::git::prefix_in_work_tree(&args.flags.repo),
            ))? + "\n"
        }
    };
    // A Kustomization that fails applies nothing: the cluster does not converge (an error,
    // as for `render`).
    let status = args
        .fail
        .status(crate::level::of_render(&r.clusters).max(crate::level::of_findings(&v.findings)));
    let kind = match args.format {
        Format::Text => crate::report::limit::Kind::Plain,
        Format::Json | Format::Sarif => crate::report::limit::Kind::Json,
    };
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.flags.subfolder_note(&r.clusters)))
}

/// `--validate` on `render`: validation of what was rendered, after the table.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Validation options")]
pub(crate) struct ValidateFlag {
    /// Also check every rendered object against its schema (as `fluxsim validate`).
    ///
    /// Its findings count at their level for --fail-on (an error: exit 1 by default).
    #[arg(long)]
    pub(crate) validate: bool,
    #[command(flatten)]
    pub(crate) schema: SchemaFlags,
}

impl ValidateFlag {
    /// Validates `r` when asked: the text or JSON to add, and the level of what was found.
    pub(crate) fn run(
        &self,
        r: &RepoRender,
        json: bool,
        layout: crate::report::layout::Layout,
        timeout: std::time::Duration,
    ) -> anyhow::Result<Option<(String, serde_json::Value, Option<crate::finding::Severity>)>> {
        if !self.validate {
            return Ok(None);
        }
        let v = validate::validate(r, &self.schema.options(r, timeout)?);
        let level = crate::level::of_findings(&v.findings);
        let (text, value) = if json {
            (
                String::new(),
                crate::report::validate::validation_json(r, &v),
            )
        } else {
            (
                crate::report::validate::validate_text(r, &v, layout),
                serde_json::Value::Null,
            )
        };
        Ok(Some((text, value, level)))
    }
}

/// `--validate`, `--all-findings`, `--audit`, `--graph` and `--upgrade` on `diff` and `prove`.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Validation options")]
pub(crate) struct DiffValidate {
    /// Also check the objects against their schemas.
    ///
    /// As `fluxsim validate` does. Both revisions are checked and the findings head brings are reported; those base
    /// has too are left out (--all-findings).
    #[arg(long)]
    pub(crate) validate: bool,
    /// With --validate: every finding of head, not only those base does not have.
    #[arg(long, requires = "validate", hide_short_help = true)]
    pub(crate) all_findings: bool,
    /// Also audit the substitutions of both revisions (as `fluxsim audit`) and report the
    /// hazards head brings.
    ///
    /// Both revisions are rendered with kustomize's origins, so that each finding names its
    /// file and line (slower: fewer builds stay native). Those base has too are left out.
    #[arg(long, hide_short_help = true)]
    pub(crate) audit: bool,
    /// Also check the cold start of both revisions (as `fluxsim graph`) and report the
    /// findings head brings.
    ///
    /// A Kustomization that can never become Ready, a custom resource whose CRD nothing
    /// installs before it, a dependency cycle. Rendered with origins, as --audit. Those base
    /// has too are left out.
    #[arg(long, hide_short_help = true)]
    pub(crate) graph: bool,
    /// Also check what moving to the newest Flux and Kubernetes releases fluxsim knows
    /// breaks in both revisions (as `fluxsim upgrade`: API versions removed or deprecated,
    /// CRD versions deprecated) and report the findings head brings.
    ///
    /// The second render at the target (FS403) is `fluxsim upgrade`'s alone.
    #[arg(long, hide_short_help = true)]
    pub(crate) upgrade: bool,
    #[command(flatten)]
    pub(crate) schema: SchemaFlags,
}

impl DiffValidate {
    /// Whether a check reads the revisions' files and needs the renders' origins.
    pub(crate) fn reads_trees(&self) -> bool {
        self.audit || self.graph
    }
}

/// The trees the audit and the graph of a change read: base's and head's files, where the
/// origins of their renders point.
pub(crate) struct AuditTrees<'a> {
    pub(crate) base: &'a crate::source::SourceFs,
    pub(crate) head: &'a crate::source::SourceFs,
    /// Substitution judged as strict (the default), or not (`--no-strict`).
    pub(crate) strict: bool,
}

/// Backticks mark code in the review's sentences: the repository's text must not.
fn unticked(s: &str) -> String {
    s.replace('`', "'")
}

/// A finding as a sentence of the review: `error `FS310` at `file:line`: message`.
fn hazard(f: &crate::finding::Finding) -> String {
    let at = f
        .location
        .as_ref()
        .map(|l| format!(" at `{}`", unticked(&l.to_string())))
        .unwrap_or_default();
    format!("{} `{}`{at}: {}", f.severity, f.rule, unticked(&f.message))
}

/// How many Kustomizations a grouped hazard names before `and N more`.
const HAZARD_NAMES_SHOWN: usize = 5;

/// The hazards of one source file as one sentence: the first's, the Kustomizations they
/// are in, and how many there are.
fn grouped_hazard(g: &crate::report::quiet::SourceGroup<'_>) -> String {
    let first = g.members[0];
    if g.members.len() == 1 {
        return hazard(first);
    }
    let ks = g.kustomizations();
    let mut names = ks
        .iter()
        .take(HAZARD_NAMES_SHOWN)
        .map(|k| format!("`{}`", unticked(k)))
        .collect::<Vec<_>>()
        .join(", ");
    if ks.len() > HAZARD_NAMES_SHOWN {
        let _ = write!(names, " and {} more", ks.len() - HAZARD_NAMES_SHOWN);
    }
    let at = first
        .location
        .as_ref()
        .map(|l| format!(" at `{}`", unticked(&l.to_string())))
        .unwrap_or_default();
    format!(
        "{} `{}`{at}, in {} ({}): {}; {} in all from this file (`-o json` lists each)",
        first.severity,
        first.rule,
        crate::report::plural(ks.len(), "Kustomization"),
        names,
        unticked(&first.message),
        crate::report::plural(g.members.len(), "hazard"),
    )
}

/// Rules the audit of a change leaves to the diff, which says them in its own words: a
/// Kustomization that failed or never reconciled (FS100) is a failure or "not compared".
const SAID_BY_DIFF: [&str; 1] = ["FS100"];

/// What a change brings at apply time: the hazards of going from base to head (always),
/// with `--validate` the schema findings of head (new ones unless `--all-findings`), with
/// `--audit` the substitution hazards and with `--graph` the cold-start findings head brings.
#[derive(Debug, Default)]
pub(crate) struct ChangeChecks {
    pub(crate) hazards: Vec<crate::finding::Finding>,
    pub(crate) validation: Option<Vec<crate::finding::Finding>>,
    /// With `--audit`: the substitution hazards (warning and error) head brings.
    pub(crate) audit: Option<Vec<crate::finding::Finding>>,
    /// With `--graph`: the cold-start findings (warning and error) head brings.
    pub(crate) graph: Option<Vec<crate::finding::Finding>>,
    /// With `--upgrade`: the upgrade findings (warning and error) head brings.
    pub(crate) upgrade: Option<Vec<crate::finding::Finding>>,
}

/// The rules whose findings the review already states in its own words (prune of state and
/// moves under prune): not repeated.
const SAID_BY_REVIEW: [&str; 4] = ["FS320", "FS321", "FS322", "FS323"];

impl DiffValidate {
    /// Checks the change from `base` to `head`; `head_render` is head's render when this run
    /// made it (its tree locates findings and holds `fluxsim.toml`); `changed` the files
    /// that differ between the two (a hazard is located in the one it came from).
    pub(crate) fn run(
        &self,
        base: &[crate::model::ClusterRender],
        head: &[crate::model::ClusterRender],
        head_render: Option<&RepoRender>,
        trees: Option<&AuditTrees<'_>>,
        changed: Option<&std::collections::BTreeSet<String>>,
        timeout: std::time::Duration,
    ) -> anyhow::Result<ChangeChecks> {
        let fs = head_render.map(|r| r.tree.fs());
        let hazards = validate::change_hazards(base, head, fs, changed);
        let validation = if self.validate {
            let opts = match head_render {
                Some(r) => self.schema.options(r, timeout)?,
                None => ValidateOptions {
                    kube_version: self.schema.kube_version,
                    timeout: Some(timeout),
                    ..ValidateOptions::default()
                },
            };
            let h = validate::validate_clusters(fs, head, &opts);
            Some(if self.all_findings {
                h.findings
            } else {
                let b = validate::validate_clusters(None, base, &opts);
                validate::new_findings(&b.findings, &h.findings)
            })
        } else {
            None
        };
        let graph = match trees.filter(|_| self.graph) {
            Some(t) => {
                // Each revision's own fluxsim.toml (its bootstrap CRDs, its dependencies).
                let base_config = crate::config::Config::load(t.base)?;
                let head_config = match head_render {
                    Some(r) => r.config.clone(),
                    None => crate::config::Config::load(t.head)?,
                };
                let b = crate::graph::findings(t.base, base, &base_config);
                let h = crate::graph::findings(t.head, head, &head_config);
                Some(
                    validate::new_findings(&b, &h)
                        .into_iter()
                        .filter(|f| f.severity >= crate::finding::Severity::Warning)
                        .collect(),
                )
            }
            None => None,
        };
        let audit = trees.filter(|_| self.audit).map(|t| {
            let opts = crate::audit::AuditOptions { strict: t.strict };
            let b = crate::audit::audit_clusters(t.base, base, opts);
            let h = crate::audit::audit_clusters(t.head, head, opts);
            validate::new_findings(&b.findings, &h.findings)
                .into_iter()
                .filter(|f| {
                    f.severity >= crate::finding::Severity::Warning
                        && !SAID_BY_DIFF.contains(&f.rule)
                })
                .collect()
        });
        let upgrade = self.upgrade.then(|| {
            let opts = crate::upgrade::UpgradeOptions {
                flux: crate::upgrade::FluxMinor::NEWEST,
                kube: KubeVersion::DEFAULT,
                validate: ValidateOptions::default(),
            };
            let b = crate::upgrade::upgrade_clusters(None, base, &opts);
            let h = crate::upgrade::upgrade_clusters(fs, head, &opts);
            validate::new_findings(&b.findings, &h.findings)
                .into_iter()
                .filter(|f| f.severity >= crate::finding::Severity::Warning)
                .collect()
        });
        Ok(ChangeChecks {
            hazards,
            validation,
            audit,
            graph,
            upgrade,
        })
    }
}

impl ChangeChecks {
    /// Findings at error level: the apply of head fails.
    pub(crate) fn errors(&self) -> usize {
        self.hazards
            .iter()
            .chain(self.validation.iter().flatten())
            .chain(self.audit.iter().flatten())
            .chain(self.graph.iter().flatten())
            .chain(self.upgrade.iter().flatten())
            .filter(|f| f.severity == crate::finding::Severity::Error)
            .count()
    }

    /// The level of what the change brings (`--fail-on`): its worst finding.
    pub(crate) fn level(&self) -> Option<crate::finding::Severity> {
        self.hazards
            .iter()
            .chain(self.validation.iter().flatten())
            .chain(self.audit.iter().flatten())
            .chain(self.graph.iter().flatten())
            .chain(self.upgrade.iter().flatten())
            .map(|f| f.severity)
            .max()
    }

    /// Adds the findings to the review's hazards of their cluster, as sentences; with
    /// `group` (a report for people, not `--verbose`), the apply hazards of one cluster, rule
    /// and source file as one sentence that lists their Kustomizations (one edit of a
    /// shared component: one hazard, at the component's file).
    pub(crate) fn add_to_review(&self, review: &mut crate::review::model::Review, group: bool) {
        let apply: Vec<crate::finding::Finding> = self
            .hazards
            .iter()
            .filter(|f| !SAID_BY_REVIEW.contains(&f.rule))
            .cloned()
            .collect();
        let mut sentences: Vec<(Option<String>, String)> = Vec::new();
        if group {
            for g in crate::report::quiet::by_source(&apply) {
                let f = g.members[0];
                sentences.push((f.cluster.clone(), grouped_hazard(&g)));
            }
        } else {
            sentences.extend(apply.iter().map(|f| (f.cluster.clone(), hazard(f))));
        }
        let others = self
            .validation
            .iter()
            .flatten()
            .filter(|f| f.severity >= crate::finding::Severity::Warning)
            .chain(self.audit.iter().flatten())
            .chain(self.graph.iter().flatten())
            .chain(self.upgrade.iter().flatten());
        sentences.extend(others.map(|f| (f.cluster.clone(), hazard(f))));
        for (cluster, sentence) in sentences {
            let Some(c) = review
                .clusters
                .iter_mut()
                .find(|c| Some(c.name.as_str()) == cluster.as_deref())
            else {
                continue;
            };
            c.hazards.push(sentence);
        }
    }

    /// Adds `applyHazards` and, with `--validate`, `validation`, with `--audit`, `audit`, with
    /// `--graph`, `graph` to a diff's JSON.
    pub(crate) fn add_to_json(&self, json: &mut serde_json::Value) {
        json["applyHazards"] = crate::report::findings::findings_json(&self.hazards);
        if let Some(v) = &self.validation {
            json["validation"] = crate::report::findings::findings_json(v);
        }
        if let Some(a) = &self.audit {
            json["audit"] = crate::report::findings::findings_json(a);
        }
        if let Some(g) = &self.graph {
            json["graph"] = crate::report::findings::findings_json(g);
        }
        if let Some(u) = &self.upgrade {
            json["upgrade"] = crate::report::findings::findings_json(u);
        }
    }
}
