//! `fluxsim validate`: will it apply? Every rendered object checked against its schema as
//! the API server checks kustomize-controller's server-side apply.

use std::path::{Path, PathBuf};

use crate::validate::KubeVersion;
use anyhow::Context as _;

use super::flags::FindingsFormat as Format;
use super::flags::ReportFlags;
use super::{CommandResult, Output};
use crate::change::{AuditTrees, ChangeChecks, ChangeOptions};
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
    /// Also check the objects against the cluster's ValidatingAdmissionPolicies.
    ///
    /// With their bindings, as the API server admits a create by the Kustomization's service
    /// account: those the render applies and those of `[validate] policies` (which turns
    /// this on).
    #[arg(long, hide_short_help = true)]
    pub(crate) policies: bool,
}

/// The Kubernetes versions with embedded schemas, as errors list them (`1.24, 1.25, ..., 1.36`).
fn supported_versions() -> String {
    KubeVersion::ALL.map(KubeVersion::as_str).join(", ")
}

pub(crate) fn kube_version(s: &str) -> Result<KubeVersion, super::flags::FlagValueError> {
    KubeVersion::parse(s).map_err(|_| super::flags::FlagValueError::NoSchemas {
        version: s.to_string(),
        supported: supported_versions(),
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
        let policies = if self.policies || !config.validate.policies.is_empty() {
            let mut files = Vec::new();
            for entry in &config.validate.policies {
                repo_policy_files(fs, entry, &mut files)?;
            }
            Some(validate::policies_of_files(&files)?)
        } else {
            None
        };
        Ok(ValidateOptions {
            kube_version,
            extra_crds,
            timeout: Some(timeout),
            policies,
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

/// The files of a `[validate] policies` entry: a file of the repository, or a folder of them
/// (read as the schema folders are: through the source tree, never outside it).
fn repo_policy_files(
    fs: &crate::source::SourceFs,
    entry: &str,
    out: &mut Vec<(String, String)>,
) -> anyhow::Result<()> {
    let rel = entry.trim_start_matches("./").trim_end_matches('/');
    let inside = !rel.is_empty()
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    let refused = || {
        anyhow::anyhow!(
            "{}: [validate] policies: `{}` is not a file or folder of the repository",
            crate::config::CONFIG_FILE,
            crate::report::escape::OneLine(entry)
        )
    };
    if !inside {
        return Err(refused());
    }
    let path = fs.secure_join(rel).map_err(|_| refused())?;
    if fs.is_file(&path) {
        let text = fs.read_to_string(&path).with_context(|| rel.to_string())?;
        out.push((rel.to_string(), text));
        return Ok(());
    }
    if !fs.is_dir(&path) {
        return Err(refused());
    }
    repo_schema_files(fs, rel, out).map_err(|e| {
        anyhow::anyhow!(
            "{}",
            e.to_string()
                .replace("[validate] schema_dirs", "[validate] policies")
        )
    })?;
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
    #[command(flatten)]
    pub(crate) report: ReportFlags<Format>,
}

pub(crate) fn run(args: &Args, layout: crate::report::layout::Layout) -> CommandResult {
    let outcome = outcome(args, layout);
    match args.report.format {
        Format::Sarif => super::sarif_on_error(outcome, validate::RULES),
        _ => outcome,
    }
}

fn outcome(args: &Args, layout: crate::report::layout::Layout) -> CommandResult {
    let mut opts = args.report.helm.apply(args.report.flags.options());
    // Findings point at files and lines through the origins kustomize records.
    opts.origins = true;
    let r = render_dir(&args.report.flags.repo, &opts)?;
    let v = validate::validate(&r, &args.schema.options(&r, opts.timeout)?);
    let text = match args.report.format {
        Format::Text => crate::report::validate::validate_text(&r, &v, layout),
        Format::Json => {
            serde_json::to_string_pretty(&crate::report::validate::validate_json(&r, &v))? + "\n"
        }
        Format::Sarif => {
            serde_json::to_string_pretty(&crate::report::findings::findings_sarif(
                validate::RULES,
                &v.findings,
                &super::git::prefix_in_work_tree(&args.report.flags.repo),
            ))? + "\n"
        }
    };
    // A Kustomization that fails applies nothing: the cluster does not converge (an error,
    // as for `render`).
    let status = args
        .report
        .fail
        .status(crate::level::of_render(&r.clusters).max(crate::level::of_findings(&v.findings)));
    let kind = match args.report.format {
        Format::Text => crate::report::limit::Kind::Plain,
        Format::Json | Format::Sarif => crate::report::limit::Kind::Json,
    };
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.report.flags.subfolder_note(&r.clusters)))
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

impl DiffValidate {
    /// Checks the change from `base` to `head` (see [`crate::change::check_change`]); the
    /// schema options are read from head's render when this run made it.
    pub(crate) fn run(
        &self,
        base: &[crate::model::ClusterRender],
        head: &[crate::model::ClusterRender],
        head_render: Option<&RepoRender>,
        trees: Option<&AuditTrees<'_>>,
        changed: Option<&std::collections::BTreeSet<String>>,
        timeout: std::time::Duration,
    ) -> anyhow::Result<ChangeChecks> {
        let validate = if self.validate {
            Some(match head_render {
                Some(r) => self.schema.options(r, timeout)?,
                None => ValidateOptions {
                    kube_version: self.schema.kube_version,
                    policies: self.schema.policies.then(Vec::new),
                    timeout: Some(timeout),
                    ..ValidateOptions::default()
                },
            })
        } else {
            None
        };
        let opts = ChangeOptions {
            validate,
            all_findings: self.all_findings,
            audit: self.audit,
            graph: self.graph,
            upgrade: self.upgrade,
        };
        Ok(crate::change::check_change(
            base,
            head,
            head_render,
            trees,
            changed,
            &opts,
        )?)
    }
}
