//! `fluxsim diff`, `fluxsim compare` and `fluxsim prove`.

use super::render::{HelmFlags, RenderFlags, SecretFlags};
use super::{passed_or_finding, Outcome, Output, Status};
use crate::cache::BuildCache;
use crate::canary;
use crate::compare::{compare_clusters, diff_revisions, DiffOptions, DiffStyle, RevisionDiff};
use crate::model::RepoRender;
use crate::render::revisions::{render_after, render_revision, RevisionRender, RevisionSlot};
use crate::render::{build_cache, load_tree_known, make_builder, render_tree_cached, RepoOptions};
use crate::report::diff as report;
use crate::report::limit::Kind;

/// Output formats of `diff`, `compare` and `prove`.
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
pub(crate) struct DiffArgs {
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    /// The base revision (a commit, branch or tag of the repository); default: the
    /// merge-base of HEAD and the default branch (origin/HEAD, else main or master).
    #[arg(long, value_name = "REV")]
    pub(crate) base: Option<String>,
    /// The head revision; default: the work tree, uncommitted changes and new files that git
    /// does not ignore included.
    #[arg(long, value_name = "REV")]
    pub(crate) head: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    /// Render again in head only the Kustomizations whose spec, vars or input files changed,
    /// taking the others from base (reported as skipped). The default: tests check it gives
    /// the same diff as `--full`.
    #[arg(long, conflicts_with = "full")]
    pub(crate) changed_only: bool,
    /// Render every Kustomization of head again, whether its inputs changed or not (the
    /// full diff; `--changed-only` is the default).
    #[arg(long)]
    pub(crate) full: bool,
    #[command(flatten)]
    pub(crate) view: DiffView,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
}

/// How a diff compares and shows objects (`diff`, `prove`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DiffView {
    /// Drop this field from every object before comparing (repeatable): segments separated
    /// by `.`, `*` for any key or list item, a segment with a dot in double quotes
    /// (metadata.annotations."example.com/checksum").
    #[arg(long = "strip-field", value_name = "PATH")]
    pub(crate) strip_field: Vec<String>,
    /// Drop this label from every object's (and pod template's) metadata before comparing
    /// (repeatable).
    #[arg(long = "strip-label", value_name = "KEY")]
    pub(crate) strip_label: Vec<String>,
    /// Show a changed object as a unified diff of its lines, or as the field paths that
    /// changed with their old and new values.
    #[arg(long, value_enum, default_value = "lines")]
    pub(crate) diff_style: DiffStyleFlag,
    #[command(flatten)]
    pub(crate) secrets: SecretFlags,
}

/// Values of `--diff-style`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum DiffStyleFlag {
    /// A unified diff of the YAML.
    Lines,
    /// Changed field paths: `~ spec.replicas: 1 -> 3`.
    Fields,
}

impl DiffView {
    fn options(&self) -> anyhow::Result<DiffOptions> {
        let fields = self
            .strip_field
            .iter()
            .map(|p| crate::compare::strip::parse_path(p))
            .collect::<Result<_, _>>()?;
        Ok(DiffOptions {
            present: self.secrets.presentation(),
            strip: crate::compare::strip::Strip {
                fields,
                labels: self.strip_label.clone(),
            },
            style: match self.diff_style {
                DiffStyleFlag::Lines => DiffStyle::Lines,
                DiffStyleFlag::Fields => DiffStyle::Fields,
            },
        })
    }
}

/// The base of a diff: the revision to read, and how the output names it.
struct Base {
    rev: String,
    label: Option<String>,
}

/// `--base`, or the merge-base of HEAD and the default branch.
fn base_of(args: &DiffArgs) -> anyhow::Result<Base> {
    if let Some(rev) = &args.base {
        return Ok(Base {
            rev: rev.clone(),
            label: None,
        });
    }
    let b = super::git::default_base(&args.flags.repo)?;
    Ok(Base {
        rev: b.commit,
        label: Some(b.label),
    })
}

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
    #[command(flatten)]
    pub(crate) diff: DiffArgs,
    /// What the diff must show.
    #[arg(long, value_enum, default_value = "identical")]
    pub(crate) expect: Expect,
    /// Plant the shared canary in this file (relative to the repository root) instead of the
    /// shared file that feeds the most Kustomizations.
    #[arg(long, value_name = "PATH")]
    pub(crate) canary_path: Option<String>,
    /// Pass even when some Kustomizations could not be compared (not rendered in base or
    /// head); they are still listed.
    #[arg(long)]
    pub(crate) allow_blind: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    /// The old spelling of `--cluster A,B` (kept so that existing scripts run).
    #[arg(long, value_delimiter = ',', value_name = "A,B", hide = true)]
    pub(crate) clusters: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
}

/// The head of a diff: rendered here, or a revision's render taken from the store.
pub(super) enum Head {
    /// Rendered in this run (its tree is there: canaries can be planted in it).
    Rendered(Box<RepoRender>),
    /// A revision's render from the store: nothing of the revision was read.
    Stored(Vec<crate::model::ClusterRender>),
}

impl Head {
    /// Its clusters.
    pub(super) fn clusters(&self) -> &[crate::model::ClusterRender] {
        match self {
            Head::Rendered(r) => &r.clusters,
            Head::Stored(c) => c,
        }
    }
}

/// Whether the caller needs the head's tree (`prove` plants canaries in it), or only its
/// render (`diff`, `images`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HeadUse {
    Tree,
    Render,
}

/// Base and head rendered, and what differs.
pub(super) struct Pair {
    pub(super) base: RevisionRender,
    pub(super) head: Head,
    pub(super) diff: RevisionDiff,
    /// The options the head was rendered with (what renders of head copies, such as the
    /// canaries, must use too).
    pub(super) head_opts: RepoOptions,
}

impl Pair {
    /// Ends the pair as the process ends: the head's tree is dropped (its view is
    /// unregistered), the renders are not freed. They are large trees of small allocations, and
    /// freeing them costs more than exiting, which returns the memory anyway.
    pub(super) fn finish(self) {
        let Pair {
            base, head, diff, ..
        } = self;
        match head {
            Head::Rendered(render) => {
                let RepoRender { tree, clusters, .. } = *render;
                drop(tree);
                std::mem::forget(clusters);
            }
            Head::Stored(clusters) => std::mem::forget(clusters),
        }
        std::mem::forget((base, diff));
    }
}

/// Renders base and head with the same options, through one build cache: what did not
/// change between them is built once. The base is a revision: its render is kept in the
/// store, so a second diff against it renders only the head.
pub(super) fn render_pair(
    args: &DiffArgs,
    opts: &RepoOptions,
    cache: &BuildCache<'_>,
    use_of_head: HeadUse,
) -> anyhow::Result<Pair> {
    let repo = &args.flags.repo;
    let base_rev = base_of(args)?;
    let diff_opts = args.view.options()?;
    let mut base = render_revision(repo, &base_rev.rev, cache, opts)?;
    // The work tree as head is the change about to be committed: new files that git does
    // not ignore are part of it.
    let head_opts = RepoOptions {
        include_untracked: opts.include_untracked || args.head.is_none(),
        ..opts.clone()
    };
    let base_label = match &base_rev.label {
        Some(l) => format!("{l} ({})", &base.commit[..12.min(base.commit.len())]),
        None => revision_label(&base_rev.rev, Some(&base.commit)),
    };
    // A head revision is kept in the store as the base is: a diff of two revisions rendered
    // before reads neither out of git (a stored render is the revision's, however it was
    // made: a changed-only render is tested equal to a full one).
    let head_slot = match &args.head {
        Some(rev) => Some(RevisionSlot::of(repo, rev, cache, &head_opts)?),
        None => None,
    };
    if use_of_head == HeadUse::Render {
        if let (Some(rev), Some(stored)) =
            (&args.head, head_slot.as_ref().and_then(RevisionSlot::take))
        {
            let head_label = revision_label(rev, Some(&stored.commit));
            let diff = diff_revisions(
                &base_label,
                &base.clusters,
                &head_label,
                &stored.clusters,
                &diff_opts,
            );
            return Ok(Pair {
                base,
                head: Head::Stored(stored.clusters),
                diff,
                head_opts,
            });
        }
    }
    let head_tree = load_tree_known(repo, args.head.as_deref(), &head_opts, Some(&base.known))?;
    // fluxsim.toml is repository content, and the head is the pull request's: it may allow
    // the network only as the base does, that is when the file is the same in both.
    let config = crate::config::CONFIG_FILE;
    let same_config = base.known.digests.get(config) == head_tree.digests().get(config);
    let config_allows =
        same_config && crate::config::Config::load(head_tree.fs()).is_ok_and(|c| c.network.allow);
    let opts = &RepoOptions {
        allow_network: opts.allow_network || config_allows,
        network_from_config: false,
        ..opts.clone()
    };
    let head = render_after(&mut base, head_tree, cache, opts, !args.full)?;
    if let Some(slot) = &head_slot {
        slot.put(&head);
    }
    let head_label = match &args.head {
        Some(h) => revision_label(h, head.tree.revision()),
        None => "work tree".to_string(),
    };
    let diff = diff_revisions(
        &base_label,
        &base.clusters,
        &head_label,
        &head.clusters,
        &diff_opts,
    );
    Ok(Pair {
        base,
        head: Head::Rendered(Box::new(head)),
        diff,
        head_opts: opts.clone(),
    })
}

/// How a diff names a revision: as given, with its commit when the name is not the commit.
fn revision_label(rev: &str, commit: Option<&str>) -> String {
    match commit {
        Some(commit) if !commit.starts_with(rev) => {
            format!("{rev} ({})", &commit[..12.min(commit.len())])
        }
        _ => rev.to_string(),
    }
}

pub(crate) fn run_diff(args: &DiffArgs) -> Outcome {
    // Two revisions: most build outputs are the same texts.
    crate::manifest::share_readings();
    let opts = args.helm.apply(args.flags.options());
    let builder = make_builder(&opts)?;
    let cache = build_cache(builder.as_ref(), &opts);
    let pair = render_pair(args, &opts, &cache, HeadUse::Render)?;
    let diff = &pair.diff;
    let (text, kind) = match args.format {
        Format::Text => (report::diff_text(diff), Kind::DiffText),
        Format::Json => (format!("{:#}\n", report::diff_json(diff)), Kind::Json),
        Format::Markdown => (report::diff_markdown(diff), Kind::Markdown),
    };
    // What could not be compared is never taken for identical.
    let status = passed_or_finding(diff.identical());
    pair.finish();
    Ok(Output::new(text, status).kind(kind))
}

pub(crate) fn run_prove(args: &ProveArgs) -> Outcome {
    // Head, the planning render and the canary renders: most build outputs repeat.
    crate::manifest::share_readings();
    let opts = args.diff.helm.apply(args.diff.flags.options());
    let builder = make_builder(&opts)?;
    let cache = build_cache(builder.as_ref(), &opts);
    let Pair {
        head,
        diff,
        head_opts: opts,
        ..
    } = render_pair(&args.diff, &opts, &cache, HeadUse::Tree)?;
    let Head::Rendered(head) = head else {
        anyhow::bail!("internal: prove's head was not rendered");
    };
    let head = *head;
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
    let blind = report::blind_spots(&diff);
    let proof = report::Proof {
        passed: expectation_met && canaries.passed() && (args.allow_blind || blind.is_empty()),
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
    let (text, kind) = match args.diff.format {
        Format::Text => (report::prove_text(&proof), Kind::DiffText),
        Format::Json => (format!("{:#}\n", report::prove_json(&proof)), Kind::Json),
        Format::Markdown => (report::prove_markdown(&proof), Kind::Markdown),
    };
    Ok(Output::new(text, passed_or_finding(proof.passed)).kind(kind))
}

pub(crate) fn run_compare(args: &CompareArgs) -> Outcome {
    let mut opts = args.helm.apply(args.flags.options());
    // `--cluster A --cluster B` (or `--cluster A,B`), in the order given.
    let mut asked = opts.only.clone();
    asked.extend(args.clusters.iter().cloned());
    if !asked.is_empty() {
        opts.only.clone_from(&asked);
    }
    let r = crate::render::render_dir(&args.flags.repo, &opts)?;
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
        let (text, kind) = match args.format {
            Format::Text => (format!("{note}\n"), Kind::DiffText),
            Format::Markdown => (report::compare_nothing_markdown(&names), Kind::Markdown),
            Format::Json => (
                format!(
                    "{:#}\n",
                    serde_json::json!({ "clusters": names, "note": note, "agnostic": true,
                        "graph": [], "kustomizations": [], "vars": [], "not_compared": 0 })
                ),
                Kind::Json,
            ),
        };
        return Ok(Output::new(text, Status::Ok).kind(kind));
    }
    let c = compare_clusters(&chosen);
    let (text, kind) = match args.format {
        Format::Text => (report::compare_text(&c), Kind::DiffText),
        Format::Json => (format!("{:#}\n", report::compare_json(&c)), Kind::Json),
        Format::Markdown => (report::compare_markdown(&c), Kind::Markdown),
    };
    Ok(Output::new(text, passed_or_finding(c.agnostic && c.not_compared == 0)).kind(kind))
}
