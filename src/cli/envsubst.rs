//! `fluxsim envsubst`: stdin to stdout through Flux's substitution.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use super::vars::{load_vars_file, parse_var_assignment};
use super::{CommandResult, ExitStatus, Output};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Read vars from FILE: KEY=VALUE lines, or a ConfigMap or Secret manifest (its data is
    /// used as Flux's substituteFrom uses it). Repeatable; later files win.
    #[arg(long = "vars", value_name = "FILE")]
    vars_files: Vec<PathBuf>,
    /// Set one var (wins over --vars and --env). Repeatable.
    #[arg(long = "var", value_name = "KEY=VALUE")]
    var: Vec<String>,
    /// Use the process environment as vars (lowest precedence).
    #[arg(long)]
    env: bool,
    /// Fail on a var that is unset and has no default, as kustomize-controller does by
    /// default since v1.9.0 (the StrictPostBuildSubstitutions feature gate).
    #[arg(long)]
    strict: bool,
}

pub(crate) fn run(args: &Args) -> CommandResult {
    substitute_stdin(args)
}

fn substitute_stdin(args: &Args) -> anyhow::Result<Output> {
    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    if args.env {
        for (k, v) in std::env::vars_os() {
            if let (Some(k), Some(v)) = (k.to_str(), v.to_str()) {
                vars.insert(k.to_string(), v.to_string());
            }
        }
    }
    for file in &args.vars_files {
        vars.extend(load_vars_file(file).map_err(|e| anyhow::Error::msg(e.to_string()))?);
    }
    for assignment in &args.var {
        let (k, v) =
            parse_var_assignment(assignment).map_err(|e| anyhow::Error::msg(e.to_string()))?;
        vars.insert(k, v);
    }
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|e| anyhow::Error::msg(format!("reading stdin: {e}")))?;
    let text = std::str::from_utf8(&input).map_err(|e| {
        let line = input[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        anyhow::Error::msg(format!(
            "<stdin>:{line}: input is not valid UTF-8 (byte {})",
            e.valid_up_to()
        ))
    })?;
    Ok(
        match crate::envsubst::eval(text.as_bytes(), &vars, args.strict) {
            // The input, substituted: printed as it is.
            Ok(out) => Output::new(out, ExitStatus::Ok).kind(crate::report::limit::Kind::Manifest),
            Err(e) => Output::stderr(format!("fluxsim: <stdin>:{e}\n"), ExitStatus::Finding),
        },
    )
}
