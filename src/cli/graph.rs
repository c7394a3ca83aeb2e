//! `fluxsim graph`: simulate a cold start of each cluster and check its Kustomization graph.

use std::path::PathBuf;

use super::flags::RenderFlags;
use super::{CommandResult, Output};
use crate::config::Config;
use crate::render::render_dir;

/// Output formats of `graph`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    /// Waves and findings for people.
    Text,
    /// Stable JSON: clusters (waves, Kustomizations, edges) and findings.
    Json,
    /// SARIF 2.1.0, for code-scanning annotations.
    Sarif,
    /// Graphviz DOT of every cluster's graph.
    Dot,
    /// A Mermaid flowchart of every cluster's graph.
    Mermaid,
    /// For a pull request: the Mermaid flowchart in a ```mermaid block, then the findings.
    Markdown,
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
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
    /// The fluxsim config file; default: `fluxsim.toml` at the repository root.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: super::flags::HelmFlags,
}

pub(crate) fn run(args: &Args, layout: crate::report::layout::Layout) -> CommandResult {
    let outcome = graph_outcome(args, layout);
    match args.format {
        Format::Sarif => super::sarif_on_error(outcome, crate::graph::RULES),
        _ => outcome,
    }
}

fn graph_outcome(args: &Args, layout: crate::report::layout::Layout) -> CommandResult {
    if let Some(path) = &args.config {
        if !path.is_file() {
            anyhow::bail!("--config `{}`: no such file", path.display());
        }
    }
    let mut opts = args.helm.apply(args.flags.options());
    opts.origins = true;
    let mut render = render_dir(&args.flags.repo, &opts)?;
    // The repository's fluxsim.toml (as the render read it: what git tracks), or the file
    // `--config` names.
    let mut config = match &args.config {
        Some(path) => Config::load_file(path)?,
        None => render.config.clone(),
    };
    // `--helm`: the CRDs the charts at hand install, after what fluxsim.toml declares.
    config
        .helm_crds
        .extend(crate::graph::helm::chart_crds(&mut render));
    let report = crate::graph::check(&render, &config);
    let text = match args.format {
        Format::Text => crate::report::graph::graph_text(&report, layout),
        Format::Json => crate::report::graph::graph_json(&report),
        Format::Sarif => {
            let v = crate::report::findings::findings_sarif(
                crate::graph::RULES,
                &report.findings,
                &super::git::prefix_in_work_tree(&args.flags.repo),
            );
            serde_json::to_string_pretty(&v)? + "\n"
        }
        Format::Dot => crate::report::graph::graph_dot(&report),
        Format::Mermaid => crate::report::graph::graph_mermaid(&report),
        Format::Markdown => crate::report::graph::graph_markdown(&report),
    };
    let status = args
        .fail
        .status(crate::level::of_findings(&report.findings));
    let kind = match args.format {
        Format::Json | Format::Sarif => crate::report::limit::Kind::Json,
        Format::Markdown => crate::report::limit::Kind::Markdown,
        _ => crate::report::limit::Kind::Plain,
    };
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.flags.subfolder_note(&render.clusters)))
}
