//! `fluxsim images`: the container images every cluster runs, or what changed between two
//! revisions.

use super::diff::{render_pair, DiffArgs, Format, HeadUse};
use super::render::RenderFlags;
use super::{passed_or_finding, Outcome, Output, Status};
use crate::images::{cluster_images, diff_images};
use crate::render::{build_cache, make_builder, render_dir};
use crate::report::images as report;
use crate::report::limit::Kind;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    /// Show what changed between --base and --head instead of the list.
    #[arg(long)]
    pub(crate) diff: bool,
    /// With --diff: the base revision; default: the merge-base of HEAD and the default
    /// branch (origin/HEAD, else main or master).
    #[arg(long, value_name = "REV", requires = "diff")]
    pub(crate) base: Option<String>,
    /// With --diff: the head revision; default: the work tree.
    #[arg(long, value_name = "REV", requires = "diff")]
    pub(crate) head: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    #[command(flatten)]
    pub(crate) helm: super::render::HelmFlags,
}

pub(crate) fn run(args: &Args) -> Outcome {
    // `--helm`: the images of the releases' pod templates too, as their own entries.
    let opts = args.helm.apply(args.flags.options());
    if !args.diff {
        let r = render_dir(&args.flags.repo, &opts)?;
        let list = cluster_images(&r.clusters);
        let (text, kind) = match args.format {
            Format::Text => (report::images_text(&list), Kind::Plain),
            Format::Json => (format!("{:#}\n", report::images_json(&list)), Kind::Json),
            Format::Markdown => (report::images_markdown(&list), Kind::Markdown),
        };
        return Ok(Output::new(text, Status::Ok).kind(kind));
    }
    let diff_args = DiffArgs::revisions(
        args.flags.clone(),
        args.base.clone(),
        args.head.clone(),
        args.helm.clone(),
    );
    let builder = make_builder(&opts)?;
    let cache = build_cache(builder.as_ref(), &opts);
    let pair = render_pair(&diff_args, &opts, &cache, HeadUse::Render)?;
    let changes = diff_images(
        &cluster_images(&pair.base.clusters),
        &cluster_images(pair.head.clusters()),
    );
    let (base, head) = (pair.diff.base.clone(), pair.diff.head.clone());
    let any_change = changes.iter().any(|c| !c.changes.is_empty());
    let (text, kind) = match args.format {
        Format::Text => (
            report::images_diff_text(&base, &head, &changes),
            Kind::DiffText,
        ),
        Format::Json => (
            format!("{:#}\n", report::images_diff_json(&base, &head, &changes)),
            Kind::Json,
        ),
        Format::Markdown => (
            report::images_diff_markdown(&base, &head, &changes),
            Kind::Markdown,
        ),
    };
    pair.finish();
    Ok(Output::new(text, passed_or_finding(!any_change)).kind(kind))
}
