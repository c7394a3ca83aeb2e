//! The Markdown report: a summary first, then the details per cluster and Kustomization,
//! as one document ([`document`]) or as pull-request comments that each fit a limit
//! ([`comments`]), for GitHub, GitLab or Gitea ([`Flavor`]).
//!
//! Every string of the repository is escaped for where it lands ([`crate::escape`]): names in
//! code spans or `<code>`, messages as text with their code spans, values in fenced blocks
//! whose fence is longer than any backtick run inside.

use std::fmt::Write as _;

mod details;
mod pack;
mod summary;

use crate::analysis::Analysis;

use pack::Packer;

/// Which forge reads the Markdown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Flavor {
    /// GitHub: `<details><summary>` on one line; comments up to 65,536 characters.
    #[default]
    GitHub,
    /// GitLab: collapsible sections in GitLab's documented form (`<details>`, then
    /// `<summary>` on its own line, blank lines around the content); notes up to 1,000,000
    /// characters.
    GitLab,
    /// Gitea and Forgejo: as GitLab's form.
    Gitea,
}

impl Flavor {
    /// The size of one comment this forge accepts, in characters (the limit given to
    /// [`comments`] when the user sets none). For Gitea and Forgejo, whose limit this crate
    /// does not know, GitHub's.
    #[must_use]
    pub fn comment_limit(self) -> usize {
        match self {
            Flavor::GitHub | Flavor::Gitea => 65_536,
            Flavor::GitLab => 1_000_000,
        }
    }
}

/// How comments are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownOptions {
    /// The forge.
    pub flavor: Flavor,
    /// The most bytes one comment may hold (bytes are never fewer than the characters a
    /// forge counts). Leave room for what the caller adds (the action's marker line).
    pub limit: usize,
    /// Where the whole report is (the workflow artifact with the HTML report): linked from
    /// the summary when given. Only `http://` and `https://` addresses become links.
    pub report_url: Option<String>,
}

impl MarkdownOptions {
    /// The defaults of a forge: its comment limit, no link.
    #[must_use]
    pub fn new(flavor: Flavor) -> Self {
        Self {
            flavor,
            limit: flavor.comment_limit(),
            report_url: None,
        }
    }
}

/// The smallest limit a report can be split under: a summary at its shortest, the
/// continuation lines and a few lines of detail.
pub const MIN_LIMIT: usize = 4096;

/// Why the report cannot be written in comments of the size asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    /// The limit is below [`MIN_LIMIT`].
    #[error(
        "a comment limit of {limit} bytes is too small to hold a report (at least {MIN_LIMIT})"
    )]
    TooSmall {
        /// The limit asked.
        limit: usize,
    },
    /// Even the shortest summary does not fit (thousands of changed clusters in a small
    /// limit).
    #[error("the summary needs {needs} bytes even at its shortest, more than the comment limit of {limit}")]
    SummaryTooLarge {
        /// The limit asked.
        limit: usize,
        /// What the shortest summary needs.
        needs: usize,
    },
}

/// Room kept in every comment for the part line and the continuation line.
const DECOR: usize = 240;

/// A Markdown link to the whole report, or the address as code when it is not http(s).
fn report_link(url: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#@!$&+,;=%".contains(c);
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return format!("The whole report: {}\n\n", crate::escape::md_code(url));
    }
    let mut dest = String::new();
    for c in url.chars() {
        if safe(c) {
            dest.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(dest, "%{b:02X}");
            }
        }
    }
    format!("📄 The whole report, with side-by-side views: [the HTML report]({dest})\n\n")
}

/// The whole report as one Markdown document (a job summary, an artifact): the fullest
/// summary, every detail.
#[must_use]
pub fn document(a: &Analysis, flavor: Flavor) -> String {
    let mut out = summary::summary(a, flavor, summary::LEVELS[0], None);
    for b in details::details(a).iter().chain(&summary::sections(a)) {
        pack::render(flavor, b, &mut out);
    }
    out
}

/// The report as comments of at most `opts.limit` bytes each: the first opens with the
/// complete summary (its counts always whole; its lists shortened, and given in full after
/// the details, only when the full summary would not fit), the details follow in order.
/// Each comment is valid Markdown on its own: a code block or `<details>` that continues
/// into the next comment is closed at the end of one and opened again, marked "continued",
/// at the start of the next. One comment when everything fits.
pub fn comments(a: &Analysis, opts: &MarkdownOptions) -> Result<Vec<String>, LimitError> {
    if opts.limit < MIN_LIMIT {
        return Err(LimitError::TooSmall { limit: opts.limit });
    }
    let budget = opts.limit - DECOR;
    let link = opts.report_url.as_deref().map(report_link);
    let details = details::details(a);
    let mut chosen = None;
    let mut shortest = 0;
    for level in summary::LEVELS {
        let s = summary::summary(a, opts.flavor, *level, link.as_deref());
        shortest = s.len();
        if s.len() <= budget {
            chosen = Some((s, *level));
            break;
        }
    }
    let Some((text, level)) = chosen else {
        return Err(LimitError::SummaryTooLarge {
            limit: opts.limit,
            needs: shortest + DECOR,
        });
    };
    let mut packer = Packer::new(opts.flavor, budget);
    packer.start(&text);
    for b in details.iter().chain(&summary::sections(a)) {
        packer.place(b);
    }
    if let Some(rest) = summary::overflow(a, level) {
        packer.place(&rest);
    }
    let mut parts = packer.finish();
    let n = parts.len();
    if n > 1 {
        for (i, p) in parts.iter_mut().enumerate() {
            if i > 0 {
                p.insert_str(
                    0,
                    &format!(
                        "**{}** — part {} of {n}, continued from the previous comment\n\n",
                        crate::escape::md_text(&a.title),
                        i + 1
                    ),
                );
            }
            if i + 1 < n {
                if !p.ends_with("\n\n") {
                    p.push('\n');
                }
                let _ = writeln!(
                    p,
                    "---\n_Continued in the next comment (part {} of {n})._",
                    i + 2
                );
            }
        }
    }
    Ok(parts)
}
