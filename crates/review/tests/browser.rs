//! The HTML report in a real browser: headless Chromium loads the report of the demo change
//! (built here), and the page it rendered is checked: every changed object listed in the
//! tree and the page, the filter (read from the address, as a link to a filtered report
//! gives it) hiding what does not match, the repository's hostile names shown as text and
//! never run, the script run under the page's Content-Security-Policy. A screenshot is kept
//! in `target/` (`CARGO_TARGET_TMPDIR/review-browser/`).
//!
//! Needs Chromium (`apt-get install chromium`; `CHROMIUM` names another binary). Without
//! it the test says so and passes, unless `FLUXSIM_REQUIRE_BROWSER=1` (CI with a browser).
//! With `node` and `playwright-core` installed in `tests/browser` (`npm install` there), it
//! also runs `tests/browser/check.mjs`: typing in the filter box, `j`/`k`, the view and
//! theme buttons.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use review::analysis::analyze;
use review::strip::Filters;

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("review-browser");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs headless Chromium on `url` with `args` (`--dump-dom`, `--screenshot=...`), in a new
/// empty profile, nothing fetched from the network.
fn browse(browser: &Path, url: &str, args: &[&str]) -> String {
    let profile = tempdir("profile");
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("chromium runs");
    let _ = std::fs::remove_dir_all(&profile);
    assert!(
        output.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn tempdir(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let d = out_dir().join(format!("{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The leaves of the navigation tree in a dumped DOM: (shown, hidden) counts.
fn leaves(dom: &str) -> (usize, usize) {
    let mut shown = 0;
    let mut hidden = 0;
    for li in dom.split("<li class=\"leaf").skip(1) {
        let tag = li.split('>').next().unwrap_or_default();
        if tag.contains(" hidden") {
            hidden += 1;
        } else {
            shown += 1;
        }
    }
    (shown, hidden)
}

fn browser_or_skip() -> Option<PathBuf> {
    let b = chromium();
    if b.is_none() {
        assert!(
            std::env::var_os("FLUXSIM_REQUIRE_BROWSER").is_none(),
            "FLUXSIM_REQUIRE_BROWSER is set and no Chromium was found (apt-get install chromium)"
        );
        eprintln!("skipped: no Chromium (apt-get install chromium, or set CHROMIUM)");
    }
    b
}

#[test]
fn the_html_report_lists_every_changed_object_and_filters_in_a_browser() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = out_dir();
    let analysis = analyze(&common::demo(true), &Filters::new());
    let page = dir.join("hostile.html");
    std::fs::write(&page, review::html::report(&analysis)).unwrap();
    let url = format!("file://{}", page.display());

    let dom = browse(&browser, &url, &["--dump-dom"]);
    // The script ran (it writes the count) under the page's policy.
    let objects: Vec<_> = analysis
        .clusters
        .iter()
        .flat_map(|c| c.units.iter())
        .filter(|u| u.outcome.shown())
        .flat_map(|u| u.objects.iter())
        .collect();
    let units_without_objects = analysis
        .shown_units()
        .filter(|(_, u)| u.objects.is_empty())
        .count();
    let total = objects.len() + units_without_objects;
    assert!(
        dom.contains(&format!("{total} of {total} shown")),
        "the script did not run"
    );
    assert_eq!(leaves(&dom), (total, 0));
    // Every changed object is in the tree and in the page.
    for o in &objects {
        let name = review::escape::html(&o.object.to_string(), true);
        assert!(
            dom.matches(&name).count() >= 2,
            "{} is not listed in the tree and the page",
            o.object
        );
    }
    // The hostile names are text: one script (ours), no element of theirs.
    assert_eq!(dom.matches("<script").count(), 1);
    assert!(!dom.contains("<img"));
    assert!(!dom.contains("<b>"));
    assert!(dom.contains("evil`&lt;/script&gt;&lt;!--@octocat #12"));

    // The filter, as a link gives it: only what matches stays, and its cluster and unit.
    let filtered = browse(&browser, &format!("{url}#q=redis"), &["--dump-dom"]);
    assert!(filtered.contains(&format!("1 of {total} shown")));
    assert_eq!(leaves(&filtered), (1, total - 1));
    assert!(filtered.contains("<section class=\"cluster group\" id=\"c1\">"));
    assert!(filtered.contains("<section class=\"cluster group\" id=\"c"));
    let staging: Vec<&str> = filtered
        .split("<section class=\"cluster group\"")
        .skip(1)
        .filter(|s| s.contains("<h2>Cluster <code>staging</code></h2>"))
        .map(|s| s.split('>').next().unwrap_or_default())
        .collect();
    assert_eq!(staging.len(), 1);
    assert!(
        staging[0].contains("hidden"),
        "a cluster with nothing matching is hidden"
    );
}

#[test]
fn the_html_report_screenshot_is_kept() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let dir = out_dir();
    let analysis = analyze(&common::demo(false), &Filters::new());
    let page = dir.join("report.html");
    std::fs::write(&page, review::html::report(&analysis)).unwrap();
    let url = format!("file://{}", page.display());
    for (name, query) in [("report.png", ""), ("report-podinfo.png", "#q=podinfo")] {
        let shot = dir.join(name);
        let _ = std::fs::remove_file(&shot);
        browse(
            &browser,
            &format!("{url}{query}"),
            &[
                &format!("--screenshot={}", shot.display()),
                "--window-size=1400,1000",
            ],
        );
        let png = std::fs::read(&shot).expect("a screenshot");
        assert!(png.starts_with(b"\x89PNG") && png.len() > 20_000, "{name}");
    }
    // Clicks and keys, where Playwright is installed (tests/browser: npm install).
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let has_playwright = Command::new("node")
        .current_dir(&harness)
        .args(["-e", "require.resolve('playwright-core')"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has_playwright {
        let out = Command::new("node")
            .current_dir(&harness)
            .arg("check.mjs")
            .arg(&page)
            .arg(&browser)
            .arg(dir.join("report-dark.png"))
            .arg(dir.join("report-diff.png"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "check.mjs: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        eprintln!("check.mjs skipped: no playwright-core in tests/browser (npm install there)");
    }
}
