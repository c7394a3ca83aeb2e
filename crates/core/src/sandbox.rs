//! The box every tool fluxsim runs goes in (kustomize, helm, git): what it may see, reach and
//! spend. The repository is untrusted (a pull request), and whatever a tool prints may end up
//! in a public comment, so a tool gets:
//!
//! - **a cleared environment**: `PATH`, then homes and `TMPDIR` in the run's scratch folder
//!   (no `GITHUB_TOKEN`, no cloud credentials, no user configuration), plus what the caller
//!   sets; proxy and certificate variables only when the network is allowed;
//! - **the scratch folder as its working directory**, never the repository;
//! - **no network unless asked** (`--allow-network`, `--fetch-charts`): a network namespace of
//!   its own when the kernel lets fluxsim make one (as root, or in a user namespace), and
//!   Landlock's TCP rules (Linux 6.7+) in any case;
//! - **a confined file system** where the caller asks for it (kustomize, helm): Landlock rules
//!   that let it read the scratch folder, its own binary and the system's libraries and
//!   certificates, nothing else (not the repository's `.git`, not `/proc`, not `$HOME`);
//! - **limits**: address space (`RLIMIT_AS`), size of the files it writes (`RLIMIT_FSIZE`),
//!   no core dumps, bytes read from its stdout and stderr, and time; its process group is
//!   killed on every exit path, and the kernel kills it when fluxsim dies
//!   (`PR_SET_PDEATHSIG`), SIGKILL included.
//!
//! The kernel features are best effort (Landlock, namespaces): what this machine gives is
//! [`isolation`]; the checks that decide what a tool is handed (the build closure's network
//! and root checks, argument validation) do not depend on them.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::scratch::{Captured, Group, RunError};

/// Address space a tool may map: a bound on its memory that its allocator hits before the
/// machine's (Go reserves address space lazily, so this is close to what it uses).
pub const MEMORY_LIMIT: u64 = 4 << 30;
/// Bytes a tool may write to one file (a clone, helm's cache).
pub const FILE_SIZE_LIMIT: u64 = 1 << 30;
/// Bytes read from a tool's stdout: as much as one Kustomization's substituted output may
/// hold (postbuild's `KUSTOMIZATION_OUTPUT_LIMIT` is this bound).
pub const OUTPUT_LIMIT: usize = 256 << 20;
/// Bytes kept of a tool's stderr (the rest is read and dropped, so the tool never blocks).
pub const STDERR_LIMIT: usize = 1 << 20;

/// Folders and files of the system a confined tool may read and execute: its dynamic
/// libraries, their cache, time zones and certificates (for a clone over HTTPS when the
/// network is allowed). Missing ones are skipped.
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/ssl",
    "/etc/pki",
    "/etc/ca-certificates",
    "/etc/gitconfig",
    "/dev/null",
    "/dev/urandom",
    "/dev/random",
];

/// What a networked tool also reads: name resolution.
const NETWORK_READ: &[&str] = &["/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"];

/// Variables a tool keeps when the network is allowed (the user's proxy and trust store).
const NETWORK_ENV: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// git settings of a networked tool's clones (`git-config(1)`): no redirects, no
/// credential helper of the machine.
const GIT_NETWORK_CONFIG: &[(&str, &str)] =
    &[("http.followRedirects", "false"), ("credential.helper", "")];

/// The environment variable naming a PEM bundle of trusted CAs, in place of the Mozilla
/// roots: fluxsim's own requests (`crate::net::fetch`) and the networked tools trust it.
pub const CA_FILE_ENV: &str = "FLUXSIM_CA_FILE";

/// The PEM file `FLUXSIM_CA_FILE` names, as an absolute path (the tool runs in another
/// folder), when it is set.
fn private_ca() -> Option<PathBuf> {
    let file = std::env::var_os(CA_FILE_ENV).filter(|v| !v.is_empty())?;
    std::path::absolute(file).ok()
}

/// One run of a tool, in the box.
#[derive(Debug, Clone)]
pub struct Tool {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
    timeout: Duration,
    network: bool,
    git_http: bool,
    git_config: Vec<(String, String)>,
    confine: bool,
    readable: Vec<PathBuf>,
    output_limit: usize,
}

/// What the kernel gives the box on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Isolation {
    /// The Landlock ABI (0: none): 1+ confines reads, 4+ TCP, 6+ abstract sockets and
    /// signals.
    pub landlock_abi: i32,
    /// A network namespace can be made for a tool.
    pub network_namespace: bool,
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fs = if self.landlock_abi >= 1 {
            format!("Landlock ABI {} (file system", self.landlock_abi)
        } else {
            "no Landlock (file system not confined".to_string()
        };
        let tcp = if self.landlock_abi >= 4 { ", TCP" } else { "" };
        let ns = if self.network_namespace {
            "network namespace"
        } else {
            "no network namespace"
        };
        write!(f, "{fs}{tcp}), {ns}")
    }
}

/// What this machine's kernel lets the box do (asked once, by making a network namespace in a
/// child process).
pub fn isolation() -> Isolation {
    static ISOLATION: std::sync::OnceLock<Isolation> = std::sync::OnceLock::new();
    *ISOLATION.get_or_init(|| Isolation {
        landlock_abi: landlock_abi(),
        network_namespace: probe_network_namespace(),
    })
}

#[cfg(target_os = "linux")]
fn landlock_abi() -> i32 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only asks for
    // the ABI version; it creates nothing.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    i32::try_from(r).unwrap_or(0).max(0)
}

#[cfg(not(target_os = "linux"))]
fn landlock_abi() -> i32 {
    0
}

fn probe_network_namespace() -> bool {
    let Some(sh) = ["/bin/sh", "/usr/bin/sh"]
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
    else {
        return false;
    };
    let mut cmd = Command::new(sh);
    cmd.arg("-c")
        .arg("exit 0")
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: only unshare(2) and _exit(2), both async-signal-safe, run between fork
        // and exec.
        unsafe {
            cmd.pre_exec(|| {
                if enter_network_namespace() {
                    Ok(())
                } else {
                    libc::_exit(3)
                }
            });
        }
    }
    cmd.status().is_ok_and(|s| s.success()) && cfg!(target_os = "linux")
}

/// Moves the calling (forked, single-threaded) process into a new network namespace: directly
/// when it may (root), else inside a new user namespace. Only syscalls: safe after fork.
#[cfg(target_os = "linux")]
fn enter_network_namespace() -> bool {
    // SAFETY: unshare(2) takes flags only.
    unsafe {
        libc::unshare(libc::CLONE_NEWNET) == 0
            || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0
    }
}

impl Tool {
    /// `program`, to be run with a timeout; no network, file system not confined, until
    /// said otherwise.
    pub fn new(program: impl Into<PathBuf>, timeout: Duration) -> Tool {
        Tool {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            dir: None,
            timeout,
            network: false,
            git_http: false,
            git_config: Vec::new(),
            confine: false,
            readable: Vec::new(),
            output_limit: OUTPUT_LIMIT,
        }
    }

    /// Adds an argument. One that comes from the repository must be validated first, and
    /// passed after `--` or as `--flag=VALUE`, so that it is never read as a flag.
    #[must_use]
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Tool {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Tool
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// Sets a variable of the tool's (otherwise cleared) environment.
    #[must_use]
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Tool {
        self.env
            .push((key.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// The working directory (default: the run's scratch folder).
    #[must_use]
    pub fn dir(mut self, dir: impl Into<PathBuf>) -> Tool {
        self.dir = Some(dir.into());
        self
    }

    /// Lets the tool reach the network (the user asked: `--allow-network`, `--fetch-charts`).
    #[must_use]
    pub fn network(mut self, allowed: bool) -> Tool {
        self.network = allowed;
        self
    }

    /// Lets git (which kustomize clones remote bases with) use plain http as well as https
    /// and ssh, with the network: fluxsim.toml's `[network] insecure` names hosts, and every
    /// remote entry was checked against it before the tool runs (plain http to those hosts
    /// only). A remote base that a fetched base names in turn is not checked by fluxsim.
    #[must_use]
    pub fn git_http(mut self, allowed: bool) -> Tool {
        self.git_http = allowed;
        self
    }

    /// One more git setting of a networked tool's clones (`git-config(1)` through
    /// `GIT_CONFIG_KEY_n`, after fluxsim's own, which it cannot undo: no redirect is
    /// followed, no credential helper of the machine is asked): a credential fluxsim.toml
    /// names for one host, as `http.<url>.extraHeader`.
    #[must_use]
    pub fn git_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Tool {
        self.git_config.push((key.into(), value.into()));
        self
    }

    /// Confines the tool's file system: it reads and writes the scratch folder, reads the
    /// system's libraries and its own binary, and whatever [`Tool::readable`] adds.
    #[must_use]
    pub fn confined(mut self) -> Tool {
        self.confine = true;
        self
    }

    /// A folder or file a confined tool may also read.
    #[must_use]
    pub fn readable(mut self, path: impl Into<PathBuf>) -> Tool {
        self.readable.push(path.into());
        self
    }

    /// The bytes read from stdout before the tool is stopped (default [`OUTPUT_LIMIT`]).
    #[must_use]
    pub fn output_limit(mut self, bytes: usize) -> Tool {
        self.output_limit = bytes;
        self
    }

    /// The program.
    #[must_use]
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// Runs the tool, stdin closed, stdout and stderr read (bounded); its process group ended
    /// on timeout, on a bound, on a signal and when it is done.
    pub fn run(&self) -> Result<Captured, RunError> {
        let scratch = crate::scratch::run_dir().map_err(RunError::Start)?;
        let home = scratch.join("tool-home");
        std::fs::create_dir_all(&home).map_err(RunError::Start)?;
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args)
            .env_clear()
            .current_dir(self.dir.as_deref().unwrap_or(&home))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        for var in ["HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"] {
            cmd.env(var, &home);
        }
        cmd.env("TMPDIR", scratch);
        if self.network {
            for var in NETWORK_ENV {
                if let Some(v) = std::env::var_os(var) {
                    cmd.env(var, v);
                }
            }
            // git (kustomize clones remote bases with it) follows no redirect: fluxsim
            // checked the host it was given, not the one a redirect would name; nor does it
            // use any transport but https and ssh (no `ext::`, `file://`), nor plain http
            // unless fluxsim.toml names insecure hosts.
            let config = GIT_NETWORK_CONFIG.iter().map(|(k, v)| (*k, *v)).chain(
                self.git_config
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            );
            let mut count = 0;
            for (i, (key, value)) in config.enumerate() {
                cmd.env(format!("GIT_CONFIG_KEY_{i}"), key);
                cmd.env(format!("GIT_CONFIG_VALUE_{i}"), value);
                count = i + 1;
            }
            cmd.env("GIT_CONFIG_COUNT", count.to_string());
            cmd.env(
                "GIT_ALLOW_PROTOCOL",
                if self.git_http {
                    "https:ssh:http"
                } else {
                    "https:ssh"
                },
            );
            cmd.env("GIT_TERMINAL_PROMPT", "0");
            // The private CA fluxsim trusts in place of the Mozilla roots is the one the
            // tool's clones and downloads trust too: git's (`http.sslCAInfo`), Go's
            // (kustomize's and helm's `SSL_CERT_FILE`).
            if let Some(ca) = private_ca() {
                cmd.env("GIT_SSL_CAINFO", &ca).env("SSL_CERT_FILE", &ca);
            }
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        // Kept open until the child has forked: the child enforces it.
        let _ruleset = self.fence(&mut cmd, scratch)?;
        let mut group = Group::spawn(&mut cmd).map_err(RunError::Start)?;
        let out = bounded_reader(group.child().stdout.take(), self.output_limit);
        let err = bounded_reader(group.child().stderr.take(), STDERR_LIMIT);
        let start = Instant::now();
        let status = loop {
            if out.1.load(std::sync::atomic::Ordering::Relaxed) {
                group.kill();
                return Err(RunError::Output(self.output_limit));
            }
            match group.child().try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if start.elapsed() > self.timeout => {
                    group.kill();
                    return Err(RunError::Timeout(self.timeout));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(RunError::Wait(e)),
            }
        };
        // What the leader started may still hold the pipes open: end the group first.
        drop(group);
        let (stdout, over) = (out.0.join().unwrap_or_default(), out.1);
        if over.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunError::Output(self.output_limit));
        }
        let stderr = err.0.join().unwrap_or_default();
        if !status.success() && out_of_memory(&stderr) {
            return Err(RunError::Memory(MEMORY_LIMIT));
        }
        Ok(Captured {
            status,
            stdout,
            stderr,
        })
    }

    /// Sets what runs in the child between fork and exec: limits, the death signal, the
    /// network namespace and the Landlock ruleset (made here, in the parent, and only
    /// enforced in the child).
    #[cfg(target_os = "linux")]
    fn fence(
        &self,
        cmd: &mut Command,
        scratch: &Path,
    ) -> Result<Option<std::os::fd::OwnedFd>, RunError> {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let ruleset = self.ruleset(scratch).map_err(RunError::Start)?;
        let fd = ruleset.as_ref().map(AsRawFd::as_raw_fd);
        let deny_network = !self.network && isolation().network_namespace;
        let parent = std::process::id();
        // SAFETY: the closure runs in the forked child and makes only async-signal-safe
        // system calls (setrlimit, prctl, getppid, unshare, syscall, _exit); the ruleset's
        // file descriptor is returned to the caller, which keeps it open across the spawn.
        unsafe {
            cmd.pre_exec(move || {
                let limit = |resource, value: u64| {
                    let lim = libc::rlimit {
                        rlim_cur: value,
                        rlim_max: value,
                    };
                    libc::setrlimit(resource, &raw const lim);
                };
                limit(libc::RLIMIT_AS, MEMORY_LIMIT);
                limit(libc::RLIMIT_FSIZE, FILE_SIZE_LIMIT);
                limit(libc::RLIMIT_CORE, 0);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // fluxsim died before the line above: nobody is left to read the output.
                if libc::getppid() as u32 != parent {
                    libc::_exit(137);
                }
                if deny_network && !enter_network_namespace() {
                    return Err(io::Error::last_os_error());
                }
                if let Some(fd) = fd {
                    libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
                    if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        Ok(ruleset)
    }

    #[cfg(not(target_os = "linux"))]
    fn fence(&self, _cmd: &mut Command, _scratch: &Path) -> Result<Option<()>, RunError> {
        Ok(None)
    }

    /// The Landlock ruleset of this run, or `None` when there is nothing to enforce (an
    /// unconfined tool allowed the network, or a kernel without Landlock).
    #[cfg(target_os = "linux")]
    fn ruleset(&self, scratch: &Path) -> io::Result<Option<std::os::fd::OwnedFd>> {
        use landlock::{
            path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr,
            RulesetCreatedAttr, Scope, ABI,
        };
        let abi = isolation().landlock_abi;
        if abi < 1 || (!self.confine && (self.network || abi < 4)) {
            return Ok(None);
        }
        let err = |e: landlock::RulesetError| io::Error::other(e.to_string());
        let mut ruleset = Ruleset::default();
        if self.confine {
            ruleset = ruleset
                .handle_access(AccessFs::from_all(ABI::V6))
                .map_err(err)?;
        }
        if !self.network {
            ruleset = ruleset
                .handle_access(AccessNet::from_all(ABI::V6))
                .map_err(err)?;
            if abi >= 6 {
                ruleset = ruleset.scope(Scope::from_all(ABI::V6)).map_err(err)?;
            }
        }
        let mut created = ruleset.create().map_err(err)?;
        if self.confine {
            let read = AccessFs::from_read(ABI::V6);
            let mut readable: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
            if self.network {
                readable.extend(NETWORK_READ.iter().map(PathBuf::from));
                readable.extend(private_ca());
            }
            readable.push(self.program.clone());
            readable.extend(self.readable.iter().cloned());
            readable.retain(|p| p.exists());
            created = created
                .add_rules(path_beneath_rules(&readable, read))
                .map_err(err)?
                .add_rules(path_beneath_rules([scratch], AccessFs::from_all(ABI::V6)))
                .map_err(err)?
                .add_rules(path_beneath_rules(
                    ["/dev/null"],
                    AccessFs::from_all(ABI::V6),
                ))
                .map_err(err)?;
        }
        Ok(created.into())
    }
}

/// A thread reading `pipe` to its end, keeping at most `limit` bytes; the flag is set when
/// more came (the caller then stops the tool).
fn bounded_reader(
    pipe: Option<impl Read + Send + 'static>,
    limit: usize,
) -> (
    std::thread::JoinHandle<Vec<u8>>,
    std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    let over = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&over);
    let handle = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let Some(mut pipe) = pipe else {
            return buf;
        };
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = limit.saturating_sub(buf.len());
                    buf.extend_from_slice(&chunk[..n.min(room)]);
                    if n > room {
                        flag.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        }
        buf
    });
    (handle, over)
}

/// Whether a failed tool's stderr says its allocator hit the memory bound (Go's runtime:
/// `fatal error: runtime: out of memory`; C: `Cannot allocate memory`).
fn out_of_memory(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr);
    text.contains("runtime: out of memory")
        || text.contains("fatal error: out of memory")
        || text.contains("Cannot allocate memory")
        || text.contains("cannot allocate memory")
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Tool {
        Tool::new("/bin/sh", Duration::from_secs(30))
            .arg("-c")
            .arg(script)
    }

    fn stdout(c: &Captured) -> String {
        String::from_utf8_lossy(&c.stdout).into_owned()
    }

    #[test]
    fn a_tool_sees_only_path_and_homes_in_the_scratch_folder() {
        // Every variable but PATH of this process (cargo's, the user's) must stay out.
        assert!(
            std::env::vars().count() > 1,
            "a test run has more than PATH"
        );
        let out = sh("env; echo cwd=$(pwd)").run().unwrap();
        let text = stdout(&out);
        let scratch = crate::scratch::run_dir().unwrap();
        for line in text.lines() {
            let Some((k, v)) = line.split_once('=') else {
                continue;
            };
            match k {
                "PATH" | "PWD" | "SHLVL" | "_" | "OLDPWD" => {}
                "HOME" | "XDG_CONFIG_HOME" | "XDG_CACHE_HOME" | "XDG_DATA_HOME" | "TMPDIR"
                | "cwd" => {
                    assert!(
                        Path::new(v).starts_with(scratch),
                        "{k}={v} outside the scratch"
                    );
                }
                other => panic!("{other} reached the tool: {text}"),
            }
        }
        assert!(text.contains("cwd="), "{text}");
    }

    // git refuses plain http unless fluxsim.toml names insecure hosts (kustomize's clone of
    // a remote base on such a host failed with "transport 'http' not allowed").
    #[test]
    fn a_networked_tool_s_git_uses_plain_http_only_when_allowed() {
        let protocols = |git_http: bool| {
            let out = sh("echo \"$GIT_ALLOW_PROTOCOL\"")
                .network(true)
                .git_http(git_http)
                .run()
                .unwrap();
            stdout(&out).trim().to_string()
        };
        assert_eq!(protocols(false), "https:ssh");
        assert_eq!(protocols(true), "https:ssh:http");
        // Without the network git reaches nothing, whatever it is allowed.
        let off = sh("echo \"${GIT_ALLOW_PROTOCOL-unset}\"")
            .git_http(true)
            .run()
            .unwrap();
        assert_eq!(stdout(&off).trim(), "unset");
    }

    #[test]
    fn a_tool_runs_with_fluxsim_s_memory_and_file_size_limits() {
        let out = sh("ulimit -v; ulimit -f; ulimit -c").run().unwrap();
        let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
        assert_eq!(
            lines,
            vec![
                (MEMORY_LIMIT >> 10).to_string(),
                // `ulimit -f` counts blocks of 512 bytes in POSIX sh (dash), 1024 in bash.
                lines[1].clone(),
                "0".to_string()
            ]
        );
        let blocks: u64 = lines[1].parse().unwrap();
        assert!(blocks == FILE_SIZE_LIMIT / 512 || blocks == FILE_SIZE_LIMIT / 1024);
    }

    #[test]
    fn a_tool_that_prints_more_than_the_bound_is_stopped_with_fluxsim_s_error() {
        let err = sh("while :; do echo yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; done")
            .output_limit(1 << 20)
            .run()
            .unwrap_err();
        assert!(matches!(err, RunError::Output(n) if n == 1 << 20), "{err}");
        assert!(
            err.to_string().contains("fluxsim's bound of 1 MiB"),
            "{err}"
        );
    }

    #[test]
    fn an_allocator_that_hits_the_memory_bound_is_reported_as_fluxsim_s_bound() {
        assert!(out_of_memory(
            b"fatal error: runtime: out of memory\n\ngoroutine 1"
        ));
        assert!(!out_of_memory(b"Error: template: x.yaml:1: unexpected EOF"));
    }

    #[test]
    fn a_confined_tool_reads_the_scratch_folder_and_nothing_outside_it() {
        if isolation().landlock_abi < 1 {
            eprintln!("skipped: this kernel has no Landlock ({})", isolation());
            return;
        }
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.yaml");
        std::fs::write(&secret, "outside-marker").unwrap();
        let inside = crate::scratch::tempdir(crate::scratch::Kind::Overlay).unwrap();
        std::fs::write(inside.path().join("in.yaml"), "inside-marker").unwrap();
        let script = format!(
            "cat {}/in.yaml; cat {} /etc/passwd /proc/self/environ 2>/dev/null; echo done",
            inside.path().display(),
            secret.display()
        );
        let out = sh(&script).confined().run().unwrap();
        let text = stdout(&out);
        assert!(
            text.contains("inside-marker") && text.contains("done"),
            "{text}"
        );
        assert!(!text.contains("outside-marker"), "{text}");
        assert!(!text.contains("root:"), "{text}");
        // Unconfined, the same script reads it: the check above can fail.
        let open = sh(&script).run().unwrap();
        assert!(stdout(&open).contains("outside-marker"));
    }

    #[test]
    fn a_tool_without_the_network_cannot_reach_a_local_server() {
        let iso = isolation();
        if !iso.network_namespace && iso.landlock_abi < 4 {
            eprintln!("skipped: this kernel cannot keep a tool off the network ({iso})");
            return;
        }
        let Some(bash) = ["/bin/bash", "/usr/bin/bash"]
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
        else {
            return;
        };
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        server.set_nonblocking(true).unwrap();
        let port = server.local_addr().unwrap().port();
        let script = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
        let run = |network: bool| {
            Tool::new(bash, Duration::from_secs(30))
                .arg("-c")
                .arg(&script)
                .network(network)
                .run()
                .unwrap()
        };
        let denied = run(false);
        assert!(!stdout(&denied).contains("connected"));
        assert!(server.accept().is_err(), "a connection reached the server");
        // Allowed, the same tool connects: the check above can fail.
        let allowed = run(true);
        assert!(stdout(&allowed).contains("connected"), "{allowed:?}");
    }
}
