//! `fluxsim render` and `fluxsim build`.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::{Outcome, Output, Status};
use crate::model::Status as KsStatus;
use crate::render::{render_dir, BuilderChoice, RepoOptions};
use crate::report::limit::Kind;

/// Flags shared by the subcommands that render a repository: listed after each command's
/// own, under their own heading, and only the common ones in the short help (`-h`).
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Repository options")]
pub(crate) struct RenderFlags {
    /// The repository: a git work tree or a folder [default: the git work tree's top].
    ///
    /// Without it, the top of the git work tree holding the current folder, as git does
    /// (Flux reads every spec.path from its source's root), else the current folder.
    #[arg(value_name = "REPO")]
    pub(crate) repo_arg: Option<PathBuf>,
    /// The repository, as flux and flate name it (the same as REPO).
    #[arg(
        long = "path",
        value_name = "REPO",
        conflicts_with = "repo_arg",
        hide_short_help = true
    )]
    pub(crate) path: Option<PathBuf>,
    /// The repository, resolved ([`RenderFlags::resolve`]).
    #[arg(skip)]
    pub(crate) repo: PathBuf,
    /// Give a cluster root as NAME=PATH (repeatable); without it clusters are discovered.
    #[arg(
        long = "cluster-root",
        value_name = "NAME=PATH",
        value_parser = name_eq_path,
        hide_short_help = true
    )]
    pub(crate) cluster_roots: Vec<String>,
    /// Only these clusters (repeatable, or comma-separated), by name.
    #[arg(long = "cluster", value_name = "NAME", value_delimiter = ',')]
    pub(crate) cluster: Vec<String>,
    /// Render as controllers before v1.9.0 did: unset vars become empty instead of failing.
    #[arg(long, hide_short_help = true)]
    pub(crate) no_strict: bool,
    /// Also fail a Kustomization whose substituteFrom source is made at run time (by an
    /// ExternalSecret, a SealedSecret, ...), whose values are unknown offline, instead of
    /// rendering them as `fluxsim-unknown:...` placeholders (a source found nowhere always
    /// fails it, as in Flux).
    #[arg(long, hide_short_help = true)]
    pub(crate) strict_sources: bool,
    /// Include files git does not track.
    #[arg(long, hide_short_help = true)]
    pub(crate) include_untracked: bool,
    /// Render Kustomizations whose source is not this repository's GitRepository from a
    /// folder: KIND/NAMESPACE/NAME=PATH (repeatable). A relative PATH is a folder of the
    /// repository (read at each revision), an absolute one may be another checkout.
    #[arg(
        long = "source",
        value_name = "KIND/NAMESPACE/NAME=PATH",
        hide_short_help = true
    )]
    pub(crate) sources: Vec<String>,
    /// Worker threads (default: one per core).
    #[arg(long, short = 'j', default_value_t = 0, hide_short_help = true)]
    pub(crate) jobs: usize,
    /// The kustomize (or kubectl) binary; default: `kustomize`, else `kubectl`, on PATH.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    pub(crate) kustomize: Option<PathBuf>,
    /// Timeout for one kustomize build, and for the CEL rules of one validation, in seconds
    /// (at least 1).
    #[arg(
        long,
        default_value_t = 120,
        value_parser = positive_seconds,
        hide_short_help = true
    )]
    pub(crate) timeout: u64,
    /// Keep build outputs here across runs, keyed by the digest of their inputs (default:
    /// $FLUXSIM_CACHE_DIR, else $XDG_CACHE_HOME/fluxsim, else ~/.cache/fluxsim).
    #[arg(
        long,
        value_name = "DIR",
        hide_short_help = true,
        value_parser = clap::builder::TypedValueParser::try_map(
            clap::builder::OsStringValueParser::new(),
            writable_folder
        )
    )]
    pub(crate) cache_dir: Option<PathBuf>,
    /// Do not read or write the persistent build cache.
    #[arg(long, conflicts_with = "cache_dir", hide_short_help = true)]
    pub(crate) no_cache: bool,
    /// Who builds kustomizations: `auto` builds in-process and hands what it does not support
    /// to kustomize; `native` never runs kustomize (unsupported builds fail); `kustomize`
    /// always runs it.
    #[arg(
        long,
        value_enum,
        default_value = "auto",
        env = "FLUXSIM_BUILDER",
        hide_short_help = true
    )]
    pub(crate) builder: BuilderChoice,
    /// What may be fetched: remote bases and URLs in file fields (by the kustomize binary),
    /// charts (with --helm), a chart schema's remote `$ref`.
    ///
    /// `none` fetches nothing (such a Kustomization is reported `needs-network`);
    /// `base-trusted` only what the base revision already names (`diff`, `prove`: the
    /// default there; a single revision is its own base); `any` everything (trusted
    /// repositories only). Default: `none`, or `any` when the trusted fluxsim.toml says
    /// `[network] allow = true`; `diff`/`prove`: `base-trusted`. Every fetch fluxsim makes
    /// is https to public addresses only (docs/security.md).
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        env = "FLUXSIM_NETWORK",
        hide_short_help = true
    )]
    pub(crate) network: Option<crate::net::NetworkMode>,
    /// The same as `--network any` (kept for scripts that use it).
    #[arg(
        long,
        env = "FLUXSIM_ALLOW_NETWORK",
        conflicts_with = "network",
        hide = true
    )]
    pub(crate) allow_network: bool,
    /// The Flux Operator CLI that renders ResourceSets [default: `flux-operator` on PATH].
    ///
    /// It runs `flux-operator build rset` (v0.59.0); looked for only when a ResourceSet is
    /// found.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    pub(crate) flux_operator: Option<PathBuf>,
}

/// `--cluster-root`: `NAME=PATH`, the name not empty.
// The value parsers of clap: clap shows the String as the reason after the flag, so a
// String is the type it asks for (a handful of String errors are left, each with a comment why).
fn name_eq_path(arg: &str) -> Result<String, String> {
    match arg.split_once('=') {
        Some((name, _)) if !name.is_empty() => Ok(arg.to_string()),
        _ => Err(
            "expected NAME=PATH: the cluster's name, `=`, and the folder of its root \
             Kustomization in the repository (`prod=./clusters/prod`)"
                .to_string(),
        ),
    }
}

/// `--timeout`: a whole number of seconds, more than 0 (a build given no time at all would
/// fail every time, and say only that it timed out).
fn positive_seconds(arg: &str) -> Result<u64, String> {
    match arg.parse::<u64>() {
        Ok(0) => Err("a timeout must be at least 1 second".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("expected a whole number of seconds ({e})")),
    }
}

/// `--cache-dir`: a folder fluxsim can write in (made when missing). The cache ignores the
/// failures of its writes, so a folder it cannot use would silently cache nothing.
fn writable_folder(arg: std::ffi::OsString) -> Result<PathBuf, String> {
    let dir = PathBuf::from(arg);
    let shown = dir.display();
    let hint = "give a folder fluxsim may write in, or --no-cache";
    match std::fs::metadata(&dir) {
        Ok(m) if !m.is_dir() => return Err(format!("`{shown}` is not a folder: {hint}")),
        Ok(_) => {}
        Err(_) => std::fs::create_dir_all(&dir)
            .map_err(|e| format!("`{shown}` cannot be made ({e}): {hint}"))?,
    }
    tempfile::tempfile_in(&dir)
        .map_err(|e| format!("`{shown}` cannot be written in ({e}): {hint}"))?;
    Ok(dir)
}

/// `--helm` and its companions: the flags of the commands that can render HelmReleases.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Helm options")]
pub(crate) struct HelmFlags {
    /// Also render each HelmRelease, as helm-controller installs it.
    ///
    /// Runs the `helm` binary; each release is a child artifact
    /// `<kustomization>/helm/<namespace>/<name>` of the Kustomization that applies it.
    /// `diff` and `prove` do so by default whenever a helm binary is found.
    #[arg(long)]
    pub(crate) helm: bool,
    /// Do not render HelmReleases (`diff` and `prove` render them by default).
    #[arg(long, conflicts_with_all = ["helm", "helm_binary", "fetch_charts"], hide_short_help = true)]
    pub(crate) no_helm: bool,
    /// The helm binary (default: `helm` on PATH); helm-controller links helm v4.2.4.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    pub(crate) helm_binary: Option<PathBuf>,
    /// Download charts of HelmRepositories over the network (kept in the cache folder);
    /// without it such releases are reported as not fetched.
    #[arg(long, hide_short_help = true)]
    pub(crate) fetch_charts: bool,
}

impl HelmFlags {
    /// `opts` with what these flags ask for: HelmReleases only when asked (`--helm`, or
    /// `--helm-binary`, `--fetch-charts`, which need it).
    pub(crate) fn apply(&self, opts: RepoOptions) -> RepoOptions {
        self.with_default(opts, false)
    }

    /// `opts` with what these flags ask for, HelmReleases on unless `--no-helm` (`diff`,
    /// `prove`): a chart bump is reviewed by what it renders. Without a helm binary the
    /// render goes on without them and says so, unless `--helm` asked for them.
    pub(crate) fn apply_on_by_default(&self, opts: RepoOptions) -> RepoOptions {
        self.with_default(opts, true)
    }

    fn with_default(&self, mut opts: RepoOptions, on: bool) -> RepoOptions {
        let asked = self.helm || self.helm_binary.is_some() || self.fetch_charts;
        if !self.no_helm && (asked || on) {
            opts.helm = Some(crate::helm::HelmOptions {
                binary: self.helm_binary.clone(),
                timeout: opts.timeout,
                fetch_charts: self.fetch_charts,
                by_default: !asked,
            });
        }
        opts
    }
}

/// `--jobs` past this many threads per core only adds contention: each thread may run a
/// kustomize process, and the native builder is bound by the cores.
const JOBS_PER_CORE: usize = 4;

/// `--jobs N` bounded to [`JOBS_PER_CORE`] threads per core (at least 16), with a note on
/// stderr (once) when N is more. 0 stays 0: one thread per core.
fn clamp_jobs(jobs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let max = (cores * JOBS_PER_CORE).max(16);
    if jobs > max {
        static NOTE: std::sync::Once = std::sync::Once::new();
        NOTE.call_once(|| {
            eprintln!(
                "fluxsim: note: --jobs {jobs} is more than {JOBS_PER_CORE} per core \
                 ({cores} cores); using {max}"
            );
        });
        return max;
    }
    jobs
}

impl RenderFlags {
    /// Resolves the repository: REPO (or `--path`) as given; without one, the top of the
    /// git work tree holding the current folder, as git does (Flux reads every spec.path from
    /// its source's root, so a render of a subfolder would fail everything), with a note
    /// naming it; else the current folder.
    pub(crate) fn resolve(&mut self) -> Option<String> {
        if let Some(given) = self.repo_arg.clone().or_else(|| self.path.clone()) {
            self.repo = given;
            return None;
        }
        let here = PathBuf::from(".");
        let Some((top, prefix)) = super::git::work_tree_top(&here) else {
            self.repo = here;
            return None;
        };
        if prefix.is_empty() {
            self.repo = here;
            return None;
        }
        let note = format!(
            "fluxsim: note: the repository is the top of the git work tree, `{}`, as for git \
             (give `.` to read `{prefix}` alone)\n",
            top.display()
        );
        self.repo = top;
        Some(note)
    }

    /// A note for a render with failures when the repository given is a folder below the top
    /// of its git work tree: its spec.paths may be relative to the top, which is the
    /// repository to give.
    pub(crate) fn subfolder_note(&self, clusters: &[crate::model::ClusterRender]) -> String {
        let failed = clusters
            .iter()
            .flat_map(|c| &c.kustomizations)
            .any(|k| matches!(k.status, KsStatus::Failed(_)));
        if !failed {
            return String::new();
        }
        match super::git::work_tree_top(&self.repo) {
            Some((top, prefix)) if !prefix.is_empty() => format!(
                "fluxsim: note: `{}` is the folder `{prefix}` of a git work tree; if spec.paths \
                 start from its top, give the top: `{}`\n",
                self.repo.display(),
                top.display()
            ),
            _ => String::new(),
        }
    }

    pub(crate) fn options(&self) -> RepoOptions {
        // `--cluster NAME=PATH` is accepted too, as the issue tracker spells it.
        let (roots, only): (Vec<String>, Vec<String>) =
            self.cluster.iter().cloned().partition(|c| c.contains('='));
        let mut cluster_args = self.cluster_roots.clone();
        cluster_args.extend(roots);
        RepoOptions {
            include_untracked: self.include_untracked,
            only: if cluster_args.is_empty() {
                only
            } else {
                cluster_args
                    .iter()
                    .filter_map(|a| a.split_once('=').map(|(n, _)| n.to_string()))
                    .chain(only)
                    .collect()
            },
            cluster_args,
            strict: !self.no_strict,
            strict_sources: self.strict_sources,
            jobs: clamp_jobs(self.jobs),
            kustomize: self.kustomize.clone(),
            timeout: std::time::Duration::from_secs(self.timeout),
            origins: false,
            cache_dir: if self.no_cache {
                None
            } else {
                self.cache_dir
                    .clone()
                    .or_else(crate::store::Store::default_dir)
            },
            builder: self.builder,
            sources: self
                .sources
                .iter()
                .map(|a| crate::source::mapping::parse_arg(a, &self.repo))
                .collect(),
            helm: None,
            flux_operator: self.flux_operator.clone(),
            progress: std::sync::Arc::default(),
            listener: std::sync::Arc::new(super::terminal::Terminal::default()),
            network: crate::render::NetworkOptions {
                mode: if self.allow_network {
                    Some(crate::net::NetworkMode::Any)
                } else {
                    self.network
                },
                ..crate::render::NetworkOptions::default()
            },
            build_ignore: None,
            keep_sources: false,
            versions_override: None,
        }
    }
}

/// `--show-secrets`: the flag of every command that prints objects.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct SecretFlags {
    /// Print Secret `data`/`stringData` values and SOPS metadata as they are; by default
    /// they are masked (`**SECRET**`, `**SOPS**` as `flux build` does). Digests and
    /// comparisons always use the real values.
    #[arg(long, hide_short_help = true)]
    pub(crate) show_secrets: bool,
}

/// What a render prints of the objects: `--show-secrets`, `--skip-secrets`, `--skip-crds`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct ObjectFlags {
    #[command(flatten)]
    pub(crate) secrets: SecretFlags,
    /// Leave Secrets out of the printed objects (digests still cover them).
    #[arg(long, hide_short_help = true)]
    pub(crate) skip_secrets: bool,
    /// Leave CustomResourceDefinitions out of the printed objects (digests still cover them).
    #[arg(long, hide_short_help = true)]
    pub(crate) skip_crds: bool,
}

impl ObjectFlags {
    pub(crate) fn presentation(self) -> crate::mask::Presentation {
        crate::mask::Presentation {
            show_secrets: self.secrets.show_secrets,
            skip_secrets: self.skip_secrets,
            skip_crds: self.skip_crds,
        }
    }
}

/// Output formats of `render`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    /// A table for people.
    Text,
    /// Stable JSON for programs.
    Json,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RenderArgs {
    /// Output format.
    #[arg(
        long,
        short = 'o',
        visible_alias = "output",
        value_enum,
        default_value = "text"
    )]
    pub(crate) format: Format,
    /// Write every artifact to DIR/<cluster>/<namespace>/<name>.yaml, and DIR/SHA256SUMS.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) fail: super::FailFlags,
    #[command(flatten)]
    pub(crate) objects: ObjectFlags,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
    #[command(flatten)]
    pub(crate) validate: super::validate::ValidateFlag,
}

pub(crate) fn run_render(args: &RenderArgs, layout: crate::report::layout::Layout) -> Outcome {
    let mut opts = args.helm.apply(args.flags.options());
    // `--validate` points at files and lines through the origins kustomize records (never
    // part of a digest).
    opts.origins |= args.validate.validate;
    let r = render_dir(&args.flags.repo, &opts)?;
    // One entry whose name cannot be a file fails alone: the rest is written.
    let skipped = match &args.out {
        Some(out) => {
            crate::report::out::write_out(&r, out, &args.flags.repo, &args.objects.presentation())?
        }
        None => Vec::new(),
    };
    let mut skipped_note = String::new();
    for s in &skipped {
        let _ = writeln!(
            skipped_note,
            "fluxsim: error: --out: {} not written: {}",
            crate::report::escape::OneLine(&s.entry),
            s.why
        );
    }
    let (mut text, kind) = match args.format {
        Format::Text => (crate::report::render_table(&r, layout), Kind::Plain),
        Format::Json => (crate::report::render_json(&r), Kind::Json),
    };
    let mut level = crate::level::of_render(&r.clusters);
    if !skipped.is_empty() {
        level = level.max(Some(crate::finding::Severity::Error));
    }
    if let Some((more, value, found)) = args.validate.run(
        &r,
        matches!(args.format, Format::Json),
        layout,
        opts.timeout,
    )? {
        level = level.max(found);
        match args.format {
            Format::Text => {
                text.push('\n');
                text.push_str(&more);
            }
            Format::Json => {
                let mut doc: serde_json::Value = serde_json::from_str(&text)?;
                doc["validation"] = value;
                text = serde_json::to_string_pretty(&doc)? + "\n";
            }
        }
    }
    let status = args.fail.status(level);
    Ok(Output::new(text, status)
        .kind(kind)
        .with_stderr(&args.flags.subfolder_note(&r.clusters))
        .with_stderr(&skipped_note))
}

#[derive(Debug, clap::Args)]
pub(crate) struct BuildArgs {
    /// The Flux Kustomization to print, as NAME or NAMESPACE/NAME (`fluxsim build NAME`
    /// takes a lone NAME that is not a folder as it, as `flux build ks NAME` does).
    #[arg(long, short = 'k', value_name = "[NS/]NAME")]
    pub(crate) kustomization: Option<String>,
    /// Leave out files matching these .gitignore patterns (as `flux build --ignore-paths`).
    ///
    /// Comma-separated, repeatable; for the files Flux's generator lists for this
    /// Kustomization, relative to its path, as `flux build kustomization --ignore-paths` takes
    /// them: after the `.sourceignore` files of that path
    /// (a `!` pattern re-includes what they excluded), over Flux's default patterns; they
    /// also drop the `resources`, `components` and `crds` entries of its kustomization they
    /// match.
    #[arg(long = "ignore-paths", value_name = "PATTERN", value_delimiter = ',')]
    pub(crate) ignore_paths: Vec<String>,
    #[command(flatten)]
    pub(crate) objects: ObjectFlags,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
}

impl BuildArgs {
    /// `fluxsim build NAME`: a lone argument that is no folder is the Kustomization (as
    /// `flux build ks NAME` reads it), the repository then being found as without one. Runs
    /// before the repository is resolved.
    pub(crate) fn take_name(&mut self) {
        if self.kustomization.is_some() {
            return;
        }
        if let Some(arg) = self.flags.repo_arg.as_ref().filter(|p| !p.is_dir()) {
            self.kustomization = Some(arg.to_string_lossy().into_owned());
            self.flags.repo_arg = None;
        }
    }

    fn name(&self) -> anyhow::Result<&str> {
        self.kustomization.as_deref().ok_or_else(|| {
            anyhow::anyhow!(
                "`build` needs a Kustomization: `fluxsim build NAME` or `-k [NAMESPACE/]NAME`"
            )
        })
    }
}

/// The clusters `build` prints from: `--cluster NAME` (or several: `a,b`), the repository's
/// only cluster, or the only cluster that has the Kustomization (then rendered here, and
/// given back); else an error listing the clusters to choose from.
fn build_clusters(
    args: &BuildArgs,
    opts: &mut RepoOptions,
) -> anyhow::Result<Option<crate::model::RepoRender>> {
    match opts.only.len() {
        0 => {
            let tree = crate::render::load_tree(&args.flags.repo, None, opts)?;
            let clusters = crate::render::clusters_of(tree.fs(), opts)?;
            if let [one] = clusters.as_slice() {
                opts.only = vec![one.name.clone()];
                return Ok(None);
            }
            let name = args.name()?;
            let r = render_dir(&args.flags.repo, opts)?;
            let having: Vec<&str> = r
                .clusters
                .iter()
                .filter(|c| c.find(name).is_some())
                .map(|c| c.name.as_str())
                .collect();
            match having.as_slice() {
                [one] => {
                    opts.only = vec![(*one).to_string()];
                    Ok(Some(r))
                }
                [] => {
                    let names: Vec<&str> = r.clusters.iter().map(|c| c.name.as_str()).collect();
                    anyhow::bail!(
                        "no Kustomization `{}` in any cluster of the repository ({})",
                        crate::report::escape::OneLine(name),
                        names.join(", ")
                    )
                }
                many => anyhow::bail!(
                    "`build` needs --cluster NAME (or several, `a,b`): Kustomization `{}` is in \
                     {} ({})",
                    crate::report::escape::OneLine(name),
                    crate::report::plural(many.len(), "cluster"),
                    many.join(", ")
                ),
            }
        }
        1 => Ok(None),
        _ if !args.ignore_paths.is_empty() => anyhow::bail!(
            "--ignore-paths applies to one Kustomization of one cluster; --cluster named {}",
            opts.only.join(", ")
        ),
        _ => Ok(None),
    }
}

pub(crate) fn run_build(args: &BuildArgs) -> Outcome {
    let mut opts = args.helm.apply(args.flags.options());
    let kustomization = args.name()?.to_string();
    let rendered = build_clusters(args, &mut opts)?;
    let asked = opts.only.clone();
    let mut r = match rendered {
        Some(r) => r,
        None => render_dir(&args.flags.repo, &opts)?,
    };
    if !args.ignore_paths.is_empty() {
        // The Kustomization's path is known once its cluster has rendered: the generator's
        // rules for it are made then, and the cluster renders again with them.
        let patterns = args.ignore_paths.join("\n");
        if let Some(rules) = crate::render::ignore_for(&r, &opts, &kustomization, &patterns)? {
            opts.build_ignore = Some(rules);
            r = render_dir(&args.flags.repo, &opts)?;
        }
    }
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut status = Status::Ok;
    // In the order asked for; each cluster's objects after a comment naming it when there
    // are several (one YAML stream).
    for name in &asked {
        let Some(c) = r.clusters.iter().find(|c| &c.name == name) else {
            anyhow::bail!("no cluster `{name}` in the repository");
        };
        let Some(k) = c.find(&kustomization) else {
            let names: Vec<String> = c
                .kustomizations
                .iter()
                .map(|k| k.kustomization.id.to_string())
                .collect();
            anyhow::bail!(
                "no Kustomization `{}` in cluster `{}` (found: {})",
                crate::report::escape::OneLine(&kustomization),
                c.name,
                names.join(", ")
            );
        };
        let id = crate::report::escape::OneLine(&k.kustomization.id);
        let problem = match (&k.status, &k.artifact) {
            (_, Some(a)) => {
                if asked.len() > 1 {
                    if !stdout.is_empty() {
                        stdout.push_str("---\n");
                    }
                    let _ = writeln!(stdout, "# fluxsim build: {id} in cluster {name}");
                }
                // The objects as kubectl would read them: printed as they are.
                stdout.push_str(&args.objects.presentation().artifact_text(a));
                None
            }
            (KsStatus::Failed(e), None) => Some(format!("failed: {e}")),
            (KsStatus::Blocked(e), None) => Some(format!("blocked: {e}")),
            (KsStatus::NeedsNetwork(e), None) => Some(format!("needs the network: {e}")),
            (KsStatus::External(e), None) => Some(format!("is external: {e}")),
            _ => Some("is suspended".to_string()),
        };
        if let Some(problem) = problem {
            let at = if asked.len() > 1 {
                format!(" in cluster {name}")
            } else {
                String::new()
            };
            let _ = writeln!(stderr, "fluxsim: {id}{at} {problem}");
            status = Status::Finding;
        }
    }
    Ok(Output::new(stdout, status)
        .kind(Kind::Manifest)
        .with_stderr(&stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_clamped_to_a_few_threads_per_core() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let max = (cores * JOBS_PER_CORE).max(16);
        assert_eq!(clamp_jobs(0), 0, "0 is one thread per core");
        assert_eq!(clamp_jobs(3), 3);
        assert_eq!(clamp_jobs(max), max);
        assert_eq!(clamp_jobs(5000), max);
    }
}
