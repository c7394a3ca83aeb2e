//! `fluxsim images`: the container images every cluster runs, or what changed between two
//! revisions.

use super::compare::Format;
use super::diff::{render_pair, DiffArgs, HeadUse};
use super::flags::RenderFlags;
use super::{CommandResult, Output};
use crate::images::{cluster_images, diff_images};
use crate::render::{build_cache, make_builder, render_dir};
use crate::report::images as report;
use crate::report::limit::Kind;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
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

pub(crate) fn run(args: &Args, layout: crate::report::layout::Layout) -> CommandResult {
    // `--helm`: the images of the releases' pod templates too, as their own entries; on by
    // default with `--diff`, as in `diff` and `prove` (whose renders it then reuses).
    let opts = if args.diff {
        args.helm.apply_on_by_default(args.flags.options())
    } else {
        args.helm.apply(args.flags.options())
    };
    if !args.diff {
        let r = render_dir(&args.flags.repo, &opts)?;
        let list = cluster_images(&r.clusters);
        let (text, kind) = match args.format {
            Format::Text => (report::images_text(&list, layout), Kind::Plain),
            Format::Json => (format!("{:#}\n", report::images_json(&list)), Kind::Json),
            Format::Markdown => (report::images_markdown(&list), Kind::Markdown),
        };
        let status = args.fail.status(crate::level::of_render(&r.clusters));
        return Ok(Output::new(text, status)
            .kind(kind)
            .with_stderr(&args.flags.subfolder_note(&r.clusters)));
    }
    let diff_args = DiffArgs::revisions(
        args.flags.clone(),
        args.base.clone(),
        args.head.clone(),
        args.helm.clone(),
        args.fail,
    );
    let builder = make_builder(&opts)?;
    let cache = build_cache(builder.as_ref(), &opts);
    let pair = render_pair(&diff_args, &opts, &cache, HeadUse::Render)?;
    // What could not be compared is unknown, never an image removed or added.
    let changes = crate::images::only_compared(
        diff_images(
            &cluster_images(&pair.base.clusters),
            &cluster_images(pair.head.clusters()),
        ),
        &pair.diff,
    );
    let (base, head) = (pair.diff.base.clone(), pair.diff.head.clone());
    let (base_rev, head_rev) = (
        pair.diff.base_revision.clone(),
        pair.diff.head_revision.clone(),
    );
    let any_change = changes.iter().any(|c| !c.changes.is_empty());
    let level = crate::level::of_image_diff(&pair.diff, any_change);
    let (text, kind) = match args.format {
        Format::Text => (
            report::images_diff_text(&base, &head, &changes, layout),
            Kind::DiffText,
        ),
        Format::Json => (
            format!(
                "{:#}\n",
                report::images_diff_json(&base_rev, &head_rev, &changes)
            ),
            Kind::Json,
        ),
        Format::Markdown => (
            report::images_diff_markdown(&base, &head, &changes),
            Kind::Markdown,
        ),
    };
    // What was not compared is said, never taken for "no image changed".
    let not_compared = pair.diff.not_compared();
    let note = if not_compared > 0 {
        format!(
            "fluxsim images: {} not compared (not rendered in base or head): their images \
             are not compared\n",
            pair.diff.not_compared_units()
        )
    } else {
        String::new()
    };
    pair.finish();
    let status = args.fail.status(level);
    Ok(Output::new(text, status).kind(kind).with_stderr(&note))
}
