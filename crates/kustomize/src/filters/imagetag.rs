//! `images` (kustomize `api/filters/imagetag`): name, newName, newTag in every container
//! list.

use crate::node::Node;
use crate::resource::Resource;
use crate::NativeError;

/// The `images:` transformer (`api/filters/imagetag`): kustomize first walks every
/// `containers` / `initContainers` list anywhere in a resource but a CRD (`legacy.go`), then
/// its image field specs, which reach nothing the walk did not (and the update is
/// idempotent). Digests are not reproduced.
pub(crate) fn set_images(
    resources: &mut [Resource],
    image: &crate::kustfile::ImageSpec,
    file: &str,
) -> Result<(), NativeError> {
    let pattern = regex::Regex::new(&format!(
        "^{}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$",
        image.name
    ))
    .map_err(|_| {
        NativeError::unsupported("an image name that is not a regular expression", file)
    })?;
    for r in resources.iter_mut() {
        if r.kind() == "CustomResourceDefinition" {
            continue;
        }
        walk_containers(&mut r.node, &mut |value: &mut Node| {
            let Node::Str(s) = value else {
                return Err("an image that is not a string".to_string());
            };
            if !pattern.is_match(s) {
                return Ok(());
            }
            *s = new_image(s, image)?;
            Ok(())
        })
        .map_err(|w| NativeError::unsupported(&w, file))?;
    }
    Ok(())
}

/// `findFieldsFilter.walk` with `checkImageTagsFn`: every `image` of every element of a
/// `containers` or `initContainers` list, depth first.
// The callback's String is the refusal's reason, wrapped in `Unsupported` by the walk.
fn walk_containers(
    node: &mut Node,
    f: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), crate::Unsupported> {
    match node {
        Node::Map(m) => {
            for (key, value) in &mut m.0 {
                walk_containers(value, f)?;
                if key == "containers" || key == "initContainers" {
                    if let Node::Seq(items) = value {
                        for item in items {
                            if let Some(image) = item.as_map_mut().and_then(|c| c.get_mut("image"))
                            {
                                f(image)?;
                            }
                        }
                    }
                }
            }
            Ok(())
        }
        Node::Seq(items) => items.iter_mut().try_for_each(|i| walk_containers(i, f)),
        _ => Ok(()),
    }
}

/// `imageTagUpdater.SetImageValue` for an image without a digest (`image.Split`).
fn new_image(
    value: &str,
    image: &crate::kustfile::ImageSpec,
) -> Result<String, crate::Unsupported> {
    if value.contains('@') {
        return Err("an image with a digest".into());
    }
    let slash = value.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &value[slash..];
    if search.matches(':').count() > 1 {
        return Err("an image with several tags".into());
    }
    let (mut name, mut tag) = match search.find(':') {
        Some(i) => (
            value[..slash + i].to_string(),
            value[slash + i + 1..].to_string(),
        ),
        None => (value.to_string(), String::new()),
    };
    if let Some(n) = &image.new_name {
        name.clone_from(n);
    }
    if let Some(t) = &image.new_tag {
        tag.clone_from(t);
    }
    if !tag.is_empty() {
        name.push(':');
        name.push_str(&tag);
    }
    Ok(name)
}
