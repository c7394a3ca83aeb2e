//! A change to Kubernetes objects as a person reviews it (fluxsim issue 26).
pub mod escape;
pub mod keys;
pub mod path;
pub mod semantic;
pub mod strip;
