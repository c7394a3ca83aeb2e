//! Which kinds kustomize takes as cluster-scoped (`kyaml/openapi/openapi.go`
//! `IsCertainlyClusterScoped`, which `kyaml/resid/gvk.go` `NewGvk` asks for every id).
//!
//! kyaml answers from three places, in this order:
//!
//! 1. `precomputedIsNamespaceScoped`, a fixed table of 13 kinds (the webhook configurations
//!    and CustomResourceDefinitions cluster-scoped; Secret, Service and a few others
//!    namespaced) that no schema changes;
//! 2. `namespaceabilityByResourceType`, filled by `findNamespaceability` from the `paths` of
//!    every schema parsed: the `get` operation of each path names a kind
//!    (`x-kubernetes-group-version-kind`); a path with `namespaces/{namespace}` in it makes
//!    the kind namespaced, overwriting what was there, and a path without one makes it
//!    cluster-scoped only if the kind has no entry yet. So, whatever the order the Go maps
//!    are walked in, a kind is namespaced when any path of any schema parsed says so, and
//!    cluster-scoped when paths name it but none of them with a namespace;
//! 3. a kind no path names is not certainly cluster-scoped: namespaced for kustomize.
//!
//! Flux parses the built-in Kubernetes v1.21.2 schema before each build
//! (`resetOpenAPIWithBuiltins`, see [`super`]), then a custom schema adds its paths to the
//! same map: a custom path can make a kind cluster-scoped only if the built-in paths do not
//! name it (a custom resource). By `findNamespaceability` a custom namespaced path would also
//! make a built-in cluster-scoped kind (a Node; not the precomputed ones) namespaced, but
//! Flux's own build was measured keeping a Node cluster-scoped there: that case is refused
//! (see [`PathScopes::namespaced_built_in_cluster_kind`]) until it is understood. `kustomize build` parses the
//! custom schema alone, so the built-in answers are lost there: the two agree only on kinds
//! the built-in paths do not name, and on the precomputed ones.
//!
//! `scope-v1.21.2.txt` is the built-in map (`apiVersion kind cluster|namespaced`), dumped
//! from kyaml v0.21.1's own parse of its `swagger.pb` (`FromGnostic`, then the walk of
//! `findNamespaceability`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// `precomputedIsNamespaceScoped` (kyaml v0.21.1): `apiVersion kind`, namespaced or not.
const PRECOMPUTED: &[(&str, bool)] = &[
    (
        "admissionregistration.k8s.io/v1 MutatingWebhookConfiguration",
        false,
    ),
    (
        "admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration",
        false,
    ),
    (
        "admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration",
        false,
    ),
    (
        "admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration",
        false,
    ),
    ("apiextensions.k8s.io/v1 CustomResourceDefinition", false),
    (
        "apiextensions.k8s.io/v1beta1 CustomResourceDefinition",
        false,
    ),
    ("v1 PodTemplate", true),
    ("v1 ReplicationController", true),
    ("v1 ResourceQuota", true),
    ("v1 Secret", true),
    ("v1 Service", true),
    ("v1 ServiceAccount", true),
    ("v1 ServiceProxyOptions", true),
];

/// The built-in map: `apiVersion kind` to namespaced or not.
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

    /// A kind the built-in paths make cluster-scoped and these name with a namespace. By
    /// `findNamespaceability` alone it would turn namespaced; Flux's own build (fluxcd/pkg
    /// kustomize v1.39.0 `SecureBuild`) keeps a Node cluster-scoped under such a path, for a
    /// reason not pinned down yet, so the native builder refuses it rather than guess.
    pub(crate) fn namespaced_built_in_cluster_kind(&self) -> Option<&str> {
        self.by_type
            .iter()
            .find(|(t, ns)| {
                **ns
                    && builtin().get(t.as_str()) == Some(&false)
                    && !PRECOMPUTED.iter().any(|(p, _)| p == t)
            })
            .map(|(t, _)| t.as_str())
    }

    /// Whether the paths name no kind (then they change nothing).
    pub(crate) fn is_empty(&self) -> bool {
        self.by_type.is_empty()
    }

    /// `IsNamespaceScoped` over the built-in map with these paths added to it.
    fn namespaced(&self, type_meta: &str) -> Option<bool> {
        if let Some((_, ns)) = PRECOMPUTED.iter().find(|(t, _)| *t == type_meta) {
            return Some(*ns);
        }
        match (builtin().get(type_meta), self.by_type.get(type_meta)) {
            (Some(a), Some(b)) => Some(*a || *b),
            (a, b) => a.or(b).copied(),
        }
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

    // kyaml/openapi/openapi.go findNamespaceability: a namespaced path wins whatever the
    // order; a cluster path names a kind only the built-in paths do not; precomputed first.
    #[test]
    fn custom_paths_add_to_the_built_in_scopes_as_flux_preloads_them() {
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
        // Refused by the builder: Flux's own build keeps Node cluster-scoped here.
        assert_eq!(s.namespaced_built_in_cluster_kind(), Some("v1 Node"));
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
