//! JSON 6902 patch operations, as evanphx/json-patch v4 applies them to a resource.

use crate::node::{Map, Node};

pub(super) enum OpError {
    Unsupported(String),
    Failed(String),
}

fn failed(s: &str) -> OpError {
    OpError::Failed(s.to_string())
}

/// Splits a JSON pointer (`/a/b~1c`) into its tokens.
fn pointer(path: &str) -> Result<Vec<String>, OpError> {
    if path.is_empty() {
        return Err(OpError::Unsupported(
            "a JSON 6902 operation on the root".into(),
        ));
    }
    let Some(rest) = path.strip_prefix('/') else {
        return Err(failed("a JSON pointer must start with /"));
    };
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn parent_mut<'n>(root: &'n mut Node, tokens: &[String]) -> Result<&'n mut Node, OpError> {
    let mut n = root;
    for t in tokens {
        n = match n {
            Node::Map(m) => m.get_mut(t).ok_or_else(|| failed("missing path"))?,
            Node::Seq(items) => {
                let i = index(t, items.len(), false)?;
                items
                    .get_mut(i)
                    .ok_or_else(|| failed("index out of range"))?
            }
            _ => return Err(failed("path through a scalar")),
        };
    }
    Ok(n)
}

fn index(token: &str, len: usize, allow_end: bool) -> Result<usize, OpError> {
    if token == "-" && allow_end {
        return Ok(len);
    }
    if token.is_empty()
        || !token.bytes().all(|c| c.is_ascii_digit())
        || (token.len() > 1 && token.starts_with('0'))
    {
        return Err(OpError::Unsupported(format!(
            "the JSON pointer index `{token}`"
        )));
    }
    let i: usize = token.parse().map_err(|_| failed("bad index"))?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if i > max || (!allow_end && len == 0) {
        return Err(failed("index out of range"));
    }
    Ok(i)
}

fn get<'n>(root: &'n Node, tokens: &[String]) -> Result<&'n Node, OpError> {
    let mut n = root;
    for t in tokens {
        n = match n {
            Node::Map(m) => m.get(t).ok_or_else(|| failed("missing path"))?,
            Node::Seq(items) => items
                .get(index(t, items.len(), false)?)
                .ok_or_else(|| failed("index out of range"))?,
            _ => return Err(failed("path through a scalar")),
        };
    }
    Ok(n)
}

fn add(root: &mut Node, tokens: &[String], value: Node) -> Result<(), OpError> {
    let (last, parents) = tokens.split_last().ok_or_else(|| failed("empty path"))?;
    match parent_mut(root, parents)? {
        Node::Map(m) => {
            m.insert(last, value);
            Ok(())
        }
        Node::Seq(items) => {
            let i = index(last, items.len(), true)?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err(failed("add to a scalar")),
    }
}

fn remove(root: &mut Node, tokens: &[String]) -> Result<Node, OpError> {
    let (last, parents) = tokens.split_last().ok_or_else(|| failed("empty path"))?;
    match parent_mut(root, parents)? {
        Node::Map(m) => m.remove(last).ok_or_else(|| failed("missing key")),
        Node::Seq(items) => {
            let i = index(last, items.len(), false)?;
            Ok(items.remove(i))
        }
        _ => Err(failed("remove from a scalar")),
    }
}

/// One JSON 6902 operation, as evanphx/json-patch v4 applies it: no parent is created, but
/// `replace` of a missing object key sets it (`partialDoc.get` finds nothing without error).
/// During a build every resource carries kustomize's internal annotations, so
/// `metadata.annotations` exists even when the file has none.
pub(super) fn apply_op(root: &mut Node, op: &Node) -> Result<(), OpError> {
    let Node::Map(m) = op else {
        return Err(failed("an operation that is not an object"));
    };
    let kind = m
        .get("op")
        .and_then(Node::as_str)
        .ok_or_else(|| failed("missing op"))?;
    let path = m
        .get("path")
        .and_then(Node::as_str)
        .ok_or_else(|| failed("missing path"))?;
    let tokens = pointer(path)?;
    let value = || {
        m.get("value")
            .cloned()
            .ok_or_else(|| failed("missing value"))
    };
    let touches_annotations =
        |t: &[String]| t.len() >= 2 && t[0] == "metadata" && t[1] == "annotations";
    if touches_annotations(&tokens) {
        if !matches!(kind, "add" | "replace" | "remove") || tokens.len() == 2 && kind != "remove" {
            return Err(OpError::Unsupported(
                "a JSON 6902 operation on metadata.annotations as a whole".into(),
            ));
        }
        if let Some(Node::Map(meta)) = root.as_map_mut().and_then(|r| r.get_mut("metadata")) {
            if meta.get("annotations").is_none() && tokens.len() > 2 {
                meta.0
                    .push(("annotations".into(), Node::Map(Map::default())));
            }
        }
    }
    match kind {
        "add" => add(root, &tokens, value()?),
        "remove" => {
            if tokens.len() == 2 && touches_annotations(&tokens) {
                // The internal annotations make it exist; removing it drops the user's too.
                if let Some(Node::Map(meta)) = root.as_map_mut().and_then(|r| r.get_mut("metadata"))
                {
                    meta.remove("annotations");
                }
                return Ok(());
            }
            remove(root, &tokens).map(|_| ())
        }
        "replace" => {
            let v = value()?;
            let (last, parents) = tokens.split_last().ok_or_else(|| failed("empty path"))?;
            match parent_mut(root, parents)? {
                Node::Map(pm) => {
                    pm.insert(last, v);
                    Ok(())
                }
                Node::Seq(items) => {
                    let i = index(last, items.len(), false)?;
                    items[i] = v;
                    Ok(())
                }
                _ => Err(failed("replace in a scalar")),
            }
        }
        "move" | "copy" => {
            let from = m
                .get("from")
                .and_then(Node::as_str)
                .ok_or_else(|| failed("missing from"))?;
            let from = pointer(from)?;
            if touches_annotations(&from) {
                return Err(OpError::Unsupported(
                    "a JSON 6902 move or copy from metadata.annotations".into(),
                ));
            }
            // A missing source key reads as nothing in v4: not reproduced.
            let v = get(root, &from)
                .map_err(|_| {
                    OpError::Unsupported("a JSON 6902 move or copy from a missing path".into())
                })?
                .clone();
            if kind == "move" {
                remove(root, &from)?;
            }
            add(root, &tokens, v)
        }
        "test" => Err(OpError::Unsupported("a JSON 6902 test operation".into())),
        other => Err(failed(&format!("unknown op {other}"))),
    }
}
