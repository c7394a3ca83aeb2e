//! The persistent build cache: kustomize's output stored under the digest of the build's
//! inputs (`closure`) and the builder's identity, in a folder that survives runs (CI can cache
//! it). Each entry carries the SHA-256 of its body; an entry that does not match, is cut
//! short or is unreadable is treated as missing and rebuilt, never trusted. The same kind of
//! entry keeps, in other folders, whole renders of git revisions
//! ([`revisions`](crate::render::revisions)). Entries are told apart from another build of
//! fluxsim's by [`own_fingerprint`].

use std::io::Write as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::digest::hex;

const MAGIC: &str = "fluxsim-build-cache v1";

/// The folder of build outputs.
const BUILDS: &str = "builds";

/// A cache folder.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The cache in `dir` (created on first write).
    #[must_use]
    pub fn new(dir: &Path) -> Store {
        Store {
            dir: dir.to_path_buf(),
        }
    }

    /// The default folder: `$FLUXSIM_CACHE_DIR`, else `$XDG_CACHE_HOME/fluxsim`, else
    /// `~/.cache/fluxsim`; `None` when none can be told.
    #[must_use]
    pub fn default_dir() -> Option<PathBuf> {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        env("FLUXSIM_CACHE_DIR")
            .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("fluxsim")))
            .or_else(|| env("HOME").map(|h| h.join(".cache").join("fluxsim")))
    }

    /// The folder.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    #[cfg(test)]
    fn path(&self, key: &str) -> PathBuf {
        self.path_in(BUILDS, key)
    }

    fn path_in(&self, section: &str, key: &str) -> PathBuf {
        let shard = key.get(..2).unwrap_or("xx");
        self.dir.join(section).join(shard).join(key)
    }

    /// The stored output for `key`, when there is a sound entry.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<String> {
        self.get_in(BUILDS, key)
    }

    /// Stores `output` under `key` (see [`Self::put_in`]).
    pub fn put(&self, key: &str, output: &str) {
        self.put_in(BUILDS, key, output);
    }

    /// The stored body for `key` in the folder `section` (`builds`, `revisions`), when
    /// there is a sound entry.
    #[must_use]
    pub fn get_in(&self, section: &str, key: &str) -> Option<String> {
        let bytes = std::fs::read(self.path_in(section, key)).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (header, body) = text.split_once('\n')?;
        let (magic, sha) = header.rsplit_once(' ')?;
        (magic == MAGIC && sha == hex(&Sha256::digest(body.as_bytes()))).then(|| body.to_string())
    }

    /// The bytes stored for `key` in the folder `section` ([`Store::put_bytes_in`]).
    #[must_use]
    pub fn get_bytes_in(&self, section: &str, key: &str) -> Option<Vec<u8>> {
        use base64::Engine as _;
        let text = self.get_in(section, key)?;
        base64::engine::general_purpose::STANDARD.decode(text).ok()
    }

    /// Stores `bytes` (a chart, an artifact's layer) under `key` in the folder `section`, as
    /// text ([`Store::put_in`]).
    pub fn put_bytes_in(&self, section: &str, key: &str, bytes: &[u8]) {
        use base64::Engine as _;
        self.put_in(
            section,
            key,
            &base64::engine::general_purpose::STANDARD.encode(bytes),
        );
    }

    /// Stores `output` under `key` in the folder `section`: written to a temporary file in
    /// the same folder, then renamed, so a reader never sees half an entry. Failures are
    /// ignored: the cache is an optimisation.
    pub fn put_in(&self, section: &str, key: &str, output: &str) {
        let path = self.path_in(section, key);
        let Some(parent) = path.parent() else {
            return;
        };
        if std::fs::create_dir_all(parent).is_err() {
            return;
        }
        let Ok(mut tmp) = tempfile::NamedTempFile::new_in(parent) else {
            return;
        };
        let sha = hex(&Sha256::digest(output.as_bytes()));
        if write!(tmp, "{MAGIC} {sha}\n{output}").is_ok() {
            let _ = tmp.persist(&path);
        }
    }
}

/// The running fluxsim binary, as its size and modification time: code built into fluxsim
/// (the native builder) can change between builds of the same version, and the build cache
/// must not serve one build's output to another.
#[must_use]
pub fn own_fingerprint() -> String {
    let version = env!("CARGO_PKG_VERSION");
    std::env::current_exe()
        .and_then(std::fs::metadata)
        .map_or_else(
            |_| format!("fluxsim {version} (unknown build)"),
            |m| {
                let mtime = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("fluxsim {version} ({} bytes, {mtime})", m.len())
            },
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_output_comes_back() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        assert_eq!(s.get("abcd"), None);
        s.put("abcd", "apiVersion: v1\nkind: List\n");
        assert_eq!(
            s.get("abcd").as_deref(),
            Some("apiVersion: v1\nkind: List\n")
        );
    }

    #[test]
    fn corrupt_or_truncated_entries_are_misses() {
        let d = tempfile::tempdir().unwrap();
        let s = Store::new(d.path());
        s.put("abcd", "kind: A\nname: long enough\n");
        let path = s.path("abcd");
        let full = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, &full[..full.len() - 5]).unwrap();
        assert_eq!(s.get("abcd"), None, "truncated");
        std::fs::write(&path, full.replace("long", "LONG")).unwrap();
        assert_eq!(s.get("abcd"), None, "altered");
        std::fs::write(&path, "garbage").unwrap();
        assert_eq!(s.get("abcd"), None, "garbage");
        s.put("abcd", "kind: A\n");
        assert_eq!(
            s.get("abcd").as_deref(),
            Some("kind: A\n"),
            "rebuilt entry is trusted"
        );
    }
}
