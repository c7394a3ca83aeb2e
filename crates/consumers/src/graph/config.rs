//! What the graph check reads of `fluxsim.toml` (read once, by `config`): what makes a CRD
//! the manifests do not show exist — a controller that registers it once an object is
//! reconciled (`[[runtime_crds]]`), or a Helm chart (`[[helm_crds]]`).

use crate::config::{Config, KindRef, RuntimeCrd};

/// What makes a declared CRD exist: an object a controller reconciles, or a Helm chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger<'a> {
    /// `[[runtime_crds]]`: once an object of this kind is reconciled.
    Object(&'a KindRef),
    /// `[[helm_crds]]`: once a `HelmRelease` of this chart is installed.
    Chart(&'a str),
}

impl Trigger<'_> {
    /// The trigger as a noun: `` `KubeVirt.kubevirt.io` `` or
    /// `` HelmRelease of chart `cert-manager` ``.
    #[must_use]
    pub fn noun(&self) -> String {
        match self {
            Trigger::Object(t) if t.group.is_empty() => format!("`{}`", t.kind),
            Trigger::Object(t) => format!("`{}.{}`", t.kind, t.group),
            Trigger::Chart(c) => format!("HelmRelease of chart `{c}`"),
        }
    }

    /// How the CRD comes to exist, after "a CRD that".
    #[must_use]
    pub fn makes(&self) -> String {
        match self {
            Trigger::Object(_) => format!(
                "the controller registers once a {} is reconciled",
                self.noun()
            ),
            Trigger::Chart(_) => format!(
                "helm-controller installs with a {} (fluxsim.toml, or read from the chart with --helm)",
                self.noun()
            ),
        }
    }
}

/// The CRD triggers `fluxsim.toml` declares.
pub trait Triggers {
    /// The runtime entry that defines `group`/`kind`, if any.
    fn runtime_crd(&self, group: &str, kind: &str) -> Option<&RuntimeCrd>;

    /// What the config says makes `group`/`kind` exist: a `[[runtime_crds]]` entry first,
    /// then a `[[helm_crds]]` one.
    fn trigger(&self, group: &str, kind: &str) -> Option<Trigger<'_>>;
}

impl Triggers for Config {
    fn runtime_crd(&self, group: &str, kind: &str) -> Option<&RuntimeCrd> {
        self.runtime_crds
            .iter()
            .find(|r| r.group == group && r.kinds.iter().any(|k| k == kind))
    }

    fn trigger(&self, group: &str, kind: &str) -> Option<Trigger<'_>> {
        self.runtime_crd(group, kind)
            .map(|r| Trigger::Object(&r.created_by))
            .or_else(|| {
                self.helm_crds
                    .iter()
                    .find(|h| h.groups.iter().any(|g| g == group))
                    .map(|h| Trigger::Chart(h.chart.as_str()))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, crate::config::ConfigError> {
        Config::parse(text, "fluxsim.toml")
    }

    #[test]
    fn runtime_crds_parse_with_created_by() {
        let c = parse(
            "[[runtime_crds]]\ngroup = \"w.example.io\"\nkinds = [\"Widget\"]\n\
             created_by = { group = \"op.example.io\", kind = \"Operator\" }\n",
        )
        .unwrap();
        let r = c.runtime_crd("w.example.io", "Widget").unwrap();
        assert_eq!(r.created_by.kind, "Operator");
        assert!(c.runtime_crd("w.example.io", "Other").is_none());
    }

    #[test]
    fn unknown_key_in_runtime_crds_is_an_error_with_its_line() {
        let e = parse(
            "[[runtime_crds]]\ngroup = \"g\"\nkinds = [\"K\"]\ncreated_by = { kind = \"T\" }\ncreatedBy = 1\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 5, "{e:?}");
        assert!(e.message.contains("createdBy"), "{e:?}");
    }

    #[test]
    fn helm_crds_parse_and_runtime_crds_win() {
        let c = parse("[[helm_crds]]\nchart = \"cert-manager\"\ngroups = [\"cert-manager.io\"]\n")
            .unwrap();
        assert_eq!(
            c.trigger("cert-manager.io", "ClusterIssuer"),
            Some(Trigger::Chart("cert-manager"))
        );
        assert_eq!(c.trigger("acme.cert-manager.io", "Order"), None);
        let e = parse("[[helm_crds]]\nchart = \"x\"\ngroups = []\n").unwrap_err();
        assert_eq!(e.line, 1, "{e:?}");
    }

    #[test]
    fn bootstrap_crd_groups_parse_and_unknown_keys_are_errors() {
        let c = parse("[bootstrap]\ncrd_groups = [\"cilium.io\"]\n").unwrap();
        assert_eq!(c.bootstrap.crd_groups, ["cilium.io"]);
        let e = parse("[bootstrap]\ncrds = []\n").unwrap_err();
        assert_eq!(e.line, 2, "{e:?}");
    }

    #[test]
    fn other_tables_are_left_alone() {
        let c = parse("[audit]\nignore = [\"FS101\"]\n").unwrap();
        assert!(c.runtime_crds.is_empty());
    }
}
