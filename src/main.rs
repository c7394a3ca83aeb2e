//! The `fluxsim` binary: parse arguments, run, exit with the run's status.

fn main() -> std::process::ExitCode {
    fluxsim::run()
}
