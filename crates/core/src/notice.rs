//! What the pipeline says while it works — how far a render is, and warnings for people —
//! said to a [`Listener`] the caller gives in the options. The pipeline never prints: the
//! binary owns the one listener that does (a spinner on a terminal, warnings on stderr).

use std::fmt;
use std::time::Duration;

/// Who hears the pipeline while it works.
pub trait Listener: Send + Sync + fmt::Debug {
    /// Whether the render's progress is wanted at all; when it is, [`Listener::progress`]
    /// is called about ten times a second while a render runs, then [`Listener::finished`].
    fn wants_progress(&self) -> bool {
        false
    }

    /// How far the render is.
    fn progress(&self, _now: &Progress) {}

    /// The render is over: whatever showed its progress can go.
    fn finished(&self) {}

    /// A warning for people (a tool of another version than Flux's, ...). The same warning
    /// may come more than once in a run; it is worth saying once.
    fn warn(&self, _message: &str) {}
}

/// Hears nothing: the default, for tests and library callers.
#[derive(Debug, Default, Clone, Copy)]
pub struct Quiet;

impl Listener for Quiet {}

/// How far a render is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Clusters being rendered.
    pub clusters: usize,
    /// Kustomizations rendered so far.
    pub rendered: usize,
    /// Kustomizations the clusters are known to apply so far: it grows while the fixed
    /// point finds Kustomizations applied by others.
    pub found: usize,
    /// Builds run so far.
    pub builds_run: usize,
    /// Builds read from the persistent cache so far.
    pub stored_hits: usize,
    /// Time since the render started.
    pub elapsed: Duration,
}
