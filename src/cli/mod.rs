//! The command line: flags in one place, one function per subcommand.

use std::process::ExitCode;

/// Parses the process arguments and runs the chosen subcommand.
pub fn run() -> ExitCode {
    ExitCode::SUCCESS
}
