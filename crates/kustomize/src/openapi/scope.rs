//! Which kinds kustomize takes as cluster-scoped (`kyaml/openapi/openapi.go`
//! `IsCertainlyClusterScoped`, which `kyaml/resid/gvk.go` `NewGvk` asks for every id).
//!
//! kyaml answers from two places, in this order:
//!
//! 1. `precomputedIsNamespaceScoped`: the 82 kinds the paths of the built-in Kubernetes
//!    v1.21.2 schema serve (36 cluster-scoped, NodeProxyOptions among them), a fixed table
//!    that kyaml's `TestIsNamespaceScopedPrecompute` keeps equal to what `findNamespaceability`
//!    makes of those paths. No schema changes these answers: a custom path serving a Node in
//!    a namespace leaves it cluster-scoped, one serving Deployments without leaves them
//!    namespaced;
//! 2. `namespaceabilityByResourceType`, filled by `findNamespaceability` from the `paths` of
//!    every schema parsed: the `get` operation of each path names a kind
//!    (`x-kubernetes-group-version-kind`); a path with `namespaces/{namespace}` in it makes
//!    the kind namespaced, overwriting what was there, and a path without one makes it
//!    cluster-scoped only if the kind has no entry yet. So, whatever the order the Go maps
//!    are walked in, a kind is namespaced when any path says so, and cluster-scoped when
//!    paths name it but none of them with a namespace;
//!
//! and a kind neither names is not certainly cluster-scoped: namespaced for kustomize.
//!
//! Flux parses the built-in schema before each build (`resetOpenAPIWithBuiltins`, see
//! [`super`]) and a custom schema's paths are added to that map; `kustomize build` parses the
//! custom schema alone. Every kind the built-in paths name is answered by the precomputed
//! table first, so the two agree: a custom schema's paths decide the scope of the other kinds
//! (custom resources, kinds of newer Kubernetes versions) only.
//!
//! `scope-v1.21.2.txt` is that table (`apiVersion kind cluster|namespaced`), dumped from
//! kyaml v0.21.1's own parse of its `swagger.pb` (`FromGnostic`, then the walk of
//! `findNamespaceability`) and checked equal to `precomputedIsNamespaceScoped`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `precomputedIsNamespaceScoped`: `apiVersion kind` to namespaced or not.
fn builtin() -> &'static BTreeMap<String, bool> {
    static MAP: OnceLock<BTreeMap<String, bool>> = OnceLock::new();
    MAP.get_or_init(|| {
        include_str!("scope-v1.21.2.txt")
            .lines()
            .filter_map(|line| {
                let (type_meta, scope) = line.rsplit_once(' ')?;
                Some((type_meta.to_string(), scope == "namespaced"))
            })
            .collect()
    })
}

/// What the `paths` of one schema say (`findNamespaceability` over them alone): `apiVersion
/// kind` to namespaced or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PathScopes {
    by_type: BTreeMap<String, bool>,
}

impl PathScopes {
    /// Records one `get` operation's kind at `path`.
    pub(crate) fn add(&mut self, path: &str, type_meta: String) {
        let namespaced = path.contains("namespaces/{namespace}");
        let entry = self.by_type.entry(type_meta).or_insert(namespaced);
        *entry |= namespaced;
    }

    /// Whether the paths name no kind (then they change nothing).
    pub(crate) fn is_empty(&self) -> bool {
        self.by_type.is_empty()
    }

    /// `IsNamespaceScoped`: the precomputed answer, else these paths'.
    fn namespaced(&self, type_meta: &str) -> Option<bool> {
        builtin()
            .get(type_meta)
            .or_else(|| self.by_type.get(type_meta))
            .copied()
    }
}

thread_local! {
    /// The custom paths of the build running on this thread (kyaml's map is the process's;
    /// a native build runs on one thread and installs its own with [`BuildScope`]).
    static CUSTOM: RefCell<Option<PathScopes>> = const { RefCell::new(None) };
}

/// Holds one build's scope answers on this thread: the built-in ones on entry, a root custom
/// schema's paths once [`BuildScope::set_custom`] adds them; what was there before is put back
/// on drop.
pub(crate) struct BuildScope {
    previous: Option<PathScopes>,
}

impl BuildScope {
    /// Starts a build: the built-in answers only (Flux's reset, then its preload).
    pub(crate) fn enter() -> BuildScope {
        BuildScope {
            previous: CUSTOM.with(|c| c.borrow_mut().take()),
        }
    }
}

/// Adds a custom schema's paths to the answers of the build on this thread (within a
/// [`BuildScope`]), for the rest of it.
pub(crate) fn set_custom_paths(scopes: PathScopes) {
    CUSTOM.with(|c| *c.borrow_mut() = Some(scopes));
}

impl Drop for BuildScope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CUSTOM.with(|c| *c.borrow_mut() = previous);
    }
}

/// `IsCertainlyClusterScoped` of `apiVersion kind` for the build on this thread.
pub(crate) fn is_certainly_cluster_scoped(api_version: &str, kind: &str) -> bool {
    let type_meta = format!("{api_version} {kind}");
    CUSTOM.with(|c| {
        let custom = c.borrow();
        let none = PathScopes::default();
        custom.as_ref().unwrap_or(&none).namespaced(&type_meta) == Some(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(paths: &[(&str, &str)]) -> PathScopes {
        let mut s = PathScopes::default();
        for (path, t) in paths {
            s.add(path, (*t).to_string());
        }
        s
    }

    // kyaml/openapi/openapi.go IsNamespaceScoped over the built-in v1.21.2 paths.
    #[test]
    fn built_in_paths_make_kyamls_cluster_scoped_kinds() {
        let none = PathScopes::default();
        let cluster: Vec<&String> = builtin()
            .keys()
            .filter(|t| none.namespaced(t) == Some(false))
            .collect();
        assert_eq!(cluster.len(), 36, "{cluster:#?}");
        assert_eq!(none.namespaced("v1 NodeProxyOptions"), Some(false));
        assert_eq!(none.namespaced("apps/v1 Deployment"), Some(true));
        assert_eq!(none.namespaced("example.com/v1 Thing"), None);
    }

    // kyaml/openapi/openapi.go IsNamespaceScoped (precomputedIsNamespaceScoped first) and
    // findNamespaceability (a namespaced path wins whatever the order).
    #[test]
    fn custom_paths_set_the_scope_of_kinds_the_built_in_paths_do_not_serve() {
        let s = scopes(&[
            ("/apis/example.com/v1/things", "example.com/v1 Thing"),
            ("/apis/example.com/v1/both", "example.com/v1 Both"),
            (
                "/apis/example.com/v1/namespaces/{namespace}/both",
                "example.com/v1 Both",
            ),
            ("/apis/apps/v1/deployments", "apps/v1 Deployment"),
            ("/api/v1/namespaces/{namespace}/nodes", "v1 Node"),
            (
                "/apis/apiextensions.k8s.io/v1/namespaces/{namespace}/crds",
                "apiextensions.k8s.io/v1 CustomResourceDefinition",
            ),
            ("/api/v1/secrets", "v1 Secret"),
        ]);
        assert_eq!(s.namespaced("example.com/v1 Thing"), Some(false));
        assert_eq!(s.namespaced("example.com/v1 Both"), Some(true));
        assert_eq!(s.namespaced("apps/v1 Deployment"), Some(true));
        assert_eq!(s.namespaced("v1 Node"), Some(false));
        assert_eq!(
            s.namespaced("apiextensions.k8s.io/v1 CustomResourceDefinition"),
            Some(false)
        );
        assert_eq!(s.namespaced("v1 Secret"), Some(true));
        assert_eq!(s.namespaced("v1 Namespace"), Some(false));
    }

    #[test]
    fn a_build_scope_is_put_back_when_the_build_ends() {
        assert!(!is_certainly_cluster_scoped("example.com/v1", "Thing"));
        {
            let _scope = BuildScope::enter();
            set_custom_paths(scopes(&[(
                "/apis/example.com/v1/things",
                "example.com/v1 Thing",
            )]));
            assert!(is_certainly_cluster_scoped("example.com/v1", "Thing"));
        }
        assert!(!is_certainly_cluster_scoped("example.com/v1", "Thing"));
        assert!(is_certainly_cluster_scoped("v1", "Namespace"));
    }
}
