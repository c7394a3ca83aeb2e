//! `fluxsim upgrade`: what breaks, per cluster, when it moves from the Flux and Kubernetes
//! versions it runs to the target (the newest fluxsim knows by default): the repository
//! rendered as it is and again at the target, both handed to consumers' `upgrade`.

use super::flags::FindingsFormat as Format;
use super::flags::ReportFlags;
use super::{CommandResult, Output};
use crate::render::{render_dir_and_at, VersionsOverride};
use crate::upgrade::FluxMinor;
use crate::upgrade::{self, UpgradeOptions};
use crate::validate::KubeVersion;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The Flux release to upgrade to (`2.9`; default: the newest fluxsim knows).
    #[arg(long, value_name = "VERSION", value_parser = flux_minor)]
    pub(crate) flux: Option<FluxMinor>,
    /// The Kubernetes release to upgrade to, 1.24 to 1.36 (default: 1.36, the newest Flux
    /// v2.9 supports).
    #[arg(long, value_name = "VERSION", value_parser = super::validate::kube_version)]
    pub(crate) kube: Option<KubeVersion>,
    #[command(flatten)]
    pub(crate) report: ReportFlags<Format>,
}

fn flux_minor(s: &str) -> Result<FluxMinor, super::flags::FlagValueError> {
    FluxMinor::parse(s).map_err(|_| super::flags::FlagValueError::NoCrds {
        version: s.to_string(),
        supported: FluxMinor::ALL.map(|m| m.to_string()).join(", "),
    })
}

pub(crate) fn run(args: &Args, layout: crate::report::layout::Layout) -> CommandResult {
    let outcome = outcome(args, layout);
    match args.report.format {
        Format::Sarif => super::sarif_on_error(outcome, &upgrade::RULES),
        _ => outcome,
    }
}

fn outcome(args: &Args, layout: crate::report::layout::Layout) -> CommandResult {
    let flux = args.flux.unwrap_or(FluxMinor::NEWEST);
    let kube = args.kube.unwrap_or(KubeVersion::DEFAULT);
    let mut opts = args.report.helm.apply(args.report.flags.options());
    // Findings point at files and lines through the origins kustomize records.
    opts.origins = true;
    let target = VersionsOverride {
        flux: Some(flux.to_string()),
        kubernetes: Some(kube.as_str().to_string()),
    };
    let (r, at_target) = render_dir_and_at(&args.report.flags.repo, &opts, target)?;
    let u = upgrade::upgrade(
        &r,
        Some(&at_target),
        &UpgradeOptions {
            flux,
            kube,
            validate: crate::validate::ValidateOptions::default(),
        },
    );
    let text = match args.report.format {
        Format::Text => crate::report::upgrade::upgrade_text(&u, layout),
        Format::Json => {
            serde_json::to_string_pretty(&crate::report::upgrade::upgrade_json(&u))? + "\n"
        }
        Format::Sarif => {
            serde_json::to_string_pretty(&crate::report::findings::findings_sarif(
                &upgrade::RULES,
                &u.findings,
                &super::git::prefix_in_work_tree(&args.report.flags.repo),
            ))? + "\n"
        }
    };
    let status = args
        .report
        .fail
        .status(crate::level::of_findings(&u.findings));
    let kind = match args.report.format {
        Format::Text => crate::report::limit::Kind::Plain,
        Format::Json | Format::Sarif => crate::report::limit::Kind::Json,
    };
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.report.flags.subfolder_note(&r.clusters)))
}
