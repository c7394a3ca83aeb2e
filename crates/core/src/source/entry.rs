//! One path found in a source before the ignore rules (an [`Entry`]), and where a file's
//! bytes are: the work tree or a blob.

use std::path::{Path, PathBuf};

use super::exclusion::Exclusion;
use super::{git, read_bounded, SourceError};

/// Where a file's bytes come from.
#[derive(Debug, Clone)]
pub(super) enum Content {
    /// A file in the user's tree (absolute path), with its stamp when the platform gives one.
    WorkTree(PathBuf),
    /// A blob of the repository containing `dir`.
    Blob(String),
}

/// One path found in the source, before ignore rules.
#[derive(Debug, Clone)]
pub(super) enum Kind {
    File {
        content: Content,
        executable: bool,
    },
    Dir,
    Symlink,
    Other,
    Submodule,
    /// Not part of what Flux would see; recorded only.
    Absent(Exclusion),
}

#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) path: PathBuf,
    pub(super) kind: Kind,
}

/// The bytes of each listed file (its key, and where its bytes are), handed to `each`: a
/// work-tree file read from the disk, a blob from the repository at `dir`.
pub(super) fn read_contents<K>(
    dir: &Path,
    listed: &[(K, Content)],
    mut each: impl FnMut(&K, Vec<u8>),
) -> Result<(), SourceError> {
    let mut blobs = Vec::new();
    for (key, content) in listed {
        match content {
            Content::WorkTree(abs) => {
                let bytes = read_bounded(abs).map_err(|source| SourceError::Read {
                    path: abs.clone(),
                    source,
                })?;
                each(key, bytes);
            }
            Content::Blob(oid) => blobs.push((key, oid.as_str())),
        }
    }
    let oids: Vec<&str> = blobs.iter().map(|(_, oid)| *oid).collect();
    git::for_each_blob(dir, &oids, |n, bytes| {
        each(blobs[n].0, bytes);
        Ok(())
    })
}
