//! postBuild substitution of one resource, as kustomize-controller does it.

pub mod yaml_json;
