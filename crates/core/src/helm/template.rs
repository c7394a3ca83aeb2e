//! `helm template` as a subprocess (helm-controller links `helm.sh/helm/v4` v4.2.4; the
//! binary of that version templates as the controller does), in its own process group with
//! a timeout, with Helm's home folders pointed into the scratch folder so that nothing of
//! the user's Helm configuration is read.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The helm version helm-controller links (versions.env `HELM`; tests/it/versions.rs checks
/// they agree).
pub const REPRODUCED_HELM: &str = "v4.2.4";

/// The `helm` binary.
#[derive(Debug, Clone)]
pub struct HelmBinary {
    program: PathBuf,
    version: String,
    timeout: Duration,
    /// [`version_warning`] of this binary.
    warning: Option<String>,
}

/// One `helm template` run.
#[derive(Debug, Clone)]
pub struct TemplateJob<'a> {
    /// The chart folder.
    pub chart_dir: &'a Path,
    /// The release name.
    pub release: &'a str,
    /// The release namespace.
    pub namespace: &'a str,
    /// The merged values (a YAML or JSON file).
    pub values_file: &'a Path,
    /// Print the chart's `crds/` too.
    pub include_crds: bool,
    /// `install.disableHooks`.
    pub no_hooks: bool,
    /// `--kube-version`.
    pub kube_version: Option<&'a str>,
    /// `--api-versions`.
    pub api_versions: &'a [String],
    /// A folder for Helm's cache, config and data homes.
    pub home: &'a Path,
    /// Whether helm may reach the network (`--allow-network`).
    pub network: bool,
}

impl HelmBinary {
    /// Finds helm: `explicit`, else `helm` on PATH; probes its version.
    pub fn locate(
        explicit: Option<&Path>,
        timeout: Duration,
    ) -> Result<HelmBinary, super::HelmError> {
        let program = match explicit {
            Some(p) => p.to_path_buf(),
            None => crate::scratch::on_path("helm").ok_or_else(|| {
                format!(
                    "no helm found on PATH: install helm {REPRODUCED_HELM} (`go install \
                     helm.sh/helm/v4/cmd/helm@{REPRODUCED_HELM}`, see scripts/install-tools) \
                     or pass --helm-binary PATH"
                )
            })?,
        };
        let out = crate::sandbox::Tool::new(&program, timeout)
            .args(["version", "--template", "{{.Version}}"])
            .confined()
            .run()
            .map_err(|e| format!("running {} version: {e}", program.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} version failed: {}",
                program.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let warning = version_warning(&program, &version);
        Ok(HelmBinary {
            program,
            version,
            timeout,
            warning,
        })
    }

    /// Why this binary's output may differ from helm-controller's (it is not the Helm
    /// version helm-controller links), for the caller to tell people.
    #[must_use]
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// What `helm version` says (`v4.2.4`; a `go install` build says `v4.2`).
    #[must_use]
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Runs `helm template` in the tool box ([`crate::sandbox`]): confined to the scratch
    /// folder that holds the chart and values, in that folder, with Helm's homes in it and
    /// nothing of the user's environment (repositories, registries, plugins, kubeconfig),
    /// off the network unless `--allow-network`; gives its stdout, or its error message.
    /// The release name and namespace come from the repository: they are checked first
    /// (`HelmRelease::check_names`) and passed after every flag, behind `--`, so that none is
    /// ever read as a flag.
    pub fn template(&self, job: &TemplateJob<'_>) -> Result<String, super::HelmError> {
        let work = job.chart_dir.parent().unwrap_or(job.chart_dir);
        let mut tool = crate::sandbox::Tool::new(&self.program, self.timeout)
            .arg("template")
            .arg(flag("--namespace", job.namespace))
            .arg(flag("--values", job.values_file))
            // helm-controller runs tests only when spec.test.enable is set, never on install.
            .arg("--skip-tests");
        if job.include_crds {
            tool = tool.arg("--include-crds");
        }
        if job.no_hooks {
            tool = tool.arg("--no-hooks");
        }
        if let Some(v) = job.kube_version {
            tool = tool.arg(flag("--kube-version", v));
        }
        for a in job.api_versions {
            tool = tool.arg(flag("--api-versions", a));
        }
        tool = tool
            .arg("--")
            .arg(job.release)
            .arg(job.chart_dir)
            .dir(work)
            .readable(work)
            .confined()
            .network(job.network)
            .env("HOME", job.home);
        for (var, sub) in [
            ("HELM_CACHE_HOME", "cache"),
            ("HELM_CONFIG_HOME", "config"),
            ("HELM_DATA_HOME", "data"),
            ("HELM_PLUGINS", "plugins"),
        ] {
            tool = tool.env(var, job.home.join(sub));
        }
        let out = tool.run().map_err(|e| format!("helm template: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let err = err.trim().trim_start_matches("Error: ");
            return Err(super::HelmError(crate::scratch::scrub(&format!(
                "helm template failed: {err}"
            ))));
        }
        String::from_utf8(out.stdout)
            .map_err(|_| super::HelmError::from("helm template output is not UTF-8"))
    }
}

/// `--name=value` as one argument: a value that starts with `-` is never taken for a flag.
fn flag(name: &str, value: impl AsRef<std::ffi::OsStr>) -> std::ffi::OsString {
    let mut s = std::ffi::OsString::from(name);
    s.push("=");
    s.push(value);
    s
}

/// A warning when `helm version` is not the Helm helm-controller links (a `go install`
/// build of v4.2.x reports `v4.2`, so that is taken as it).
#[must_use]
pub fn version_warning(program: &Path, reported: &str) -> Option<String> {
    if reported == REPRODUCED_HELM || reported == "v4.2" {
        return None;
    }
    Some(format!(
        "fluxsim: warning: {} is helm `{reported}`, not {REPRODUCED_HELM} (what helm-controller \
         links): releases may render differently from the cluster's",
        program.display()
    ))
}

/// Splits helm's output into the chart's `crds/` documents and the rest, by the
/// `# Source: CHART/crds/...` line helm writes above each document.
#[must_use]
pub fn split_crds(output: &str, chart: &str) -> (String, String) {
    let (mut crds, mut rest) = (String::new(), String::new());
    let prefix = format!("# Source: {chart}/crds/");
    for doc in crate::manifest::split_documents(output) {
        if doc.trim().is_empty() {
            continue;
        }
        let target = if doc.lines().any(|l| l.starts_with(&prefix)) {
            &mut crds
        } else {
            &mut rest
        };
        target.push_str("---\n");
        target.push_str(doc);
        if !doc.ends_with('\n') {
            target.push('\n');
        }
    }
    (crds, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_helm_other_than_the_reproduced_one_is_warned_about() {
        let p = Path::new("/usr/bin/helm");
        assert_eq!(version_warning(p, REPRODUCED_HELM), None);
        assert_eq!(version_warning(p, "v4.2"), None);
        let w = version_warning(p, "v3.16.2").unwrap();
        assert!(
            w.contains(&format!("helm `v3.16.2`, not {REPRODUCED_HELM}")),
            "{w}"
        );
    }

    #[test]
    fn crds_are_told_from_templates_by_their_source_line() {
        let out = "---\n# Source: w/crds/a.yaml\nkind: CustomResourceDefinition\n---\n# Source: w/templates/x.yaml\nkind: Widget\n";
        let (crds, rest) = split_crds(out, "w");
        assert!(crds.contains("CustomResourceDefinition") && !crds.contains("Widget"));
        assert!(rest.contains("Widget") && !rest.contains("CustomResourceDefinition"));
    }
}
