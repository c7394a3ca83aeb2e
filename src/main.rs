//! The `fluxsim` binary: parse arguments, run, exit with the run's status.

// A render allocates and frees many small strings and maps on every thread (YAML nodes,
// JSON values); mimalloc does that faster than the system allocator (scripts/bench-render).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    fluxsim::run()
}
