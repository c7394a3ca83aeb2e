//! Builds every kustomization directory under DIR with the native builder and with the
//! kustomize binary, and compares the bytes.
//!
//! `cargo run --release --example builder-check -- DIR [--kustomize PATH] [--origins] [--verbose]`
//! ends with `N identical, M different, K delegated, F both fail` and exits 1 when M > 0
//! (2 when DIR cannot be read or no kustomize is found). A directory the binary cannot build
//! counts as "both fail" when the native builder fails too (the failure is compared, not
//! the message); a native success where kustomize fails is a difference.
//!
//! With `--origins`, both build a copy of DIR in which every YAML kustomization file without
//! `buildMetadata` also asks for `buildMetadata: [originAnnotations]`, as fluxsim's origin
//! renders (audit, graph, prove) do.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use fluxsim::kustomize::native::vfs::Vfs;
use fluxsim::kustomize::native::{build_native_in, NativeError};
use fluxsim::kustomize::KustomizeBinary;

const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "--verbose");
    let origins = args.iter().any(|a| a == "--origins");
    let kustomize = args
        .iter()
        .position(|a| a == "--kustomize")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let Some(root) = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--kustomize"))
        .map(|(_, a)| PathBuf::from(a))
    else {
        eprintln!("usage: builder-check DIR [--kustomize PATH] [--origins] [--verbose]");
        return ExitCode::from(2);
    };
    let copy = match origins.then(|| with_origins(&root)).transpose() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("builder-check: copying {}: {e}", root.display());
            return ExitCode::from(2);
        }
    };
    let root = copy.as_ref().map_or(root, |c| c.path().to_path_buf());
    let binary = match KustomizeBinary::locate(kustomize.as_deref(), Duration::from_secs(120)) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("builder-check: {e}");
            return ExitCode::from(2);
        }
    };
    let mut dirs = Vec::new();
    if let Err(e) = walk(&root, &mut dirs) {
        eprintln!("builder-check: reading {}: {e}", root.display());
        return ExitCode::from(2);
    }
    dirs.sort();
    let (mut same, mut different, mut delegated, mut both_fail) = (0, 0, 0, 0);
    for dir in &dirs {
        let shown = dir.strip_prefix(&root).unwrap_or(dir).display().to_string();
        let shown = if shown.is_empty() {
            ".".to_string()
        } else {
            shown
        };
        // Both confined to DIR: the binary runs in the tool box reading DIR only, as a
        // fluxsim build reads its source tree only.
        let native = build_native_in(dir, &Vfs::folder(&root));
        if let Err(NativeError::Unsupported { feature, file }) = &native {
            delegated += 1;
            if verbose {
                println!("delegated  {shown}: {feature} ({file})");
            }
            continue;
        }
        let expected = binary.run_reading(dir, false, &root);
        match (native, expected) {
            (Ok(a), Ok(b)) if a == b => {
                same += 1;
                if verbose {
                    println!("identical  {shown}");
                }
            }
            (Ok(a), Ok(b)) => {
                different += 1;
                println!("DIFFERENT  {shown}");
                print_first_difference(&a, &b);
            }
            (Err(_), Err(_)) => {
                both_fail += 1;
                if verbose {
                    println!("both fail  {shown}");
                }
            }
            (Ok(_), Err(e)) => {
                different += 1;
                println!("DIFFERENT  {shown}: native builds, kustomize fails: {e}");
            }
            (Err(e), Ok(_)) => {
                different += 1;
                println!("DIFFERENT  {shown}: native fails ({e}), kustomize builds");
            }
        }
    }
    println!(
        "{same} identical, {different} different, {delegated} delegated, {both_fail} both fail"
    );
    if different > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Every directory under `dir` (symbolic links followed, `.git` skipped) holding a
/// kustomization file.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if FILE_NAMES.iter().any(|n| dir.join(n).is_file()) {
        out.push(dir.to_path_buf());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() && p.file_name().is_some_and(|n| n != ".git") {
            walk(&p, out)?;
        }
    }
    Ok(())
}

/// The first lines where the two outputs part, with a little context.
fn print_first_difference(native: &str, kustomize: &str) {
    let a: Vec<&str> = native.lines().collect();
    let b: Vec<&str> = kustomize.lines().collect();
    let first = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let from = first.saturating_sub(2);
    println!("  first difference at line {}:", first + 1);
    for i in from..(first + 3) {
        if let Some(l) = b.get(i) {
            println!("  kustomize {:>5}: {l}", i + 1);
        }
    }
    for i in from..(first + 3) {
        if let Some(l) = a.get(i) {
            println!("  native    {:>5}: {l}", i + 1);
        }
    }
}

/// A copy of `root` in which every YAML kustomization file that has no `buildMetadata` asks
/// for origin annotations (the line fluxsim appends for its origin renders).
fn with_origins(root: &Path) -> std::io::Result<tempfile::TempDir> {
    let copy = tempfile::tempdir()?;
    copy_tree(root, copy.path())?;
    Ok(copy)
}

fn copy_tree(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let name = entry.file_name();
        let (from, to) = (entry.path(), dst.join(&name));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            if name != ".git" {
                copy_tree(&from, &to)?;
            }
        } else if kind.is_file() {
            let bytes = std::fs::read(&from)?;
            let is_kustomization = FILE_NAMES.iter().any(|n| name == std::ffi::OsStr::new(n));
            match String::from_utf8(bytes) {
                Ok(text) if is_kustomization && !text.contains("buildMetadata") => {
                    let sep = if text.is_empty() || text.ends_with('\n') {
                        ""
                    } else {
                        "\n"
                    };
                    std::fs::write(
                        &to,
                        format!("{text}{sep}buildMetadata: [originAnnotations]\n"),
                    )?;
                }
                Ok(text) => std::fs::write(&to, text)?,
                Err(e) => std::fs::write(&to, e.into_bytes())?,
            }
        } else if kind.is_symlink() {
            #[cfg(unix)]
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
        }
    }
    Ok(())
}
