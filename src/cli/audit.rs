//! `fluxsim audit`: substitution hazards, with the file and line they come from.

// `--fail-on` means the same in `graph` and `audit`: one definition.
use super::graph::FailOn;
use super::render::RenderFlags;
use super::{passed_or_finding, Outcome, Output};
use crate::audit::{audit, AuditOptions, RULES};
use crate::render::render_dir;

/// Output formats of `audit`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    /// Grouped by cluster and path, for people.
    Text,
    /// Stable JSON for programs.
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    /// Exit 1 when a finding is at or above this severity.
    #[arg(long, value_enum, default_value = "error")]
    pub(crate) fail_on: FailOn,
    #[command(flatten)]
    pub(crate) helm: super::render::HelmFlags,
}

pub(crate) fn run_audit(args: &AuditArgs) -> Outcome {
    let outcome = audit_outcome(args);
    match args.format {
        Format::Sarif => super::sarif_on_error(outcome, RULES),
        _ => outcome,
    }
}

fn audit_outcome(args: &AuditArgs) -> Outcome {
    let mut opts = args.helm.apply(args.flags.options());
    // Findings point at files and lines through the origins kustomize records.
    opts.origins = true;
    // Rendered without strict substitution, so that an undefined var (reported as FS103)
    // does not block the Kustomizations that depend on its Kustomization: they are audited
    // too. The findings are judged as `--no-strict` says.
    let strict = opts.strict;
    opts.strict = false;
    let mut r = render_dir(&args.flags.repo, &opts)?;
    // `--helm`: what the releases show, then the Kustomizations audited as always.
    let helm = crate::audit::helm::verbatim_values(&mut r);
    let mut a = audit(&r, AuditOptions { strict });
    if !helm.is_empty() {
        a.findings.extend(helm);
        crate::finding::normalize(&mut a.findings);
    }
    let text = match args.format {
        Format::Text => crate::report::audit::audit_text(&a),
        Format::Json => serde_json::to_string_pretty(&crate::report::audit::audit_json(&a))? + "\n",
        Format::Sarif => {
            serde_json::to_string_pretty(&crate::report::findings::findings_sarif(
                RULES,
                &a.findings,
                &super::git::prefix_in_work_tree(&args.flags.repo),
            ))? + "\n"
        }
    };
    let fails = crate::report::findings::fails(&a.findings, args.fail_on.into());
    let kind = match args.format {
        Format::Text => crate::report::limit::Kind::Plain,
        Format::Json | Format::Sarif => crate::report::limit::Kind::Json,
    };
    Ok(Output::new(text, passed_or_finding(!fails)).kind(kind))
}
