//! The flags shared by the commands that render a repository (the repository, its
//! clusters and sources, the builder, HelmReleases, Secrets and objects in output) and the
//! findings reports' formats: the lowest room of the CLI, which every command's file uses
//! and which uses none of them.

use std::path::PathBuf;

use crate::model::Status as KsStatus;
use crate::render::{BuilderChoice, RepoOptions};

/// Output formats of the findings reports (`audit`, `validate`, `upgrade`).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum FindingsFormat {
    /// Grouped by cluster and path, for people.
    Text,
    /// Stable JSON for programs.
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

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

/// Why clap's value parsers refuse a flag's value: clap prints it as the reason after the
/// flag (`invalid value 'x' for '--timeout <SECONDS>': ...`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FlagValueError {
    /// `--cluster-root` without `NAME=`.
    #[error(
        "expected NAME=PATH: the cluster's name, `=`, and the folder of its root \
         Kustomization in the repository (`prod=./clusters/prod`)"
    )]
    NameEqPath,
    /// `--timeout 0`.
    #[error("a timeout must be at least 1 second")]
    ZeroTimeout,
    /// `--timeout` that is not a whole number.
    #[error("expected a whole number of seconds ({0})")]
    Seconds(std::num::ParseIntError),
    /// `--cache-dir` names a file.
    #[error("`{dir}` is not a folder: {CACHE_DIR_HINT}")]
    NotAFolder {
        /// The folder, as shown.
        dir: String,
    },
    /// `--cache-dir` cannot be made.
    #[error("`{dir}` cannot be made ({source}): {CACHE_DIR_HINT}")]
    CannotMake {
        /// The folder, as shown.
        dir: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--cache-dir` cannot be written in.
    #[error("`{dir}` cannot be written in ({source}): {CACHE_DIR_HINT}")]
    CannotWrite {
        /// The folder, as shown.
        dir: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--kube-version` names a release without embedded schemas.
    #[error("no schemas for Kubernetes `{version}`: one of {supported}")]
    NoSchemas {
        /// The version given.
        version: String,
        /// The versions with schemas, listed.
        supported: String,
    },
    /// `--flux-version` names a release without embedded CRDs.
    #[error("no CRDs for Flux `{version}`: one of {supported}")]
    NoCrds {
        /// The version given.
        version: String,
        /// The releases with CRDs, listed.
        supported: String,
    },
}

/// What `--cache-dir`'s refusals say to do.
const CACHE_DIR_HINT: &str = "give a folder fluxsim may write in, or --no-cache";

/// `--cluster-root`: `NAME=PATH`, the name not empty.
fn name_eq_path(arg: &str) -> Result<String, FlagValueError> {
    match arg.split_once('=') {
        Some((name, _)) if !name.is_empty() => Ok(arg.to_string()),
        _ => Err(FlagValueError::NameEqPath),
    }
}

/// `--timeout`: a whole number of seconds, more than 0 (a build given no time at all would
/// fail every time, and say only that it timed out).
fn positive_seconds(arg: &str) -> Result<u64, FlagValueError> {
    match arg.parse::<u64>() {
        Ok(0) => Err(FlagValueError::ZeroTimeout),
        Ok(n) => Ok(n),
        Err(e) => Err(FlagValueError::Seconds(e)),
    }
}

/// `--cache-dir`: a folder fluxsim can write in (made when missing). The cache ignores the
/// failures of its writes, so a folder it cannot use would silently cache nothing.
fn writable_folder(arg: std::ffi::OsString) -> Result<PathBuf, FlagValueError> {
    let dir = PathBuf::from(arg);
    let shown = || dir.display().to_string();
    match std::fs::metadata(&dir) {
        Ok(m) if !m.is_dir() => return Err(FlagValueError::NotAFolder { dir: shown() }),
        Ok(_) => {}
        Err(_) => {
            std::fs::create_dir_all(&dir).map_err(|source| FlagValueError::CannotMake {
                dir: shown(),
                source,
            })?;
        }
    }
    tempfile::tempfile_in(&dir).map_err(|source| FlagValueError::CannotWrite {
        dir: shown(),
        source,
    })?;
    Ok(dir)
}

/// What every command that reports on a repository takes: `--format` (its own formats),
/// `--fail-on`, the repository and render flags, and the Helm flags, in that order.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReportFlags<F>
where
    F: clap::ValueEnum + Clone + Send + Sync + 'static,
{
    /// Output format.
    #[arg(
        long,
        short = 'o',
        visible_alias = "output",
        value_enum,
        default_value = "text"
    )]
    pub(crate) format: F,
    #[command(flatten)]
    pub(crate) fail: super::FailFlags,
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    #[command(flatten)]
    pub(crate) helm: HelmFlags,
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
