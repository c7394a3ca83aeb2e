//! The built-in transformers, one file each as in kustomize's `api/filters/*`, over the
//! field specs of [`super::konfig`].

mod annotations;
mod fieldspec;
mod imagetag;
mod labels;
mod nameref;
mod namespace;
mod patch;
mod prefixsuffix;
mod replacement;
mod replicacount;

pub(crate) use annotations::add_annotations;
pub(crate) use imagetag::set_images;
pub(crate) use labels::add_labels;
pub(crate) use nameref::{apply_hash_suffixes, fix_back_references};
pub(crate) use namespace::set_namespace;
pub(crate) use patch::apply_patch;
pub(crate) use prefixsuffix::add_prefix_suffix;
pub(crate) use replacement::apply_replacements;
pub(crate) use replicacount::set_replicas;
