//! The kustomize binary (or `kubectl kustomize`), run as a subprocess with
//! `--load-restrictor LoadRestrictionsNone` as kustomize-controller builds, in a process
//! group of its own with a timeout; its version is probed once and warned about when it is
//! not the one fluxsim reproduces.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{BuildError, Builder, Built, Job, Maker};

/// The kustomize version fluxsim reproduces (versions.env `KUSTOMIZE`; tests/it/versions.rs
/// checks they agree): the one kustomize-controller v1.9.5 builds with
/// (`sigs.k8s.io/kustomize/api` v0.21.1), which `scripts/install-tools` installs.
pub const REPRODUCED_KUSTOMIZE: &str = "v5.8.1";

/// The `MAJOR.MINOR.PATCH` in what `kustomize version` (`v5.8.1`, or
/// `{Version:kustomize/v4.5.7 ...}` before v5) or kubectl's `Kustomize Version: v5.5.0`
/// reports, with a leading `v`.
#[must_use]
pub fn kustomize_semver(reported: &str) -> Option<String> {
    let bytes = reported.as_bytes();
    (0..bytes.len()).find_map(|start| {
        if start > 0 && (bytes[start - 1].is_ascii_digit() || bytes[start - 1] == b'.') {
            return None;
        }
        let rest = &reported[start..];
        let mut parts = rest.splitn(3, '.');
        let major = parts.next()?;
        let minor = parts.next()?;
        let patch: String = parts
            .next()?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(major) && digits(minor) && digits(&patch))
            .then(|| format!("v{major}.{minor}.{patch}"))
    })
}

/// The warning for a kustomize binary whose version is not [`REPRODUCED_KUSTOMIZE`], if any.
#[must_use]
pub fn version_warning(program: &Path, is_kubectl: bool, reported: &str) -> Option<String> {
    let version = kustomize_semver(reported);
    if version.as_deref() == Some(REPRODUCED_KUSTOMIZE) {
        return None;
    }
    let what = if is_kubectl {
        format!("{} (kubectl's built-in kustomize", program.display())
    } else {
        format!("{} (kustomize", program.display())
    };
    let found = version.unwrap_or_else(|| format!("of unknown version: `{}`", reported.trim()));
    Some(format!(
        "fluxsim: warning: {what} {found}) is not kustomize {REPRODUCED_KUSTOMIZE}, the version \
         Flux's kustomize-controller builds with: the builds it makes may differ from Flux's \
         (install kustomize {REPRODUCED_KUSTOMIZE} with scripts/install-tools, or pass \
         --kustomize PATH)"
    ))
}

/// The kustomize binary, run as a subprocess.
#[derive(Debug, Clone)]
pub struct KustomizeBinary {
    program: PathBuf,
    /// `["build"]` for kustomize, `["kustomize"]` for kubectl.
    subcommand: &'static str,
    timeout: Duration,
    version: String,
    /// [`version_warning`] of this binary.
    warning: Option<String>,
}

impl KustomizeBinary {
    /// Finds kustomize: `explicit` when given, else `kustomize` on PATH, else `kubectl`.
    pub fn locate(explicit: Option<&Path>, timeout: Duration) -> Result<Self, BuildError> {
        Self::locate_with(explicit, timeout, None)
    }

    /// [`Self::locate`], remembering the probed version in `store` under the binary's path,
    /// size and modification time, so a run with a warm cache starts no probe process.
    pub fn locate_with(
        explicit: Option<&Path>,
        timeout: Duration,
        store: Option<&crate::store::Store>,
    ) -> Result<Self, BuildError> {
        Self::open(Self::find(explicit)?, timeout, store)
    }

    /// Where kustomize is, without running it: `explicit` when given, else `kustomize` on
    /// PATH, else `kubectl`.
    pub fn find(explicit: Option<&Path>) -> Result<PathBuf, BuildError> {
        match explicit {
            Some(p) => Ok(p.to_path_buf()),
            None => crate::scratch::on_path("kustomize")
                .or_else(|| crate::scratch::on_path("kubectl"))
                .ok_or_else(|| BuildError::NotFound("neither is on PATH".into())),
        }
    }

    /// What identifies `program` without running it (its path, size and modification
    /// time, digested), or `None` when it cannot be read.
    #[must_use]
    pub fn stamp(program: &Path) -> Option<String> {
        std::fs::metadata(program).ok().map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            crate::digest::sha256_hex(
                format!("tool\0{}\0{}\0{mtime}", program.display(), m.len()).as_bytes(),
            )
        })
    }

    /// The binary at `program`, its version probed (or read from `store`, where it is kept
    /// under the program's [`stamp`](Self::stamp)) and warned about when it is not the one
    /// fluxsim reproduces.
    pub fn open(
        program: PathBuf,
        timeout: Duration,
        store: Option<&crate::store::Store>,
    ) -> Result<Self, BuildError> {
        let is_kubectl = program
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("kubectl"));
        let subcommand = if is_kubectl { "kustomize" } else { "build" };
        // Versions stored before a failed probe was an error may be those of programs that
        // failed it: a key of their own leaves them unread.
        let key = Self::stamp(&program).map(|stamp| {
            crate::digest::sha256_hex(format!("version, probe exited 0\0{stamp}").as_bytes())
        });
        let known = key.as_ref().zip(store).and_then(|(k, s)| s.get(k));
        let version = if let Some(v) = known {
            v
        } else {
            let v = Self::probe_version(&program, is_kubectl)?;
            if let (Some(k), Some(s)) = (&key, store) {
                s.put(k, &v);
            }
            v
        };
        let warning = version_warning(&program, is_kubectl, &version);
        Ok(KustomizeBinary {
            program,
            subcommand,
            timeout,
            version,
            warning,
        })
    }

    fn probe_version(program: &Path, is_kubectl: bool) -> Result<String, BuildError> {
        let args: &[&str] = if is_kubectl {
            &["version", "--client"]
        } else {
            &["version"]
        };
        let out = crate::sandbox::Tool::new(program, Duration::from_secs(60))
            .args(args)
            .confined()
            .run()
            .map_err(|e| BuildError::NotFound(format!("{}: {e}", program.display())))?;
        if !out.status.success() {
            let stderr = clean_error(&String::from_utf8_lossy(&out.stderr));
            return Err(BuildError::Unusable {
                program: program.display().to_string(),
                why: exit_description(out.status, &stderr),
            });
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let version = if is_kubectl {
            text.lines()
                .find_map(|l| l.strip_prefix("Kustomize Version:"))
                .map_or_else(|| "unknown".into(), |v| v.trim().to_string())
        } else {
            text.trim().to_string()
        };
        Ok(version)
    }

    /// Why this binary's builds may differ from Flux's (it is not the kustomize version
    /// kustomize-controller builds with), for the caller to tell people.
    #[must_use]
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Where the binary is.
    #[must_use]
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// How long a build may run.
    #[must_use]
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The kustomize version reported by the binary.
    #[must_use]
    pub fn version(&self) -> &str {
        &self.version
    }
}

impl KustomizeBinary {
    /// Runs `kustomize build` (or `kubectl kustomize`) on the folder `dir`, a folder of
    /// fluxsim's scratch folder: in the tool box ([`crate::sandbox`]), which confines it to
    /// that folder and keeps it off the network unless `--allow-network`, in a process group
    /// of its own so that a timeout or a signal to fluxsim also ends what kustomize started
    /// (git for remote bases).
    /// `git_http`: git may clone over plain http too ([`crate::sandbox::Tool::git_http`]).
    pub fn run(&self, dir: &Path, network: bool, git_http: bool) -> Result<String, BuildError> {
        self.run_in_box(dir, network, git_http, dir)
    }

    /// [`Self::run`] on a folder that is not fluxsim's (a fixture of the repository, for the
    /// `builder-check` example), letting kustomize read the folder `readable` too.
    pub fn run_reading(
        &self,
        dir: &Path,
        network: bool,
        readable: &Path,
    ) -> Result<String, BuildError> {
        self.run_in_box(dir, network, false, readable)
    }

    fn run_in_box(
        &self,
        dir: &Path,
        network: bool,
        git_http: bool,
        readable: &Path,
    ) -> Result<String, BuildError> {
        let out = crate::sandbox::Tool::new(&self.program, self.timeout)
            .arg(self.subcommand)
            .arg("--load-restrictor")
            .arg("LoadRestrictionsNone")
            .arg(dir)
            .readable(readable)
            .confined()
            .network(network)
            .git_http(git_http)
            .run()
            .map_err(|e| match e {
                crate::scratch::RunError::Start(e) => {
                    BuildError::NotFound(format!("{}: {e}", self.program.display()))
                }
                crate::scratch::RunError::Timeout(t) => BuildError::Timeout(t),
                other => BuildError::Failed(other.to_string()),
            })?;
        if !out.status.success() {
            let mut message = clean_error(&String::from_utf8_lossy(&out.stderr));
            if message.is_empty() {
                // Said, or the error would read `kustomize build failed: ` and nothing.
                message = format!(
                    "`{}` {}",
                    self.program.display(),
                    exit_description(out.status, "")
                );
            }
            // kustomize's own error exit (cobra's): the inputs decided it. Anything else (a
            // signal, a crash of the Go runtime) may be the machine's.
            return Err(if out.status.code() == Some(1) {
                BuildError::Rejected(message)
            } else {
                BuildError::Failed(message)
            });
        }
        String::from_utf8(out.stdout).map_err(|_| BuildError::Failed("output is not UTF-8".into()))
    }
}

impl Builder for KustomizeBinary {
    fn build(&self, job: &Job<'_>) -> Built {
        Built {
            output: job
                .disk_dir()
                .and_then(|dir| self.run(&dir, job.network, job.git_http)),
            maker: Maker::Kustomize,
            delegated: None,
        }
    }

    fn describe(&self) -> String {
        let name = self.program.file_name().map_or_else(
            || self.program.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        format!("{name} {} (kustomize {})", self.subcommand, self.version)
    }
}

/// How a program ended, for an error: `exited with status 1 and printed nothing`, `was
/// killed by signal 9: <stderr>`.
fn exit_description(status: std::process::ExitStatus, stderr: &str) -> String {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    let how = match (status.code(), signal) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "failed".to_string(),
    };
    if stderr.trim().is_empty() {
        format!("{how} and printed nothing")
    } else {
        format!("{how}: {}", stderr.trim())
    }
}

/// kustomize's error text without the noise that changes from run to run: kubectl wraps it
/// in a klog line (`E1202 15:33:21.263713 31756 run.go:72] "command failed" err="..."`).
fn clean_error(stderr: &str) -> String {
    let text = stderr.trim();
    let re =
        regex::Regex::new(r#"(?s)^[EWIF]\d{4} [\d:.]+\s+\d+ \S+\] "command failed" err="(.*)"$"#)
            .expect("static regex");
    let text = match re.captures(text) {
        Some(c) => c[1].replace("\\\"", "\"").replace("\\n", "\n"),
        None => text.to_string(),
    };
    text.trim_start_matches("Error: ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_klog_prefix_is_removed_from_errors() {
        let e = "E1202 15:33:21.263713   31756 run.go:72] \"command failed\" err=\"accumulating resources: \\\"x\\\" missing\"\n";
        assert_eq!(clean_error(e), "accumulating resources: \"x\" missing");
        assert_eq!(clean_error("Error: plain kustomize\n"), "plain kustomize");
    }

    /// A program at `dir/name` running the shell `script`.
    #[cfg(unix)]
    fn program(dir: &Path, name: &str, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[cfg(unix)]
    #[test]
    fn a_kustomize_that_fails_version_silently_is_an_error_saying_so() {
        let tmp = tempfile::tempdir().unwrap();
        let silent = program(tmp.path(), "silent", "exit 1");
        let e = KustomizeBinary::open(silent.clone(), Duration::from_secs(10), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "`{0}` is not a kustomize that works: `{0} version` exited with status 1 and \
                 printed nothing; pass --kustomize PATH naming kustomize (or kubectl)",
                silent.display()
            )
        );
        let loud = program(
            tmp.path(),
            "loud",
            "echo 'Error: no such command' >&2; exit 2",
        );
        let e = KustomizeBinary::open(loud, Duration::from_secs(10), None).unwrap_err();
        assert!(
            e.to_string()
                .contains("exited with status 2: no such command;"),
            "{e}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_build_that_fails_silently_says_how_the_program_ended() {
        let tmp = tempfile::tempdir().unwrap();
        let fake = program(
            tmp.path(),
            "kustomize",
            "[ \"$1\" = version ] && { echo v5.8.1; exit 0; }; exit 3",
        );
        let k = KustomizeBinary::open(fake.clone(), Duration::from_secs(10), None).unwrap();
        let e = k.run(tmp.path(), false, false).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "kustomize build failed: `{}` exited with status 3 and printed nothing",
                fake.display()
            )
        );
    }
}

#[cfg(test)]
mod version_tests {
    use super::*;

    // What kustomize v5 (`v5.8.1`), kustomize v4 and kubectl 1.32 report.
    #[test]
    fn kustomize_version_is_read_from_every_binary_s_report() {
        assert_eq!(kustomize_semver("v5.8.1\n").as_deref(), Some("v5.8.1"));
        assert_eq!(
            kustomize_semver("{Version:kustomize/v4.5.7 GitCommit:56d82a8 BuildDate:2022-08-02T16:35:54Z GoOs:linux GoArch:amd64}").as_deref(),
            Some("v4.5.7")
        );
        assert_eq!(kustomize_semver(" v5.5.0").as_deref(), Some("v5.5.0"));
        assert_eq!(kustomize_semver("unknown"), None);
        assert_eq!(kustomize_semver("(devel)"), None);
    }

    // kustomize-controller v1.9.x builds with kustomize api v0.21.1, that is kustomize v5.8.1.
    #[test]
    fn a_kustomize_other_than_v5_8_1_is_warned_about() {
        let p = Path::new("/usr/bin/kustomize");
        assert_eq!(version_warning(p, false, "v5.8.1\n"), None);
        let w = version_warning(Path::new("/usr/bin/kubectl"), true, "v5.5.0").unwrap();
        assert!(w.starts_with("fluxsim: warning: /usr/bin/kubectl (kubectl's built-in kustomize v5.5.0) is not kustomize v5.8.1"), "{w}");
        let w = version_warning(p, false, "(devel)").unwrap();
        assert!(w.contains("of unknown version: `(devel)`"), "{w}");
    }
}
