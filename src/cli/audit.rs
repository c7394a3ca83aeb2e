//! `fluxsim audit`: substitution hazards, with the file and line they come from.

use super::flags::RenderFlags;
use super::{CommandResult, Output};
use crate::audit::{audit, AuditOptions, RULES};
use crate::render::render_dir;

pub(crate) use super::flags::FindingsFormat as Format;

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
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
    pub(crate) helm: super::flags::HelmFlags,
}

pub(crate) fn run_audit(args: &AuditArgs, layout: crate::report::layout::Layout) -> CommandResult {
    let outcome = audit_outcome(args, layout);
    match args.format {
        Format::Sarif => super::sarif_on_error(outcome, RULES),
        _ => outcome,
    }
}

fn audit_outcome(args: &AuditArgs, layout: crate::report::layout::Layout) -> CommandResult {
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
        Format::Text => crate::report::audit::audit_text(&a, layout),
        Format::Json => serde_json::to_string_pretty(&crate::report::audit::audit_json(&a))? + "\n",
        Format::Sarif => {
            serde_json::to_string_pretty(&crate::report::findings::findings_sarif(
                RULES,
                &a.findings,
                &super::git::prefix_in_work_tree(&args.flags.repo),
            ))? + "\n"
        }
    };
    let status = args.fail.status(crate::level::of_findings(&a.findings));
    let kind = match args.format {
        Format::Text => crate::report::limit::Kind::Plain,
        Format::Json | Format::Sarif => crate::report::limit::Kind::Json,
    };
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.flags.subfolder_note(&r.clusters)))
}
