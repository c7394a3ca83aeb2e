//! The binary's listener: what the pipeline says while it works, on stderr — a progress
//! line for a person watching a terminal, and each warning once.

use std::collections::BTreeSet;
use std::sync::Mutex;

use crate::notice::{Listener, Progress};

/// Progress as a spinner line when stderr is a terminal; warnings on stderr, each once.
#[derive(Debug, Default)]
pub(crate) struct Terminal {
    bar: Mutex<Option<indicatif::ProgressBar>>,
    warned: Mutex<BTreeSet<String>>,
}

impl Listener for Terminal {
    fn wants_progress(&self) -> bool {
        std::io::IsTerminal::is_terminal(&std::io::stderr())
    }

    fn progress(&self, now: &Progress) {
        let mut bar = self
            .bar
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let bar = bar.get_or_insert_with(indicatif::ProgressBar::new_spinner);
        bar.set_message(format!(
            "rendering {}: {}/{} Kustomizations, {} run, {} from the build cache, {:.1}s",
            crate::report::plural(now.clusters, "cluster"),
            now.rendered,
            now.found,
            crate::report::plural(now.builds_run, "build"),
            now.stored_hits,
            now.elapsed.as_secs_f32()
        ));
        bar.tick();
    }

    fn finished(&self) {
        let bar = self
            .bar
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
    }

    fn warn(&self, message: &str) {
        let mut warned = self
            .warned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if warned.insert(message.to_string()) {
            eprintln!("{message}");
        }
    }
}
