//! What can stop a ResourceSet's render: a field the API server's schema would refuse, the
//! controller's refusal of its inputs, the operator's refusal at apply time, and fluxsim's
//! own bounds and printing. The words are the controller's where it has them (Display is
//! what a failed entry's status says).

//!
//! It imports nothing of the modules whose errors it words (they all return it): the
//! annotation, kind and bound each message names are fields.

/// How a message says that one of fluxsim's own bounds was passed (not the controller's).
pub const COMBINED_BOUND_WORDS: &str = "more than fluxsim's bound of";

/// A label selector (`metav1.LabelSelector`) that cannot be read (apimachinery's
/// `LabelSelectorAsSelector` refuses it; the words are fluxsim's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("failed to parse selector: {0}")]
pub struct SelectorError(pub(crate) String);

/// Why a ResourceSet cannot be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ResourceSetError {
    /// The object has no `metadata.name`.
    #[error("a ResourceSet without metadata.name")]
    NoName,
    /// A field of the object is not of the schema's shape.
    #[error("{field} {reason}")]
    Field {
        /// The field's path (`spec.inputs`).
        field: String,
        /// What is wrong with it (`is not a list`).
        reason: &'static str,
    },
    /// `spec.inputsFrom` names a provider the cluster does not hold.
    #[error(
        "failed to compute inputs: failed to get provider {namespace}/{name}: \
         {kind}.fluxcd.controlplane.io \"{name}\" not found"
    )]
    ProviderNotFound {
        /// The provider kind.
        kind: &'static str,
        /// The ResourceSet's namespace, where the provider is looked up.
        namespace: String,
        /// The provider's name.
        name: String,
    },
    /// A `spec.inputsFrom` selector that cannot be read.
    #[error("failed to compute inputs: {0}")]
    Selector(#[from] SelectorError),
    /// A `spec.inputsFrom` entry with neither `name` nor `selector`.
    #[error(
        "failed to compute inputs: input provider reference must have either name or \
         selector set"
    )]
    NoProviderRef,
    /// `spec.inputStrategy.name` is neither `Flatten` nor `Permute`.
    #[error("failed to compute inputs: unknown input strategy: '{0}'")]
    UnknownStrategy(String),
    /// Permute would make more combinations than the controller allows.
    #[error(
        "failed to compute inputs: failed to get inputs from {kind}/{name}: adding provider \
         '{name}' with {inputs} inputs would exceed the maximum allowed permutations. max: \
         {max}, got: {got}"
    )]
    TooManyPermutations {
        /// The source's kind (`ResourceSet` or the provider kind).
        kind: &'static str,
        /// The source's name.
        name: String,
        /// How many inputs it has.
        inputs: usize,
        /// The controller's bound.
        max: u64,
        /// The combinations with it.
        got: u64,
    },
    /// Permute of a provider whose name normalizes to nothing.
    #[error(
        "failed to compute inputs: failed to get inputs from {kind}/{name}: normalized \
         provider name is empty: '{name}'"
    )]
    EmptyProviderName {
        /// The source's kind.
        kind: &'static str,
        /// The source's name.
        name: String,
    },
    /// The combined inputs of one ResourceSet are past fluxsim's bound.
    #[error(
        "failed to compute inputs: its {combinations} input sets would hold {} MiB, \
         {COMBINED_BOUND_WORDS} {} MiB a ResourceSet",
        .bytes >> 20,
        .max >> 20
    )]
    TooLarge {
        /// The bound, in bytes.
        max: u64,
        /// How many input sets.
        combinations: u128,
        /// The bytes (as JSON) they would hold.
        bytes: u128,
    },
    /// The combined inputs of every ResourceSet of the run are past fluxsim's bound.
    #[error(
        "failed to compute inputs: with the run's other ResourceSets, its input sets would \
         make {} MiB, {COMBINED_BOUND_WORDS} {} MiB a run",
        .total >> 20,
        .max >> 20
    )]
    RunTooLarge {
        /// The bound, in bytes.
        max: u64,
        /// The run's bytes with this ResourceSet's.
        total: u64,
    },
    /// A bound was passed with the sample inputs of `fluxsim.toml`.
    #[error(
        "{0} (with the sample inputs of {file}'s [[resourceset.inputs]])",
        file = crate::config::CONFIG_FILE
    )]
    WithSamples(Box<ResourceSetError>),
    /// A `copyFrom` annotation that is not `namespace/name`.
    #[error(
        "invalid {annotation} annotation value '{value}' must be in the format \
         'namespace/name'"
    )]
    CopyFrom {
        /// The annotation's key.
        annotation: &'static str,
        /// Its value.
        value: String,
    },
    /// A `checksumFrom` reference that is not `Kind/namespace/name`.
    #[error(
        "invalid {annotation} reference '{reference}' must be in the format \
         'Kind/namespace/name'"
    )]
    ChecksumRef {
        /// The annotation's key.
        annotation: &'static str,
        /// The reference.
        reference: String,
    },
    /// A `checksumFrom` reference to a kind other than ConfigMap and Secret.
    #[error("unsupported kind '{kind}' in {annotation}, only ConfigMap and Secret are allowed")]
    ChecksumKind {
        /// The annotation's key.
        annotation: &'static str,
        /// The kind referenced.
        kind: String,
    },
    /// A checksum source whose base64 data cannot be decoded.
    #[error("failed to decode base64 in {object} {field}[{key:?}]: {source}")]
    Base64 {
        /// `Kind/namespace/name`.
        object: String,
        /// `data` or `binaryData`.
        field: &'static str,
        /// The key.
        key: String,
        /// The decoder's error.
        source: base64::DecodeError,
    },
    /// What `flux-operator build rset` printed is not YAML objects.
    #[error("reading what flux-operator build rset printed: {0}")]
    Printed(#[source] crate::manifest::ParseError),
    /// The objects, printed by a kustomize build, are not an artifact.
    #[error(transparent)]
    Artifact(#[from] crate::manifest::ParseError),
    /// The scratch folder of the print could not be made.
    #[error("making a scratch folder: {0}")]
    Scratch(#[source] std::io::Error),
    /// A file of the print could not be written.
    #[error("writing {name}: {source}")]
    Write {
        /// The file.
        name: String,
        /// The error.
        source: std::io::Error,
    },
    /// The kustomize build that prints the objects failed (its words, temporary paths
    /// scrubbed).
    #[error("printing the generated objects: {0}")]
    Print(String),
}

impl ResourceSetError {
    /// Whether this is a stop at one of fluxsim's bounds on combined inputs.
    #[must_use]
    pub fn is_bound(&self) -> bool {
        matches!(self, Self::TooLarge { .. } | Self::RunTooLarge { .. })
    }
}
