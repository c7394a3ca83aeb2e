//! Sources other than the repository, fetched when the network permits it (`--network
//! base-trusted` and the base revision names their URL, or `--network any`): the
//! OCIRepositories ([`super::oci_source`]) and GitRepositories ([`super::git_source`]) that
//! the cluster applies, each pulled once per render of a cluster and read as a tree the
//! Kustomizations on it are built from. Offline, or when the network does not permit one,
//! it stays external (not compared, saying why); what the source itself holds wrong (a
//! tarball entry that climbs, a missing layer) fails it, as source-controller fails it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::objects::World;
use super::pulled::Missing;
use super::trees::{Choice, PathMap, SourceTree};
use crate::flux::str_at;
use crate::net::Network;
use crate::source::mapping::SourceId;

/// The sources fetched in this render of a cluster, by what decides their content (the
/// object's URL, reference, layer selector, ignore rules): each is fetched once, whatever
/// the rounds of the fixed point.
#[derive(Debug, Default)]
pub(super) struct Fetched {
    by_spec: BTreeMap<String, Choice>,
}

/// The tree (or why there is none) of every OCIRepository and GitRepository of `world` that `skip` does not
/// leave out (the cluster's own source, one mapped to a folder), when the network reaches
/// anything at all; nothing otherwise (they stay external).
pub(super) fn fetch_sources(
    world: &World,
    skip: &dyn Fn(&SourceId) -> bool,
    network: &Network,
    store: Option<&crate::store::Store>,
    fetched: &mut Fetched,
) -> BTreeMap<SourceId, Choice> {
    let mut out = BTreeMap::new();
    if !network.reaches() {
        return out;
    }
    for (id, placed) in &world.objects {
        let fetchable = matches!(id.kind.as_str(), "OCIRepository" | "GitRepository");
        if !fetchable || id.group != "source.toolkit.fluxcd.io" {
            continue;
        }
        let sid = SourceId {
            kind: id.kind.clone(),
            namespace: id.namespace.clone(),
            name: id.name.clone(),
        };
        if skip(&sid) {
            continue;
        }
        let obj = &placed.object;
        let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
        let key = serde_json::json!([
            spec.get("url"),
            id.kind,
            spec.get("ref"),
            spec.get("layerSelector"),
            spec.get("ignore"),
            spec.get("insecure"),
        ])
        .to_string();
        let choice = fetched
            .by_spec
            .entry(key.clone())
            .or_insert_with(|| fetch_one(&sid, obj, &key, network, store))
            .clone();
        out.insert(sid, choice);
    }
    out
}

fn fetch_one(
    sid: &SourceId,
    obj: &Value,
    key: &str,
    network: &Network,
    store: Option<&crate::store::Store>,
) -> Choice {
    let url = str_at(obj, &["spec", "url"]).unwrap_or_default();
    if let Err(refusal) = network.permits(url) {
        return Choice::External(refusal.to_string());
    }
    let pulled = if sid.kind == "GitRepository" {
        super::git_source::pull(obj, url, network)
    } else {
        super::oci_source::pull(obj, url, network, store)
    };
    match pulled {
        Ok(p) => Choice::Tree(Arc::new(SourceTree::made(
            format!("fetched {key} {}", p.content),
            p.tree,
            PathMap::Outside,
            format!("{sid} {url} at {} ({})", p.reference, p.content),
        ))),
        Err(Missing::Unreached(e)) => Choice::External(format!("{url}: not fetched: {e}")),
        Err(Missing::Invalid(e)) => Choice::Failed(format!("{url}: {e}")),
    }
}
