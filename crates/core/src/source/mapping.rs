//! Sources mapped to folders: `--source KIND/NAMESPACE/NAME=PATH` and `fluxsim.toml`'s
//! `[sources]` say that a Flux source other than the cluster's own GitRepository (an
//! OCIRepository that CI pushes from `./kubernetes`, an ExternalArtifact, a second
//! GitRepository of the same repository, another repository checked out beside this one)
//! holds what PATH holds. Kustomizations on it are rendered with `spec.path` relative to
//! that folder, read with the same source rules as the repository.
//!
//! Trust: a mapping from the command line may name any folder, inside the repository or an
//! absolute path to another checkout. `fluxsim.toml` is repository content (a pull request
//! can change it), so its mappings must be folders of the repository: an absolute path or
//! one that climbs out of the root is refused.

use std::fmt;
use std::path::{Path, PathBuf};

crate::message_error! {
    /// A `--source` argument or a `[sources]` entry that cannot be used.
    pub struct MappingError;
}

/// The kinds a Flux Kustomization's `spec.sourceRef` may name.
pub const SOURCE_KINDS: &[&str] = &[
    "GitRepository",
    "OCIRepository",
    "Bucket",
    "ExternalArtifact",
];

/// A Flux source by kind, namespace and name (`OCIRepository/flux-system/apps`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceId {
    /// `GitRepository`, `OCIRepository`, `Bucket` or `ExternalArtifact`.
    pub kind: String,
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl fmt::Display for SourceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
    }
}

impl SourceId {
    /// Reads `KIND/NAMESPACE/NAME`.
    pub fn parse(text: &str) -> Result<SourceId, MappingError> {
        let parts: Vec<&str> = text.split('/').collect();
        let [kind, namespace, name] = parts.as_slice() else {
            return Err(format!(
                "`{text}` is not KIND/NAMESPACE/NAME (e.g. OCIRepository/flux-system/apps)"
            )
            .into());
        };
        if !SOURCE_KINDS.contains(kind) {
            return Err(format!(
                "`{kind}` is not a kind a Kustomization's sourceRef names (one of {})",
                SOURCE_KINDS.join(", ")
            )
            .into());
        }
        if namespace.is_empty() || name.is_empty() {
            return Err(format!("`{text}`: the namespace and the name must not be empty").into());
        }
        Ok(SourceId {
            kind: (*kind).to_string(),
            namespace: (*namespace).to_string(),
            name: (*name).to_string(),
        })
    }
}

/// Where a mapped source's content is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MappedPath {
    /// A folder of this repository, relative to its root (`""`: the root), read at the same
    /// revision as the repository.
    Folder(String),
    /// Another checkout, by absolute path (from the command line only).
    Checkout(PathBuf),
}

impl fmt::Display for MappedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MappedPath::Folder(d) if d.is_empty() => f.write_str("."),
            MappedPath::Folder(d) => write!(f, "./{d}"),
            MappedPath::Checkout(p) => write!(f, "{}", p.display()),
        }
    }
}

/// One source mapped to a folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SourceMapping {
    /// The source.
    pub source: SourceId,
    /// Its content.
    pub path: MappedPath,
    /// Where the mapping was given: `--source` or `fluxsim.toml`.
    pub from: String,
}

impl SourceMapping {
    /// `OCIRepository/flux-system/apps=./kubernetes (--source)`.
    #[must_use]
    pub fn label(&self) -> String {
        format!("{}={} ({})", self.source, self.path, self.from)
    }
}

/// Reads a `--source KIND/NAMESPACE/NAME=PATH` argument. A relative PATH is a folder of the
/// repository `repo` (relative to it, not to the working directory); an absolute PATH inside
/// `repo` is that folder too; any other absolute PATH is another checkout.
pub fn parse_arg(arg: &str, repo: &Path) -> Result<SourceMapping, MappingError> {
    let bad = |why: String| MappingError(format!("--source `{arg}`: {why}"));
    let (source, path) = arg
        .split_once('=')
        .ok_or_else(|| bad("expected KIND/NAMESPACE/NAME=PATH".into()))?;
    let source = SourceId::parse(source).map_err(|e| bad(e.0))?;
    if path.is_empty() {
        return Err(bad("PATH is empty".into()));
    }
    let path = if Path::new(path).is_absolute() {
        let abs = std::fs::canonicalize(path)
            .map_err(|e| bad(format!("`{path}` cannot be read: {e}")))?;
        if !abs.is_dir() {
            return Err(bad(format!("`{path}` is not a folder")));
        }
        let repo = std::fs::canonicalize(repo).unwrap_or_else(|_| repo.to_path_buf());
        match abs.strip_prefix(&repo) {
            Ok(rel) => MappedPath::Folder(rel.to_string_lossy().replace('\\', "/")),
            Err(_) => MappedPath::Checkout(abs),
        }
    } else {
        MappedPath::Folder(repo_folder(path).ok_or_else(|| {
            bad(format!(
                "`{path}` leaves the repository: a relative PATH is a folder of the repository \
                 (give an absolute path for another checkout)"
            ))
        })?)
    };
    Ok(SourceMapping {
        source,
        path,
        from: "--source".into(),
    })
}

/// A `[sources]` entry of the settings file `from` (`fluxsim.toml`): the value must be a
/// folder of the repository.
pub fn parse_config_entry(
    key: &str,
    value: &str,
    from: &str,
) -> Result<SourceMapping, MappingError> {
    let source = SourceId::parse(key)?;
    let refuse = || {
        MappingError::from(format!(
            "source `{key}` is mapped to `{value}`, outside the repository: a mapping in \
             fluxsim.toml (repository content, which a pull request can change) must be a \
             folder of the repository; map another checkout with --source on the command line"
        ))
    };
    let windows_absolute = value.len() > 1 && value.as_bytes()[1] == b':';
    if value.starts_with('/') || value.starts_with('\\') || windows_absolute {
        return Err(refuse());
    }
    let folder = repo_folder(value).ok_or_else(refuse)?;
    Ok(SourceMapping {
        source,
        path: MappedPath::Folder(folder),
        from: from.into(),
    })
}

/// A relative path as a clean folder of the repository (`""` for the root); `None` when it
/// climbs above the root.
fn repo_folder(path: &str) -> Option<String> {
    super::clean_relative(&path.replace('\\', "/"))
}

/// The mappings in force: the command line's, then `fluxsim.toml`'s for sources the command
/// line does not map (the command line wins).
#[must_use]
pub fn merged(cli: &[SourceMapping], config: &[SourceMapping]) -> Vec<SourceMapping> {
    let mut out: Vec<SourceMapping> = cli.to_vec();
    for m in config {
        if !out.iter().any(|c| c.source == m.source) {
            out.push(m.clone());
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.source == b.source);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_arg_maps_a_relative_folder_of_the_repository() {
        let m = parse_arg(
            "OCIRepository/flux-system/apps=./kubernetes/",
            Path::new("/x"),
        )
        .unwrap();
        assert_eq!(m.path, MappedPath::Folder("kubernetes".into()));
        assert_eq!(m.source.to_string(), "OCIRepository/flux-system/apps");
        let m = parse_arg("GitRepository/flux-system/other=.", Path::new("/x")).unwrap();
        assert_eq!(m.path, MappedPath::Folder(String::new()));
        assert!(
            parse_arg("OCIRepository/flux-system/apps=../other", Path::new("/x"))
                .unwrap_err()
                .contains("leaves the repository")
        );
        assert!(parse_arg("Helm/flux-system/apps=x", Path::new("/x"))
            .unwrap_err()
            .contains("not a kind"));
        assert!(parse_arg("OCIRepository/apps=x", Path::new("/x")).is_err());
        assert!(parse_arg("OCIRepository/flux-system/apps", Path::new("/x")).is_err());
    }

    #[test]
    fn source_arg_with_an_absolute_path_is_a_checkout_unless_inside_the_repository() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("deploy")).unwrap();
        let other = tempfile::tempdir().unwrap();
        let inside = format!(
            "OCIRepository/flux-system/apps={}",
            repo.path().join("deploy").display()
        );
        let m = parse_arg(&inside, repo.path()).unwrap();
        assert_eq!(m.path, MappedPath::Folder("deploy".into()));
        let outside = format!("OCIRepository/flux-system/apps={}", other.path().display());
        let m = parse_arg(&outside, repo.path()).unwrap();
        assert!(matches!(m.path, MappedPath::Checkout(_)));
    }

    #[test]
    fn config_mapping_that_leaves_the_repository_is_refused() {
        for value in ["/etc", "../sibling", "a/../../b", "C:\\x"] {
            let e = parse_config_entry("OCIRepository/flux-system/apps", value, "fluxsim.toml")
                .unwrap_err();
            assert!(
                e.contains("fluxsim.toml") && e.contains("--source"),
                "{value}: {e}"
            );
        }
        let m = parse_config_entry(
            "OCIRepository/flux-system/apps",
            "./kubernetes",
            "fluxsim.toml",
        )
        .unwrap();
        assert_eq!(m.path, MappedPath::Folder("kubernetes".into()));
    }

    #[test]
    fn command_line_mapping_wins_over_fluxsim_toml() {
        let cli = parse_arg("OCIRepository/flux-system/apps=a", Path::new("/x")).unwrap();
        let toml =
            parse_config_entry("OCIRepository/flux-system/apps", "b", "fluxsim.toml").unwrap();
        let other = parse_config_entry("Bucket/flux-system/c", "c", "fluxsim.toml").unwrap();
        let m = merged(std::slice::from_ref(&cli), &[toml, other.clone()]);
        assert_eq!(m, vec![other, cli]);
    }
}
