//! The audit's rules: stable ids `FS1xx`, never reused for another check.

use crate::finding::{Rule, Severity};

/// A Kustomization the audit could not look at (its build failed, or it never reconciled).
/// An error: a build that fails fails the reconcile (kustomize-controller
/// `internal/controller/kustomization_controller.go`, the `build` step), so the audit never
/// passes over it.
pub const NOT_AUDITED: Rule = Rule {
    id: "FS100",
    name: "not-audited",
    severity: Severity::Error,
    summary: "A Kustomization could not be built, so its substitutions were not audited.",
    help: "Fix the error `fluxsim render` reports for it, then audit again.",
};

/// `${A[0]}`, `${A+x}`, `${@}` ...: what Flux's envsubst parser rejects.
pub const UNSUPPORTED_EXPANSION: Rule = Rule {
    id: "FS101",
    name: "unsupported-expansion",
    severity: Severity::Error,
    summary: "An expression Flux's envsubst cannot parse: the whole Kustomization fails.",
    help: "Write `$${...}` to leave the expression to a shell, or use a form Flux supports \
           (`${VAR}`, `${VAR:-default}`, `${VAR:=default}` ...).",
};

/// `${A:?x}` and `${A:+x}` parse but are plain defaults in Flux.
pub const BASH_OPERATOR: Rule = Rule {
    id: "FS102",
    name: "bash-operator-is-a-default",
    severity: Severity::Warning,
    summary: "`${VAR:?msg}` or `${VAR:+alt}`: Flux treats both as `${VAR:-...}`, not as bash \
              does.",
    help: "Write `${VAR:-default}` if a default is meant: Flux never fails on `:?` and never \
           returns the alternate value of `:+` for a set var.",
};

/// A var referenced without a default that no source defines.
pub const UNDEFINED_VAR: Rule = Rule {
    id: "FS103",
    name: "undefined-var",
    severity: Severity::Error,
    summary: "A var is referenced without a default and no source defines it: the \
              Kustomization fails under strict substitution, or the value is emptied silently \
              without it.",
    help: "Define the var in `postBuild.substitute` or a `substituteFrom` source, give it a \
           default (`${VAR:=value}`), or write `$${VAR}` for a literal.",
};

/// A shell variable in a script that Flux substitutes.
pub const SHELL_VAR_IN_SCRIPT: Rule = Rule {
    id: "FS104",
    name: "shell-var-in-script",
    severity: Severity::Warning,
    summary: "A shell-looking `${var}` in a script (cloud-init userData, a script in a \
              ConfigMap or Secret, a container command) that is not a cluster var: Flux \
              substitutes it before the shell ever sees it.",
    help: "Write `$${var}` so that Flux leaves `${var}` to the shell.",
};

/// A value that changes a scalar's type or breaks the YAML once substituted.
pub const TYPE_CHANGE: Rule = Rule {
    id: "FS105",
    name: "substitution-changes-type",
    severity: Severity::Warning,
    summary: "Once substituted, a value changes the type of its scalar (YAML 1.1 reads `on`, \
              `yes`, `010` ... as booleans and octal numbers) or breaks the document.",
    help: "kustomize prints `\"${VAR}\"` without its quotes, so quoting the template does not \
           help: quote the value itself (`VAR: '\"on\"'`) or wrap the reference, e.g. \
           `${quote}${VAR}${quote}` with an inline `quote: '\"'`.",
};

/// `${...}` in a path whose Kustomization does not substitute: it ships verbatim.
pub const VERBATIM_LITERAL: Rule = Rule {
    id: "FS106",
    name: "ships-verbatim",
    severity: Severity::Warning,
    summary: "`${...}` in a Kustomization that does not substitute (no postBuild, or no var \
              defined): it ships verbatim (a warning when it names one of the cluster's vars, \
              which says Flux was meant to substitute it; else a note).",
    help: "Add `spec.postBuild` to the Kustomization if the reference is meant for Flux; \
           otherwise nothing to do (a `$${VAR}` escape, though, also ships as it is).",
};

/// `${...}` in an object with substitution disabled: it ships verbatim, by design.
pub const SUBSTITUTION_DISABLED: Rule = Rule {
    id: "FS107",
    name: "substitution-disabled",
    severity: Severity::Info,
    summary: "`${...}` in an object annotated `kustomize.toolkit.fluxcd.io/substitute: \
              disabled`: it ships verbatim, by design.",
    help: "Nothing to do if that is what is meant.",
};

/// A var name Flux rejects.
pub const INVALID_VAR_NAME: Rule = Rule {
    id: "FS108",
    name: "invalid-var-name",
    severity: Severity::Error,
    summary: "A var name that does not match `^[_[:alpha:]][_[:alpha:][:digit:]]*$`: Flux \
              fails every Kustomization that receives it.",
    help: "Rename the key (letters, digits and `_`, not starting with a digit).",
};

/// A var defined but referenced by no Kustomization that receives it.
pub const UNUSED_VAR: Rule = Rule {
    id: "FS109",
    name: "unused-var",
    severity: Severity::Info,
    summary: "A var is defined but no Kustomization that receives it references it.",
    help: "Remove it, or check the spelling of the references.",
};

/// A value of another cluster shipping as a literal.
pub const OTHER_CLUSTER_LITERAL: Rule = Rule {
    id: "FS110",
    name: "other-cluster-value",
    severity: Severity::Warning,
    summary: "A var's value in another cluster appears as a literal in this cluster's render \
              (a dev address shipping to prod; never in a comment). An error when the literal \
              is specific to that cluster: an IP address or network, a host name (or a URL's \
              host), or a value no other cluster's vars or templates use as a word; else a \
              warning (a common name may be meant).",
    help: "Replace the literal with a reference to the var; if the value is meant (a name \
           both clusters use), nothing to do.",
};

/// A substituteFrom source whose values are SOPS-encrypted.
pub const ENCRYPTED_SOURCE: Rule = Rule {
    id: "FS111",
    name: "encrypted-var-source",
    severity: Severity::Info,
    summary: "A substituteFrom source is SOPS-encrypted: its values cannot be checked offline.",
    help: "Nothing to do; checks that need the values (types, cross-cluster literals) skip its \
           vars.",
};

/// A substituteFrom source that is not in the repository's render.
pub const UNKNOWN_SOURCE: Rule = Rule {
    id: "FS112",
    name: "unknown-var-source",
    severity: Severity::Info,
    summary: "A substituteFrom source is applied by nothing in the repository (an \
              ExternalSecret's Secret, say): its vars are unknown, so undefined vars are not \
              reported for the Kustomizations that read it.",
    help: "Nothing to do if something else creates it on the cluster; a non-optional source \
           that nothing creates fails the Kustomization (see `fluxsim render`).",
};

/// An expression that parses but that Flux's evaluation cannot complete.
pub const EVALUATION_FAILS: Rule = Rule {
    id: "FS113",
    name: "evaluation-fails",
    severity: Severity::Error,
    summary: "An expression Flux's envsubst parses but cannot evaluate: a substring whose \
              offset plus length wraps past the largest integer \
              (`${VAR:1:9223372036854775807}`) panics in Flux's Go code, and a value that grows \
              an object past fluxsim's bound cannot be applied: the whole Kustomization fails.",
    help: "Give `${VAR:offset:length}` a length that fits (a negative one counts back from the \
           end), or write `$${...}` to leave it to a shell.",
};

/// A `${...}` of a HelmRelease's values that reaches the release's manifests verbatim
/// (`audit --helm`).
pub const HELM_VALUE_VERBATIM: Rule = Rule {
    id: "FS114",
    name: "helm-value-ships-verbatim",
    severity: Severity::Warning,
    summary: "A `${...}` in a HelmRelease's values (spec.values or a valuesFrom ConfigMap or \
              Secret) reaches the objects helm-controller installs as it is: the Kustomization \
              that applies the HelmRelease does not substitute it.",
    help: "Add `spec.postBuild` to that Kustomization if the reference is meant for Flux; a \
           `$${VAR}` escape (reported as info) ships on purpose.",
};

/// Every audit rule, in id order (the SARIF driver lists them in this order).
pub const RULES: &[Rule] = &[
    NOT_AUDITED,
    UNSUPPORTED_EXPANSION,
    BASH_OPERATOR,
    UNDEFINED_VAR,
    SHELL_VAR_IN_SCRIPT,
    TYPE_CHANGE,
    VERBATIM_LITERAL,
    SUBSTITUTION_DISABLED,
    INVALID_VAR_NAME,
    UNUSED_VAR,
    OTHER_CLUSTER_LITERAL,
    ENCRYPTED_SOURCE,
    UNKNOWN_SOURCE,
    EVALUATION_FAILS,
    HELM_VALUE_VERBATIM,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_sorted_and_fs1xx() {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted);
        assert!(ids.iter().all(|id| id.starts_with("FS1") && id.len() == 5));
    }
}
