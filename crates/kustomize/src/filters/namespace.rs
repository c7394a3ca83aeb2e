//! `namespace` (kustomize `api/filters/namespace`): the namespace of every namespaced
//! object, and the subjects of role bindings that name the default service account.

use super::fieldspec::{apply_path, Setter};
use crate::node::Node;
use crate::resource::{is_cluster_scoped, Resource};
use crate::NativeError;

/// The namespace transformer (`namespace.Filter` with the `namespace` field specs).
pub(crate) fn set_namespace(
    resources: &mut [Resource],
    namespace: &str,
    file: &str,
) -> Result<(), NativeError> {
    if namespace.is_empty() {
        return Ok(());
    }
    let in_file = |e: NativeError| match e {
        NativeError::Unsupported { feature, .. } => NativeError::unsupported(&feature, file),
        other @ (NativeError::Failed(_) | NativeError::Bound(_)) => other,
    };
    for r in resources.iter_mut() {
        let gvk = r.gvk();
        let cluster_scoped = is_cluster_scoped(&gvk);
        // Every resource remembers its id, moved or not (NamespaceTransformer.go).
        r.store_previous_id().map_err(in_file)?;
        // metaNamespaceHack: metadata/namespace, created, on namespaced kinds only.
        if !cluster_scoped {
            apply_path(
                &mut r.node,
                &["metadata", "namespace"],
                true,
                Setter::Scalar(namespace),
            )
            .map_err(|w| NativeError::unsupported(&w, file))?;
        }
        // roleBindingHack: subjects named `default` get the namespace.
        if gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding" {
            if let Some(Node::Seq(subjects)) =
                r.node.as_map_mut().and_then(|m| m.get_mut("subjects"))
            {
                for s in subjects {
                    if let Node::Map(m) = s {
                        if m.get("name") == Some(&Node::Str("default".into())) {
                            m.insert("namespace", Node::Str(namespace.to_string()));
                        }
                    }
                }
            }
        }
        if gvk.kind == "Namespace" {
            if gvk.group.is_empty() && gvk.version == "v1" {
                apply_path(
                    &mut r.node,
                    &["metadata", "name"],
                    true,
                    Setter::Scalar(namespace),
                )
                .map_err(|w| NativeError::unsupported(&w, file))?;
            } else {
                return Err(NativeError::unsupported(
                    "a Namespace that is not v1 under a namespace transformer",
                    file,
                ));
            }
        }
        if (gvk.group == "apiregistration.k8s.io" && gvk.kind == "APIService")
            || (gvk.group == "apiextensions.k8s.io" && gvk.kind == "CustomResourceDefinition")
        {
            if gvk.kind == "APIService" {
                return Err(NativeError::unsupported(
                    "an APIService under a namespace transformer",
                    file,
                ));
            }
            apply_path(
                &mut r.node,
                &[
                    "spec",
                    "conversion",
                    "webhook",
                    "clientConfig",
                    "service",
                    "namespace",
                ],
                false,
                Setter::Scalar(namespace),
            )
            .map_err(|w| NativeError::unsupported(&w, file))?;
        }
    }
    // NamespaceTransformer: the new namespace must not make two ids equal.
    for i in 0..resources.len() {
        for j in (i + 1)..resources.len() {
            if resources[i].same_id(&resources[j]) {
                return Err(NativeError::Failed(
                    "namespace transformation produces ID conflict".into(),
                ));
            }
        }
    }
    Ok(())
}
