//! The examples each command's help ends with: two in the short help (`-h`), the same and
//! where the reference is in the long help (`--help`). A unit test parses every example
//! line that starts with `fluxsim` as the command line would.

/// `fluxsim -h`.
pub(crate) const FLUXSIM: &str = "\
Examples:
  # What does every cluster apply? (one line per Kustomization)
  fluxsim render
  # What does this branch change, cluster by cluster?
  fluxsim diff --base origin/main

Exit status: 0 nothing found at or above --fail-on (default error), 1 found, 2 could not run.
Each command's -h shows its common options, --help all of them.";

/// `render`.
pub(crate) const RENDER: &str = "\
Examples:
  # What does every cluster apply? (one line per Kustomization)
  fluxsim render
  # Write prod's manifests and their SHA256SUMS to rendered/
  fluxsim render --cluster prod --out rendered/";

/// `build`.
pub(crate) const BUILD: &str = "\
Examples:
  # The manifests flux-system/apps applies in dev, as `flux build kustomization` prints them
  fluxsim build -k flux-system/apps --cluster dev
  # The same Kustomization in two clusters, one after the other
  fluxsim build -k apps --cluster dev,prod";

/// `diff`.
pub(crate) const DIFF: &str = "\
Examples:
  # What does this branch (and the work tree) change, cluster by cluster?
  fluxsim diff --base origin/main
  # The same for a pull request's summary; exit 1 on any change
  fluxsim diff --base origin/main -o markdown --fail-on info";

/// `compare`.
pub(crate) const COMPARE: &str = "\
Examples:
  # Do staging and production run the same graph and templates?
  fluxsim compare --cluster staging,production
  # Every cluster, as a GitHub job summary
  fluxsim compare -o markdown >> \"$GITHUB_STEP_SUMMARY\"";

/// `prove`.
pub(crate) const PROVE: &str = "\
Examples:
  # A refactor: nothing any cluster applies may change
  fluxsim prove --base origin/main
  # Report the changes; fail only when the harness is blind
  fluxsim prove --base origin/main --expect any";

/// `audit`.
pub(crate) const AUDIT: &str = "\
Examples:
  # Every ${...} that can fail, empty a value or ship a literal
  fluxsim audit
  # The findings for code scanning, without failing the step on them
  fluxsim audit -o sarif --fail-on never > fluxsim.sarif";

/// `graph`.
pub(crate) const GRAPH: &str = "\
Examples:
  # Can every Kustomization of prod become Ready on a fresh cluster?
  fluxsim graph --cluster prod
  # The graph as a Mermaid chart
  fluxsim graph -o mermaid";

/// `images`.
pub(crate) const IMAGES: &str = "\
Examples:
  # Every image prod runs, per Kustomization
  fluxsim images --cluster prod
  # The images this branch changes
  fluxsim images --diff --base origin/main";

/// `validate`.
pub(crate) const VALIDATE: &str = "\
Examples:
  # Will every object of every cluster apply? (schemas of Kubernetes 1.36)
  fluxsim validate
  # prod against Kubernetes 1.35, with the CRDs of a folder, for code scanning
  fluxsim validate --cluster prod --kube-version 1.35 --schema-dir crds/ -o sarif";

/// `upgrade`.
pub(crate) const UPGRADE: &str = "\
Examples:
  # What breaks moving every cluster to the newest Flux and Kubernetes fluxsim knows
  fluxsim upgrade
  # prod to Flux 2.9 on Kubernetes 1.34, HelmReleases rendered too, for code scanning
  fluxsim upgrade --cluster prod --flux 2.9 --kube 1.34 --helm -o sarif";

/// `envsubst`.
pub(crate) const ENVSUBST: &str = "\
Examples:
  # Flux's substitution of one expression
  echo 'replicas: ${REPLICAS:=2}' | fluxsim envsubst
  # A manifest with the vars of a ConfigMap, failing on an unset var as Flux does
  fluxsim envsubst --strict --vars cluster-vars.yaml < deployment.yaml";

/// `completions`.
pub(crate) const COMPLETIONS: &str = "\
Examples:
  fluxsim completions bash > /etc/bash_completion.d/fluxsim
  fluxsim completions zsh > \"${fpath[1]}/_fluxsim\"";

/// The long help's ending (`--help`): the examples, then where the command's reference is.
pub(crate) fn long(examples: &str, command: &str) -> String {
    format!(
        "{examples}\n\nReference: docs/commands/{command}.md; exit status and --fail-on: \
         docs/commands/README.md\n(https://github.com/fluxsim/fluxsim/tree/main/docs/commands)."
    )
}
