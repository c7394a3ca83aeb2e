//! `fluxsim graph`: simulate a cold start of each cluster and check its Kustomization graph.

use std::path::PathBuf;

use super::render::RenderFlags;
use super::{passed_or_finding, Outcome, Output};
use crate::config::Config;
use crate::finding::Severity;
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

/// The lowest severity that makes the exit status 1.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum FailOn {
    /// Any finding.
    Info,
    /// Warnings and errors.
    Warning,
    /// Errors only.
    Error,
}

impl From<FailOn> for Severity {
    fn from(f: FailOn) -> Severity {
        match f {
            FailOn::Info => Severity::Info,
            FailOn::Warning => Severity::Warning,
            FailOn::Error => Severity::Error,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    /// Exit 1 when a finding is at or above this severity.
    #[arg(long, value_enum, default_value = "warning")]
    pub(crate) fail_on: FailOn,
    /// The fluxsim config file; default: `fluxsim.toml` at the repository root.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) helm: super::render::HelmFlags,
}

pub(crate) fn run(args: &Args) -> Outcome {
    let outcome = graph_outcome(args);
    match args.format {
        Format::Sarif => super::sarif_on_error(outcome, crate::graph::RULES),
        _ => outcome,
    }
}

fn graph_outcome(args: &Args) -> Outcome {
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
        None => Config::load(render.tree.fs())?,
    };
    // `--helm`: the CRDs the charts at hand install, after what fluxsim.toml declares.
    config
        .helm_crds
        .extend(crate::graph::helm::chart_crds(&mut render));
    let report = crate::graph::check(&render, &config);
    let text = match args.format {
        Format::Text => crate::report::graph::graph_text(&report),
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
    let fails = crate::report::findings::fails(&report.findings, args.fail_on.into());
    let kind = match args.format {
        Format::Json | Format::Sarif => crate::report::limit::Kind::Json,
        Format::Markdown => crate::report::limit::Kind::Markdown,
        _ => crate::report::limit::Kind::Plain,
    };
    Ok(Output::new(text, passed_or_finding(!fails)).kind(kind))
}
