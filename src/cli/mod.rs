//! The command line: flags defined in one place, one function per subcommand.

mod audit;
mod diff;
mod envsubst;
mod graph;
mod render;
pub mod vars;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// fluxsim renders, offline, exactly what Flux's kustomize-controller would apply from a
/// GitOps repository, and proves things about those renders.
#[derive(Debug, Parser)]
#[command(name = "fluxsim", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Substitute ${VAR} expressions in stdin exactly as Flux's postBuild does (like `flux envsubst`).
    ///
    /// Reads stdin, writes stdout. Only `${...}` is expanded; `$VAR` and `$(cmd)` are left
    /// alone and `$$` is an escape for `$`. Exit 0 on success, 1 on a substitution error,
    /// 2 on a usage or input error.
    Envsubst(envsubst::Args),
    /// Render every cluster's Flux Kustomizations as kustomize-controller would apply them.
    ///
    /// Discovers cluster roots, builds each Kustomization's spec.path with Flux's generator
    /// and kustomize, applies postBuild substitution, and prints one line per Kustomization
    /// with its SHA-256. Exit 1 when any Kustomization fails.
    Render(render::RenderArgs),
    /// Print one Kustomization's rendered artifact (like `flux build kustomization`).
    Build(render::BuildArgs),
    /// Find every way postBuild substitution can fail a Kustomization, silently empty a value
    /// or ship the wrong literal, with the file and line it comes from.
    ///
    /// Renders every cluster (as `render` does, tracking where each object came from) and
    /// checks each `${...}`, each var and each source. Exit 1 when a finding is at or above
    /// --fail-on (default: error), 2 on a usage or input error.
    Audit(audit::AuditArgs),
    /// Compare what every cluster applies at two revisions.
    ///
    /// Renders --base and --head (default: the work tree, uncommitted changes included) from
    /// git without touching the work tree, and reports each (cluster, Kustomization) artifact
    /// as identical, changed, added, removed or not compared (not rendered in base or head:
    /// failed, blocked, external, suspended), with a unified diff per changed object, and
    /// objects that move between Kustomizations. Exit 0 when nothing changed and everything
    /// was compared, 1 otherwise, 2 on errors.
    Diff(diff::DiffArgs),
    /// Compare clusters: their Kustomization graphs, templates, and the vars that differ.
    ///
    /// Exit 0 when the clusters run the same graph and templates (they differ only in var
    /// values), 1 when they differ in more or a Kustomization could not be compared (not
    /// rendered in some cluster), 2 on errors.
    Compare(diff::CompareArgs),
    /// Diff two revisions and check the harness with canaries before trusting the result.
    ///
    /// Plants a canary in each cluster's overlay and one in a shared path, in a temporary
    /// copy; each must change exactly the artifacts built from its file and, once removed,
    /// every digest must return. Exit 0 only when the diff meets --expect, every canary
    /// was detected and restored, and every Kustomization was compared (or --allow-blind);
    /// 1 otherwise; 2 on errors.
    Prove(diff::ProveArgs),
    /// Simulate a cold start of each cluster: can every Kustomization become Ready, and in
    /// what order?
    ///
    /// Prints the waves per cluster and findings (FS2xx) with file and line: dependsOn
    /// cycles and missing targets, custom resources whose CRD (objects whose Namespace) is
    /// not applied before them (a CRD no manifest defines is presumed to come from a Helm
    /// chart applied before, and said so), runtime and Helm CRDs (fluxsim.toml) that
    /// deadlock, substituteFrom sources not applied before,
    /// graphs that differ between clusters, `wait: true` on `wait: false`. Exit 1 on findings
    /// at or above --fail-on, 2 on a usage or input error.
    Graph(graph::Args),
}

/// The process exit statuses fluxsim uses everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Everything passed.
    Ok = 0,
    /// A finding: a substitution error, a changed artifact, a hazard.
    Finding = 1,
    /// Bad usage or bad input.
    Error = 2,
}

/// What a command gives back for [`run`] to print: its output, what stderr must say beside
/// it (why a Kustomization failed), and the exit status.
#[derive(Debug)]
pub(crate) struct Output {
    stdout: Vec<u8>,
    stderr: String,
    status: Status,
}

impl Output {
    /// `stdout` and the status.
    pub(crate) fn new(stdout: impl Into<Vec<u8>>, status: Status) -> Self {
        Output {
            stdout: stdout.into(),
            stderr: String::new(),
            status,
        }
    }

    /// Nothing on stdout, `stderr` said, and the status.
    pub(crate) fn stderr(stderr: String, status: Status) -> Self {
        Output {
            stdout: Vec::new(),
            stderr,
            status,
        }
    }
}

/// A command's result: its output, or an error (bad usage or input: exit 2).
pub(crate) type Outcome = anyhow::Result<Output>;

/// `Ok` with `status` when `passed` says so, `Finding` otherwise.
pub(crate) fn passed_or_finding(passed: bool) -> Status {
    if passed {
        Status::Ok
    } else {
        Status::Finding
    }
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> Self {
        ExitCode::from(s as u8)
    }
}

/// Parses the process arguments and runs the chosen subcommand.
pub fn run() -> ExitCode {
    crate::scratch::install_signal_handlers();
    let status = run_command();
    // Whatever a view or a build left in this run's temporary folder goes with it.
    crate::scratch::finish();
    status
}

fn run_command() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with success, usage errors to stderr.
            let _ = e.print();
            return if e.use_stderr() {
                Status::Error.into()
            } else {
                Status::Ok.into()
            };
        }
    };
    let outcome = match cli.command {
        Command::Envsubst(args) => envsubst::run(&args),
        Command::Render(args) => render::run_render(&args),
        Command::Build(args) => render::run_build(&args),
        Command::Audit(args) => audit::run_audit(&args),
        Command::Diff(args) => diff::run_diff(&args),
        Command::Compare(args) => diff::run_compare(&args),
        Command::Prove(args) => diff::run_prove(&args),
        Command::Graph(args) => graph::run(&args),
    };
    print_outcome(outcome).into()
}

/// Prints a command's outcome, the one place that writes what a command found. A reader
/// that closes the pipe early (`fluxsim render | head`) ends the output quietly, with the
/// command's own status, as ripgrep does; `print!` would panic there.
fn print_outcome(outcome: Outcome) -> Status {
    use std::io::Write as _;
    // Builds a signal cut short fail; their failures are not the run's outcome.
    crate::scratch::yield_to_signal();
    let out = match outcome {
        Ok(out) => out,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "fluxsim: error: {e}");
            return Status::Error;
        }
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&out.stdout).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            let _ = writeln!(std::io::stderr(), "fluxsim: error: writing stdout: {e}");
            return Status::Error;
        }
        _ => {}
    }
    if !out.stderr.is_empty() {
        let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    }
    out.status
}
