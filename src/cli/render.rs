//! `fluxsim render` and `fluxsim build`.

use std::path::PathBuf;

use super::Status;
use crate::reconcile::Status as KsStatus;
use crate::render::{render_dir, BuilderChoice, RepoOptions};

/// Flags shared by the subcommands that render a repository.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct RenderFlags {
    /// The repository (a git work tree or a directory); default: the current directory.
    #[arg(default_value = ".")]
    pub(crate) repo: PathBuf,
    /// Give a cluster root as NAME=PATH (repeatable); without it clusters are discovered.
    #[arg(long = "cluster-root", value_name = "NAME=PATH")]
    pub(crate) cluster_roots: Vec<String>,
    /// Only these clusters (repeatable, by name).
    #[arg(long = "cluster", value_name = "NAME")]
    pub(crate) cluster: Vec<String>,
    /// Render as controllers before v1.9.0 did: unset vars become empty instead of failing.
    #[arg(long)]
    pub(crate) no_strict: bool,
    /// Fail a Kustomization whose substituteFrom source is found nowhere (no Kustomization of
    /// the cluster applies it, nothing bootstrap applies holds it, no file defines it),
    /// instead of rendering its unknown vars as `fluxsim-unknown:...` placeholders.
    #[arg(long)]
    pub(crate) strict_sources: bool,
    /// Include files git does not track.
    #[arg(long)]
    pub(crate) include_untracked: bool,
    /// Render Kustomizations whose source is not this repository's GitRepository from a
    /// folder: KIND/NAMESPACE/NAME=PATH (repeatable). A relative PATH is a folder of the
    /// repository (read at each revision), an absolute one may be another checkout.
    #[arg(long = "source", value_name = "KIND/NAMESPACE/NAME=PATH")]
    pub(crate) sources: Vec<String>,
    /// Worker threads (default: one per core).
    #[arg(long, short = 'j', default_value_t = 0)]
    pub(crate) jobs: usize,
    /// The kustomize (or kubectl) binary; default: `kustomize`, else `kubectl`, on PATH.
    #[arg(long, value_name = "PATH")]
    pub(crate) kustomize: Option<PathBuf>,
    /// Timeout for one kustomize build, in seconds.
    #[arg(long, default_value_t = 120)]
    pub(crate) timeout: u64,
    /// Keep build outputs here across runs, keyed by the digest of their inputs (default:
    /// $FLUXSIM_CACHE_DIR, else $XDG_CACHE_HOME/fluxsim, else ~/.cache/fluxsim).
    #[arg(long, value_name = "DIR")]
    pub(crate) cache_dir: Option<PathBuf>,
    /// Do not read or write the persistent build cache.
    #[arg(long, conflicts_with = "cache_dir")]
    pub(crate) no_cache: bool,
    /// Who builds kustomizations: `auto` builds in-process and hands what it does not support
    /// to kustomize; `native` never runs kustomize (unsupported builds fail); `kustomize`
    /// always runs it.
    #[arg(long, value_enum, default_value = "auto", env = "FLUXSIM_BUILDER")]
    pub(crate) builder: BuilderFlag,
}

/// Values of `--builder`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum BuilderFlag {
    /// Native, delegating unsupported builds to the kustomize binary.
    Auto,
    /// Native only.
    Native,
    /// The kustomize binary only.
    Kustomize,
}

impl RenderFlags {
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
            jobs: self.jobs,
            kustomize: self.kustomize.clone(),
            timeout: std::time::Duration::from_secs(self.timeout),
            origins: false,
            cache_dir: if self.no_cache {
                None
            } else {
                self.cache_dir
                    .clone()
                    .or_else(crate::build::store::Store::default_dir)
            },
            builder: match self.builder {
                BuilderFlag::Auto => BuilderChoice::Auto,
                BuilderFlag::Native => BuilderChoice::Native,
                BuilderFlag::Kustomize => BuilderChoice::Kustomize,
            },
            sources: self
                .sources
                .iter()
                .map(|a| crate::source::mapping::parse_arg(a, &self.repo))
                .collect(),
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
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    /// Write every artifact to DIR/<cluster>/<namespace>/<name>.yaml and DIR/SHA256SUMS.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
}

pub(crate) fn run_render(args: &RenderArgs) -> Status {
    let r = match render_dir(&args.flags.repo, &args.flags.options()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fluxsim: error: {e}");
            return Status::Error;
        }
    };
    if let Some(out) = &args.out {
        if let Err(e) = crate::report::write_out(&r, out) {
            eprintln!("fluxsim: error: writing {}: {e}", out.display());
            return Status::Error;
        }
    }
    match args.format {
        Format::Text => print!("{}", crate::report::render_table(&r)),
        Format::Json => print!("{}", crate::report::render_json(&r)),
    }
    let all_ok = r.clusters.iter().flat_map(|c| &c.kustomizations).all(|k| {
        matches!(
            k.status,
            KsStatus::Rendered | KsStatus::External(_) | KsStatus::Suspended
        )
    });
    if all_ok {
        Status::Ok
    } else {
        Status::Finding
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct BuildArgs {
    #[command(flatten)]
    pub(crate) flags: RenderFlags,
    /// The Flux Kustomization to print, as NAME or NAMESPACE/NAME.
    #[arg(long, short = 'k', value_name = "[NS/]NAME")]
    pub(crate) kustomization: String,
}

pub(crate) fn run_build(args: &BuildArgs) -> Status {
    let opts = args.flags.options();
    if opts.only.len() != 1 {
        eprintln!("fluxsim: error: `build` needs exactly one --cluster NAME");
        return Status::Error;
    }
    let r = match render_dir(&args.flags.repo, &opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fluxsim: error: {e}");
            return Status::Error;
        }
    };
    let Some(c) = r.clusters.first() else {
        return Status::Error;
    };
    let Some(k) = c.find(&args.kustomization) else {
        let names: Vec<String> = c
            .kustomizations
            .iter()
            .map(|k| k.kustomization.id.to_string())
            .collect();
        eprintln!(
            "fluxsim: error: no Kustomization `{}` in cluster `{}` (found: {})",
            args.kustomization,
            c.name,
            names.join(", ")
        );
        return Status::Error;
    };
    match (&k.status, &k.artifact) {
        (_, Some(a)) => {
            print!("{}", a.yaml);
            Status::Ok
        }
        (KsStatus::Failed(e) | KsStatus::Blocked(e) | KsStatus::External(e), None) => {
            eprintln!(
                "fluxsim: {} {}: {e}",
                k.kustomization.id,
                match k.status {
                    KsStatus::Failed(_) => "failed",
                    KsStatus::Blocked(_) => "blocked",
                    _ => "is external",
                }
            );
            Status::Finding
        }
        _ => {
            eprintln!("fluxsim: {} is suspended", k.kustomization.id);
            Status::Finding
        }
    }
}
