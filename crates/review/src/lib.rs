//! A change to Kubernetes objects as a person reviews it (fluxsim issue 26).
pub mod analysis;
pub mod escape;
pub mod html;
pub mod json;
pub mod keys;
pub mod lines;
pub mod markdown;
pub mod model;
pub mod path;
pub mod semantic;
pub mod strip;
pub mod text;
pub mod yaml;
