//! The command line: flags defined in one place, one function per subcommand.

mod audit;
mod diff;
mod envsubst;
mod git;
mod graph;
mod images;
mod render;
mod terminal;
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
    /// Colour diffs: `auto` when stdout is a terminal and NO_COLOR is unset.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    color: crate::report::limit::Color,
    /// Cut what is printed to at most N bytes, ending with a note of what was cut (a cut
    /// Markdown report keeps its code blocks and details closed; JSON is cut with a note on
    /// stderr).
    #[arg(long, global = true, value_name = "N")]
    limit_bytes: Option<usize>,
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
    /// List every container image each cluster runs, per Kustomization, or what changed
    /// between two revisions (`--diff`).
    ///
    /// Images come from pod templates (workloads, CronJobs, init containers; kustomize
    /// `images:` overrides are already applied by the build) and from HelmRelease `values`
    /// (`image:` strings and `repository`/`tag` maps). With --diff, exit 1 when an image
    /// changed, else 0; 2 on errors.
    Images(images::Args),
    /// Print a shell completion script: `fluxsim completions bash > /etc/bash_completion.d/fluxsim`.
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
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
/// it (why a Kustomization failed), and the exit status. Both are escaped for the terminal
/// where they are printed ([`print_outcome`]), as `kind` says: a command returns the
/// repository's text as it is.
#[derive(Debug)]
pub(crate) struct Output {
    stdout: Vec<u8>,
    stderr: String,
    status: Status,
    kind: crate::report::limit::Kind,
}

impl Output {
    /// `stdout` and the status.
    pub(crate) fn new(stdout: impl Into<Vec<u8>>, status: Status) -> Self {
        Output {
            stdout: stdout.into(),
            stderr: String::new(),
            status,
            kind: crate::report::limit::Kind::Plain,
        }
    }

    /// Nothing on stdout, `stderr` said, and the status.
    pub(crate) fn stderr(stderr: String, status: Status) -> Self {
        Output {
            stdout: Vec::new(),
            stderr,
            status,
            kind: crate::report::limit::Kind::Plain,
        }
    }

    /// Says what stdout holds, for `--limit-bytes` and `--color`.
    pub(crate) fn kind(mut self, kind: crate::report::limit::Kind) -> Self {
        self.kind = kind;
        self
    }

    /// Adds `text` to what stderr says.
    pub(crate) fn with_stderr(mut self, text: &str) -> Self {
        self.stderr.push_str(text);
        self
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
    // What killed runs left in the temporary folder goes, unless git tracks it (a
    // temporary folder inside a work tree may be a folder of the repository).
    crate::scratch::sweep_dead_runs(&|dir| {
        !matches!(crate::source::git::tracks_anything_in(dir), Ok(false))
    });
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
            if e.use_stderr() {
                let raw: Vec<String> = std::env::args().collect();
                if asks_for_sarif(&raw) {
                    return usage_error_sarif(&raw, &e.to_string()).into();
                }
                return Status::Error.into();
            }
            return Status::Ok.into();
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
        Command::Images(args) => images::run(&args),
        Command::Completions { shell } => Ok(completions(shell)),
    };
    let present = Presentation {
        color: cli
            .color
            .enabled(std::io::IsTerminal::is_terminal(&std::io::stdout())),
        limit_bytes: cli.limit_bytes,
    };
    print_outcome(outcome, &present).into()
}

/// With `--format sarif`, an error (exit 2) still writes a valid SARIF log with no results,
/// so that a code-scanning upload step after it has a file to upload.
pub(crate) fn sarif_on_error(outcome: Outcome, rules: &[crate::finding::Rule]) -> Outcome {
    outcome.or_else(|e| {
        let log = crate::report::findings::empty_sarif(rules, &e.to_string());
        Ok(Output::new(
            serde_json::to_string_pretty(&log).unwrap_or_default() + "\n",
            Status::Error,
        )
        .kind(crate::report::limit::Kind::Json)
        .with_stderr(&format!("fluxsim: error: {e}\n")))
    })
}

/// Whether the command line asks for `--format sarif` (read from the raw arguments, for a
/// usage error clap reports before any command runs).
fn asks_for_sarif(args: &[String]) -> bool {
    args.windows(2)
        .any(|w| w[0] == "--format" && w[1] == "sarif")
        || args.iter().any(|a| a == "--format=sarif")
}

/// A usage error under `--format sarif`: the empty log of the command's rules, exit 2.
fn usage_error_sarif(raw: &[String], error: &str) -> Status {
    let rules = if raw.iter().any(|a| a == "graph") {
        crate::graph::RULES
    } else {
        crate::audit::RULES
    };
    let log = crate::report::findings::empty_sarif(rules, error);
    let out = Output::new(
        serde_json::to_string_pretty(&log).unwrap_or_default() + "\n",
        Status::Error,
    )
    .kind(crate::report::limit::Kind::Json);
    let plain = Presentation {
        color: false,
        limit_bytes: None,
    };
    print_outcome(Ok(out), &plain)
}

/// The shell completion script for `shell`, made from the flags defined here.
fn completions(shell: clap_complete::Shell) -> Output {
    let mut out = Vec::new();
    clap_complete::generate(
        shell,
        &mut <Cli as clap::CommandFactory>::command(),
        "fluxsim",
        &mut out,
    );
    Output::new(out, Status::Ok).kind(crate::report::limit::Kind::Manifest)
}

/// How stdout is presented, whatever the command: `--color` and `--limit-bytes`.
struct Presentation {
    color: bool,
    limit_bytes: Option<usize>,
}

/// Prints a command's outcome, the one place that writes what a command found. A reader
/// that closes the pipe early (`fluxsim render | head`) ends the output quietly, with the
/// command's own status, as ripgrep does; `print!` would panic there.
fn print_outcome(outcome: Outcome, present: &Presentation) -> Status {
    use std::io::Write as _;
    // Builds a signal cut short fail; their failures are not the run's outcome.
    crate::scratch::yield_to_signal();
    let mut out = match outcome {
        Ok(out) => out,
        Err(e) => {
            let message = format!("fluxsim: error: {e}\n");
            let _ =
                std::io::stderr().write_all(crate::report::escape::terminal(&message).as_bytes());
            return Status::Error;
        }
    };
    // Repository text reaches the terminal (or a CI log) only with its controls shown.
    out.stdout = crate::report::limit::shown(out.stdout, out.kind);
    if let Some(limit) = present.limit_bytes {
        let (cut, note) = crate::report::limit::cut(&out.stdout, limit, out.kind);
        out.stdout = cut;
        if let Some(note) = note {
            out.stderr.push_str(&note);
        }
    }
    if present.color && out.kind == crate::report::limit::Kind::DiffText {
        out.stdout = crate::report::limit::colorize(&out.stdout);
    }
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&out.stdout).and_then(|()| stdout.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            let _ = writeln!(std::io::stderr(), "fluxsim: error: writing stdout: {e}");
            return Status::Error;
        }
        _ => {}
    }
    if !out.stderr.is_empty() {
        let _ =
            std::io::stderr().write_all(crate::report::escape::terminal(&out.stderr).as_bytes());
    }
    out.status
}
