//! `fluxsim compare`: clusters against each other.

use super::flags::ReportFlags;
use super::{CommandResult, ExitStatus, Output};
use crate::compare::compare_clusters;
use crate::report::compare as compare_report;
use crate::report::limit::Kind;

/// Output formats of `compare` (and `images`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    /// For people.
    Text,
    /// Stable JSON for programs (documented in the README).
    Json,
    /// A pull-request summary.
    Markdown,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The old spelling of `--cluster A,B` (kept so that existing scripts run).
    #[arg(long, value_delimiter = ',', value_name = "A,B", hide = true)]
    pub(crate) clusters: Vec<String>,
    #[command(flatten)]
    pub(crate) report: ReportFlags<Format>,
}

pub(crate) fn run_compare(
    args: &CompareArgs,
    layout: crate::report::layout::Layout,
) -> CommandResult {
    let mut opts = args.report.helm.apply(args.report.flags.options());
    // `--cluster A --cluster B` (or `--cluster A,B`), in the order given.
    let mut asked = opts.only.clone();
    asked.extend(args.clusters.iter().cloned());
    if !asked.is_empty() {
        opts.only.clone_from(&asked);
    }
    let r = crate::render::render_dir(&args.report.flags.repo, &opts)?;
    // In the order asked for; else by name.
    let chosen: Vec<&crate::model::ClusterRender> = if asked.is_empty() {
        r.clusters.iter().collect()
    } else {
        asked
            .iter()
            .filter_map(|n| r.clusters.iter().find(|c| &c.name == n))
            .collect()
    };
    if chosen.len() < 2 {
        if !asked.is_empty() {
            anyhow::bail!(
                "compare needs at least two clusters; --cluster named only `{}`",
                asked.join(", ")
            );
        }
        // A repository of one cluster has nothing to compare: that is not an error, so that
        // a CI job running compare on every repository passes.
        let names: Vec<&str> = chosen.iter().map(|c| c.name.as_str()).collect();
        let note = format!(
            "compare: nothing to compare: the repository has {} ({})",
            crate::report::plural(names.len(), "cluster"),
            names.join(", ")
        );
        let (text, kind) = match args.report.format {
            Format::Text => (format!("{note}\n"), Kind::DiffText),
            Format::Markdown => (
                compare_report::compare_nothing_markdown(&names),
                Kind::Markdown,
            ),
            Format::Json => (
                format!(
                    "{:#}\n",
                    compare_report::compare_nothing_json(&names, &note)
                ),
                Kind::Json,
            ),
        };
        return Ok(Output::new(text, ExitStatus::Ok).kind(kind));
    }
    let c = compare_clusters(&chosen);
    let (text, kind) = match args.report.format {
        Format::Text => (compare_report::compare_text(&c, layout), Kind::DiffText),
        Format::Json => (
            format!("{:#}\n", compare_report::compare_json(&c)),
            Kind::Json,
        ),
        Format::Markdown => (compare_report::compare_markdown(&c), Kind::Markdown),
    };
    let status = args.report.fail.status(crate::level::of_comparison(&c));
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.report.flags.subfolder_note(&r.clusters)))
}
