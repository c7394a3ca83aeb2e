//! `flux-operator build rset` as a subprocess: the Flux Operator's own CLI (v0.59.0) builds a
//! ResourceSet offline with the operator's code (`internal/builder`: Go `text/template` with
//! `<<`/`>>`, slim-sprig's hermetic functions, `slugify`, `inputs`, `toYaml`), so fluxsim does
//! not write a second template engine. It runs in the tool box ([`crate::sandbox`]): cleared
//! environment, in the scratch folder, reading only that folder, never the network, bounded
//! output and time. Every argument is fluxsim's (fixed flags and file names of the scratch
//! folder); what comes from the repository is in the files.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The flux-operator version whose CLI fluxsim runs (and whose controller it reproduces).
pub const REPRODUCED_OPERATOR: &str = "v0.59.0";

/// The Go module the CLI is built from (`go install` names its binary `cli`).
pub const OPERATOR_MODULE: &str = "github.com/controlplaneio-fluxcd/flux-operator";

/// How to install the CLI, for the message when it is missing.
pub const INSTALL_HINT: &str = "install the Flux Operator CLI v0.59.0 as `flux-operator` on \
     PATH (scripts/install-tools does: `GOTOOLCHAIN=go1.27.3 go install \
     github.com/controlplaneio-fluxcd/flux-operator/cmd/cli@v0.59.0`, then rename `cli` to \
     `flux-operator`)";

crate::message_error! {
    /// `flux-operator build rset` could not be run, or refused the ResourceSet (its words).
    pub struct OperatorError;
}

/// The `flux-operator` binary.
#[derive(Debug, Clone)]
pub struct OperatorBinary {
    program: PathBuf,
    version: String,
    timeout: Duration,
}

/// What one `build rset` is given: files of a scratch folder.
#[derive(Debug, Clone)]
pub struct BuildJob<'a> {
    /// The folder the files are in (the tool's working directory, all it may read).
    pub dir: &'a Path,
    /// The ResourceSet manifest (`-f`).
    pub rset: &'a Path,
    /// `--inputs-from-provider`: `Static` ResourceSetInputProviders.
    pub providers: Option<&'a Path>,
    /// `--inputs-from`: the input sets, in place of `spec.inputs`.
    pub inputs: Option<&'a Path>,
}

impl OperatorBinary {
    /// Finds `flux-operator`: `explicit`, else on PATH; reads its version.
    pub fn locate(explicit: Option<&Path>, timeout: Duration) -> Result<Self, OperatorError> {
        let program = match explicit {
            Some(p) if p.is_file() => p.to_path_buf(),
            Some(p) => return Err(format!("{}: no such file; {INSTALL_HINT}", p.display()).into()),
            None => crate::scratch::on_path("flux-operator")
                .ok_or_else(|| format!("no flux-operator found on PATH: {INSTALL_HINT}"))?,
        };
        let out = crate::sandbox::Tool::new(&program, timeout)
            .args(["version", "--client"])
            .confined()
            .run()
            .map_err(|e| format!("running {} version --client: {e}", program.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} version --client failed: {}",
                program.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        let said = String::from_utf8_lossy(&out.stdout);
        let said = said.trim().trim_start_matches("client:").trim();
        // A `go install` build says `0.0.0-dev.0` (the release sets VERSION with -ldflags):
        // the module version Go recorded in the binary says which it is.
        let version = if said.starts_with("0.0.0-dev") {
            module_version(&program).unwrap_or_else(|| said.to_string())
        } else {
            format!("v{}", said.trim_start_matches('v'))
        };
        Ok(OperatorBinary {
            program,
            version,
            timeout,
        })
    }

    /// The version (`v0.59.0`).
    #[must_use]
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Why this binary may build otherwise than the operator fluxsim reproduces.
    #[must_use]
    pub fn warning(&self) -> Option<String> {
        (self.version != REPRODUCED_OPERATOR).then(|| {
            format!(
                "{} is flux-operator {}; fluxsim reproduces {REPRODUCED_OPERATOR}: \
                 ResourceSets may render otherwise than that operator renders them",
                self.program.display(),
                self.version
            )
        })
    }

    /// Runs `flux-operator build rset` on the job's files; gives what it prints, or its error.
    pub fn build(&self, job: &BuildJob<'_>) -> Result<String, OperatorError> {
        let mut tool = crate::sandbox::Tool::new(&self.program, self.timeout)
            .args(["build", "resourceset", "--filename"])
            .arg(job.rset)
            .dir(job.dir)
            .confined()
            .readable(job.dir);
        if let Some(p) = job.providers {
            tool = tool.arg("--inputs-from-provider").arg(p);
        }
        if let Some(i) = job.inputs {
            tool = tool.arg("--inputs-from").arg(i);
        }
        let out = tool
            .run()
            .map_err(|e| format!("running flux-operator build rset: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            // The CLI leads its error with a mark (`✗ `).
            let err = err.trim().trim_start_matches('✗').trim();
            return Err(crate::scratch::scrub(err).into());
        }
        String::from_utf8(out.stdout)
            .map_err(|_| "flux-operator build rset printed something that is not UTF-8".into())
    }
}

/// The version of the flux-operator module a Go binary was built from, as `go version -m`
/// reads it: Go writes the module list into the binary as text after a magic header
/// (`runtime/debug` BuildInfo; `debug/buildinfo`), so its line is found in the bytes. Read
/// in bounded chunks, once per binary (by path, size and modification time) in a run.
fn module_version(program: &Path) -> Option<String> {
    type Seen = std::sync::Mutex<
        std::collections::HashMap<(PathBuf, u64, Option<std::time::SystemTime>), Option<String>>,
    >;
    static SEEN: std::sync::OnceLock<Seen> = std::sync::OnceLock::new();
    let meta = std::fs::metadata(program).ok()?;
    let key = (program.to_path_buf(), meta.len(), meta.modified().ok());
    let seen = SEEN.get_or_init(Seen::default);
    if let Some(v) = seen.lock().ok().and_then(|s| s.get(&key).cloned()) {
        return v;
    }
    let v = read_module_version(program);
    if let Ok(mut s) = seen.lock() {
        s.insert(key, v.clone());
    }
    v
}

fn read_module_version(program: &Path) -> Option<String> {
    use std::io::Read;
    let needle = format!("mod\t{OPERATOR_MODULE}\t");
    let needle = needle.as_bytes();
    let mut f = std::fs::File::open(program).ok()?;
    let mut carry: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    // A binary of 1 GiB is not a flux-operator.
    for _ in 0..1024 {
        let n = f.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        carry.extend_from_slice(&chunk[..n]);
        if let Some(at) = memchr::memmem::find(&carry, needle) {
            let rest = &carry[at + needle.len()..];
            if let Some(end) = rest.iter().position(|b| matches!(b, b'\t' | b'\n')) {
                return std::str::from_utf8(&rest[..end]).ok().map(str::to_string);
            }
            // The version goes on in the next chunk.
            continue;
        }
        let keep = carry.len().saturating_sub(needle.len() + 64);
        carry.drain(..keep);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    // `go version -m` reads the module line Go writes into the binary (debug/buildinfo):
    // `mod\tPATH\tVERSION\tSUM`.
    #[test]
    fn the_module_version_is_read_from_go_s_build_info() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("cli");
        let mut bytes = vec![0u8; 3 << 20];
        let line = format!("path\tx\nmod\t{OPERATOR_MODULE}\tv0.59.0\th1:abc=\n");
        // Across the boundary of the first chunk.
        let at = (1 << 20) - 20;
        bytes[at..at + line.len()].copy_from_slice(line.as_bytes());
        std::fs::write(&bin, &bytes).unwrap();
        assert_eq!(module_version(&bin).as_deref(), Some("v0.59.0"));
        std::fs::write(dir.path().join("other"), b"no build info").unwrap();
        assert_eq!(module_version(&dir.path().join("other")), None);
    }
}
