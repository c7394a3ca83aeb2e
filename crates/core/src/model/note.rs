//! What a render says about a Kustomization besides its status: typed, so that a reader
//! asks what a note is (`Note::BuiltFrom`) instead of matching its words; printed as the
//! sentence a person reads ([`fmt::Display`], the same text in every report and in JSON).

use std::fmt;

use serde::{Deserialize, Serialize};

/// One note on a Kustomization's render.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Note {
    /// `spec.suspend: true`: Flux applies nothing from it.
    Suspended,
    /// Built from another tree than the cluster's own GitRepository (a mapped source, an
    /// ExternalArtifact), named by its label.
    BuiltFrom(String),
    /// Var sources no render can know offline (each with why: made at run time by whom),
    /// and the vars whose placeholders stand for their values.
    VarsUnknown {
        /// Why each source is unknown (`Secret/ns/name is made at run time by ...`).
        whence: Vec<String>,
        /// The vars placeheld, each in backticks; empty when none is missing.
        placeholders: Vec<String>,
    },
    /// An encrypted source on the cluster whose vars were taken from its declaration in
    /// fluxsim.toml instead.
    EncryptedSourceDeclared {
        /// The source (`Kind/namespace/name`).
        source: String,
        /// Where the encrypted object comes from.
        on_cluster: String,
        /// Where the declaration is.
        declared: String,
    },
    /// An `optional` source found nowhere: skipped, as Flux skips it.
    OptionalSourceMissing {
        /// The source (`Kind/namespace/name`).
        source: String,
    },
    /// A SOPS-encrypted source: its vars are placeholders.
    EncryptedSource {
        /// The source (`Kind/namespace/name`).
        source: String,
    },
    /// A source several files of the repository define; the one closest to the cluster's
    /// folder was taken.
    SourceInManyFiles {
        /// The source (`Kind/namespace/name`).
        source: String,
        /// How many files define it.
        files: usize,
        /// The file taken.
        taken: String,
        /// The others, sorted.
        others: Vec<String>,
    },
    /// The root's folder, applied by hand at bootstrap, did not build: its objects are not
    /// on the cluster.
    BootstrapNotBuilt {
        /// The folder.
        folder: String,
        /// Why (the build's error, or the status).
        why: String,
    },
    /// A `dependsOn` that never becomes Ready; rendered anyway (the steady state).
    Dependency {
        /// The dependency (`namespace/name`).
        dependency: String,
        /// What became of it.
        state: DependencyState,
    },
    /// A member of a `dependsOn` cycle, with the cycle from it back to it.
    DependencyCycle(Vec<String>),
    /// An object with a top-level `items` list: kustomize-controller reads it back as a List
    /// and applies its items in its place; fluxsim shows the object as built.
    ReadBackAsList(String),
    /// An object the controller's read-back leaves out (the object, why).
    NotApplied {
        /// The object (`Kind/namespace/name`).
        object: String,
        /// Why it is not applied (`it has no name`).
        why: String,
    },
    /// A Helm release entry: the release, its namespace, the chart and its digest.
    HelmRelease {
        /// The release's name.
        release: String,
        /// Its namespace.
        namespace: String,
        /// The chart, as the entry names it.
        chart: String,
        /// The chart's SHA-256 (the first 12 digits shown).
        digest: String,
        /// The chart's `name` in its `Chart.yaml` (empty when it has none).
        #[serde(default)]
        chart_name: String,
        /// The chart's `version` in its `Chart.yaml` (empty when it has none).
        #[serde(default)]
        chart_version: String,
    },
    /// A HelmRelease's `spec.commonMetadata`, which fluxsim does not apply.
    HelmCommonMetadataIgnored,
    /// A ResourceSetInputProvider that needs a service took its inputs from fluxsim.toml.
    ResourceSetSampleInputs {
        /// The provider (`namespace/name`).
        provider: String,
        /// Its `spec.type`.
        provider_type: String,
        /// The `[[resourceset.inputs]]` entry that gave them.
        from: String,
    },
    /// A ResourceSetInputProvider that needs a service, with no inputs in fluxsim.toml:
    /// placeholders of the fields its type exports stood in.
    ResourceSetPlaceholderInputs {
        /// The provider (`namespace/name`).
        provider: String,
        /// Its `spec.type`.
        provider_type: String,
    },
    /// The ResourceSet's template may read `inputs.provider` of inputs that fluxsim combined
    /// (the CLI gives them the ResourceSet's own provider metadata).
    ResourceSetProviderMetadata {
        /// The providers whose inputs fluxsim combined.
        providers: Vec<String>,
    },
    /// A `fluxcd.controlplane.io/copyFrom` source that no object of the render is: the
    /// object is shown as templated.
    CopyFromNotInRender {
        /// The object that copies (`Kind/namespace/name`).
        object: String,
        /// The source (`Kind/namespace/name`).
        source: String,
    },
    /// A `fluxcd.controlplane.io/checksumFrom` reference that no object of the render is:
    /// the checksum is not set.
    ChecksumFromNotInRender {
        /// The reference (`Kind/namespace/name`).
        reference: String,
    },
    /// A Kustomization that needs the network: what its own files declare, read with its
    /// remote entries left out (`model::Offline`).
    DeclaredOffline {
        /// How many remote entries were left out.
        left_out: usize,
        /// How many Flux Kustomizations its own files declare and how many other objects the
        /// cluster reads (sources, ConfigMaps, Secrets), or why they could not be built.
        // String: the build's error as the note shows it; a Note is a value of the model (Clone,
        // Eq, serialized), which the pipeline's error types are not.
        found: Result<(usize, usize), String>,
        /// The Flux Kustomizations declared below it that the render does not hold (names,
        /// sorted).
        hides: Vec<String>,
    },
    /// Applied by a Kustomization that needs the network (`namespace/name`): found in its
    /// own files, read with its remote entries left out.
    FoundOffline(String),
    /// An annotation the operator acts on with the cluster's objects that fluxsim does not
    /// reproduce.
    ResourceSetNotReproduced {
        /// The object (`Kind/namespace/name`).
        object: String,
        /// The annotation.
        what: String,
    },
}

/// What became of a dependency that never becomes Ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DependencyState {
    /// No Kustomization of the cluster defines it.
    Missing,
    /// It failed.
    Failed,
    /// It did not render.
    NotRendered,
    /// It is suspended.
    Suspended,
}

impl fmt::Display for DependencyState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DependencyState::Missing => "is defined by no Kustomization of this cluster",
            DependencyState::Failed => "failed",
            DependencyState::NotRendered => "did not render",
            DependencyState::Suspended => "is suspended",
        })
    }
}

impl fmt::Display for Note {
    #[allow(clippy::too_many_lines)] // One sentence per note, read top to bottom.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Suspended => f.write_str(
                "suspended (spec.suspend: true): Flux applies nothing from it; the cluster keeps \
                 what it last applied, unknown offline, so it is not compared",
            ),
            Note::BuiltFrom(label) => write!(f, "built from {label}"),
            Note::VarsUnknown {
                whence,
                placeholders,
            } => {
                write!(f, "vars unknown offline: {}; ", whence.join(", "))?;
                if placeholders.is_empty() {
                    f.write_str("no var its objects reference is missing")
                } else {
                    write!(f, "placeholders stand for {}", placeholders.join(", "))
                }
            }
            Note::EncryptedSourceDeclared {
                source,
                on_cluster,
                declared,
            } => write!(
                f,
                "vars of SOPS-encrypted {source} ({on_cluster}) taken from {declared}"
            ),
            Note::OptionalSourceMissing { source } => write!(
                f,
                "optional {source} is on no cluster object and in no file: skipped"
            ),
            Note::EncryptedSource { source } => write!(
                f,
                "vars from SOPS-encrypted {source} are unknown offline: placeholders used"
            ),
            Note::SourceInManyFiles {
                source,
                files,
                taken,
                others,
            } => write!(
                f,
                "{source}: {files} files define it; took `{taken}` (closest to the cluster's \
                 folder), not {}",
                others
                    .iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Note::BootstrapNotBuilt { folder, why } => write!(
                f,
                "the root's folder `{folder}`, applied by hand at bootstrap, could not be built \
                 ({why}): its objects are not counted as on the cluster"
            ),
            Note::Dependency { dependency, state } => write!(
                f,
                "dependency `{dependency}` {state}: rendered anyway (the steady state; `fluxsim \
                 graph` shows that it never becomes Ready on a cluster)"
            ),
            Note::DependencyCycle(cycle) => write!(
                f,
                "on a dependency cycle: {} (rendered anyway; Flux never reconciles it, `fluxsim \
                 graph` reports FS201)",
                cycle.join(" -> ")
            ),
            Note::ReadBackAsList(object) => write!(
                f,
                "{object} has a top-level `items` list: kustomize-controller reads it back as a \
                 List and applies its items in its place (ssautil.ReadObjects), as fluxsim \
                 shows them"
            ),
            Note::NotApplied { object, why } => write!(
                f,
                "{object} is not applied: {why} (kustomize-controller reads the build back with \
                 ssautil.ReadObjects, which leaves out what is not a Kubernetes object)"
            ),
            Note::HelmRelease {
                release,
                namespace,
                chart,
                digest,
                ..
            } => write!(
                f,
                "release {release} in namespace {namespace}, chart {chart} (sha256 {})",
                &digest[..12.min(digest.len())]
            ),
            Note::HelmCommonMetadataIgnored => f.write_str(
                "spec.commonMetadata is not applied by fluxsim: its labels and annotations are \
                 missing from the release's objects",
            ),
            Note::ResourceSetSampleInputs {
                provider,
                provider_type,
                from,
            } => write!(
                f,
                "inputs of {provider_type} provider {provider} taken from fluxsim.toml \
                 ({from}): samples, not what the service returns"
            ),
            Note::ResourceSetPlaceholderInputs {
                provider,
                provider_type,
            } => write!(
                f,
                "placeholder inputs for {provider_type} provider {provider} (it needs a \
                 service; give sample inputs with [[resourceset.inputs]] in fluxsim.toml)"
            ),
            Note::ResourceSetProviderMetadata { providers } => write!(
                f,
                "the template may read `inputs.provider`: for the inputs of {} fluxsim hands \
                 flux-operator build rset the combined inputs, which it gives the \
                 ResourceSet's own provider metadata, so what reads it may differ from the \
                 operator's render",
                providers.join(", ")
            ),
            Note::CopyFromNotInRender { object, source } => write!(
                f,
                "{object} copies its data from {source} (fluxcd.controlplane.io/copyFrom), \
                 which is not in the render: shown as templated (declare it with \
                 [[bootstrap.objects]] in fluxsim.toml)"
            ),
            Note::ChecksumFromNotInRender { reference } => write!(
                f,
                "fluxcd.controlplane.io/checksumFrom names {reference}, which is not in the \
                 render: its checksum annotation is not set"
            ),
            Note::DeclaredOffline {
                left_out,
                found,
                hides,
            } => {
                let entries = if *left_out == 1 {
                    "its remote entry".to_string()
                } else {
                    format!("its {left_out} remote entries")
                };
                match found {
                    Ok((n, others)) => {
                        let others = match others {
                            0 => String::new(),
                            1 => " and 1 other object the cluster reads (a source, ConfigMap or \
                                  Secret)"
                                .to_string(),
                            m => format!(
                                " and {m} other objects the cluster reads (sources, ConfigMaps, \
                                 Secrets)"
                            ),
                        };
                        write!(
                            f,
                            "its own files, read with {entries} left out, declare {}{others}, \
                             taken as this cluster's (this presumes the remote entries declare \
                             no Flux object and change none)",
                            crate::text::plural(*n, "Kustomization")
                        )?;
                    }
                    Err(why) => write!(
                        f,
                        "its own files could not be built with {entries} left out ({why}): \
                         nothing they declare is rendered"
                    )?,
                }
                if !hides.is_empty() {
                    write!(
                        f,
                        "; it hides {} declared below it: {}",
                        crate::text::plural(hides.len(), "Kustomization"),
                        names_cut(hides, 5)
                    )?;
                }
                Ok(())
            }
            Note::FoundOffline(parent) => write!(
                f,
                "applied by {parent}, which needs the network: found in its own files, read \
                 with its remote entries left out (this presumes they change nothing of this \
                 Kustomization)"
            ),
            Note::ResourceSetNotReproduced { object, what } => write!(
                f,
                "{object}: {what} reads the cluster and is not reproduced by fluxsim: shown as \
                 templated"
            ),
        }
    }
}

/// The first `keep` names, each in backticks, and how many more.
fn names_cut(names: &[String], keep: usize) -> String {
    let shown: Vec<String> = names.iter().take(keep).map(|n| format!("`{n}`")).collect();
    match names.len().saturating_sub(keep) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// Serializes notes as the sentences people read (the render's JSON).
pub(crate) fn as_text<S: serde::Serializer>(notes: &[Note], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(notes.iter().map(ToString::to_string))
}
