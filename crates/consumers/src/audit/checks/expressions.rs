//! FS101–FS104 and FS113: what each `${...}` of an object Flux substitutes does: fail to
//! parse, fail to evaluate, read an undefined var, act as a bash operator it is not, or
//! take a shell variable away from a script.

use std::collections::{BTreeMap, BTreeSet};

use crate::artifact::ArtifactObject;
use crate::audit::context::{finding_for, place_in, ClusterCtx, Occurrences};
use crate::audit::expr::{self, Ref};
use crate::audit::leaves::{string_leaves, Leaf};
use crate::audit::place::{Needle, Sources};
use crate::audit::rules::{
    BASH_OPERATOR, EVALUATION_FAILS, SHELL_VAR_IN_SCRIPT, UNDEFINED_VAR, UNSUPPORTED_EXPANSION,
};
use crate::finding::Severity;
use crate::model::KustomizationRender;

impl ClusterCtx<'_> {
    /// FS101–FS105 on an object Flux substitutes.
    pub(crate) fn audit_substituted(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        known: bool,
        used: &mut BTreeSet<String>,
        files: &mut Sources<'_>,
    ) {
        let leaves: Vec<Leaf> = string_leaves(&o.object)
            .into_iter()
            .filter(|l| l.value.contains("${"))
            .collect();
        // FS101: Flux parses the object's whole text (kustomize_varsub.go runs envsubst on
        // res.AsYAML()); what its parser rejects fails the Kustomization.
        let (_, errors) = expr::scan(&o.yaml);
        let mut blocking = !errors.is_empty();
        self.unparsable(k, o, &leaves, &errors, files);
        let strict = self.strict();
        let consequence = if strict {
            "the Kustomization fails (strict substitution, the default since \
             kustomize-controller v1.9.0, Flux v2.9)"
        } else {
            "Flux replaces it with an empty string (strict substitution is off)"
        };
        let mut seen = Occurrences::default();
        for leaf in &leaves {
            let (refs, _) = expr::scan(&leaf.value);
            for r in &refs {
                self.checks += 1;
                used.insert(r.name.clone());
                let needle = seen.next(&r.text);
                let verdict = classify(
                    r,
                    Context {
                        in_script: leaf.script,
                        defined: k.vars.contains_key(&r.name),
                        known,
                        strict,
                    },
                );
                let Some(v) = verdict else {
                    continue;
                };
                blocking |= v.blocks;
                let message = match v.why {
                    Why::ShellVar(how) => {
                        let what = match how {
                            ShellVar::Defaulted => {
                                "Flux replaces it with its default before the shell runs"
                                    .to_string()
                            }
                            ShellVar::MaybeInUnknownSource => format!(
                                "unless a source whose content is unknown defines `{}`, \
                                 {consequence}",
                                r.name
                            ),
                            ShellVar::DefinedNowhere => {
                                format!("`{}` is defined nowhere, so {consequence}", r.name)
                            }
                        };
                        format!(
                            "`{}` in a script in {} is substituted by Flux, not left to the \
                             shell: {what}; write `${}` for the shell",
                            r.text, o.id, r.text
                        )
                    }
                    Why::BashOperator => bash_operator_message(r, o),
                    Why::Undefined => format!(
                        "`{}` in {}: no source defines `{}` for this Kustomization, so \
                         {consequence}",
                        r.text, o.id, r.name
                    ),
                };
                let place = place_in(files, k, o, Some(needle));
                self.findings.push(
                    finding_for(&self.cluster.name, k, v.rule, message, place.location)
                        .with_severity(v.severity)
                        .about("var", r.name.clone())
                        .about("expression", r.text.clone())
                        .about("object", o.id.to_string()),
                );
            }
        }
        if errors.is_empty() {
            blocking |= self.check_evaluation(k, o, files);
        }
        if !blocking {
            self.check_types(k, o, &leaves, files);
        }
    }

    /// FS101: each expression Flux's parser rejects.
    fn unparsable(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        leaves: &[Leaf],
        errors: &[crate::envsubst::Error],
        files: &mut Sources<'_>,
    ) {
        let mut seen = Occurrences::default();
        for e in errors {
            self.checks += 1;
            let in_script = leaves.iter().any(|l| l.script && l.value.contains(&e.expr));
            let place = place_in(files, k, o, Some(seen.next(&e.expr)));
            let message = format!(
                "`{}` in {}: {}, so Flux fails the whole Kustomization ({}){}",
                e.expr,
                o.id,
                e.flux_message(),
                e.hint(),
                if in_script {
                    "; it sits in a script, so it is surely meant for the shell"
                } else {
                    ""
                }
            );
            self.findings.push(
                finding_for(
                    &self.cluster.name,
                    k,
                    &UNSUPPORTED_EXPANSION,
                    message,
                    place.location,
                )
                .about("expression", e.expr.clone())
                .about("object", o.id.to_string()),
            );
        }
    }

    /// FS113: evaluate the object's text as Flux does (undefined vars were judged above, so
    /// without strict mode); an expression that parses but fails to evaluate (Go panics on
    /// a negative substring length, fluxsim's size bound) fails the Kustomization. True when
    /// one does.
    fn check_evaluation(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        files: &mut Sources<'_>,
    ) -> bool {
        self.checks += 1;
        let values: BTreeMap<String, String> = k
            .vars
            .iter()
            .map(|(n, v)| (n.clone(), v.value.clone()))
            .collect();
        let Err(e) = crate::envsubst::eval(o.yaml.as_bytes(), &values, false) else {
            return false;
        };
        let place = place_in(
            files,
            k,
            o,
            Some(Needle {
                text: &e.expr,
                nth: 0,
                whole_word: false,
                code_only: false,
            }),
        );
        let message = format!(
            "`{}` in {}: {}, so Flux fails the whole Kustomization ({})",
            e.expr,
            o.id,
            e.flux_message(),
            e.hint()
        );
        self.findings.push(
            finding_for(
                &self.cluster.name,
                k,
                &EVALUATION_FAILS,
                message,
                place.location,
            )
            .about("expression", e.expr.clone())
            .about("object", o.id.to_string()),
        );
        true
    }
}

fn bash_operator_message(r: &Ref, o: &ArtifactObject) -> String {
    // envsubst/funcs.go maps `:?` and `:+` to toDefault, like `:-`.
    let bash = if r.op == ":?" {
        "bash would fail when it is unset or empty"
    } else {
        "bash would give the alternate value when it is set"
    };
    format!(
        "`{}` in {}: Flux reads `{}` as a plain default (the value of `{}`, or the default \
         when it is unset or empty); {bash}",
        r.text, o.id, r.op, r.name
    )
}

/// What is known about one `${...}` reference where it stands.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context {
    /// It sits in a script (cloud-init userData, `sh -c`, a script file in a ConfigMap).
    pub(crate) in_script: bool,
    /// Some source of the Kustomization defines the var.
    pub(crate) defined: bool,
    /// Every var source of the Kustomization is known (none is made at run time).
    pub(crate) known: bool,
    /// The cluster's kustomize-controller substitutes strictly (its gate, else its Flux
    /// version's default).
    pub(crate) strict: bool,
}

/// Why a reference is a hazard (the message is written from this and the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// FS104: a shell variable in a script that Flux substitutes first.
    ShellVar(ShellVar),
    /// FS102: `:?` or `:+`, which Flux treats as `:-`.
    BashOperator,
    /// FS103: no source defines it and it has no default.
    Undefined,
}

/// What Flux does to a shell variable in a script (FS104).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShellVar {
    /// It has a default, which Flux puts in before the shell runs.
    Defaulted,
    /// A source of unknown content may define it.
    MaybeInUnknownSource,
    /// Nothing defines it: emptied, or a strict-mode failure.
    DefinedNowhere,
}

/// The finding a reference makes: its rule, severity, why, and whether it fails the
/// Kustomization (so that the later checks, which need a substitution, are skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) rule: &'static crate::finding::Rule,
    pub(crate) severity: Severity,
    pub(crate) why: Why,
    pub(crate) blocks: bool,
}

/// FS102–FS104 for one reference that parses (FS101 is the parser's own verdict): a pure
/// function of the reference and what is known where it stands.
pub(crate) fn classify(r: &Ref, at: Context) -> Option<Verdict> {
    let verdict = |rule, severity, why, blocks| {
        Some(Verdict {
            rule,
            severity,
            why,
            blocks,
        })
    };
    // With a source of unknown content, an undefined var may be defined there: only names
    // that read as shell variables are still reported (FS104, a warning).
    let shell = expr::shell_looking(&r.name);
    if at.in_script && !at.defined && (!r.has_default || shell) && (at.known || shell) {
        // envsubst substitutes every `${...}`, in scripts too: only `$${` escapes.
        return if r.has_default {
            verdict(
                &SHELL_VAR_IN_SCRIPT,
                Severity::Warning,
                Why::ShellVar(ShellVar::Defaulted),
                false,
            )
        } else if !at.known {
            verdict(
                &SHELL_VAR_IN_SCRIPT,
                Severity::Warning,
                Why::ShellVar(ShellVar::MaybeInUnknownSource),
                false,
            )
        } else {
            verdict(
                &SHELL_VAR_IN_SCRIPT,
                Severity::Error,
                Why::ShellVar(ShellVar::DefinedNowhere),
                true,
            )
        };
    }
    // envsubst/funcs.go maps `:?` and `:+` to toDefault, like `:-`.
    if r.op == ":?" || r.op == ":+" {
        return verdict(&BASH_OPERATOR, Severity::Warning, Why::BashOperator, false);
    }
    // Strict substitution fails the Kustomization (an error); before Flux v2.9 (or with the
    // gate off) envsubst empties the value, which older repositories use for optional vars:
    // a warning (kustomize-controller internal/features/features.go).
    if !at.defined && !r.has_default && at.known {
        let severity = if at.strict {
            Severity::Error
        } else {
            Severity::Warning
        };
        return verdict(&UNDEFINED_VAR, severity, Why::Undefined, at.strict);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(text: &str) -> Ref {
        let (refs, errors) = expr::scan(text);
        assert!(errors.is_empty(), "{errors:?}");
        refs.into_iter().next().expect("one reference")
    }

    fn at(in_script: bool, defined: bool, known: bool) -> Context {
        Context {
            in_script,
            defined,
            known,
            strict: true,
        }
    }

    fn rule_and_why(v: Option<Verdict>) -> Option<(&'static str, Severity, Why, bool)> {
        v.map(|v| (v.rule.id, v.severity, v.why, v.blocks))
    }

    // kustomize_varsub.go runs envsubst over the whole object, scripts included: a shell
    // variable Flux knows nothing of is emptied (or fails strict mode) before the shell runs.
    #[test]
    fn a_shell_variable_in_a_script_is_fs104_by_what_flux_does_to_it() {
        let classify = |text: &str, ctx| rule_and_why(classify(&reference(text), ctx));
        assert_eq!(
            classify("${HOME}", at(true, false, true)),
            Some((
                "FS104",
                Severity::Error,
                Why::ShellVar(ShellVar::DefinedNowhere),
                true
            ))
        );
        assert_eq!(
            classify("${HOME:-/root}", at(true, false, true)),
            Some((
                "FS104",
                Severity::Warning,
                Why::ShellVar(ShellVar::Defaulted),
                false
            ))
        );
        assert_eq!(
            classify("${HOME}", at(true, false, false)),
            Some((
                "FS104",
                Severity::Warning,
                Why::ShellVar(ShellVar::MaybeInUnknownSource),
                false
            ))
        );
        // A cluster var in a script is what the author meant.
        assert_eq!(classify("${CLUSTER_NAME}", at(true, true, true)), None);
        // With an unknown source, an upper-case name that is no shell variable may be
        // defined there.
        assert_eq!(classify("${CLUSTER_DOMAIN}", at(true, false, false)), None);
    }

    // envsubst/funcs.go: `:?` and `:+` fall through to toDefault.
    #[test]
    fn colon_question_and_colon_plus_are_fs102_outside_scripts() {
        let r = reference("${A:?required}");
        assert_eq!(
            rule_and_why(classify(&r, at(false, true, true))),
            Some(("FS102", Severity::Warning, Why::BashOperator, false))
        );
    }

    // Strict mode (kustomize-controller >= v1.9.0) fails on an unset var without default.
    #[test]
    fn an_undefined_var_without_default_is_fs103_only_when_every_source_is_known() {
        let r = reference("${NOPE}");
        assert_eq!(
            rule_and_why(classify(&r, at(false, false, true))),
            Some(("FS103", Severity::Error, Why::Undefined, true))
        );
        assert_eq!(classify(&r, at(false, false, false)), None);
        assert_eq!(
            classify(&reference("${NOPE:=x}"), at(false, false, true)),
            None
        );
        assert_eq!(classify(&r, at(false, true, true)), None);
    }

    // kustomize-controller v1.7.3 internal/features/features.go: StrictPostBuildSubstitutions
    // off by default, so envsubst empties an unset var; on from v1.9.0.
    #[test]
    fn an_undefined_var_is_a_warning_where_the_cluster_substitutes_without_strict_mode() {
        let r = reference("${NOPE}");
        let lenient = Context {
            strict: false,
            ..at(false, false, true)
        };
        assert_eq!(
            rule_and_why(classify(&r, lenient)),
            Some(("FS103", Severity::Warning, Why::Undefined, false))
        );
    }
}
