//! Where a HelmRelease's chart comes from, as source-controller would find it: a chart
//! folder of a GitRepository (this repository, or a checkout mapped with `--source`), or a
//! packaged chart of a HelmRepository (`repo`, fetched only with `--fetch-charts`). A chart
//! that cannot be had says why, and the release is reported with that reason.

use std::path::Path;

use crate::source::SourceFs;

use super::release::{ChartRef, HelmRelease, SourceRef};

/// A chart's files, ready to be written out for `helm`.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Each file, by its path relative to the chart folder, sorted.
    pub files: Vec<(String, Vec<u8>)>,
    /// SHA-256 over the files (paths and bytes): equal charts have equal digests.
    pub digest: String,
    /// How reports name it (`GitRepository/flux-system/flux-system ./charts/podinfo`).
    pub label: String,
    /// The chart folder in the repository, when it is one (for inputs and canaries).
    pub repo_dir: Option<String>,
}

impl Chart {
    /// A chart made of `files`.
    #[must_use]
    pub fn new(files: Vec<(String, Vec<u8>)>, label: String, repo_dir: Option<String>) -> Chart {
        let mut files = files;
        files.sort();
        let mut h = String::new();
        for (p, b) in &files {
            h.push_str(p);
            h.push('\0');
            h.push_str(&crate::digest::sha256_hex(b));
            h.push('\n');
        }
        Chart {
            digest: crate::digest::sha256_hex(h.as_bytes()),
            files,
            label,
            repo_dir,
        }
    }

    /// The chart's `name` in `Chart.yaml` (helm's `# Source: NAME/...` comments use it).
    #[must_use]
    pub fn name(&self) -> Option<String> {
        self.chart_yaml("name")
    }

    /// The chart's `version` in `Chart.yaml` (a review's "chart podinfo 6.4.0 → 6.5.0").
    #[must_use]
    pub fn version(&self) -> Option<String> {
        self.chart_yaml("version")
    }

    /// A string field of `Chart.yaml` (a number written bare, `version: 1.0`, as written).
    fn chart_yaml(&self, field: &str) -> Option<String> {
        let (_, bytes) = self.files.iter().find(|(p, _)| p == "Chart.yaml")?;
        let v = crate::manifest::parse_object(&String::from_utf8_lossy(bytes)).ok()?;
        match v.get(field)? {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Writes the chart under `dir`.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<()> {
        for (rel, bytes) in &self.files {
            let path = dir.join(rel);
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p)?;
            }
            std::fs::write(path, bytes)?;
        }
        Ok(())
    }
}

/// The sources a cluster's HelmReleases may name, as folders fluxsim can read.
pub struct Sources<'a> {
    /// The cluster's own GitRepository (the repository, as that source sees it).
    pub own: Option<(SourceRef, &'a SourceFs)>,
    /// Sources mapped with `--source` or `fluxsim.toml`, each with its tree (or why it
    /// cannot be read).
    // String: the mapping's error as `reconcile::trees::Mapped` keeps it, cloned for every
    // Kustomization and release on that source; a release shows it as `not fetched: ...`.
    pub mapped: Vec<(SourceRef, Result<&'a SourceFs, String>, bool)>,
    /// HelmRepositories and other source objects of the cluster, by ref (their `spec`).
    pub objects: std::collections::BTreeMap<SourceRef, serde_json::Value>,
}

/// Why a chart cannot be had; the release is reported with this reason, never rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

/// Fetches chart NAME at VERSION (a range) from a HelmRepository (its ref and object).
pub type Fetch<'a> =
    dyn Fn(&SourceRef, &serde_json::Value, &str, &str) -> Result<Chart, Unavailable> + 'a;

/// Fetches the chart an OCIRepository (its ref and object) holds.
pub type FetchRef<'a> = dyn Fn(&SourceRef, &serde_json::Value) -> Result<Chart, Unavailable> + 'a;

/// Finds the chart of `hr` among `sources` (HelmRepository charts through `fetch`,
/// OCIRepository ones through `fetch_ref`).
pub fn resolve(
    hr: &HelmRelease,
    sources: &Sources<'_>,
    fetch: &Fetch<'_>,
    fetch_ref: &FetchRef<'_>,
) -> Result<Chart, Unavailable> {
    match &hr.chart {
        ChartRef::Ref(r) if r.kind == "OCIRepository" => {
            let Some(obj) = sources.objects.get(r) else {
                return Err(Unavailable(format!(
                    "not fetched: {r} is not applied by any Kustomization of this cluster"
                )));
            };
            fetch_ref(r, obj)
        }
        ChartRef::Ref(r) => Err(Unavailable(format!(
            "not fetched: spec.chartRef to {r} (a HelmChart object) is not supported; use \
             spec.chart.spec"
        ))),
        ChartRef::Template {
            chart,
            version,
            source,
            values_files,
            ignore_missing_values_files,
        } => match source.kind.as_str() {
            "GitRepository" | "Bucket" => {
                let (c, fs) = local_chart(source, chart, sources)?;
                if values_files.is_empty() {
                    return Ok(c);
                }
                with_values_files(c, fs, values_files, *ignore_missing_values_files)
                    .map_err(|e| Unavailable(format!("chart `{chart}` in {source}: {e}")))
            }
            "HelmRepository" => {
                let Some(spec) = sources.objects.get(source) else {
                    return Err(Unavailable(format!(
                        "not fetched: {source} is not applied by any Kustomization of this \
                         cluster"
                    )));
                };
                fetch(source, spec, chart, version)
            }
            other => Err(Unavailable(format!(
                "not fetched: a chart source of kind `{other}` is not supported"
            ))),
        },
    }
}

/// source-controller `internal/helm/chart/builder_local.go`: with `valuesFiles`, the chart's
/// values are those files (paths in the source, joined as SecureJoin does) merged in order,
/// not its `values.yaml`; a missing file is an error unless `ignoreMissingValuesFiles`.
fn with_values_files(
    chart: Chart,
    fs: &SourceFs,
    paths: &[String],
    ignore_missing: bool,
) -> Result<Chart, super::HelmError> {
    let mut merged = serde_json::Map::new();
    for p in paths {
        let path = fs.secure_join(p).map_err(|e| e.to_string())?;
        if !fs.is_file(&path) {
            if ignore_missing {
                continue;
            }
            let rel = path
                .strip_prefix(fs.root())
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Err(format!("no values file found at path '/{rel}' (reference '{p}')").into());
        }
        let text = fs
            .read_to_string(&path)
            .map_err(|e| format!("could not read values from file '{p}': {e}"))?;
        let values = match crate::manifest::parse_object(&text)
            .map_err(|e| format!("unmarshaling values from '{p}' failed: {e}"))?
        {
            serde_json::Value::Object(m) => m,
            serde_json::Value::Null => serde_json::Map::new(),
            _ => return Err(format!("unmarshaling values from '{p}' failed: not a map").into()),
        };
        merged = super::values::merge_maps(merged, values);
    }
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(merged))
        .map_err(|e| e.to_string())?;
    let mut files: Vec<(String, Vec<u8>)> = chart
        .files
        .into_iter()
        .filter(|(p, _)| p != "values.yaml")
        .collect();
    files.push(("values.yaml".into(), text.into_bytes()));
    Ok(Chart::new(files, chart.label, chart.repo_dir))
}

fn local_chart<'a>(
    source: &SourceRef,
    chart: &str,
    sources: &Sources<'a>,
) -> Result<(Chart, &'a SourceFs), Unavailable> {
    let (fs, in_repo) = if let Some((own, fs)) = sources.own.as_ref().filter(|(o, _)| o == source) {
        let _ = own;
        (*fs, true)
    } else if let Some((_, tree, in_repo)) = sources.mapped.iter().find(|(r, _, _)| r == source) {
        match tree {
            Ok(fs) => (*fs, *in_repo),
            Err(e) => return Err(Unavailable(format!("not fetched: {e}"))),
        }
    } else {
        return Err(Unavailable(format!(
            "not fetched: {source} is not this repository's source; map it to a folder with \
             --source {source}=PATH"
        )));
    };
    // source-controller joins the chart path to the artifact as SecureJoin does: `..` is
    // clamped at the root.
    let dir = fs
        .secure_join(chart)
        .map_err(|e| Unavailable(format!("chart path `{chart}` in {source}: {e}")))?;
    if !fs.is_file(&dir.join("Chart.yaml")) {
        return Err(Unavailable(format!(
            "no chart at `{chart}` in {source}: `{}` has no Chart.yaml",
            chart.trim_start_matches("./")
        )));
    }
    let mut files = Vec::new();
    read_folder(fs, &dir, "", &mut files)
        .map_err(|e| Unavailable(format!("reading chart `{chart}` in {source}: {e}")))?;
    let rel = dir
        .strip_prefix(fs.root())
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .unwrap_or_default();
    Ok((
        Chart::new(files, format!("{source} ./{rel}"), in_repo.then_some(rel)),
        fs,
    ))
}

fn read_folder(
    fs: &SourceFs,
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, Vec<u8>)>,
) -> std::io::Result<()> {
    for e in fs.read_dir(dir)? {
        let name = e.name.to_string_lossy().into_owned();
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let path = dir.join(&name);
        if e.is_dir {
            read_folder(fs, &path, &rel, out)?;
        } else {
            out.push((rel, fs.read(&path)?));
        }
    }
    Ok(())
}
