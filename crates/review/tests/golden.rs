//! The reports of the demo change, pinned: reviewing a change to these files is reviewing
//! what a person reads. `UPDATE_GOLDEN=1 cargo test -p fluxsim-review --test golden`
//! writes them again.

mod common;

use std::path::Path;

use review::analysis::analyze;
use review::markdown::{comments, document, Flavor, MarkdownOptions};
use review::strip::Filters;

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing: run with UPDATE_GOLDEN=1", path.display()));
    assert!(
        expected == actual,
        "{name} differs from the golden file (UPDATE_GOLDEN=1 to accept):\n{}",
        similar::TextDiff::from_lines(&expected, actual).unified_diff()
    );
}

#[test]
fn demo_reports_match_their_golden_files() {
    let a = analyze(&common::demo(false), &Filters::new());
    golden("demo.txt", &review::text::report(&a));
    golden("demo.md", &document(&a, Flavor::GitHub));
    let gitlab = comments(&a, &MarkdownOptions::new(Flavor::GitLab)).unwrap();
    assert_eq!(gitlab.len(), 1);
    golden("demo-gitlab.md", &gitlab[0]);
    let json = serde_json::to_string_pretty(&review::json::to_value(&a)).unwrap();
    golden("demo.json", &(json + "\n"));
}

#[test]
fn the_text_report_fits_an_80_column_terminal() {
    let a = analyze(&common::demo(false), &Filters::new());
    for line in review::text::report(&a).lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
}
