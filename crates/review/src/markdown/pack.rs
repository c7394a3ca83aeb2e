//! Markdown as blocks, and blocks packed into comments that each stay within a size limit.
//!
//! A report is a tree of [`Block`]s: lines, fenced code, `<details>` folds and headed
//! sections. The packer writes blocks into the current comment while they fit; a block that
//! does not fit starts the next comment when it would fit there whole, and is split only
//! when it is larger than a comment: between its lines, never inside one. Whatever is open
//! where a comment ends (a code fence, a `<details>`, a section) is closed there and opened
//! again at the start of the next comment, marked "continued", so every comment is valid
//! Markdown on its own.

use crate::escape;

use super::Flavor;

/// A piece of a Markdown report.
#[derive(Debug, Clone)]
pub(crate) enum Block {
    /// Markdown, each string one or more whole lines ending in `\n` (a list item, a
    /// paragraph and its blank line): a comment may end between two, not inside one.
    Lines(Vec<String>),
    /// A fenced code block: its info string (ours) and its lines (the repository's text,
    /// shown as they are; controls visible).
    Code {
        info: &'static str,
        lines: Vec<String>,
    },
    /// `<details>` whose `<summary>` is `summary` (HTML text, already escaped).
    Fold {
        summary: String,
        open: bool,
        children: Vec<Block>,
    },
    /// A heading line (Markdown, already escaped, no newline) and what it introduces.
    Section {
        heading: String,
        children: Vec<Block>,
    },
}

/// What is open at a point of the report.
#[derive(Debug, Clone)]
enum Frame {
    Fold { summary: String },
    Section { heading: String },
    Code { fence: String, info: &'static str },
}

fn fold_open(flavor: Flavor, summary: &str, open: bool) -> String {
    let tag = if open { "<details open>" } else { "<details>" };
    match flavor {
        // GitHub reads `<details><summary>` on one line; the fluxsim action's comment-body
        // script finds summaries on one line too.
        Flavor::GitHub => format!("{tag}<summary>{summary}</summary>\n\n"),
        // GitLab's documented form: `<summary>` on its own line, a blank line after it and
        // before `</details>` for the Markdown inside to be read. Gitea's goldmark reads
        // the same.
        Flavor::GitLab | Flavor::Gitea => format!("{tag}\n<summary>{summary}</summary>\n\n"),
    }
}

const FOLD_CLOSE: &str = "\n</details>\n\n";

/// The escaped lines of a code block and the fence that no line of it can close.
fn code_parts(lines: &[String]) -> (Vec<String>, String) {
    let shown: Vec<String> = lines
        .iter()
        .map(|l| escape::terminal(l).replace('\n', "\\n"))
        .collect();
    let fence = escape::fence(&shown.join("\n"));
    (shown, fence)
}

/// A block written whole.
pub(crate) fn render(flavor: Flavor, b: &Block, out: &mut String) {
    match b {
        Block::Lines(lines) => lines.iter().for_each(|l| out.push_str(l)),
        Block::Code { info, lines } => {
            let (shown, fence) = code_parts(lines);
            out.push_str(&fence);
            out.push_str(info);
            out.push('\n');
            for l in shown {
                out.push_str(&l);
                out.push('\n');
            }
            out.push_str(&fence);
            out.push_str("\n\n");
        }
        Block::Fold {
            summary,
            open,
            children,
        } => {
            out.push_str(&fold_open(flavor, summary, *open));
            for c in children {
                render(flavor, c, out);
            }
            out.push_str(FOLD_CLOSE);
        }
        Block::Section { heading, children } => {
            out.push_str(heading);
            out.push_str("\n\n");
            for c in children {
                render(flavor, c, out);
            }
        }
    }
}

/// Comments being filled.
pub(crate) struct Packer {
    flavor: Flavor,
    budget: usize,
    parts: Vec<String>,
    cur: String,
    stack: Vec<Frame>,
    /// The current comment holds only what was opened again (or nothing).
    fresh: bool,
}

impl Packer {
    /// Comments of at most `budget` bytes each.
    pub(crate) fn new(flavor: Flavor, budget: usize) -> Self {
        Self {
            flavor,
            budget,
            parts: Vec::new(),
            cur: String::new(),
            stack: Vec::new(),
            fresh: true,
        }
    }

    fn closer(f: &Frame) -> String {
        match f {
            Frame::Fold { .. } => FOLD_CLOSE.to_string(),
            Frame::Section { .. } => String::new(),
            Frame::Code { fence, .. } => format!("{fence}\n\n"),
        }
    }

    fn opener(&self, f: &Frame, continued: bool) -> String {
        let more = if continued { " (continued)" } else { "" };
        match f {
            Frame::Fold { summary } => fold_open(self.flavor, &format!("{summary}{more}"), false),
            Frame::Section { heading } => format!("{heading}{more}\n\n"),
            Frame::Code { fence, info } => format!("{fence}{info}\n"),
        }
    }

    fn closers_len(&self) -> usize {
        self.stack.iter().map(|f| Self::closer(f).len()).sum()
    }

    fn room(&self) -> usize {
        self.budget
            .saturating_sub(self.cur.len() + self.closers_len())
    }

    /// The room a new comment has, once what is open is opened again.
    fn fresh_room(&self) -> usize {
        let reopen: usize = self.stack.iter().map(|f| self.opener(f, true).len()).sum();
        self.budget.saturating_sub(reopen + self.closers_len())
    }

    /// Ends the current comment (closing what is open) and starts the next one (opening it
    /// again).
    fn break_part(&mut self) {
        let mut done = std::mem::take(&mut self.cur);
        for f in self.stack.iter().rev() {
            done.push_str(&Self::closer(f));
        }
        self.parts.push(done);
        let reopen: String = self.stack.iter().map(|f| self.opener(f, true)).collect();
        self.cur = reopen;
        self.fresh = true;
    }

    /// Writes a piece that stays whole (a line, an opener, a closer).
    fn put(&mut self, piece: &str, in_code: bool) {
        if piece.len() <= self.room() {
            self.cur.push_str(piece);
            self.fresh = false;
            return;
        }
        if !self.fresh {
            self.break_part();
            self.put(piece, in_code);
            return;
        }
        // Larger than a whole comment: a code line is cut, anything else replaced by a note.
        let room = self.room();
        let note = if in_code {
            "… (line cut to fit the comment)\n"
        } else {
            "_(an entry too long for one comment is left out; the full report has it)_\n\n"
        };
        if in_code && room > note.len() {
            let mut end = room - note.len();
            while !piece.is_char_boundary(end) {
                end -= 1;
            }
            self.cur.push_str(&piece[..end]);
        }
        if note.len() <= self.room() {
            self.cur.push_str(note);
        }
        self.fresh = false;
    }

    /// The first piece `b` would write when split (so that an opener is not left alone at
    /// the end of a comment).
    fn first_piece(&self, b: &Block) -> usize {
        match b {
            Block::Lines(l) => l.first().map_or(0, String::len),
            Block::Code { lines, .. } => {
                let (shown, fence) = code_parts(lines);
                fence.len() + 8 + shown.first().map_or(0, |l| l.len() + 1)
            }
            Block::Fold {
                summary, children, ..
            } => {
                fold_open(self.flavor, summary, false).len()
                    + children.first().map_or(0, |c| self.first_piece(c))
            }
            Block::Section { heading, children } => {
                heading.len() + 2 + children.first().map_or(0, |c| self.first_piece(c))
            }
        }
    }

    /// Places a block: whole where it fits, whole at the start of the next comment when it
    /// fits there, else split.
    pub(crate) fn place(&mut self, b: &Block) {
        let mut whole = String::new();
        render(self.flavor, b, &mut whole);
        if whole.len() <= self.room() {
            self.cur.push_str(&whole);
            self.fresh = false;
            return;
        }
        if !self.fresh && whole.len() <= self.fresh_room() {
            self.break_part();
            self.cur.push_str(&whole);
            self.fresh = false;
            return;
        }
        // Split: start it here only when its opening and first piece fit.
        if !self.fresh && self.first_piece(b) + 64 > self.room() {
            self.break_part();
        }
        match b {
            Block::Lines(lines) => {
                for l in lines {
                    self.put(l, false);
                }
            }
            Block::Code { info, lines } => {
                let (shown, fence) = code_parts(lines);
                self.put(&format!("{fence}{info}\n"), false);
                self.stack.push(Frame::Code {
                    fence: fence.clone(),
                    info,
                });
                for l in shown {
                    self.put(&format!("{l}\n"), true);
                }
                self.stack.pop();
                self.put(&format!("{fence}\n\n"), false);
            }
            Block::Fold {
                summary,
                open,
                children,
            } => {
                self.put(&fold_open(self.flavor, summary, *open), false);
                self.stack.push(Frame::Fold {
                    summary: summary.clone(),
                });
                for c in children {
                    self.place(c);
                }
                self.stack.pop();
                self.put(FOLD_CLOSE, false);
            }
            Block::Section { heading, children } => {
                self.put(&format!("{heading}\n\n"), false);
                self.stack.push(Frame::Section {
                    heading: heading.clone(),
                });
                for c in children {
                    self.place(c);
                }
                self.stack.pop();
            }
        }
    }

    /// Writes text that must stay whole at the start of the first comment (the summary).
    pub(crate) fn start(&mut self, text: &str) {
        self.cur.push_str(text);
        self.fresh = false;
    }

    /// The comments written.
    pub(crate) fn finish(mut self) -> Vec<String> {
        if !self.cur.is_empty() || self.parts.is_empty() {
            self.parts.push(self.cur);
        }
        self.parts
    }
}
