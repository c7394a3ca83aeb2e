//! What fluxsim leaves on the machine while it runs, and takes back on every exit path:
//! its temporary folders (all inside one folder per run) and the process groups of the
//! tools it runs (kustomize and what kustomize starts: git, helm).
//!
//! This is the one module with process-wide state, on purpose: a signal arrives on a thread
//! of its own and cannot reach values owned by the threads it interrupts, so whatever a
//! signal must undo is registered here as it is made. A run that is killed outright
//! (SIGKILL, a power cut) leaves its folder behind; the next run removes the folders of
//! runs whose process is gone ([`sweep_stale`]).

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The name every run folder starts with: `fluxsim-<pid>-<random>`.
const RUN_PREFIX: &str = "fluxsim-";
/// The file that marks a folder as fluxsim's own, so a sweep never removes anything else.
pub const MARKER: &str = ".fluxsim-scratch";
/// What a run folder's [`MARKER`] holds.
const RUN_MARKER_TEXT: &str = "fluxsim run folder\n";

// String: the run folder's io::Error (not Clone) made once and returned to every caller of
// the run: kept as the text each one shows.
static RUN_DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
/// The process groups of running tools; `None` once a signal has arrived, so that no new
/// tool starts while the handler cleans up.
static GROUPS: Mutex<Option<BTreeSet<i32>>> = Mutex::new(Some(BTreeSet::new()));
static EXTRA: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
/// Set when a signal arrives: the handler owns the exit from then on.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Held while folders are moved into place, so a signal waits for the move to finish
/// rather than remove a folder half-way through it.
static MOVING: Mutex<()> = Mutex::new(());

/// Removes the folders that dead runs left under the system's temporary folder, each once
/// it is proved a run folder: its marker says so and `git_tracks_anything_in` (git's
/// answer, `source::git::tracks_anything_in`) says it is no folder of a repository.
pub fn sweep_dead_runs(git_tracks_anything_in: &dyn Fn(&Path) -> bool) {
    sweep_stale(&std::env::temp_dir(), RUN_PREFIX, &|dir| {
        sweep_run_dir(dir, git_tracks_anything_in);
    });
}

/// This run's folder under the system's temporary folder, made on first use.
pub fn run_dir() -> io::Result<&'static Path> {
    RUN_DIR
        .get_or_init(|| {
            let tmp = std::env::temp_dir();
            let dir = tempfile::Builder::new()
                .prefix(&format!("{RUN_PREFIX}{}-", std::process::id()))
                .tempdir_in(&tmp)
                .map_err(|e| format!("creating a temporary folder in {}: {e}", tmp.display()))?
                .keep();
            std::fs::write(dir.join(MARKER), RUN_MARKER_TEXT)
                .map_err(|e| format!("writing in {}: {e}", dir.display()))?;
            Ok(dir)
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(|e| io::Error::other(e.clone()))
}

/// What a temporary folder holds; its name says it (`fluxsim-<kind>-<random>`), and
/// [`scrub`] knows every one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A copy of a source tree, or of what a view shows, for a program that reads the disk.
    Source,
    /// A name for a view of a tree (an empty folder: the view's files are read elsewhere).
    View,
    /// A build's input closure or generated kustomization, for the kustomize binary.
    Overlay,
    /// Substituted objects printed again by the kustomize binary.
    Postbuild,
    /// A chart and its values, for `helm template` (`src/helm`).
    Helm,
    /// A ResourceSet and its inputs, for `flux-operator build rset`, or its objects printed
    /// again (`resourceset`).
    ResourceSet,
    /// Policies, the objects they judge and the render's CRDs, for `kyverno apply`.
    Policy,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Source => "fluxsim-source-",
            Kind::View => "fluxsim-view-",
            Kind::Overlay => "fluxsim-overlay-",
            Kind::Postbuild => "fluxsim-postbuild-",
            Kind::Helm => "fluxsim-helm-",
            Kind::ResourceSet => "fluxsim-rset-",
            Kind::Policy => "fluxsim-policy-",
        }
    }
}

/// A new temporary folder inside this run's folder, removed when dropped (and with the run
/// folder on any exit).
pub fn tempdir(kind: Kind) -> io::Result<tempfile::TempDir> {
    // Nothing new once a signal's cleanup has begun: it could outlive the removal.
    if STOPPING.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(io::Error::other("fluxsim is stopping on a signal"));
    }
    tempfile::Builder::new()
        .prefix(kind.prefix())
        .tempdir_in(run_dir()?)
}

/// `message` without the paths of fluxsim's temporary folders (up to and including the
/// folder of each [`Kind`]), so that a build error names files as the repository does and
/// reads the same on every run, whichever cluster's folder a shared build ran in.
#[must_use]
pub fn scrub(message: &str) -> String {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"[^\s'\x22]*fluxsim-(?:source|view|overlay|postbuild|helm|rset|policy)-[A-Za-z0-9]+(?:\.virtual)?/",
        )
        .expect("static regex")
    })
    .replace_all(message, "")
    .into_owned()
}

/// Keeps `path` (a folder fluxsim made outside its run folder, such as `--out`'s staging
/// folder) on the list of what a signal removes, until [`release`] is called.
pub fn hold(path: &Path) {
    EXTRA
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(path.to_path_buf());
}

/// Takes `path` off the list kept by [`hold`].
pub fn release(path: &Path) {
    EXTRA
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(path);
}

/// Runs `f` (renames that put output in place) without a signal's cleanup in the middle.
pub fn uninterrupted<T>(f: impl FnOnce() -> T) -> T {
    let _moving = MOVING.lock().unwrap_or_else(PoisonError::into_inner);
    f()
}

/// Waits for the signal handler's exit when a signal has arrived, so that a command whose
/// builds a signal cut short neither prints their failures nor exits with its own status.
pub fn yield_to_signal() {
    if STOPPING.load(std::sync::atomic::Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
}

/// Removes this run's folder. Called once the command is done (and by the signal handler).
pub fn finish() {
    if let Some(Ok(dir)) = RUN_DIR.get() {
        remove_tree(dir);
    }
}

/// Removes a folder, trying again briefly when a thread still writing into it makes the
/// removal fail (a signal can arrive in the middle of a build).
fn remove_tree(dir: &Path) {
    // Up to 2 s: on a loaded machine the threads writing into it take a while to notice
    // that the builds they serve are over (tests/it/security.rs under the whole suite).
    for _ in 0..200 {
        match std::fs::remove_dir_all(dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            _ => return,
        }
    }
}

/// Calls `sweep` on each folder in `parent` whose name starts with `prefix` followed by the
/// id of a process that is gone (not a symbolic link): what a killed run may have left.
/// `sweep` removes it only once it has proved the folder fluxsim's: a name is no proof, as a
/// repository can hold a folder of any name.
pub fn sweep_stale(parent: &Path, prefix: &str, sweep: &dyn Fn(&Path)) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        // Never follow a symbolic link.
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || pid == std::process::id() || process_alive(pid) {
            continue;
        }
        sweep(&entry.path());
    }
}

/// Removes `dir`, a run folder a dead run left, when it is one: its [`MARKER`] is a plain file
/// that says so, and git tracks nothing in it (a temporary folder inside a repository's work
/// tree may be a folder of the repository).
fn sweep_run_dir(dir: &Path, git_tracks_anything_in: &dyn Fn(&Path) -> bool) {
    let marked = std::fs::symlink_metadata(dir.join(MARKER)).is_ok_and(|m| m.is_file())
        && std::fs::read_to_string(dir.join(MARKER)).is_ok_and(|t| t == RUN_MARKER_TEXT);
    if marked && !git_tracks_anything_in(dir) {
        remove_tree(dir);
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // kill(pid, 0) checks for existence; EPERM means it exists under another user.
    // SAFETY: signal 0 sends nothing; the call only reports whether `pid` exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    // Without a way to tell, nothing is swept.
    true
}

/// A child process running in a process group of its own, registered so that a signal to
/// fluxsim kills the whole group; dropping it kills what is left of the group.
pub struct Group {
    child: Child,
    id: i32,
}

impl Group {
    /// Starts `cmd` as the leader of a new process group.
    pub fn spawn(cmd: &mut Command) -> io::Result<Group> {
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        // Registered before the spawn returns to any other thread's view: the lock is held
        // across the spawn so a signal handler sees either no child or its group.
        let mut groups = GROUPS.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(groups) = groups.as_mut() else {
            return Err(io::Error::other("fluxsim is stopping on a signal"));
        };
        let child = cmd.spawn()?;
        let id = child.id() as i32;
        groups.insert(id);
        Ok(Group { child, id })
    }

    /// The child process.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Kills every process of the group (the child and whatever it started) and reaps the
    /// child.
    pub fn kill(&mut self) {
        kill_group(self.id);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // The leader has exited when the build is done, but what it started may not have.
        kill_group(self.id);
        if let Some(groups) = GROUPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            groups.remove(&self.id);
        }
    }
}

/// What a tool run with [`run_captured`] gave.
#[derive(Debug)]
pub struct Captured {
    /// Its exit status.
    pub status: std::process::ExitStatus,
    /// Everything it wrote on stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote on stderr.
    pub stderr: Vec<u8>,
}

/// Why [`run_captured`] gave no [`Captured`].
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The tool could not be started.
    #[error("{0}")]
    Start(io::Error),
    /// It ran longer than the timeout (its whole process group was ended).
    #[error("timed out after {0:?}")]
    Timeout(std::time::Duration),
    /// Waiting for it failed.
    #[error("{0}")]
    Wait(io::Error),
    /// It printed more than fluxsim reads of a tool (it was stopped).
    #[error("printed more than fluxsim's bound of {} MiB on stdout (stopped)", .0 >> 20)]
    Output(usize),
    /// Its allocator hit fluxsim's memory bound (`RLIMIT_AS`).
    #[error("ran out of fluxsim's memory bound of {} GiB for a tool (RLIMIT_AS)", .0 >> 30)]
    Memory(u64),
}

/// The first file called `name` in a folder of `PATH`: where a tool fluxsim runs (kustomize,
/// kubectl, helm) is, when it is not named on the command line.
pub fn on_path(name: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs `cmd` in its own process group (ended on timeout or signal, as kustomize is),
/// stdin closed, stdout and stderr read whole.
pub fn run_captured(cmd: &mut Command, timeout: std::time::Duration) -> Result<Captured, RunError> {
    use std::io::Read;
    use std::process::Stdio;
    let mut group = Group::spawn(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .map_err(RunError::Start)?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        group
            .child()
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        group
            .child()
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = std::time::Instant::now();
    let status = loop {
        match group.child().try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > timeout => {
                group.kill();
                return Err(RunError::Timeout(timeout));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(5)),
            Err(e) => return Err(RunError::Wait(e)),
        }
    };
    // What the leader started may still hold the pipes open: end the group first.
    drop(group);
    Ok(Captured {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

#[cfg(unix)]
fn kill_group(id: i32) {
    // SAFETY: a negative pid addresses the process group `id`, which this process made.
    unsafe {
        libc::kill(-id, libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_id: i32) {}

/// On SIGINT, SIGTERM or SIGHUP: kills every registered process group, removes this run's
/// folder and every held folder, and exits with 128 + the signal's number, as a shell does.
pub fn install_signal_handlers() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                STOPPING.store(true, std::sync::atomic::Ordering::SeqCst);
                let groups = GROUPS
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take()
                    .unwrap_or_default();
                for id in groups {
                    kill_group(id);
                }
                // Never released: the process exits below.
                let moving = MOVING.lock().unwrap_or_else(PoisonError::into_inner);
                std::mem::forget(moving);
                let held: Vec<PathBuf> = EXTRA
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .iter()
                    .cloned()
                    .collect();
                for path in held {
                    remove_tree(&path);
                }
                finish();
                std::process::exit(128 + signal);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    /// What the binary gives `sweep_dead_runs`.
    fn git_tracks(dir: &Path) -> bool {
        !matches!(crate::source::git::tracks_anything_in(dir), Ok(false))
    }

    use super::*;

    #[test]
    fn scrub_takes_out_every_kind_of_temporary_folder() {
        for kind in [Kind::Source, Kind::View, Kind::Overlay, Kind::Postbuild] {
            let dir = tempdir(kind).unwrap();
            let msg = format!(
                "accumulating resources: '{}/apps/a.yaml': no such file",
                dir.path().display()
            );
            assert_eq!(
                scrub(&msg),
                "accumulating resources: 'apps/a.yaml': no such file",
                "{kind:?}"
            );
        }
        // The name reprinting gives substituted objects before they reach a disk.
        let virt = std::env::temp_dir().join("fluxsim-postbuild-0af3.virtual/kustomization.yaml");
        assert_eq!(
            scrub(&format!("in {}", virt.display())),
            "in kustomization.yaml"
        );
        assert_eq!(scrub("apps/fluxsim-notes.yaml"), "apps/fluxsim-notes.yaml");
    }

    #[test]
    fn a_sweep_removes_only_marked_folders_of_dead_processes() {
        let tmp = tempfile::tempdir().unwrap();
        // A pid that cannot be running: above the kernel's pid limit.
        let dead = "fluxsim-4194305-abc";
        let alive = format!("fluxsim-{}-abc", std::process::id());
        let unmarked = "fluxsim-4194306-abc";
        let mismarked = "fluxsim-4194307-abc";
        for name in [dead, alive.as_str(), unmarked, mismarked] {
            std::fs::create_dir(tmp.path().join(name)).unwrap();
            std::fs::write(tmp.path().join(name).join("file"), "x").unwrap();
        }
        std::fs::write(tmp.path().join(dead).join(MARKER), RUN_MARKER_TEXT).unwrap();
        std::fs::write(tmp.path().join(&alive).join(MARKER), RUN_MARKER_TEXT).unwrap();
        std::fs::write(tmp.path().join(mismarked).join(MARKER), "").unwrap();
        let other = "fluxsim-notapid-abc";
        std::fs::create_dir(tmp.path().join(other)).unwrap();
        std::fs::write(tmp.path().join(other).join(MARKER), RUN_MARKER_TEXT).unwrap();
        sweep_stale(tmp.path(), "fluxsim-", &|d| sweep_run_dir(d, &git_tracks));
        assert!(
            !tmp.path().join(dead).exists(),
            "a dead run's marked folder goes"
        );
        assert!(tmp.path().join(alive).exists(), "a live run's folder stays");
        assert!(
            tmp.path().join(unmarked).exists(),
            "a folder without the marker stays"
        );
        assert!(
            tmp.path().join(mismarked).exists(),
            "a folder whose marker fluxsim did not write stays"
        );
        assert!(
            tmp.path().join(other).exists(),
            "a name without a pid stays"
        );
    }

    #[test]
    fn a_sweep_leaves_a_marked_run_folder_that_git_tracks() {
        let tmp = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(tmp.path())
                .args(["-c", "user.email=t@example.invalid", "-c", "user.name=t"])
                .args(["-c", "commit.gpgsign=false"])
                .args(args)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        run(&["init", "-q"]);
        let committed = tmp.path().join("fluxsim-4194305-abc");
        std::fs::create_dir(&committed).unwrap();
        std::fs::write(committed.join(MARKER), RUN_MARKER_TEXT).unwrap();
        std::fs::write(committed.join("notes.md"), "tracked").unwrap();
        run(&["add", "-A"]);
        run(&["commit", "-qm", "a folder named like a run folder"]);
        sweep_stale(tmp.path(), "fluxsim-", &|d| sweep_run_dir(d, &git_tracks));
        assert!(committed.join("notes.md").is_file());
    }

    #[cfg(unix)]
    #[test]
    fn killing_a_group_kills_what_the_child_started() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("sleep 30 & echo $!; wait");
        cmd.stdout(std::process::Stdio::piped());
        let mut g = Group::spawn(&mut cmd).unwrap();
        let mut line = String::new();
        {
            use std::io::BufRead;
            let out = g.child().stdout.take().unwrap();
            std::io::BufReader::new(out).read_line(&mut line).unwrap();
        }
        let grandchild: u32 = line.trim().parse().unwrap();
        assert!(process_alive(grandchild));
        g.kill();
        // The grandchild is reparented to init, which reaps it; give it a moment.
        let gone = (0..200).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            !process_alive(grandchild)
                || std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
                    .is_ok_and(|s| s.contains(") Z "))
        });
        assert!(gone, "the child's own child survived the group kill");
    }
}
