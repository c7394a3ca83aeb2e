//! `fluxsim prove`: a diff whose harness is checked with canaries.

use super::diff::{
    change_checks, image_changes, output, render_pair, DiffArgs, DiffFormat, Head, HeadUse, Lines,
    Pair,
};
use super::CommandResult;
use crate::canary;
use crate::render::{build_cache, make_builder, render_tree_cached, RepoOptions};
use crate::report::{proof, prove as prove_report};

/// The expectation `prove` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Expect {
    /// No artifact changes (a refactor).
    Identical,
    /// Some artifact changes.
    Changed,
    /// Either; only the canaries are checked.
    Any,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ProveArgs {
    /// What the diff must show.
    #[arg(long, value_enum, default_value = "identical")]
    pub(crate) expect: Expect,
    /// Plant the shared canary in this file (relative to the repository root) instead of the
    /// shared file that feeds the most Kustomizations.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    pub(crate) canary_path: Option<String>,
    /// Pass even when some Kustomizations could not be compared.
    ///
    /// Those not rendered in base or head are still listed.
    #[arg(long)]
    pub(crate) allow_blind: bool,
    #[command(flatten)]
    pub(crate) diff: DiffArgs,
}

pub(crate) fn run_prove(args: &ProveArgs, layout: crate::report::layout::Layout) -> CommandResult {
    // Head, the planning render and the canary renders: most build outputs repeat.
    crate::manifest::share_readings();
    let mut opts = args
        .diff
        .helm
        .apply_on_by_default(args.diff.flags.options());
    opts.origins |= args.diff.checks.reads_trees();
    let builder = make_builder(&opts)?;
    let cache = build_cache(builder.as_ref(), &opts);
    let pair = render_pair(&args.diff, &opts, &cache, HeadUse::Tree)?;
    let checks = change_checks(&args.diff, &pair, &opts)?;
    let Pair {
        base,
        head,
        diff,
        head_opts: opts,
        config_strip,
    } = pair;
    let Head::Rendered(head) = head else {
        anyhow::bail!("internal: prove's head was not rendered");
    };
    let head = *head;
    let images = image_changes(&base.clusters, &head.clusters, &diff);
    drop(base);
    // Where to plant canaries, and what each must change, comes from kustomize's origin
    // annotations: one more render of head that tracks them. The diff and canary renders do
    // not, so they keep every build the native builder can do.
    let with_origins = RepoOptions {
        origins: true,
        ..opts.clone()
    };
    let planning = head
        .tree
        .reopen()
        .map_err(crate::render::RenderError::from)
        .and_then(|tree| render_tree_cached(tree, &cache, &with_origins));
    let render = |tree| {
        crate::render::render_tree_cached(tree, &cache, &opts)
            .map_err(|e| Box::new(e) as canary::RenderFailed)
    };
    let canaries = match canary::plan(&planning?, args.canary_path.as_deref()) {
        Ok(plans) => canary::run(&head, plans, &render)?,
        // Nothing of head rendered because something failed: the proof fails on that
        // failure, which the report leads with, and no canary can be planted.
        Err(canary::CanaryError::NothingRendered) if !diff.failures().is_empty() => {
            canary::CanaryReport::default()
        }
        Err(e) => return Err(e.into()),
    };
    let expectation_met = match args.expect {
        Expect::Identical => !diff.changed(),
        Expect::Changed => diff.changed(),
        Expect::Any => true,
    };
    let blind = proof::blind_spots(&diff);
    let proof = proof::Proof {
        // A finding at error level (an immutable field changed, an object the API server
        // rejects) means Flux's apply of head fails: the proof does not hold.
        passed: expectation_met
            && canaries.passed()
            && (args.allow_blind || blind.is_empty())
            && checks.errors() == 0,
        blind,
        allow_blind: args.allow_blind,
        diff: &diff,
        expect: match args.expect {
            Expect::Identical => "identical",
            Expect::Changed => "changed",
            Expect::Any => "any",
        },
        expectation_met,
        canaries: &canaries,
    };
    let filters = args.diff.view.filters(&config_strip)?;
    let group = !layout.verbose && !matches!(args.diff.format, DiffFormat::Json);
    let reviewed = crate::report::change::prove_reviewed(&proof, &images, &checks, &filters, group);
    output(
        &args.diff,
        &reviewed.analysis,
        &reviewed.json,
        &Lines {
            text: &|| prove_report::prove_text(&proof, layout),
            markdown: &|| prove_report::prove_markdown(&proof),
        },
        args.diff
            .fail
            .status(crate::level::of_proof(&proof).max(checks.level())),
    )
}
