//! `replicas` (kustomize `api/filters/replicacount`).

use crate::node::{Map, Node};
use crate::resource::Resource;
use crate::NativeError;

/// The `replicas:` transformer (`ReplicaCountTransformer`): `spec/replicas` of the
/// Deployments, StatefulSets, ReplicaSets and ReplicationControllers named so (by any of
/// their ids). An existing value keeps its type (`SetScalar` keeps the tag: `"1"` becomes
/// `"3"`); a missing one is created as an integer.
pub(crate) fn set_replicas(
    resources: &mut [Resource],
    name: &str,
    count: i64,
    file: &str,
) -> Result<(), NativeError> {
    const KINDS: [&str; 4] = [
        "Deployment",
        "StatefulSet",
        "ReplicaSet",
        "ReplicationController",
    ];
    let mut found = false;
    for r in resources.iter_mut() {
        if !r.has_any_name(name, &KINDS) {
            continue;
        }
        found = true;
        let Some(Node::Map(top)) = Some(&mut r.node) else {
            continue;
        };
        if top.get("spec").is_none() {
            top.0.push(("spec".into(), Node::Map(Map::default())));
        }
        let Some(Node::Map(spec)) = top.get_mut("spec") else {
            return Err(NativeError::unsupported(
                "a spec that is not a mapping",
                file,
            ));
        };
        let value = match spec.get("replicas") {
            None | Some(Node::Null | Node::Int(_) | Node::Uint(_)) => Node::Int(count),
            Some(Node::Str(_)) => Node::Str(count.to_string()),
            Some(_) => {
                return Err(NativeError::unsupported(
                    "a spec.replicas that is not an integer or a string",
                    file,
                ))
            }
        };
        spec.insert("replicas", value);
    }
    if !found {
        return Err(NativeError::Failed(format!(
            "resource with name {name} does not match a config with the following GVK \
             [Deployment StatefulSet ReplicaSet ReplicationController]"
        )));
    }
    Ok(())
}
