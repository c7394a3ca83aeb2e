//! `fluxsim diff`: what every cluster applies at two revisions; its arguments, the render
//! of the pair and the printing are `prove`'s and `images --diff`'s too.

use super::flags::{HelmFlags, ObjectFlags, RenderFlags, SecretFlags};
use super::{CommandResult, ExitStatus, Output};
use crate::cache::BuildCache;
use crate::compare::{diff_revisions, DiffOptions, RevisionDiff};
use crate::model::RepoRender;
use crate::render::revisions::{render_after, render_revision, RevisionRender, RevisionSlot};
use crate::render::{build_cache, load_tree_known, make_builder, RepoOptions};
use crate::report::diff as report;
use crate::report::limit::Kind;
use crate::review;

/// Output formats of `diff` and `prove`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiffFormat {
    /// For people: the summary first, then each change (80 columns).
    Text,
    /// Stable JSON for programs, with each object's semantic changes.
    Json,
    /// GitHub Markdown: the summary first, then the details, folded.
    Markdown,
    /// GitLab Markdown (collapsible sections as GitLab renders them).
    Gitlab,
    /// Gitea and Forgejo Markdown.
    Gitea,
    /// One self-contained HTML page: a tree, a filter box, side-by-side views.
    Html,
}

impl DiffFormat {
    /// The Markdown flavour of the format (GitHub's for those that are not Markdown).
    fn flavor(self) -> review::markdown::Flavor {
        match self {
            DiffFormat::Gitlab => review::markdown::Flavor::GitLab,
            DiffFormat::Gitea => review::markdown::Flavor::Gitea,
            _ => review::markdown::Flavor::GitHub,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct DiffArgs {
    /// The base revision [default: the merge-base of HEAD and the default branch].
    ///
    /// A commit, branch or tag of the repository; without it, the merge-base of HEAD and the
    /// default branch (origin/HEAD, else main or master).
    #[arg(long, value_name = "REV")]
    pub(crate) base: Option<String>,
    /// The head revision [default: the work tree].
    ///
    /// Without it, the work tree, uncommitted changes and new files that git does not ignore
    /// included.
    #[arg(long, value_name = "REV")]
    pub(crate) head: Option<String>,
    /// Output format.
    #[arg(
        long,
        short = 'o',
        visible_alias = "output",
        value_enum,
        default_value = "text"
    )]
    pub(crate) format: DiffFormat,
    #[command(flatten)]
    pub(crate) fail: super::FailFlags,
    /// Also write every report, and comments that fit, into DIR.
    ///
    /// `report.txt`, `report.md` (in the flavour of `--format`, GitHub's by default),
    /// `report.html`, `report.json`, and the Markdown split into `comment-1.md`,
    /// `comment-2.md` ... under `--comment-limit` (the summary whole in the first). DIR is
    /// replaced only when it is empty or fluxsim wrote it.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<std::path::PathBuf>,
    /// The most bytes one `comment-N.md` of `--out` may hold; default: the forge's comment
    /// limit (65,536 on GitHub and Gitea, 1,000,000 on GitLab) less 256 for the marker line a
    /// CI script adds.
    #[arg(long, value_name = "BYTES", hide_short_help = true)]
    pub(crate) comment_limit: Option<usize>,
    /// Where the whole report will be (the CI run's artifacts): linked from the summary of
    /// `--out`'s comments.
    #[arg(long, value_name = "URL", hide_short_help = true)]
    pub(crate) report_url: Option<String>,
    /// Render again in head only the Kustomizations whose spec, vars or input files changed,
    /// taking the others from base (reported as skipped). The default: tests check it gives
    /// the same diff as `--full`.
    #[arg(long, conflicts_with = "full", hide_short_help = true)]
    pub(crate) changed_only: bool,
    /// Render every Kustomization of head again, changed or not.
    ///
    /// The full diff; by default (`--changed-only`) head renders again only what its inputs
    /// changed.
    #[arg(long)]
    pub(crate) full: bool,
    #[command(flatten)]
    pub(crate) view: DiffView,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
    #[command(flatten)]
    pub(crate) checks: super::validate::DiffValidate,
}

impl DiffArgs {
    /// A diff of `flags`' repository between two revisions, with the defaults of every other
    /// flag (what `images --diff` renders).
    pub(crate) fn revisions(
        flags: RenderFlags,
        base: Option<String>,
        head: Option<String>,
        helm: HelmFlags,
        fail: super::FailFlags,
    ) -> Self {
        Self {
            flags,
            base,
            head,
            format: DiffFormat::Text,
            fail,
            out: None,
            comment_limit: None,
            report_url: None,
            changed_only: false,
            full: false,
            view: DiffView {
                strip: Vec::new(),
                strip_label: Vec::new(),
                no_default_strip: false,
                diff_style: DiffStyleFlag::Semantic,
                objects: ObjectFlags {
                    secrets: SecretFlags {
                        show_secrets: false,
                    },
                    skip_secrets: false,
                    skip_crds: false,
                },
            },
            checks: super::validate::DiffValidate::default(),
            helm,
        }
    }
}

/// How a diff compares and shows objects (`diff`, `prove`).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct DiffView {
    /// Drop this field from every object before comparing and showing (repeatable; also
    /// `[diff] strip` in the base's fluxsim.toml): segments separated by `.`, `*` for any
    /// key or list item, a segment with a dot in double quotes
    /// (metadata.annotations."example.com/checksum"), a list item as a report shows it
    /// (spec.template.spec.containers[name=app].env, args[0]).
    #[arg(
        long = "strip",
        visible_alias = "strip-field",
        value_name = "PATH",
        hide_short_help = true
    )]
    pub(crate) strip: Vec<String>,
    /// Drop this label from every object's (and pod template's) metadata before comparing
    /// (repeatable).
    #[arg(long = "strip-label", value_name = "KEY", hide_short_help = true)]
    pub(crate) strip_label: Vec<String>,
    /// Show what the default filters hide: the `helm.sh/chart`, `chart` and
    /// `app.kubernetes.io/version` labels and `checksum/*` annotations that a chart bump
    /// changes everywhere (hidden, and counted, by default; they never make a change
    /// identical).
    #[arg(long, hide_short_help = true)]
    pub(crate) no_default_strip: bool,
    /// A changed object as the fields that changed, or as a diff of its lines.
    ///
    /// `semantic`: the paths that changed with their values before and after (list items
    /// matched by their merge keys, a reorder as "order changed"); `lines`: a unified diff
    /// of the YAML.
    #[arg(long, value_enum, default_value = "semantic")]
    pub(crate) diff_style: DiffStyleFlag,
    #[command(flatten)]
    pub(crate) objects: ObjectFlags,
}

/// Values of `--diff-style`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiffStyleFlag {
    /// Paths and values: `spec.template.spec.containers[name=app].image: a -> b`.
    #[value(alias = "fields")]
    Semantic,
    /// A unified diff of the YAML.
    Lines,
}

impl DiffView {
    /// The comparison's options: `extra` are the paths of the base's `[diff] strip`.
    fn options(&self, extra: &[String]) -> anyhow::Result<DiffOptions> {
        let paths: Vec<String> = extra.iter().chain(&self.strip).cloned().collect();
        Ok(DiffOptions {
            present: self.objects.presentation(),
            strip: crate::compare::strip::Strip::new(&paths, &self.strip_label)?,
        })
    }

    /// What a review hides: the default set (unless `--no-default-strip`), then the same
    /// paths and labels as [`Self::options`].
    pub(super) fn filters(&self, extra: &[String]) -> anyhow::Result<review::strip::Filters> {
        let mut f = review::strip::Filters::new();
        if self.no_default_strip {
            f = f.without_defaults();
        }
        for p in extra.iter().chain(&self.strip) {
            f.strip(p)?;
        }
        for l in &self.strip_label {
            f.strip_label(l);
        }
        Ok(f)
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
    /// The base's `[diff] strip` paths.
    pub(super) config_strip: Vec<String>,
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
    // Fail on a bad --strip before rendering anything.
    args.view.options(&[])?;
    // `diff` and `prove` fetch what the base revision names unless told otherwise; the base
    // is its own base (every input it names is trusted).
    let opts = &RepoOptions {
        network: crate::render::NetworkOptions {
            default_mode: crate::net::NetworkMode::BaseTrusted,
            ..opts.network.clone()
        },
        ..opts.clone()
    };
    let mut base = render_revision(repo, &base_rev.rev, cache, opts)?;
    // The base's fluxsim.toml: its `[diff] strip` is what the reviewers approved, never what
    // the pull request says (a head that strips `spec` would hide its own change); its
    // `[network]` decides what the head may reach (a pull request cannot open the network
    // for itself).
    let base_config = base_config(repo, &base.commit)?;
    let config_strip = base_config.diff.strip.clone();
    let diff_opts = args.view.options(&config_strip)?;
    // The work tree as head is the change about to be committed: new files that git does
    // not ignore are part of it.
    let head_opts = RepoOptions {
        include_untracked: opts.include_untracked || args.head.is_none(),
        network: crate::render::NetworkOptions {
            config: Some(base_config.network.clone()),
            untrusted_tree: true,
            trust: Some(std::sync::Arc::new(crate::render::trust_of(&base.clusters))),
            ..opts.network.clone()
        },
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
            let mut diff = diff_revisions(
                &base_label,
                &base.clusters,
                &head_label,
                &stored.clusters,
                &diff_opts,
            );
            diff.base_revision = base_revision(&base_rev, &base.commit);
            diff.head_revision = crate::compare::Revision {
                name: Some(rev.clone()),
                commit: Some(stored.commit.clone()),
            };
            return Ok(Pair {
                base,
                head: Head::Stored(stored.clusters),
                diff,
                head_opts,
                config_strip,
            });
        }
    }
    let head_tree = load_tree_known(repo, args.head.as_deref(), &head_opts, Some(&base.known))?;
    let head = render_after(&mut base, head_tree, cache, &head_opts, !args.full)?;
    if let Some(slot) = &head_slot {
        slot.put(&head);
    }
    let head_label = match &args.head {
        Some(h) => revision_label(h, head.tree.revision()),
        None => "work tree".to_string(),
    };
    let mut diff = diff_revisions(
        &base_label,
        &base.clusters,
        &head_label,
        &head.clusters,
        &diff_opts,
    );
    diff.base_revision = base_revision(&base_rev, &base.commit);
    diff.head_revision = match &args.head {
        Some(rev) => crate::compare::Revision {
            name: Some(rev.clone()),
            commit: head.tree.revision().map(str::to_string),
        },
        None => crate::compare::Revision::default(),
    };
    Ok(Pair {
        base,
        head: Head::Rendered(Box::new(head)),
        diff,
        head_opts: RepoOptions {
            network: head_opts.network.clone(),
            ..opts.clone()
        },
        config_strip,
    })
}

/// What the change brings at apply time, and with `--validate` the schema findings, with
/// `--audit` the substitution hazards, with `--graph` the cold-start findings, of head.
pub(super) fn change_checks(
    args: &DiffArgs,
    pair: &Pair,
    opts: &RepoOptions,
) -> anyhow::Result<crate::change::ChangeChecks> {
    let trees = audit_trees(args, pair, opts)?;
    let sides = trees
        .as_ref()
        .map(|t| t.sides(&pair.head, opts.strict))
        .transpose()?;
    let head_render = match &pair.head {
        Head::Rendered(r) => Some(r.as_ref()),
        Head::Stored(_) => None,
    };
    // The files the change touches: a hazard points at the one it came from.
    let changed = head_render
        .map(|r| crate::source::changed_between(&pair.base.known.digests, r.tree.digests()));
    args.checks.run(
        &pair.base.clusters,
        pair.head.clusters(),
        head_render,
        sides.as_ref(),
        changed.as_ref(),
        opts.timeout,
    )
}

/// What `--audit` and `--graph` read besides the renders: base's files (its render may come
/// from the store, without its tree) and head's when its render came from the store.
pub(super) struct AuditTreesOwned {
    base: crate::source::Tree,
    head: Option<crate::source::Tree>,
}

impl AuditTreesOwned {
    /// The trees as the audit takes them, with head's own tree when this run rendered it.
    fn sides<'a>(
        &'a self,
        head: &'a Head,
        strict: bool,
    ) -> anyhow::Result<crate::change::AuditTrees<'a>> {
        let head = match (head, &self.head) {
            (_, Some(t)) => t.fs(),
            (Head::Rendered(r), None) => r.tree.fs(),
            (Head::Stored(_), None) => anyhow::bail!("internal: --audit without head's tree"),
        };
        Ok(crate::change::AuditTrees {
            base: self.base.fs(),
            head,
            strict,
        })
    }
}

/// `--audit`, `--graph`: base's tree (and head's, when its render was stored) read again,
/// for their file and line lookups; `None` without them.
fn audit_trees(
    args: &DiffArgs,
    pair: &Pair,
    opts: &RepoOptions,
) -> anyhow::Result<Option<AuditTreesOwned>> {
    if !args.checks.reads_trees() {
        return Ok(None);
    }
    let repo = &args.flags.repo;
    let base = load_tree_known(repo, Some(&pair.base.commit), opts, Some(&pair.base.known))?;
    let head = match &pair.head {
        Head::Rendered(_) => None,
        Head::Stored(_) => Some(load_tree_known(
            repo,
            args.head.as_deref(),
            &pair.head_opts,
            None,
        )?),
    };
    Ok(Some(AuditTreesOwned { base, head }))
}

/// The base as programs read it: the name given (or `merge-base of HEAD and main`), and
/// its commit.
fn base_revision(base: &Base, commit: &str) -> crate::compare::Revision {
    crate::compare::Revision {
        name: Some(base.label.clone().unwrap_or_else(|| base.rev.clone())),
        commit: Some(commit.to_string()),
    }
}

/// The most bytes of `fluxsim.toml` read from the base revision.
const CONFIG_MAX: u64 = 1 << 20;

/// `fluxsim.toml` at `commit` (the defaults when the file is absent), its `[diff] strip`
/// paths checked.
fn base_config(repo: &std::path::Path, commit: &str) -> anyhow::Result<crate::config::Config> {
    let file = crate::config::CONFIG_FILE;
    let spec = format!("{commit}:./{file}");
    let run = |args: &[&str]| {
        crate::source::git::command(repo, args)
            .output()
            .map_err(|e| anyhow::anyhow!("running git: {e}"))
    };
    let size = run(&["cat-file", "-s", &spec])?;
    if !size.status.success() {
        // No fluxsim.toml in the base: nothing to strip, nothing widened.
        return Ok(crate::config::Config::default());
    }
    let bytes: u64 = String::from_utf8_lossy(&size.stdout)
        .trim()
        .parse()
        .unwrap_or(0);
    if bytes > CONFIG_MAX {
        anyhow::bail!("{file} in the base revision is {bytes} bytes, more than {CONFIG_MAX}");
    }
    let blob = run(&["cat-file", "blob", &spec])?;
    let text = String::from_utf8_lossy(&blob.stdout);
    let config = crate::config::Config::parse(&text, &format!("{file} (base revision)"))?;
    for p in &config.diff.strip {
        review::strip::Filters::none()
            .strip(p)
            .map_err(|e| anyhow::anyhow!("{file} (base revision): [diff] strip: {e}"))?;
    }
    Ok(config)
}

/// How a diff names a revision: as given, with its commit when the name is not the commit;
/// a commit (given whole or in part) as its first 12 digits, as every other commit is shown.
fn revision_label(rev: &str, commit: Option<&str>) -> String {
    match commit {
        Some(commit) if !commit.starts_with(rev) => {
            format!("{rev} ({})", &commit[..12.min(commit.len())])
        }
        Some(commit) => commit[..12.min(commit.len())].to_string(),
        None => rev.to_string(),
    }
}

/// The printers of `--diff-style lines` (the unified diffs), text and Markdown.
pub(super) struct Lines<'a> {
    pub(super) text: &'a dyn Fn() -> String,
    pub(super) markdown: &'a dyn Fn() -> String,
}

/// What `diff` and `prove` print in `args.format`, and write into `--out`.
pub(super) fn output(
    args: &DiffArgs,
    a: &review::analysis::Analysis,
    json: &serde_json::Value,
    lines: &Lines<'_>,
    status: ExitStatus,
) -> CommandResult {
    let semantic = args.view.diff_style == DiffStyleFlag::Semantic;
    let flavor = args.format.flavor();
    let (text, kind) = match args.format {
        DiffFormat::Text if !semantic => ((lines.text)(), Kind::DiffText),
        DiffFormat::Text => (review::text::report(a), Kind::DiffText),
        DiffFormat::Json => (format!("{json:#}\n"), Kind::Json),
        DiffFormat::Markdown if !semantic => ((lines.markdown)(), Kind::Markdown),
        DiffFormat::Markdown | DiffFormat::Gitlab | DiffFormat::Gitea => {
            (review::markdown::document(a, flavor), Kind::Markdown)
        }
        // Escaped where it is written (review::escape): printed as it is.
        DiffFormat::Html => (review::html::report(a), Kind::Manifest),
    };
    if let Some(dir) = &args.out {
        write_reports(args, dir, a, json, flavor)?;
    }
    Ok(Output::new(text, status).kind(kind))
}

/// Room a CI script keeps in each comment for its marker line (`<!-- fluxsim-comment: ... -->`).
const MARKER_ROOM: usize = 256;

/// `--out DIR`: every report, and the Markdown as comments that fit.
fn write_reports(
    args: &DiffArgs,
    dir: &std::path::Path,
    a: &review::analysis::Analysis,
    json: &serde_json::Value,
    flavor: review::markdown::Flavor,
) -> anyhow::Result<()> {
    use std::borrow::Cow;
    let limit = args
        .comment_limit
        .unwrap_or(flavor.comment_limit() - MARKER_ROOM);
    let opts = review::markdown::MarkdownOptions {
        flavor,
        limit,
        report_url: args.report_url.clone(),
    };
    let comments = review::markdown::comments(a, &opts)
        .map_err(|e| anyhow::anyhow!("--comment-limit: {e}"))?;
    let mut files: Vec<(String, String)> = vec![
        ("report.txt".into(), review::text::report(a)),
        ("report.md".into(), review::markdown::document(a, flavor)),
        ("report.html".into(), review::html::report(a)),
        ("report.json".into(), format!("{json:#}\n")),
    ];
    for (i, c) in comments.into_iter().enumerate() {
        files.push((format!("comment-{}.md", i + 1), c));
    }
    let files: Vec<crate::report::out::OutFile<'_>> = files
        .into_iter()
        .map(|(rel, text)| crate::report::out::OutFile {
            sha256: Cow::Owned(fluxsim_core::digest::sha256_hex(text.as_bytes())),
            rel,
            bytes: Cow::Owned(text),
        })
        .collect();
    crate::report::out::write_files(&files, dir, &args.flags.repo)?;
    Ok(())
}

/// The image changes between the two renders of a pair, but for what `diff` could not
/// compare (unknown, never removed).
pub(super) fn image_changes(
    base: &[crate::model::ClusterRender],
    head: &[crate::model::ClusterRender],
    diff: &RevisionDiff,
) -> Vec<crate::images::ClusterImageDiff> {
    use crate::images::{cluster_images, diff_images, only_compared};
    only_compared(
        diff_images(&cluster_images(base), &cluster_images(head)),
        diff,
    )
}

pub(crate) fn run_diff(args: &DiffArgs, layout: crate::report::layout::Layout) -> CommandResult {
    // Two revisions: most build outputs are the same texts.
    crate::manifest::share_readings();
    let mut opts = args.helm.apply_on_by_default(args.flags.options());
    // `--audit`, `--graph`: findings point at files and lines through kustomize's origins.
    opts.origins |= args.checks.reads_trees();
    let builder = make_builder(&opts)?;
    let cache = build_cache(builder.as_ref(), &opts);
    let pair = render_pair(args, &opts, &cache, HeadUse::Render)?;
    let diff = &pair.diff;
    let images = image_changes(&pair.base.clusters, pair.head.clusters(), &pair.diff);
    let filters = args.view.filters(&pair.config_strip)?;
    let checks = change_checks(args, &pair, &opts)?;
    // JSON keeps every hazard; a report for people groups those of one source file.
    let group = !layout.verbose && !matches!(args.format, DiffFormat::Json);
    let reviewed = crate::report::change::diff_reviewed(diff, &images, &checks, &filters, group);
    // What could not be compared is never taken for identical: a warning, an error when
    // it fails in head; a finding of the change at its own level.
    let status = args
        .fail
        .status(crate::level::of_diff(diff).max(checks.level()));
    let note = args.flags.subfolder_note(pair.head.clusters());
    let out = output(
        args,
        &reviewed.analysis,
        &reviewed.json,
        &Lines {
            text: &|| report::diff_text(diff, layout),
            markdown: &|| report::diff_markdown(diff),
        },
        status,
    );
    pair.finish();
    out.map(|o| o.with_stderr(&note))
}
