//! `render`: a repository in, every cluster's rendered Kustomizations out; [`revisions`]
//! renders git revisions and keeps their renders in the store.

pub mod revisions;

/// `fluxsim build --ignore-paths`: the rules a render gives Flux's generator for one
/// Kustomization (`RepoOptions::build_ignore`).
pub use crate::kustomization_generator::IgnoreFor;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::cache::BuildCache;
use crate::discover::{cluster_from_arg, discover_files_with, Cluster, Discovery, FileFacts};
use crate::kustomize::{AutoBuilder, NativeBuilder};
use crate::kustomize::{Builder, KustomizeBinary};
use crate::model::RepoRender;
use crate::reconcile::{render_clusters, RenderOptions, Reuse};
use crate::source::mapping::SourceMapping;
use crate::source::{in_place, materialize_rev, Digests, SourceFs, SourceOptions, Tree};
use crate::store::Store;

/// What to render and how.
#[derive(Debug, Clone)]
pub struct RepoOptions {
    /// Also render files git does not track.
    pub include_untracked: bool,
    /// Clusters given as `NAME=PATH`; when empty, clusters are discovered.
    pub cluster_args: Vec<String>,
    /// Render only these clusters (by name); all when empty.
    pub only: Vec<String>,
    /// Strict substitution (`false`: `--no-strict`; when true, each cluster's
    /// `StrictPostBuildSubstitutions` gate decides).
    pub strict: bool,
    /// `--strict-sources`: a var source made at run time fails the Kustomization too (one
    /// found nowhere always does).
    pub strict_sources: bool,
    /// Worker threads (0: one per core).
    pub jobs: usize,
    /// The kustomize binary to use.
    pub kustomize: Option<PathBuf>,
    /// Timeout for one kustomize build.
    pub timeout: Duration,
    /// The persistent build cache folder (`None`: builds are cached for this run only).
    pub cache_dir: Option<PathBuf>,
    /// Which builder runs `kustomize build`.
    pub builder: BuilderChoice,
    /// Track where each object came from (`ArtifactObject::origin`), for the audit and the
    /// graph check. Digests are the same either way.
    pub origins: bool,
    /// `--source KIND/NAMESPACE/NAME=PATH`, read (an argument that cannot be used is kept as
    /// its error, reported when the render starts).
    pub sources: Vec<Result<SourceMapping, crate::source::mapping::MappingError>>,
    /// `--helm`: render HelmReleases as child artifacts of their Kustomizations.
    pub helm: Option<crate::helm::HelmOptions>,
    /// `--flux-operator PATH`: the Flux Operator CLI that renders ResourceSets (default:
    /// `flux-operator` on PATH, looked for when a ResourceSet is found).
    pub flux_operator: Option<PathBuf>,
    /// Counts for a progress line (see [`crate::reconcile::Progress`]), shared with whoever
    /// watches the render.
    pub progress: std::sync::Arc<crate::reconcile::Progress>,
    /// Who hears the render's progress and warnings (the binary's terminal; by default
    /// nobody).
    pub listener: std::sync::Arc<dyn crate::notice::Listener>,
    /// What the render may fetch, and whose settings decide it (see [`NetworkOptions`]).
    pub network: NetworkOptions,
    /// `fluxsim build --ignore-paths`: the ignore rules Flux's generator applies to one
    /// Kustomization, as `flux build kustomization --ignore-paths` gives them.
    pub build_ignore: Option<crate::kustomization_generator::IgnoreFor>,
    /// Keep, in each Kustomization built from another tree than the repository (a mapped
    /// source, an ArtifactGenerator's artifact), that tree's files
    /// (`KustomizationRender::source_tree`), for `scripts/oracle-check`.
    pub keep_sources: bool,
    /// `fluxsim upgrade`: render every cluster as if it ran these versions instead of what
    /// the repository says (`[versions]` and the evidence), Helm told the target Kubernetes.
    pub versions_override: Option<VersionsOverride>,
}

/// How a render's network is decided: `--network`, else `[network] allow` of the trusted
/// fluxsim.toml, else the command's default; the fetch box from the trusted `[network]`.
///
/// The trusted fluxsim.toml is the tree's own for a single-revision command, and the base
/// revision's for the head of a diff: a pull request cannot open the network for itself,
/// nor name the hosts, credentials or addresses fluxsim may reach.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetworkOptions {
    /// `--network`, when given (it wins over fluxsim.toml).
    pub mode: Option<crate::net::NetworkMode>,
    /// The mode when neither `--network` nor `[network] allow` says (`none`; `diff` and
    /// `prove`: `base-trusted`).
    pub default_mode: crate::net::NetworkMode,
    /// The trusted `[network]` when it is not the tree's own (the base revision's, for the
    /// head of a diff). `None`: the tree's own, unless `untrusted_tree`.
    pub config: Option<crate::config::Network>,
    /// The tree's own fluxsim.toml may not widen the network (the head of a diff).
    pub untrusted_tree: bool,
    /// Under `base-trusted`, what the base revision names; `None`: the tree is its own base
    /// (a single-revision command, or the base of a diff: every input it names is trusted).
    pub trust: Option<std::sync::Arc<crate::net::Trust>>,
}

impl NetworkOptions {
    /// The network of a render of a tree whose own fluxsim.toml is `config`.
    ///
    /// # Errors
    /// The trusted `[network]` cannot be used (a credential without its variables, a CA file
    /// that cannot be read).
    pub fn resolve(
        &self,
        config: &crate::config::Config,
        timeout: Duration,
    ) -> Result<crate::net::Network, RenderError> {
        use crate::net::NetworkMode;
        let trusted = match (&self.config, self.untrusted_tree) {
            (Some(c), _) => c.clone(),
            (None, false) => config.network.clone(),
            (None, true) => crate::config::Network::default(),
        };
        let mode = self.mode.unwrap_or(if trusted.allow {
            NetworkMode::Any
        } else {
            self.default_mode
        });
        // A tree that is its own base trusts every input it names: `any`, still boxed.
        let mode = match (mode, &self.trust) {
            (NetworkMode::BaseTrusted, None) => NetworkMode::Any,
            (m, _) => m,
        };
        let fetch_box = crate::net::fetch::FetchBox::from_env(&trusted, timeout)?;
        Ok(crate::net::Network {
            mode,
            trust: self.trust.clone().unwrap_or_default(),
            fetch_box: std::sync::Arc::new(fetch_box),
        })
    }
}

/// What a base revision's render names, for `--network base-trusted`: the URL of each
/// HelmRepository, OCIRepository and GitRepository it applies (substituted, as Flux reads
/// them), and each remote entry of its Kustomizations' kustomization files (remote bases at
/// any ref, remote files below their folder's leading segments). What the head of a diff may
/// fetch.
#[must_use]
pub fn trust_of(clusters: &[crate::model::ClusterRender]) -> crate::net::Trust {
    let mut trust = crate::net::Trust::default();
    for k in clusters.iter().flat_map(|c| &c.kustomizations) {
        for url in &k.remote_inputs {
            trust.add_entry(url);
        }
        for o in k.artifact.iter().flat_map(|a| &a.objects) {
            let group = o.id.group.as_str();
            let source_kind = matches!(
                o.id.kind.as_str(),
                "HelmRepository" | "OCIRepository" | "GitRepository"
            );
            if group == "source.toolkit.fluxcd.io" && source_kind {
                if let Some(url) = crate::flux::str_at(&o.object, &["spec", "url"]) {
                    trust.add_source(url);
                }
            }
        }
    }
    trust
}

/// The versions `fluxsim upgrade` renders a repository at (its target), over everything the
/// repository says of its clusters' versions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionsOverride {
    /// The Flux release (`2.9`), for every cluster.
    pub flux: Option<String>,
    /// The Kubernetes release (`1.36`), for every cluster and as Helm's `--kube-version`.
    pub kubernetes: Option<String>,
}

impl VersionsOverride {
    /// `config` as a render at these versions reads it: `[versions]` set to them for every
    /// cluster (a cluster's own key removed), `[helm_controller] kube_version` to the
    /// Kubernetes release (`Capabilities.KubeVersion` of the charts).
    pub fn apply(&self, config: &mut crate::config::Config) {
        if let Some(f) = &self.flux {
            config.versions.flux = Some(f.clone());
            for c in config.versions.clusters.values_mut() {
                c.flux = None;
            }
        }
        if let Some(k) = &self.kubernetes {
            config.versions.kubernetes = Some(k.clone());
            for c in config.versions.clusters.values_mut() {
                c.kubernetes = None;
            }
            // `[validate] kube_version` is read before the cluster's evidence: the target wins.
            config.validate.kube_version = None;
            config.helm_controller.kube_version = Some(format!("v{}.0", k.trim_start_matches('v')));
        }
    }
}

impl Default for RepoOptions {
    fn default() -> Self {
        RepoOptions {
            include_untracked: false,
            cluster_args: Vec::new(),
            only: Vec::new(),
            strict: true,
            strict_sources: false,
            jobs: 0,
            kustomize: None,
            timeout: Duration::from_secs(120),
            origins: false,
            cache_dir: None,
            builder: BuilderChoice::Auto,
            sources: Vec::new(),
            helm: None,
            flux_operator: None,
            progress: std::sync::Arc::default(),
            listener: std::sync::Arc::new(crate::notice::Quiet),
            network: NetworkOptions::default(),
            build_ignore: None,
            keep_sources: false,
            versions_override: None,
        }
    }
}

/// Which builder turns a kustomization directory into YAML (`--builder`; each variant's
/// first line is its help). A build the native builder does not support fails with
/// `Native`, naming the feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BuilderChoice {
    /// Native, delegating unsupported builds to the kustomize binary.
    #[default]
    Auto,
    /// Native only.
    Native,
    /// The kustomize binary only.
    Kustomize,
}

/// What a render of another revision found out about its files: a render of a revision
/// close to it takes the discovery facts of every file whose digest is the same.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// The digest of every file of that revision.
    pub digests: Arc<Digests>,
    /// Its folders.
    pub folders: Arc<BTreeSet<String>>,
    /// The discovery facts of its YAML files (a file not listed has none).
    pub facts: Arc<BTreeMap<String, FileFacts>>,
}

/// What a render may take from a render of another revision (the base of a diff).
#[derive(Debug, Clone, Default)]
pub struct Prior {
    /// That revision's files.
    pub known: Option<Known>,
    /// Its Kustomizations, reused where their inputs did not change (`diff --changed-only`).
    pub reuse: Option<Arc<Reuse>>,
}

/// Why a repository could not be rendered at all (a single Kustomization's failure is not
/// one of these: it is reported in its render).
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The source could not be read.
    #[error(transparent)]
    Source(#[from] crate::source::SourceError),
    /// Clusters could not be found.
    #[error(transparent)]
    Discover(#[from] crate::discover::DiscoverError),
    /// kustomize is missing.
    #[error(transparent)]
    Build(#[from] crate::kustomize::BuildError),
    /// A cluster asked for with `--cluster NAME` does not exist.
    #[error("no cluster named `{0}` (found: {1})")]
    UnknownCluster(String, String),
    /// `fluxsim.toml` cannot be used.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The thread pool could not start.
    #[error("starting {0} worker threads: {1}")]
    Threads(usize, String),
    /// A `--source` mapping cannot be used.
    #[error(transparent)]
    Mapping(crate::source::mapping::MappingError),
    /// `--helm` was asked for and helm cannot be run.
    #[error("{0}")]
    Helm(String),
    /// The trusted `[network]` settings cannot be used.
    #[error(transparent)]
    Network(#[from] crate::net::fetch::FetchError),
}

/// `fluxsim build --ignore-paths`: the rules `flux build kustomization --ignore-paths` gives
/// Flux's generator for `kustomization` of the first cluster of `r` (flux2 v2.9.5
/// `internal/build/build.go` `generate`: the patterns, one a line, to
/// `NewGeneratorWithIgnore`), made against the source that cluster's GitRepository shows;
/// `None` when the render has no such Kustomization. Render again with them in
/// `RepoOptions::build_ignore`.
pub fn ignore_for(
    r: &RepoRender,
    opts: &RepoOptions,
    kustomization: &str,
    patterns: &str,
) -> Result<Option<IgnoreFor>, RenderError> {
    let Some(c) = r.clusters.first() else {
        return Ok(None);
    };
    let Some(k) = c.find(kustomization) else {
        return Ok(None);
    };
    let source_ignore = clusters_of(r.tree.fs(), opts)?
        .into_iter()
        .find(|found| found.name == c.name)
        .and_then(|found| found.source_ignore);
    let tree = match &source_ignore {
        Some(ignore) => r.tree.narrowed(ignore)?,
        None => r.tree.reopen()?,
    };
    let dir = crate::source::spec_dir(tree.fs(), &k.kustomization.path)?;
    let (rules, revealed) = tree.build_ignore(&dir, patterns)?;
    Ok(Some(IgnoreFor {
        cluster: c.name.clone(),
        kustomization: kustomization.to_string(),
        patterns: patterns.to_string(),
        rules: Arc::new(rules),
        revealed: Arc::new(revealed),
    }))
}

/// Makes the builder the options ask for (locating the kustomize binary unless `native`).
pub fn make_builder(opts: &RepoOptions) -> Result<Box<dyn Builder>, RenderError> {
    let store = opts.cache_dir.as_deref().map(Store::new);
    let binary =
        || KustomizeBinary::locate_with(opts.kustomize.as_deref(), opts.timeout, store.as_ref());
    if let (BuilderChoice::Auto, Some(explicit)) = (opts.builder, opts.kustomize.as_deref()) {
        if !explicit.is_file() {
            return Err(crate::kustomize::BuildError::NotFound(format!(
                "{}: no such file",
                explicit.display()
            ))
            .into());
        }
    }
    Ok(match opts.builder {
        BuilderChoice::Native => Box::new(NativeBuilder),
        BuilderChoice::Kustomize => {
            let binary = binary()?;
            if let Some(w) = binary.warning() {
                opts.listener.warn(w);
            }
            Box::new(binary)
        }
        // The binary is run only when a build is delegated to it; one named with
        // `--kustomize` must exist, though: naming a tool that is not there is a usage error.
        BuilderChoice::Auto => Box::new(AutoBuilder::deferred(
            opts.kustomize.as_deref(),
            opts.timeout,
            store,
            opts.listener.clone(),
        )),
    })
}

/// Finds the clusters of a source tree.
pub fn clusters_of(fs: &SourceFs, opts: &RepoOptions) -> Result<Vec<Cluster>, RenderError> {
    let config = crate::config::Config::load(fs)?;
    let mappings = source_mappings(opts, &config)?;
    let mut files = Vec::new();
    crate::discover::yaml_files(fs, fs.root(), &mut files);
    let facts: Vec<(String, FileFacts)> = files
        .iter()
        .map(|file| {
            let rel = file
                .strip_prefix(fs.root())
                .unwrap_or(file)
                .to_string_lossy()
                .replace('\\', "/");
            (rel, FileFacts::of(fs.read_to_string(file).ok().as_deref()))
        })
        .collect();
    clusters_found(fs, discover_files_with(fs, &facts, &mappings), opts)
}

/// The sources mapped to folders: the command line's, then `fluxsim.toml`'s.
fn source_mappings(
    opts: &RepoOptions,
    config: &crate::config::Config,
) -> Result<Vec<SourceMapping>, RenderError> {
    let cli: Vec<SourceMapping> = opts
        .sources
        .iter()
        .cloned()
        .collect::<Result<_, _>>()
        .map_err(RenderError::Mapping)?;
    Ok(crate::source::mapping::merged(
        &cli,
        &config.source_mappings(),
    ))
}

/// Discovers the clusters of `tree`, reading again only the YAML files that `known` does not
/// hold with the same digest; gives the facts of every YAML file that has any, too.
fn discover_tree(
    tree: &Tree,
    known: Option<&Known>,
    mappings: &[SourceMapping],
) -> (Discovery, Vec<(String, FileFacts)>) {
    use rayon::prelude::*;
    let (fs, root) = (tree.fs(), tree.root());
    let paths: Vec<&PathBuf> = tree
        .files()
        .iter()
        .filter(|p| crate::discover::is_yaml_file(p))
        .collect();
    // Read in parallel, kept in the tree's order.
    let files: Vec<(String, FileFacts)> = paths
        .par_iter()
        .map(|p| {
            let rel = p.to_string_lossy().replace('\\', "/");
            let same = known.filter(|k| {
                let digest = tree.digests().get(&rel);
                digest.is_some() && k.digests.get(&rel) == digest
            });
            let facts = match same {
                Some(k) => k.facts.get(&rel).cloned().unwrap_or_default(),
                None => FileFacts::of(fs.read_to_string(&root.join(p)).ok().as_deref()),
            };
            (rel, facts)
        })
        .collect();
    (discover_files_with(fs, &files, mappings), files)
}

/// The clusters `opts` asks for among those discovered.
fn clusters_found(
    fs: &SourceFs,
    mut found: Discovery,
    opts: &RepoOptions,
) -> Result<Vec<Cluster>, RenderError> {
    let mut clusters = if opts.cluster_args.is_empty() {
        std::mem::take(&mut found.clusters)
    } else {
        opts.cluster_args
            .iter()
            .map(|a| cluster_from_arg(fs, a, &found.clusters))
            .collect::<Result<Vec<_>, _>>()?
    };
    // Each cluster's own GitRepository: two clusters may declare one of the same name with
    // different rules.
    let dirs: Vec<String> = clusters
        .iter()
        .map(|c| crate::source::spec_dir(fs, &c.root.path).unwrap_or_else(|_| c.root.path.clone()))
        .collect();
    let others: Vec<&str> = dirs.iter().map(String::as_str).collect();
    for (c, dir) in clusters.iter_mut().zip(&dirs) {
        c.source_ignore = c.root.source_ref.as_ref().and_then(|src| {
            let key = crate::flux::NamespacedName {
                namespace: src.namespace.clone(),
                name: src.name.clone(),
            };
            found.source_ignore(&key, dir, &others)
        });
    }
    if clusters.is_empty() {
        return Err(crate::discover::DiscoverError::NoClusters {
            candidates: found.candidates,
        }
        .into());
    }
    if !opts.only.is_empty() {
        let names: Vec<String> = clusters.iter().map(|c| c.name.clone()).collect();
        for want in &opts.only {
            if !names.contains(want) {
                return Err(RenderError::UnknownCluster(want.clone(), names.join(", ")));
            }
        }
        clusters.retain(|c| opts.only.contains(&c.name));
    }
    Ok(clusters)
}

/// Renders a directory (a git work tree or a plain directory).
pub fn render_dir(dir: &Path, opts: &RepoOptions) -> Result<RepoRender, RenderError> {
    let tree = load_tree(dir, None, opts)?;
    let builder = make_builder(opts)?;
    render_tree(tree, builder.as_ref(), opts)
}

/// `fluxsim upgrade`'s two renders of `dir`: as it is, and with every cluster at `target`,
/// through one build cache (a build does not depend on the versions: the second render
/// builds only what the first did not, and substitutes and templates again).
pub fn render_dir_and_at(
    dir: &Path,
    opts: &RepoOptions,
    target: VersionsOverride,
) -> Result<(RepoRender, RepoRender), RenderError> {
    let builder = make_builder(opts)?;
    let cache = build_cache(builder.as_ref(), opts);
    let now = render_tree_cached(load_tree(dir, None, opts)?, &cache, opts)?;
    let at = RepoOptions {
        versions_override: Some(target),
        ..opts.clone()
    };
    let then = render_tree_cached(load_tree(dir, None, &at)?, &cache, &at)?;
    Ok((now, then))
}

/// Materialises what Flux would see of `dir`: its work tree, or the git revision `rev`.
pub fn load_tree(dir: &Path, rev: Option<&str>, opts: &RepoOptions) -> Result<Tree, RenderError> {
    load_tree_known(dir, rev, opts, None)
}

/// [`load_tree`]. A work tree is read in place (`source::in_place`). (`_known`, a render of
/// another revision, is no longer needed here: the tree is read once, whatever the
/// GitRepositories' `spec.ignore`.)
pub fn load_tree_known(
    dir: &Path,
    rev: Option<&str>,
    opts: &RepoOptions,
    _known: Option<&Known>,
) -> Result<Tree, RenderError> {
    // The whole repository, as any GitRepository without `spec.ignore` sees it: discovery
    // sees every cluster, and each cluster's own `spec.ignore` narrows the tree for that
    // cluster alone when it renders (`render_tree_with`).
    let source = SourceOptions {
        include_untracked: opts.include_untracked,
        spec_ignore: None,
    };
    Ok(match rev {
        // A work tree holding exactly the revision (a CI checkout of the head) is read in
        // place; any other revision is read out of git.
        Some(rev) => match crate::source::revision_in_place(dir, rev, &source)? {
            Some(tree) => tree,
            None => materialize_rev(dir, rev, &source)?,
        },
        // The work tree is read in place (`source::SourceFs`): copying it costs more than
        // rendering it.
        None => in_place(dir, &source)?,
    })
}

/// The build cache `opts` asks for, in front of `builder`.
#[must_use]
pub fn build_cache<'b>(builder: &'b dyn Builder, opts: &RepoOptions) -> BuildCache<'b> {
    BuildCache::with_store(builder, opts.cache_dir.as_deref().map(Store::new))
}

/// Renders an already materialised tree with `builder`.
pub fn render_tree(
    tree: Tree,
    builder: &dyn Builder,
    opts: &RepoOptions,
) -> Result<RepoRender, RenderError> {
    render_tree_cached(tree, &build_cache(builder, opts), opts)
}

/// Renders an already materialised tree through `cache`, which several renders (base and
/// head, canary copies) may share.
pub fn render_tree_cached(
    tree: Tree,
    cache: &BuildCache<'_>,
    opts: &RepoOptions,
) -> Result<RepoRender, RenderError> {
    render_tree_with(tree, cache, opts, &Prior::default())
}

/// [`render_tree_cached`], taking from `prior` (a render of another revision) the
/// discovery facts of unchanged files and, when it has them, the Kustomizations whose spec,
/// vars and input files are unchanged.
#[allow(clippy::too_many_lines)] // The render's one sequence, read top to bottom.
pub fn render_tree_with(
    tree: Tree,
    cache: &BuildCache<'_>,
    opts: &RepoOptions,
    prior: &Prior,
) -> Result<RepoRender, RenderError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs)
        .build()
        .map_err(|e| RenderError::Threads(opts.jobs, e.to_string()))?;
    let mut config = crate::config::Config::load(tree.fs())?;
    if let Some(o) = &opts.versions_override {
        o.apply(&mut config);
    }
    if let Some(w) = crate::config::left_out_warning(&tree) {
        opts.listener.warn(&w);
    }
    // Sources mapped to folders: the command line's, then fluxsim.toml's.
    let mappings = source_mappings(opts, &config)?;
    let (found, files) = pool.install(|| discover_tree(&tree, prior.known.as_ref(), &mappings));
    let discovered = found.clusters.clone();
    let clusters = clusters_found(tree.fs(), found, opts)?;
    // What each cluster's GitRepository shows of the tree: the tree itself, or a view of it
    // narrowed by that source's `spec.ignore` (one per distinct rule set).
    let mut views: BTreeMap<String, Tree> = BTreeMap::new();
    for ignore in clusters.iter().filter_map(|c| c.source_ignore.as_ref()) {
        if !views.contains_key(ignore) {
            views.insert(ignore.clone(), tree.narrowed(ignore)?);
        }
    }
    // `fluxsim build --ignore-paths`: the files its rules bring back are shown to that
    // cluster (`flux build` reads a checkout, where they are).
    let revealed: Option<Tree> = match &opts.build_ignore {
        Some(b) if !b.revealed.is_empty() => clusters
            .iter()
            .find(|c| c.name == b.cluster)
            .map(|c| match &c.source_ignore {
                Some(ignore) => views[ignore].changed(&b.revealed),
                None => tree.changed(&b.revealed),
            })
            .transpose()?,
        _ => None,
    };
    let cluster_roots: Vec<&SourceFs> = clusters
        .iter()
        .map(|c| match (&revealed, &c.source_ignore) {
            (Some(r), _)
                if opts
                    .build_ignore
                    .as_ref()
                    .is_some_and(|b| b.cluster == c.name) =>
            {
                r.fs()
            }
            (_, Some(ignore)) => views[ignore].fs(),
            (_, None) => tree.fs(),
        })
        .collect();
    let network = opts.network.resolve(&config, opts.timeout)?;
    let declared = config.declared(tree.fs())?;
    let yaml_files: Vec<String> = tree
        .files()
        .iter()
        .filter(|p| crate::discover::is_yaml_file(p))
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .collect();
    let mapped = crate::reconcile::trees::Mapped::read(&tree, &mappings)?;
    let all_files: Vec<String> = tree
        .files()
        .iter()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .collect();
    let outside = crate::reconcile::sources::Outside {
        config: config.clone(),
        declared,
        files: crate::reconcile::sources::RepoObjects::new(tree.fs(), yaml_files),
        mapped,
        versions: crate::versions::FileEvidence::read(tree.fs(), &all_files),
        bootstrap: crate::bootstrap::BootstrapEvidence::read(tree.fs(), tree.files()),
    };
    let ropts = RenderOptions {
        strict: opts.strict,
        strict_sources: opts.strict_sources,
        origins: opts.origins,
        reuse: prior.reuse.clone(),
        progress: opts.progress.clone(),
        network: network.clone(),
        build_ignore: opts.build_ignore.clone(),
        resourcesets: Arc::new(crate::resourceset::Runner::new(opts.flux_operator.clone())),
        keep_sources: opts.keep_sources,
    };
    let helm = match opts.helm.as_ref().map(|h| {
        (
            h,
            crate::helm::template::HelmBinary::locate(h.binary.as_deref(), h.timeout),
        )
    }) {
        None => None,
        Some((_, Ok(helm))) => Some(helm),
        // HelmReleases on by the command's default: without helm, the Kustomizations are
        // still rendered and compared, and people are told what is not.
        Some((h, Err(e))) if h.by_default => {
            opts.listener.warn(&format!(
                "fluxsim: warning: HelmReleases are not rendered: {e}; --no-helm says it is meant"
            ));
            None
        }
        Some((_, Err(e))) => return Err(RenderError::Helm(e.into())),
    };
    if let Some(w) = helm.as_ref().and_then(|h| h.warning()) {
        opts.listener.warn(w);
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    let (renders, builder) = std::thread::scope(|scope| {
        // The builder's line of the report may run a tool (`kustomize version`, when the
        // auto builder delegated nothing): it runs beside the render, not after it.
        let builder = scope.spawn(|| cache.builder().describe());
        // Progress, for whoever listens (a person watching a terminal).
        if opts.listener.wants_progress() {
            let (done, n, progress) = (&done, clusters.len(), ropts.progress.clone());
            let listener = &opts.listener;
            scope.spawn(move || {
                let start = std::time::Instant::now();
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let (rendered, found) = progress.counts();
                    listener.progress(&crate::notice::Progress {
                        clusters: n,
                        rendered,
                        found,
                        builds_run: cache.builds_run(),
                        stored_hits: cache.stored_hits(),
                        elapsed: start.elapsed(),
                    });
                    std::thread::sleep(Duration::from_millis(100));
                }
                listener.finished();
            });
        }
        let r = pool.install(|| {
            let mut renders = render_clusters(
                tree.fs(),
                &cluster_roots,
                &clusters,
                cache,
                &ropts,
                &outside,
            );
            note_offline(&mut renders, tree.fs(), &files, &mappings);
            let helm = helm.as_ref().map(|h| {
                let helm_roots: Vec<(&Cluster, &SourceFs)> =
                    clusters.iter().zip(cluster_roots.iter().copied()).collect();
                helm_step(
                    &mut renders,
                    &helm_roots,
                    &outside,
                    cache,
                    opts,
                    &network,
                    h,
                )
            });
            (renders, helm)
        });
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let builder = builder
            .join()
            .unwrap_or_else(|_| cache.builder().describe());
        (r, builder)
    });
    let (mut renders, helm_summary) = renders;
    renders.sort_by(|a, b| a.name.cmp(&b.name));
    let facts = files.into_iter().filter(|(_, f)| !f.is_empty()).collect();
    Ok(RepoRender {
        builder,
        builder_stats: cache.builder().stats(),
        builds_run: cache.builds_run(),
        stored_hits: cache.stored_hits(),
        clusters: renders,
        tree,
        views: views.into_values().chain(revealed).collect(),
        facts,
        discovered,
        helm_summary,
        resourceset_summary: ropts.resourcesets.summary(),
        config,
    })
}

/// What each Kustomization that needs the network hides ([`crate::model::Offline::hides`]:
/// the Flux Kustomizations declared below its folder, read as discovery reads the tree, that
/// the cluster's render does not hold, matched by name since a build may set their
/// namespace), its note saying what its own files gave, and a note on each Kustomization
/// found through them.
fn note_offline(
    renders: &mut [crate::model::ClusterRender],
    fs: &SourceFs,
    files: &[(String, FileFacts)],
    mappings: &[SourceMapping],
) {
    for c in renders {
        let names: std::collections::BTreeSet<String> = c
            .kustomizations
            .iter()
            .map(|k| k.kustomization.id.name.clone())
            .collect();
        let offline: std::collections::BTreeSet<crate::flux::NamespacedName> = c
            .kustomizations
            .iter()
            .filter(|k| k.offline.is_some())
            .map(|k| k.kustomization.id.clone())
            .collect();
        for k in &mut c.kustomizations {
            if let Some(parent) = k.parent.as_ref().filter(|p| offline.contains(*p)) {
                k.notes
                    .push(crate::model::Note::FoundOffline(parent.to_string()));
            }
            let Some(o) = k.offline.as_mut() else {
                continue;
            };
            if let Some(dir) = &k.build_path {
                let below = crate::discover::kustomizations_below(fs, files, mappings, dir);
                let hidden: std::collections::BTreeSet<String> = below
                    .into_iter()
                    .map(|(_, id)| id.name)
                    .filter(|n| !names.contains(n))
                    .collect();
                o.hides = hidden.into_iter().collect();
            }
            let found = o.declared.as_ref().map(|objects| {
                let n = objects
                    .iter()
                    .filter(|x| crate::flux::is_kustomization(&x.object))
                    .count();
                (n, objects.len() - n)
            });
            // No Kustomization found and none hidden: nothing to say beyond its status (a
            // var source it declares says where it comes from).
            if !matches!(found, Ok((0, _))) || !o.hides.is_empty() {
                k.notes.push(crate::model::Note::DeclaredOffline {
                    left_out: o.left_out.len(),
                    found: found.map_err(Clone::clone),
                    hides: o.hides.clone(),
                });
            }
        }
    }
}

/// `--helm`: each cluster's HelmReleases templated and added as child artifacts; gives the
/// summary line.
fn helm_step(
    renders: &mut [crate::model::ClusterRender],
    roots: &[(&Cluster, &SourceFs)],
    outside: &crate::reconcile::sources::Outside,
    cache: &BuildCache<'_>,
    opts: &RepoOptions,
    network: &crate::net::Network,
    helm: &crate::helm::template::HelmBinary,
) -> String {
    let sources: Vec<crate::helm::ClusterSources<'_>> = roots
        .iter()
        .map(|(c, fs)| crate::helm::ClusterSources {
            cluster: c.name.clone(),
            own: c.root.source_ref.as_ref().map(|s| {
                (
                    crate::helm::release::SourceRef {
                        kind: s.kind.clone(),
                        namespace: s.namespace.clone(),
                        name: s.name.clone(),
                    },
                    *fs,
                )
            }),
        })
        .collect();
    let stats = crate::helm::HelmStats::default();
    let ctx = crate::helm::Context {
        helm,
        builder: cache.builder(),
        opts: opts.helm.as_ref().expect("helm_step runs with --helm"),
        config: &outside.config.helm_controller,
        store: opts.cache_dir.as_deref().map(Store::new),
        mapped: &outside.mapped,
        stats: &stats,
        network: network.clone(),
    };
    crate::helm::render_releases(renders, &sources, &ctx);
    crate::helm::summary(&ctx)
}
