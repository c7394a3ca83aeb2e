//! Findings: what the audit and the graph check report, each under a rule with a stable id,
//! a severity, and the source file and line it points at.
//!
//! The consumers (`audit`, `graph`) make findings; `report::findings` prints them as text,
//! JSON or SARIF 2.1.0.

use serde::Serialize;

/// The severity and the rule are kubeschema's (the lowest crate that grades findings): one
/// type each for every check fluxsim runs.
pub use kubeschema::{Rule, Severity};

/// A place in the user's repository.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Location {
    /// Path relative to the repository root, with `/` separators.
    pub file: String,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column (in characters), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Location {
    /// A whole file.
    #[must_use]
    pub fn file(file: impl Into<String>) -> Location {
        Location {
            file: file.into(),
            line: None,
            column: None,
        }
    }

    /// A line and column in a file.
    #[must_use]
    pub fn at(file: impl Into<String>, line: usize, column: usize) -> Location {
        Location {
            file: file.into(),
            line: Some(line),
            column: Some(column),
        }
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        Ok(())
    }
}

/// One thing a check found.
///
/// Two finding types exist on purpose: kubeschema's `Finding` names an object and a field
/// path (that crate sees no repository), this one a place in the repository; `validate.rs`
/// turns the first into this one. The severity and the rule are the same type in both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule's id.
    pub rule: &'static str,
    /// Severity (the rule's default unless the check raised or lowered it).
    pub severity: Severity,
    /// One sentence, naming the values involved in backticks.
    pub message: String,
    /// The cluster, when the finding belongs to one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The Flux Kustomization (`namespace/name`), when the finding belongs to one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kustomization: Option<String>,
    /// Where in the repository, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<Location>,
    /// What the finding is about, as data (the message says the same in words): the var,
    /// the expression, the object, the Kustomizations involved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
}

/// One thing a finding is about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Related {
    /// What it is: `var`, `expression`, `object`, `kustomization`, `source`, `cluster`,
    /// `namespace`, `kind`, `field`.
    pub role: &'static str,
    /// Its name or text (`CLUSTER_NAME`, `${A[0]}`, `ConfigMap/default/c`, `flux-system/apps`).
    pub value: String,
}

impl Finding {
    /// A finding under `rule` with the rule's default severity.
    #[must_use]
    pub fn new(rule: &Rule, message: impl Into<String>) -> Finding {
        Finding {
            rule: rule.id,
            severity: rule.severity,
            message: message.into(),
            cluster: None,
            kustomization: None,
            location: None,
            related: Vec::new(),
        }
    }

    /// Adds something the finding is about.
    #[must_use]
    pub fn about(mut self, role: &'static str, value: impl Into<String>) -> Finding {
        self.related.push(Related {
            role,
            value: value.into(),
        });
        self
    }

    /// Adds several things the finding is about, in one role.
    #[must_use]
    pub fn about_all(
        mut self,
        role: &'static str,
        values: impl IntoIterator<Item = impl Into<String>>,
    ) -> Finding {
        for v in values {
            self = self.about(role, v);
        }
        self
    }

    /// The values of the related things in `role`, in the order added.
    #[must_use]
    pub fn related(&self, role: &str) -> Vec<&str> {
        self.related
            .iter()
            .filter(|r| r.role == role)
            .map(|r| r.value.as_str())
            .collect()
    }

    /// Sets the cluster.
    #[must_use]
    pub fn in_cluster(mut self, cluster: impl Into<String>) -> Finding {
        self.cluster = Some(cluster.into());
        self
    }

    /// Sets the Kustomization.
    #[must_use]
    pub fn in_kustomization(mut self, ks: impl Into<String>) -> Finding {
        self.kustomization = Some(ks.into());
        self
    }

    /// Sets the location.
    #[must_use]
    pub fn at(mut self, location: Location) -> Finding {
        self.location = Some(location);
        self
    }

    /// Overrides the severity.
    #[must_use]
    pub fn with_severity(mut self, severity: Severity) -> Finding {
        self.severity = severity;
        self
    }

    /// The order findings are printed in: by file, line, column, rule, then message, so the
    /// output does not depend on discovery or thread order.
    #[must_use]
    pub fn sort_key(&self) -> impl Ord + '_ {
        (
            self.location.as_ref().map(|l| (&l.file, l.line, l.column)),
            self.cluster.as_deref(),
            self.kustomization.as_deref(),
            self.rule,
            &self.message,
        )
    }
}

/// Sorts findings into their printing order and drops exact duplicates (the same hazard seen
/// through two Kustomizations that build the same file is reported once per Kustomization, but
/// never twice for the same one).
pub fn normalize(findings: &mut Vec<Finding>) {
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    findings.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rule = Rule {
        id: "FS000",
        name: "test-rule",
        severity: Severity::Warning,
        summary: "A test rule.",
        help: "Nothing to do.",
    };

    #[test]
    fn severity_orders_info_below_warning_below_error() {
        assert!(Severity::Info < Severity::Warning);
        assert!(Severity::Warning < Severity::Error);
    }

    #[test]
    fn location_display_is_file_line_column() {
        assert_eq!(Location::at("a/b.yaml", 3, 7).to_string(), "a/b.yaml:3:7");
        assert_eq!(Location::file("a/b.yaml").to_string(), "a/b.yaml");
    }

    #[test]
    fn normalize_sorts_by_location_and_drops_duplicates() {
        let a = Finding::new(&R, "x").at(Location::at("b.yaml", 1, 1));
        let b = Finding::new(&R, "y").at(Location::at("a.yaml", 9, 1));
        let mut v = vec![a.clone(), b.clone(), a.clone()];
        normalize(&mut v);
        assert_eq!(v, vec![b, a]);
    }
}
