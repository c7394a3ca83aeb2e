//! What pulling a source from its server gives ([`super::oci_source`], [`super::git_source`]),
//! read by [`super::remote_sources`].

/// What a pull gives: the tree, the reference it resolved (a tag, a branch), and what
/// names its content (a layer's digest, a commit).
pub(super) struct Pulled {
    pub(super) tree: crate::source::Tree,
    pub(super) reference: String,
    pub(super) content: String,
}

/// Why a source could not be had: the server (not compared), or the source itself, which
/// source-controller fails too.
pub(super) enum Missing {
    Unreached(String),
    Invalid(String),
}
