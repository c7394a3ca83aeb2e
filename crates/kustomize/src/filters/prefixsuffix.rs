//! `namePrefix` and `nameSuffix` (kustomize `api/filters/prefixsuffix`).

use crate::node::Node;
use crate::resource::Resource;
use crate::NativeError;

/// `namePrefix` then `nameSuffix` (`PrefixTransformer`, `SuffixTransformer`):
/// `metadata/name` of every resource but CRDs, APIServices and Namespaces (by their original
/// kind, `prefixFieldSpecsToSkip`). Each renamed resource remembers its previous id and the
/// prefix or suffix it got: the name-reference pass at the end of the build follows them
/// (`nameref::fix_back_references`).
pub(crate) fn add_prefix_suffix(
    resources: &mut [Resource],
    prefix: &str,
    suffix: &str,
    file: &str,
) -> Result<(), NativeError> {
    if prefix.is_empty() && suffix.is_empty() {
        return Ok(());
    }
    // kustomize keeps them in a comma-separated annotation, which a comma would split.
    if prefix.contains(',') || suffix.contains(',') {
        return Err(NativeError::unsupported(
            "a name prefix or suffix with a comma",
            file,
        ));
    }
    let in_file = |e: NativeError| match e {
        NativeError::Unsupported { feature, .. } => NativeError::unsupported(&feature, file),
        other @ (NativeError::Failed(_) | NativeError::Bound(_)) => other,
    };
    for (affix, is_prefix) in [(prefix, true), (suffix, false)] {
        if affix.is_empty() {
            continue;
        }
        for r in resources.iter_mut() {
            let group = r.gvk().group;
            let kind = r.org_id().kind;
            let skip = kind == "CustomResourceDefinition"
                || kind == "Namespace"
                || (group == "apiregistration.k8s.io" && kind == "APIService");
            if skip {
                continue;
            }
            r.store_previous_id().map_err(in_file)?;
            let name = if is_prefix {
                r.prefixes.push(affix.to_string());
                format!("{affix}{}", r.name())
            } else {
                r.suffixes.push(affix.to_string());
                format!("{}{affix}", r.name())
            };
            if let Some(Node::Map(meta)) = r.node.as_map_mut().and_then(|m| m.get_mut("metadata")) {
                meta.insert("name", Node::Str(name));
            }
        }
    }
    for i in 0..resources.len() {
        for j in (i + 1)..resources.len() {
            if resources[i].same_id(&resources[j]) {
                return Err(NativeError::Failed(
                    "name prefix or suffix produces an ID conflict".into(),
                ));
            }
        }
    }
    Ok(())
}
