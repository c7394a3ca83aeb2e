//! Markdown that repository text cannot turn into markup. A report is written with [`md!`]:
//! its format string is fluxsim's markup (a literal, checked at compile time to hold no
//! HTML), and each value put in it is an [`Inline`], which says what the value is and is
//! escaped for where it lands ([`super::escape`]):
//!
//! - [`Code`]: a name, a path, a value (`` `flux-system/apps` ``);
//! - [`Text`]: a word in a sentence;
//! - [`Message`]: a sentence from the pipeline, where `` `...` `` marks code (errors,
//!   findings, problems);
//! - `&'static str` and numbers: fluxsim's own words, as they are.
//!
//! A `String` is none of these, so a value from the repository cannot be written raw by
//! mistake: `md!(doc, "{}", name)` does not compile until it says `Code(&name)` or
//! `Text(&name)`. HTML (`<details><summary>`) comes only from [`Markdown::details`], fenced
//! blocks only from [`Markdown::fenced`]. The same sentence helpers write plain text for the
//! terminal ([`plain`]), where values are printed as they are and `cli::print_outcome`
//! shows their control characters.
//!
//! ```compile_fail
//! use fluxsim_consumers::report::markdown::{Ctx, Show};
//! let name = String::from("<!--");
//! // A String is not an Inline: it must say what it is (Code, Text, Message).
//! let _ = Show(&name, Ctx::Markdown);
//! ```
//!
//! ```
//! use fluxsim_consumers::report::markdown::{Code, Ctx, Show};
//! let name = String::from("<!--");
//! assert_eq!(Show(&Code(&name), Ctx::Markdown).to_string(), "<code>&lt;!--</code>");
//! ```

use std::fmt::{self, Write as _};

use super::escape;

/// Where an inline value lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    /// Text for people: names and words on one line ([`escape::one_line`]), messages as
    /// they are (their control characters are shown where they are printed).
    Plain,
    /// A line of Markdown: a heading, a list item, a paragraph, a table cell.
    Markdown,
    /// The text of an HTML element in an HTML block (`<summary>`), where Markdown is not
    /// read.
    Html,
}

/// Where inline values are written: a buffer and the context they land in. Only this module
/// writes into the buffer; everyone else goes through [`md!`].
pub struct Out<'a> {
    buf: &'a mut String,
    ctx: Ctx,
}

impl Out<'_> {
    /// The context values written here land in.
    pub fn ctx(&self) -> Ctx {
        self.ctx
    }

    /// This writer, borrowed again (what [`md!`] writes through).
    pub fn out(&mut self) -> Out<'_> {
        Out {
            buf: self.buf,
            ctx: self.ctx,
        }
    }

    /// What [`md!`] expands to: its literal is fluxsim's markup and each of its arguments an
    /// [`Inline`] shown for this context. Not to be called with anything else.
    #[doc(hidden)]
    pub fn write_checked(&mut self, args: fmt::Arguments<'_>) {
        let _ = self.buf.write_fmt(args);
    }
}

/// A value written into a report, escaped for the context it lands in.
pub trait Inline {
    /// Writes the value as `out`'s context shows it.
    fn put(&self, out: &mut Out<'_>);
}

/// fluxsim's own words and markup (`"changed"`, `"**not compared**"`): a `&'static str` is
/// never read from the repository.
impl Inline for &'static str {
    fn put(&self, out: &mut Out<'_>) {
        out.buf.push_str(self);
    }
}

macro_rules! inline_numbers {
    ($($t:ty),*) => {$(
        impl Inline for $t {
            fn put(&self, out: &mut Out<'_>) {
                let _ = write!(out.buf, "{self}");
            }
        }
    )*};
}
inline_numbers!(usize, u32, u64, i64);

/// A name, a path, a value: `` `flux-system/apps` `` in Markdown, `<code>` in HTML.
pub struct Code<T>(pub T);

impl<T: fmt::Display> Inline for Code<T> {
    fn put(&self, out: &mut Out<'_>) {
        let s = self.0.to_string();
        match out.ctx {
            Ctx::Plain => out.buf.push_str(&escape::one_line(&s)),
            Ctx::Markdown => out.buf.push_str(&escape::md_code(&s)),
            Ctx::Html => html_code(out.buf, &s),
        }
    }
}

/// `<code>` in HTML (the review crate's: no mention break inside code).
fn html_code(buf: &mut String, s: &str) {
    buf.push_str(&review::escape::html_code(s));
}

/// A word or words in a sentence, shown as text.
pub struct Text<T>(pub T);

impl<T: fmt::Display> Inline for Text<T> {
    fn put(&self, out: &mut Out<'_>) {
        let s = self.0.to_string();
        match out.ctx {
            Ctx::Plain => out.buf.push_str(&escape::one_line(&s)),
            Ctx::Markdown => out.buf.push_str(&escape::md_text(&s)),
            Ctx::Html => out.buf.push_str(&escape::html_text(&s)),
        }
    }
}

/// A sentence made by the pipeline (an error, a finding, a problem) in which `` `...` ``
/// marks code: each part shown as [`Text`] or [`Code`]. Code spans are found as CommonMark
/// finds them (a run of backticks closes at the next run of the same length), so a path
/// holding ```` ``` ```` stays in its code; a name holding a single backtick can at worst be
/// shown in the wrong style, never as markup.
pub struct Message<T>(pub T);

/// The parts of a message: (is code, text), as the review crate finds them.
use review::escape::message_parts;

impl<T: fmt::Display> Inline for Message<T> {
    fn put(&self, out: &mut Out<'_>) {
        let s = self.0.to_string();
        if out.ctx == Ctx::Plain {
            out.buf.push_str(&s);
            return;
        }
        for (i, (code, part)) in message_parts(&s).into_iter().enumerate() {
            match (code, out.ctx) {
                (true, Ctx::Html) => html_code(out.buf, part),
                (true, _) => out.buf.push_str(&escape::md_code(part)),
                (false, Ctx::Html) => out.buf.push_str(&escape::html_text(part)),
                (false, _) => escape::push_md_text(out.buf, part, i == 0),
            }
        }
    }
}

/// `1 object`, `2 objects`: a count and fluxsim's noun.
pub struct Plural(pub usize, pub &'static str);

impl Inline for Plural {
    fn put(&self, out: &mut Out<'_>) {
        out.buf.push_str(&super::plural(self.0, self.1));
    }
}

/// Values shown as [`Text`], separated by `, `.
pub struct Texts<'a, S>(pub &'a [S]);

impl<S: AsRef<str>> Inline for Texts<'_, S> {
    fn put(&self, out: &mut Out<'_>) {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                out.buf.push_str(", ");
            }
            Text(s.as_ref()).put(out);
        }
    }
}

/// Values shown as [`Code`], separated by `, `.
pub struct Codes<'a, S>(pub &'a [S]);

impl<S: AsRef<str>> Inline for Codes<'_, S> {
    fn put(&self, out: &mut Out<'_>) {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                out.buf.push_str(", ");
            }
            Code(s.as_ref()).put(out);
        }
    }
}

/// An [`Inline`] shown in a context: what [`md!`] hands to `format_args!`.
pub struct Show<'a>(pub &'a dyn Inline, pub Ctx);

impl fmt::Display for Show<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.0.put(&mut Out {
            buf: &mut s,
            ctx: self.1,
        });
        // Widths (`{:<12}`) apply to what is shown.
        f.pad(&s)
    }
}

/// Whether an [`md!`] literal is Markdown only: HTML, which changes how the rest of the
/// line is read, comes from [`Markdown::details`].
#[must_use]
pub const fn is_markup_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' && i + 1 < b.len() && b[i + 1] != b'{' {
            // A placeholder (`{}`, `{:<12}`): its spec is not text.
            while i < b.len() && b[i] != b'}' {
                i += 1;
            }
        } else if b[i] == b'{' {
            i += 1;
        } else if b[i] == b'<' {
            return false;
        }
        i += 1;
    }
    true
}

/// Writes fluxsim's markup (a literal) with values escaped for where they land:
/// `md!(doc, "| {} | {} |\n", Code(&k.name), k.change.as_str())`. The first argument is a
/// [`Markdown`] or an [`Out`]; every other argument an [`Inline`]. The literal cannot name
/// variables (`{name}`): each value is an argument, so each is escaped.
macro_rules! md {
    ($w:expr, $fmt:literal $(, $arg:expr)* $(,)?) => {{
        const _: () = assert!(
            $crate::report::markdown::is_markup_literal($fmt),
            "md! writes Markdown: HTML comes from Markdown::details"
        );
        let mut w = $w.out();
        #[allow(unused_variables)]
        let ctx = w.ctx();
        // `concat!` keeps format_args! from capturing variables named in the literal.
        w.write_checked(format_args!(
            concat!($fmt)
            $(, $crate::report::markdown::Show(&$arg, ctx))*
        ));
    }};
}
pub(crate) use md;

/// A Markdown document being written.
#[derive(Debug, Default)]
pub struct Markdown {
    text: String,
}

impl Markdown {
    /// An empty document.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The document as a line of Markdown takes values (what [`md!`] writes through).
    pub fn out(&mut self) -> Out<'_> {
        Out {
            buf: &mut self.text,
            ctx: Ctx::Markdown,
        }
    }

    /// A fenced code block holding `body` as it is (controls shown), with a fence no line of
    /// it can close ([`escape::fenced`]); `info` is fluxsim's (`diff`, `mermaid`).
    pub fn fenced(&mut self, info: &'static str, body: &str) {
        self.text.push_str(&escape::fenced(info, body));
    }

    /// `<details><summary>SUMMARY</summary>`, a blank line, the body, `</details>`: the
    /// summary is written as HTML text (on one line: the HTML block it opens ends at a blank
    /// line), and every `<details>` opened is closed.
    pub fn details(&mut self, summary: impl FnOnce(&mut Out<'_>), body: impl FnOnce(&mut Self)) {
        self.text.push_str("<details><summary>");
        summary(&mut Out {
            buf: &mut self.text,
            ctx: Ctx::Html,
        });
        self.text.push_str("</summary>\n\n");
        body(self);
        if !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str("\n</details>\n");
    }

    /// The Markdown written.
    #[must_use]
    pub fn finish(self) -> String {
        self.text
    }
}

/// What a sentence helper writes, as plain text (for the terminal reports that share it).
pub fn plain(write: impl FnOnce(&mut Out<'_>)) -> String {
    let mut s = String::new();
    write(&mut Out {
        buf: &mut s,
        ctx: Ctx::Plain,
    });
    s
}

/// An [`Inline`] as plain text.
pub fn plain_of(x: &dyn Inline) -> String {
    plain(|w| x.put(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markdown(write: impl FnOnce(&mut Markdown)) -> String {
        let mut doc = Markdown::new();
        write(&mut doc);
        doc.finish()
    }

    #[test]
    fn md_writes_literals_as_markup_and_values_escaped() {
        let name = "a`b<!--";
        let md = markdown(|doc| md!(doc, "| {} | {} | {} |\n", Code(name), Text(name), 3usize));
        assert_eq!(md, "| <code>a&#96;b&lt;!--</code> | a&#96;b&lt;!-- | 3 |\n");
    }

    #[test]
    fn md_keeps_ordinary_values_as_they_are() {
        let md = markdown(|doc| {
            md!(
                doc,
                "### {}\n- {}: {}\n",
                Code("prod"),
                Text("dev"),
                Plural(2, "object")
            );
        });
        assert_eq!(md, "### `prod`\n- dev: 2 objects\n");
    }

    #[test]
    fn md_honours_widths() {
        assert_eq!(plain(|w| md!(w, "{:<5}|", Text("ab"))), "ab   |");
    }

    #[test]
    fn message_shows_marked_code_as_code_and_the_rest_as_text() {
        let m = "spec.path `./a` in *b*: `<!--`";
        assert_eq!(
            markdown(|doc| md!(doc, "{}", Message(m))),
            "spec.path `./a` in &#42;b&#42;: <code>&lt;!--</code>"
        );
        assert_eq!(plain(|w| md!(w, "{}", Message(m))), m);
    }

    #[test]
    fn message_with_an_unbalanced_backtick_is_text() {
        assert_eq!(
            markdown(|doc| md!(doc, "{}", Message("a `b` c`d"))),
            "a `b` c&#96;d"
        );
    }

    #[test]
    fn message_code_spans_close_at_a_run_of_their_own_length() {
        assert_eq!(
            message_parts("path `./a\n```\n<!--` is gone"),
            [
                (false, "path "),
                (true, "./a\n```\n<!--"),
                (false, " is gone")
            ]
        );
        assert_eq!(
            markdown(|doc| md!(doc, "{}", Message("path `./a```b` x"))),
            "path <code>./a&#96;&#96;&#96;b</code> x"
        );
        assert_eq!(message_parts("``a`b``"), [(true, "a`b")]);
    }

    #[test]
    fn details_summary_is_html_text_and_the_details_is_closed() {
        let md = markdown(|doc| {
            doc.details(
                |s| {
                    md!(
                        s,
                        "{} in {}",
                        Code("x</summary><!--"),
                        Texts(&["dev", "@me"])
                    );
                },
                |body| body.fenced("diff", "+a\n```\n"),
            );
        });
        assert_eq!(
            md,
            "<details><summary><code>x&lt;/summary&gt;&lt;!--</code> in dev, @\u{2060}me</summary>\n\n\
             ````diff\n+a\n```\n````\n\n</details>\n"
        );
    }

    #[test]
    fn plain_writes_values_as_they_are_on_one_line() {
        assert_eq!(
            plain(|w| md!(w, "{} {} {}", Code("a|b"), Text("<x>"), Codes(&["c", "d"]))),
            "a|b <x> c, d"
        );
        assert_eq!(
            plain(|w| md!(w, "{} {}", Text("a\nb"), Message("m\nn"))),
            "a\\nb m\nn"
        );
    }

    #[test]
    fn literals_with_html_are_refused() {
        assert!(is_markup_literal("| {} | {:<12} |"));
        assert!(is_markup_literal("{:<12} -> {{x}}"));
        assert!(!is_markup_literal("<details>{}"));
        assert!(!is_markup_literal("{{<!--}}"));
    }
}
