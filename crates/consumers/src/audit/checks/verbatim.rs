//! FS106 and FS107: `${...}` in an object Flux does not substitute ships verbatim.

use crate::artifact::ArtifactObject;
use crate::audit::context::{finding_for, place_in, ClusterCtx};
use crate::audit::expr;
use crate::audit::leaves::string_leaves;
use crate::audit::place::{Needle, Sources};
use crate::audit::rules::{SUBSTITUTION_DISABLED, VERBATIM_LITERAL};
use crate::finding::Severity;
use crate::model::KustomizationRender;

impl ClusterCtx<'_> {
    /// FS106 / FS107: an object Flux does not substitute, with `${...}` in it (FS107 when it
    /// says so itself with the `substitute: disabled` annotation or label).
    pub(crate) fn audit_verbatim(
        &mut self,
        k: &KustomizationRender,
        o: &ArtifactObject,
        disabled: bool,
        files: &mut Sources<'_>,
    ) {
        self.checks += 1;
        let snippets = expr::literal_snippets(&o.yaml);
        let Some(first) = snippets.first() else {
            return;
        };
        let listed = crate::audit::list_names(snippets.iter().map(String::as_str), 3);
        let ks = &k.kustomization;
        let (rule, severity, why) = if disabled {
            (
                &SUBSTITUTION_DISABLED,
                Severity::Info,
                "it is labelled or annotated `kustomize.toolkit.fluxcd.io/substitute: \
                 disabled`"
                    .to_string(),
            )
        } else {
            // What the shell wants when every reference sits in a script: only worth knowing.
            let leaves = string_leaves(&o.object);
            let all_script = leaves
                .iter()
                .filter(|l| l.value.contains("${"))
                .all(|l| l.script)
                && !snippets.iter().any(|s| s.starts_with("$$"));
            let why = if ks.post_build.is_none() {
                format!("Kustomization `{}` has no postBuild", ks.id)
            } else {
                format!(
                    "the postBuild of Kustomization `{}` defines no var and its \
                     substituteStrategy is not `Always`, so Flux does not substitute",
                    ks.id
                )
            };
            // Evidence that Flux was meant to substitute it: a name that is one of the
            // cluster's vars (some Kustomization of the cluster receives it). Otherwise the
            // reference is presumably the application's own (a runner's, a chart's
            // template), shipped verbatim on purpose: a note.
            let cluster_var = snippets.iter().any(|s| {
                expr::scan(s).0.iter().any(|r| {
                    self.cluster
                        .kustomizations
                        .iter()
                        .any(|k| k.vars.contains_key(&r.name))
                })
            });
            let why = if cluster_var || all_script {
                why
            } else {
                format!(
                    "{why}, and no Kustomization of the cluster has a var of that name: \
                     presumably the application's own syntax"
                )
            };
            (
                &VERBATIM_LITERAL,
                if all_script || !cluster_var {
                    Severity::Info
                } else {
                    Severity::Warning
                },
                why,
            )
        };
        let place = place_in(
            files,
            k,
            o,
            Some(Needle {
                text: first,
                nth: 0,
                whole_word: false,
                code_only: false,
            }),
        );
        let verb = if snippets.len() == 1 { "ships" } else { "ship" };
        let message = format!("{listed} {verb} verbatim in {}: {why}", o.id);
        self.findings.push(
            finding_for(&self.cluster.name, k, rule, message, place.location)
                .with_severity(severity)
                .about("object", o.id.to_string()),
        );
    }
}
