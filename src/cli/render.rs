//! `fluxsim render` and `fluxsim build`.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::flags::{HelmFlags, ObjectFlags, RenderFlags};
use super::{CommandResult, ExitStatus, Output};
use crate::model::Status as KsStatus;
use crate::render::{render_dir, RepoOptions};
use crate::report::limit::Kind;

/// Output formats of `render`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    /// A table for people.
    Text,
    /// Stable JSON for programs.
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RenderArgs {
    /// Output format.
    #[arg(
        long,
        short = 'o',
        visible_alias = "output",
        value_enum,
        default_value = "text"
    )]
    pub(crate) format: Format,
    /// Write every artifact to DIR/<cluster>/<namespace>/<name>.yaml, and DIR/SHA256SUMS.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) fail: super::FailFlags,
    #[command(flatten)]
    pub(crate) objects: ObjectFlags,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
    #[command(flatten)]
    pub(crate) validate: super::validate::ValidateFlag,
}

pub(crate) fn run_render(
    args: &RenderArgs,
    layout: crate::report::layout::Layout,
) -> CommandResult {
    let mut opts = args.helm.apply(args.flags.options());
    // `--validate` points at files and lines through the origins kustomize records (never
    // part of a digest).
    opts.origins |= args.validate.validate;
    let r = render_dir(&args.flags.repo, &opts)?;
    // One entry whose name cannot be a file fails alone: the rest is written.
    let skipped = match &args.out {
        Some(out) => {
            crate::report::out::write_out(&r, out, &args.flags.repo, &args.objects.presentation())?
        }
        None => Vec::new(),
    };
    let mut skipped_note = String::new();
    for s in &skipped {
        let _ = writeln!(
            skipped_note,
            "fluxsim: error: --out: {} not written: {}",
            crate::report::escape::OneLine(&s.entry),
            s.why
        );
    }
    let (mut text, kind) = match args.format {
        Format::Text => (crate::report::render_table(&r, layout), Kind::Plain),
        Format::Json => (crate::report::render_json(&r), Kind::Json),
    };
    let mut level = crate::level::of_render(&r.clusters);
    if !skipped.is_empty() {
        level = level.max(Some(crate::finding::Severity::Error));
    }
    if let Some((more, value, found)) = args.validate.run(
        &r,
        matches!(args.format, Format::Json),
        layout,
        opts.timeout,
    )? {
        level = level.max(found);
        match args.format {
            Format::Text => {
                text.push('\n');
                text.push_str(&more);
            }
            Format::Json => {
                let mut doc: serde_json::Value = serde_json::from_str(&text)?;
                doc["validation"] = value;
                text = serde_json::to_string_pretty(&doc)? + "\n";
            }
        }
    }
    let status = args.fail.status(level);
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.flags.subfolder_note(&r.clusters))
        .with_stderr(&skipped_note))
}

#[derive(Debug, clap::Args)]
pub(crate) struct BuildArgs {
    /// The Flux Kustomization to print, as NAME or NAMESPACE/NAME (`fluxsim build NAME`
    /// takes a lone NAME that is not a folder as it, as `flux build ks NAME` does).
    #[arg(long, short = 'k', value_name = "[NS/]NAME")]
    pub(crate) kustomization: Option<String>,
    /// Leave out files matching these .gitignore patterns (as `flux build --ignore-paths`).
    ///
    /// Comma-separated, repeatable; for the files Flux's generator lists for this
    /// Kustomization, relative to its path, as `flux build kustomization --ignore-paths` takes
    /// them: after the `.sourceignore` files of that path
    /// (a `!` pattern re-includes what they excluded), over Flux's default patterns; they
    /// also drop the `resources`, `components` and `crds` entries of its kustomization they
    /// match.
    #[arg(long = "ignore-paths", value_name = "PATTERN", value_delimiter = ',')]
    pub(crate) ignore_paths: Vec<String>,
    #[command(flatten)]
    pub(crate) objects: ObjectFlags,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
}

impl BuildArgs {
    /// `fluxsim build NAME`: a lone argument that is no folder is the Kustomization (as
    /// `flux build ks NAME` reads it), the repository then being found as without one. Runs
    /// before the repository is resolved.
    pub(crate) fn take_name(&mut self) {
        if self.kustomization.is_some() {
            return;
        }
        if let Some(arg) = self.flags.repo_arg.as_ref().filter(|p| !p.is_dir()) {
            self.kustomization = Some(arg.to_string_lossy().into_owned());
            self.flags.repo_arg = None;
        }
    }

    fn name(&self) -> anyhow::Result<&str> {
        self.kustomization.as_deref().ok_or_else(|| {
            anyhow::anyhow!(
                "`build` needs a Kustomization: `fluxsim build NAME` or `-k [NAMESPACE/]NAME`"
            )
        })
    }
}

/// The clusters `build` prints from: `--cluster NAME` (or several: `a,b`), the repository's
/// only cluster, or the only cluster that has the Kustomization (then rendered here, and
/// given back); else an error listing the clusters to choose from.
fn build_clusters(
    args: &BuildArgs,
    opts: &mut RepoOptions,
) -> anyhow::Result<Option<crate::model::RepoRender>> {
    match opts.only.len() {
        0 => {
            let tree = crate::render::load_tree(&args.flags.repo, None, opts)?;
            let clusters = crate::render::clusters_of(tree.fs(), opts)?;
            if let [one] = clusters.as_slice() {
                opts.only = vec![one.name.clone()];
                return Ok(None);
            }
            let name = args.name()?;
            let r = render_dir(&args.flags.repo, opts)?;
            let having: Vec<&str> = r
                .clusters
                .iter()
                .filter(|c| c.find(name).is_some())
                .map(|c| c.name.as_str())
                .collect();
            match having.as_slice() {
                [one] => {
                    opts.only = vec![(*one).to_string()];
                    Ok(Some(r))
                }
                [] => {
                    let names: Vec<&str> = r.clusters.iter().map(|c| c.name.as_str()).collect();
                    anyhow::bail!(
                        "no Kustomization `{}` in any cluster of the repository ({})",
                        crate::report::escape::OneLine(name),
                        names.join(", ")
                    )
                }
                many => anyhow::bail!(
                    "`build` needs --cluster NAME (or several, `a,b`): Kustomization `{}` is in \
                     {} ({})",
                    crate::report::escape::OneLine(name),
                    crate::report::plural(many.len(), "cluster"),
                    many.join(", ")
                ),
            }
        }
        1 => Ok(None),
        _ if !args.ignore_paths.is_empty() => anyhow::bail!(
            "--ignore-paths applies to one Kustomization of one cluster; --cluster named {}",
            opts.only.join(", ")
        ),
        _ => Ok(None),
    }
}

pub(crate) fn run_build(args: &BuildArgs) -> CommandResult {
    let mut opts = args.helm.apply(args.flags.options());
    let kustomization = args.name()?.to_string();
    let rendered = build_clusters(args, &mut opts)?;
    let asked = opts.only.clone();
    let mut r = match rendered {
        Some(r) => r,
        None => render_dir(&args.flags.repo, &opts)?,
    };
    if !args.ignore_paths.is_empty() {
        // The Kustomization's path is known once its cluster has rendered: the generator's
        // rules for it are made then, and the cluster renders again with them.
        let patterns = args.ignore_paths.join("\n");
        if let Some(rules) = crate::render::ignore_for(&r, &opts, &kustomization, &patterns)? {
            opts.build_ignore = Some(rules);
            r = render_dir(&args.flags.repo, &opts)?;
        }
    }
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut status = ExitStatus::Ok;
    // In the order asked for; each cluster's objects after a comment naming it when there
    // are several (one YAML stream).
    for name in &asked {
        let Some(c) = r.clusters.iter().find(|c| &c.name == name) else {
            anyhow::bail!("no cluster `{name}` in the repository");
        };
        let Some(k) = c.find(&kustomization) else {
            let names: Vec<String> = c
                .kustomizations
                .iter()
                .map(|k| k.kustomization.id.to_string())
                .collect();
            anyhow::bail!(
                "no Kustomization `{}` in cluster `{}` (found: {})",
                crate::report::escape::OneLine(&kustomization),
                c.name,
                names.join(", ")
            );
        };
        let id = crate::report::escape::OneLine(&k.kustomization.id);
        let problem = match (&k.status, &k.artifact) {
            (_, Some(a)) => {
                if asked.len() > 1 {
                    if !stdout.is_empty() {
                        stdout.push_str("---\n");
                    }
                    let _ = writeln!(stdout, "# fluxsim build: {id} in cluster {name}");
                }
                // The objects as kubectl would read them: printed as they are.
                stdout.push_str(&args.objects.presentation().artifact_text(a));
                None
            }
            (KsStatus::Failed(e), None) => Some(format!("failed: {e}")),
            (KsStatus::Blocked(e), None) => Some(format!("blocked: {e}")),
            (KsStatus::NeedsNetwork(e), None) => Some(format!("needs the network: {e}")),
            (KsStatus::External(e), None) => Some(format!("is external: {e}")),
            _ => Some("is suspended".to_string()),
        };
        if let Some(problem) = problem {
            let at = if asked.len() > 1 {
                format!(" in cluster {name}")
            } else {
                String::new()
            };
            let _ = writeln!(stderr, "fluxsim: {id}{at} {problem}");
            status = ExitStatus::Finding;
        }
    }
    Ok(Output::new(stdout, status)
        .kind(Kind::Manifest)
        .with_stderr(&stderr))
}
