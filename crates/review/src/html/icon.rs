//! The report's symbols as inline SVG, and the emoji of fluxsim's messages turned into
//! them: a system without an emoji font draws an emoji as an empty box, an SVG everywhere.

/// A mark drawn in the text's colour, `label` read by a screen reader.
fn svg(class: &str, label: &str, body: &str) -> String {
    format!(
        "<svg class=\"icon {class}\" viewBox=\"0 0 16 16\" width=\"14\" height=\"14\" role=\"img\" aria-label=\"{label}\">{body}</svg>"
    )
}

/// A check mark: passed.
pub(super) fn pass() -> String {
    svg(
        "pass",
        "passed",
        "<path d=\"M2.5 8.5l3.5 3.5 7.5-8\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2.2\" stroke-linecap=\"round\" stroke-linejoin=\"round\"/>",
    )
}

/// A cross: failed.
pub(super) fn fail() -> String {
    svg(
        "fail",
        "failed",
        "<path d=\"M3.5 3.5l9 9M12.5 3.5l-9 9\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"2.2\" stroke-linecap=\"round\"/>",
    )
}

/// A triangle with an exclamation mark: a warning.
pub(super) fn warn() -> String {
    svg(
        "warn",
        "warning",
        "<path d=\"M8 1.8L15 14.2H1z\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\" stroke-linejoin=\"round\"/>\
         <path d=\"M8 6v4.2M8 12v.6\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.6\" stroke-linecap=\"round\"/>",
    )
}

/// `escaped` (a message already HTML-escaped) with the emoji fluxsim's messages use in
/// Markdown turned into SVG marks, or dropped where the words say it (`🐤 The canaries…`).
pub(super) fn symbols(escaped: &str) -> String {
    if !escaped.chars().any(|c| u32::from(c) > 0x2000) {
        return escaped.to_string();
    }
    escaped
        .replace("\u{1f424} ", "")
        .replace('\u{1f424}', "")
        .replace("\u{26a0}\u{fe0f}", &warn())
        .replace('\u{26a0}', &warn())
        .replace('\u{2705}', &pass())
        .replace('\u{274c}', &fail())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_emoji_of_fluxsims_messages_become_svg() {
        let s = symbols("\u{1f424} The canaries \u{2705} \u{274c} \u{26a0}\u{fe0f} hazard");
        assert!(s.starts_with("The canaries <svg"), "{s}");
        assert_eq!(s.matches("<svg").count(), 3, "{s}");
        assert!(s.is_ascii(), "{s}");
    }
}
