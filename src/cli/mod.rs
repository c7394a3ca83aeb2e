//! The command line: flags defined in one place, one function per subcommand.

mod audit;
mod compare;
mod diff;
mod envsubst;
mod examples;
mod flags;
mod git;
mod graph;
mod images;
mod prove;
mod render;
mod terminal;
mod upgrade;
mod validate;
pub mod vars;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// fluxsim renders, offline, exactly what Flux's kustomize-controller would apply from a
/// GitOps repository, and proves things about those renders.
#[derive(Debug, Parser)]
#[command(
    name = "fluxsim",
    version,
    about,
    long_about = None,
    propagate_version = true,
    max_term_width = 80,
    after_help = examples::FLUXSIM
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Colour diffs: `auto` when stdout is a terminal and NO_COLOR is unset.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN",
        hide_short_help = true
    )]
    color: crate::report::limit::Color,
    /// Cut what is printed to at most N bytes, ending with a note of what was cut (a cut
    /// Markdown report keeps its code blocks and details closed; JSON is cut with a note on
    /// stderr).
    #[arg(long, global = true, value_name = "N", hide_short_help = true)]
    limit_bytes: Option<usize>,
    /// Text reports: each row and sentence on one line, whatever its width (by default they
    /// fit 80 columns: long names shortened in the middle, sentences wrapped).
    #[arg(long, global = true, hide_short_help = true)]
    wide: bool,
    /// Text reports: list every finding (info too, each alike one and each note on its own)
    /// and say how the work was done (builders, the build cache, what a diff took from base,
    /// per-Kustomization audit counts).
    #[arg(long, short = 'v', global = true, hide_short_help = true)]
    verbose: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Substitute ${VAR} expressions in stdin exactly as Flux's postBuild does (like `flux envsubst`).
    ///
    /// Reads stdin, writes stdout. Only `${...}` is expanded; `$VAR` and `$(cmd)` are left
    /// alone and `$$` is an escape for `$`. Exit 0 on success, 1 on a substitution error,
    /// 2 on a usage or input error.
    #[command(
        after_help = examples::ENVSUBST,
        after_long_help = examples::long(examples::ENVSUBST, "envsubst")
    )]
    Envsubst(envsubst::Args),
    /// Render every cluster's Flux Kustomizations as kustomize-controller would apply them.
    ///
    /// Discovers cluster roots, builds each Kustomization's spec.path with Flux's generator
    /// and kustomize, applies postBuild substitution, and prints one line per Kustomization
    /// with its SHA-256. Exit 1 when any Kustomization fails, 2 when nothing could run.
    #[command(
        after_help = examples::RENDER,
        after_long_help = examples::long(examples::RENDER, "render"),
        // The schemas' options in the long help only: --validate is enough to start.
        mut_arg("kube_version", |a| a.hide_short_help(true)),
        mut_arg("schema_dir", |a| a.hide_short_help(true))
    )]
    Render(render::RenderArgs),
    /// Print one Kustomization's rendered artifact (like `flux build kustomization`).
    #[command(
        after_help = examples::BUILD,
        after_long_help = examples::long(examples::BUILD, "build")
    )]
    Build(render::BuildArgs),
    /// Find every way postBuild substitution can fail a Kustomization, silently empty a value
    /// or ship the wrong literal, with the file and line it comes from.
    ///
    /// Renders every cluster (as `render` does, tracking where each object came from) and
    /// checks each `${...}`, each var and each source. Exit 1 when a finding is at or above
    /// --fail-on, 2 on a usage or input error.
    #[command(
        after_help = examples::AUDIT,
        after_long_help = examples::long(examples::AUDIT, "audit")
    )]
    Audit(audit::AuditArgs),
    /// Compare what every cluster applies at two revisions.
    ///
    /// Renders --base and --head (default: the work tree, uncommitted changes included) from
    /// git without touching the work tree, and reports each (cluster, Kustomization) artifact
    /// as identical, changed, added, removed or not compared (not rendered in base or head:
    /// failed, blocked, external, suspended), with a unified diff per changed object, and
    /// objects that move between Kustomizations. Exit 1 when a Kustomization fails in head
    /// (`--fail-on info`: when anything changed), 2 when the diff could not run.
    #[command(
        after_help = examples::DIFF,
        after_long_help = examples::long(examples::DIFF, "diff"),
        // The schemas' options in the long help only: --validate is enough to start.
        mut_arg("kube_version", |a| a.hide_short_help(true)),
        mut_arg("schema_dir", |a| a.hide_short_help(true))
    )]
    Diff(diff::DiffArgs),
    /// Compare clusters: their Kustomization graphs, templates, and the vars that differ.
    ///
    /// Exit 1 when a Kustomization fails to render in a cluster (`--fail-on info`: when the
    /// clusters differ in more than var values), 2 when the comparison could not run.
    #[command(
        after_help = examples::COMPARE,
        after_long_help = examples::long(examples::COMPARE, "compare")
    )]
    Compare(compare::CompareArgs),
    /// Diff two revisions and check the harness with canaries before trusting the result.
    ///
    /// Plants a canary in each cluster's overlay and one in a shared path, in a temporary
    /// copy; each must change exactly the artifacts built from its file and, once removed,
    /// every digest must return. The proof holds only when the diff meets --expect, every
    /// canary was detected and restored, and every Kustomization was compared (or
    /// --allow-blind). Exit 1 when it fails, 2 when it could not run.
    #[command(
        after_help = examples::PROVE,
        after_long_help = examples::long(examples::PROVE, "prove"),
        // The schemas' options in the long help only: --validate is enough to start.
        mut_arg("kube_version", |a| a.hide_short_help(true)),
        mut_arg("schema_dir", |a| a.hide_short_help(true)),
        mut_arg("full", |a| a.hide_short_help(true))
    )]
    Prove(prove::ProveArgs),
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
    #[command(
        after_help = examples::GRAPH,
        after_long_help = examples::long(examples::GRAPH, "graph")
    )]
    Graph(graph::Args),
    /// List every container image each cluster runs, per Kustomization, or what changed
    /// between two revisions (`--diff`).
    ///
    /// Images come from pod templates (workloads, CronJobs, init containers; kustomize
    /// `images:` overrides are already applied by the build) and from HelmRelease `values`
    /// (`image:` strings and `repository`/`tag` maps). Exit 1 when a Kustomization fails to
    /// render (`--diff --fail-on info`: when an image changed), 2 on errors.
    #[command(
        after_help = examples::IMAGES,
        after_long_help = examples::long(examples::IMAGES, "images")
    )]
    Images(images::Args),
    /// Will it apply? Check every rendered object against its schema as the API server
    /// checks Flux's server-side apply.
    ///
    /// Built-in kinds against the Kubernetes OpenAPI schemas of --kube-version (embedded),
    /// custom resources against the CRDs of the same cluster's render and of --schema-dir
    /// (structural schema and CEL rules); what has no schema is reported as not validated,
    /// never as valid. Findings name the file and line of the field. Exit 1 when a finding
    /// is at or above --fail-on (default: error) or a Kustomization fails to render, 2 on
    /// errors.
    #[command(
        after_help = examples::VALIDATE,
        after_long_help = examples::long(examples::VALIDATE, "validate")
    )]
    Validate(validate::Args),
    /// What breaks when each cluster moves to newer Flux and Kubernetes releases.
    ///
    /// Renders the repository as it is and again at the target (--flux, --kube; default: the
    /// newest fluxsim knows), and reports API versions the target removes (FS401) or
    /// deprecates (FS402), with the patch where the move is mechanical, Kustomizations and
    /// HelmReleases that render differently at the target (FS403), and objects in a version
    /// their CRD deprecates (FS404), each at its file and line. Exit 1 when a finding is at
    /// or above --fail-on (default: error), 2 on errors.
    #[command(
        after_help = examples::UPGRADE,
        after_long_help = examples::long(examples::UPGRADE, "upgrade")
    )]
    Upgrade(upgrade::Args),
    /// Print a shell completion script.
    #[command(after_help = examples::COMPLETIONS)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// The process exit statuses fluxsim uses everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
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
    status: ExitStatus,
    kind: crate::report::limit::Kind,
}

impl Output {
    /// `stdout` and the status.
    pub(crate) fn new(stdout: impl Into<Vec<u8>>, status: ExitStatus) -> Self {
        Output {
            stdout: stdout.into(),
            stderr: String::new(),
            status,
            kind: crate::report::limit::Kind::Plain,
        }
    }

    /// Nothing on stdout, `stderr` said, and the status.
    pub(crate) fn stderr(stderr: String, status: ExitStatus) -> Self {
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
pub(crate) type CommandResult = anyhow::Result<Output>;

/// `Ok` with `status` when `passed` says so, `Finding` otherwise.
pub(crate) fn passed_or_finding(passed: bool) -> ExitStatus {
    if passed {
        ExitStatus::Ok
    } else {
        ExitStatus::Finding
    }
}

/// `--fail-on`: the lowest level of what a command found that makes it exit 1. The same
/// flag, with the same default, on every command that finds something; what each level holds
/// for each command is `crate::level`'s (docs/commands/README.md, "Exit status").
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOn {
    /// Anything found: a change, an info finding.
    Info,
    /// Warnings and errors: also what could not be compared or seen.
    Warning,
    /// Errors only: a failed render or proof, an error finding.
    Error,
    /// Never exit 1 (2 still says the command could not run).
    Never,
}

/// The `--fail-on` flag, flattened into every command that finds something.
#[derive(Debug, Clone, Copy, clap::Args)]
pub(crate) struct FailFlags {
    /// Exit 1 when what is found is at or above LEVEL.
    ///
    /// 2 always means the command could not run. What each command counts at each level:
    /// docs/commands/README.md, "Exit status".
    #[arg(long, value_enum, default_value = "error", value_name = "LEVEL")]
    pub(crate) fail_on: FailOn,
}

impl FailFlags {
    /// The exit status for what a command found at `level` (`None`: nothing).
    pub(crate) fn status(self, level: Option<crate::finding::Severity>) -> ExitStatus {
        use crate::finding::Severity;
        let threshold = match self.fail_on {
            FailOn::Info => Severity::Info,
            FailOn::Warning => Severity::Warning,
            FailOn::Error => Severity::Error,
            FailOn::Never => return ExitStatus::Ok,
        };
        passed_or_finding(level.is_none_or(|l| l < threshold))
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> Self {
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

/// `flux build kustomization NAME` (or `ks NAME`), as flux users type it, read as
/// `build -k NAME`: only right after `build`, when the name is not a flag and `-k` is not
/// given too (a folder named `ks` is still a repository).
fn flux_build_form(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let is = |a: Option<&std::ffi::OsString>, words: &[&str]| {
        a.and_then(|a| a.to_str())
            .is_some_and(|a| words.contains(&a))
    };
    let given_k = args.iter().any(|a| {
        a.to_str().is_some_and(|a| {
            a == "-k"
                || a.starts_with("--kustomization")
                || (a.starts_with("-k") && !a.starts_with("--"))
        })
    });
    let name_ok = args
        .get(3)
        .and_then(|a| a.to_str())
        .is_some_and(|a| !a.starts_with('-'));
    if is(args.get(1), &["build"])
        && is(args.get(2), &["kustomization", "ks"])
        && name_ok
        && !given_k
    {
        args[2] = "-k".into();
    }
    args
}

fn run_command() -> ExitCode {
    let cli = match Cli::try_parse_from(flux_build_form(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(e) => {
            // clap prints help and version to stdout with success, usage errors to stderr.
            let _ = e.print();
            if e.use_stderr() {
                let raw: Vec<String> = std::env::args().collect();
                if asks_for_sarif(&raw) {
                    return usage_error_sarif(&raw, &e.to_string()).into();
                }
                return ExitStatus::Error.into();
            }
            return ExitStatus::Ok.into();
        }
    };
    let mut cli = cli;
    // The repository, once for every command that reads one (a note when it is the top of
    // the git work tree rather than the current folder).
    let note = match &mut cli.command {
        Command::Render(a) => a.flags.resolve(),
        Command::Build(a) => {
            a.take_name();
            a.flags.resolve()
        }
        Command::Audit(a) => a.flags.resolve(),
        Command::Diff(a) => a.flags.resolve(),
        Command::Compare(a) => a.report.flags.resolve(),
        Command::Prove(a) => a.diff.flags.resolve(),
        Command::Graph(a) => a.flags.resolve(),
        Command::Images(a) => a.flags.resolve(),
        Command::Validate(a) => a.report.flags.resolve(),
        Command::Upgrade(a) => a.report.flags.resolve(),
        Command::Envsubst(_) | Command::Completions { .. } => None,
    };
    if let Some(note) = note {
        use std::io::Write as _;
        let _ = std::io::stderr().write_all(crate::report::escape::terminal(&note).as_bytes());
    }
    let layout = crate::report::layout::Layout {
        wide: cli.wide,
        verbose: cli.verbose,
    };
    let outcome = match cli.command {
        Command::Envsubst(args) => envsubst::run(&args),
        Command::Render(args) => render::run_render(&args, layout),
        Command::Build(args) => render::run_build(&args),
        Command::Audit(args) => audit::run_audit(&args, layout),
        Command::Diff(args) => diff::run_diff(&args, layout),
        Command::Compare(args) => compare::run_compare(&args, layout),
        Command::Prove(args) => prove::run_prove(&args, layout),
        Command::Graph(args) => graph::run(&args, layout),
        Command::Images(args) => images::run(&args, layout),
        Command::Validate(args) => validate::run(&args, layout),
        Command::Upgrade(args) => upgrade::run(&args, layout),
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
pub(crate) fn sarif_on_error(
    outcome: CommandResult,
    rules: &[crate::finding::Rule],
) -> CommandResult {
    outcome.or_else(|e| {
        let log = crate::report::findings::empty_sarif(rules, &e.to_string());
        Ok(Output::new(
            serde_json::to_string_pretty(&log).unwrap_or_default() + "\n",
            ExitStatus::Error,
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
fn usage_error_sarif(raw: &[String], error: &str) -> ExitStatus {
    let rules = if raw.iter().any(|a| a == "graph") {
        crate::graph::RULES
    } else if raw.iter().any(|a| a == "validate") {
        crate::validate::RULES
    } else if raw.iter().any(|a| a == "upgrade") {
        &crate::upgrade::RULES[..]
    } else {
        crate::audit::RULES
    };
    let log = crate::report::findings::empty_sarif(rules, error);
    let out = Output::new(
        serde_json::to_string_pretty(&log).unwrap_or_default() + "\n",
        ExitStatus::Error,
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
    Output::new(out, ExitStatus::Ok).kind(crate::report::limit::Kind::Manifest)
}

/// How stdout is presented, whatever the command: `--color` and `--limit-bytes`.
struct Presentation {
    color: bool,
    limit_bytes: Option<usize>,
}

/// Prints a command's outcome, the one place that writes what a command found. A reader
/// that closes the pipe early (`fluxsim render | head`) ends the output quietly, with the
/// command's own status, as ripgrep does; `print!` would panic there.
fn print_outcome(outcome: CommandResult, present: &Presentation) -> ExitStatus {
    use std::io::Write as _;
    // Builds a signal cut short fail; their failures are not the run's outcome.
    crate::scratch::yield_to_signal();
    let mut out = match outcome {
        Ok(out) => out,
        Err(e) => {
            let message = format!("fluxsim: error: {e}\n");
            let _ =
                std::io::stderr().write_all(crate::report::escape::terminal(&message).as_bytes());
            return ExitStatus::Error;
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
            return ExitStatus::Error;
        }
        _ => {}
    }
    if !out.stderr.is_empty() {
        let _ =
            std::io::stderr().write_all(crate::report::escape::terminal(&out.stderr).as_bytes());
    }
    out.status
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command lines of an examples text: each line starting with `fluxsim`, up to a
    /// shell operator, its quotes removed.
    fn example_lines(text: &str) -> Vec<Vec<String>> {
        text.lines()
            .map(str::trim)
            .filter(|l| l.starts_with("fluxsim "))
            .map(|l| {
                l.split_whitespace()
                    .take_while(|w| !matches!(*w, ">" | ">>" | "<" | "|"))
                    .map(|w| w.trim_matches('"').to_string())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_example_in_the_help_parses_as_the_command_line_would() {
        let all = [
            examples::FLUXSIM,
            examples::RENDER,
            examples::BUILD,
            examples::DIFF,
            examples::COMPARE,
            examples::PROVE,
            examples::AUDIT,
            examples::GRAPH,
            examples::IMAGES,
            examples::VALIDATE,
            examples::ENVSUBST,
            examples::COMPLETIONS,
        ];
        let mut parsed = 0;
        for text in all {
            let lines = example_lines(text);
            assert!(!lines.is_empty(), "no example in {text}");
            for args in lines {
                if let Err(e) = Cli::try_parse_from(&args) {
                    panic!("{args:?} does not parse: {e}");
                }
                parsed += 1;
            }
        }
        assert!(parsed >= 20, "{parsed}");
    }
}
