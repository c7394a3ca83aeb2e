//! Writes every report of the demo change (`tests/common`) to a folder, to look at them:
//! `cargo run -p fluxsim-review --example review-demo -- target/review-demo [--hostile]`.

#[path = "../tests/common/mod.rs"]
mod common;

use review::markdown::{Flavor, MarkdownOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = std::path::PathBuf::from(args.first().map_or("target/review-demo", String::as_str));
    let hostile = args.iter().any(|a| a == "--hostile");
    let big = args.iter().any(|a| a == "--big");
    std::fs::create_dir_all(&dir)?;
    let review = if big {
        common::generated(500, 6)
    } else {
        common::demo(hostile)
    };
    let analysis = review::analysis::analyze(&review, &review::strip::Filters::new());
    std::fs::write(
        dir.join("report.md"),
        review::markdown::document(&analysis, Flavor::GitHub),
    )?;
    std::fs::write(dir.join("report.html"), review::html::report(&analysis))?;
    std::fs::write(dir.join("report.txt"), review::text::report(&analysis))?;
    std::fs::write(
        dir.join("changes.json"),
        serde_json::to_string_pretty(&review::json::to_value(&analysis))?,
    )?;
    for flavor in [Flavor::GitHub, Flavor::GitLab, Flavor::Gitea] {
        let mut opts = MarkdownOptions::new(flavor);
        opts.report_url = Some("https://github.com/acme/home-ops/actions/runs/1#artifacts".into());
        for (i, c) in review::markdown::comments(&analysis, &opts)?
            .iter()
            .enumerate()
        {
            std::fs::write(dir.join(format!("comment-{flavor:?}-{}.md", i + 1)), c)?;
        }
    }
    Ok(())
}
