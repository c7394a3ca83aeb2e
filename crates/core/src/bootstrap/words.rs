//! A shell command line as the bootstrap reader reads it: words, flags and where `kubectl`
//! verbs are.

/// The values given to any of `flags` in `words` (`-f x`, `--filename=x`).
pub(super) fn flag_values(words: &[String], flags: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for f in flags {
            if w == f {
                if let Some(v) = words.get(i + 1) {
                    out.push(v.clone());
                }
            } else if let Some(v) = w.strip_prefix(&format!("{f}=")) {
                out.push(v.to_string());
            }
        }
    }
    out
}

/// The index of each `kubectl` command's verb in `words` (`kubectl -n ns create ...`: the
/// flags before the verb, and the values of those that take one, skipped).
pub(super) fn kubectl_verbs(words: &[String]) -> Vec<usize> {
    let mut out = Vec::new();
    for (k, w) in words.iter().enumerate() {
        if !w.ends_with("kubectl") {
            continue;
        }
        let mut i = k + 1;
        while let Some(x) = words.get(i) {
            if matches!(
                x.as_str(),
                "-n" | "--namespace" | "--context" | "--kubeconfig"
            ) {
                i += 2;
            } else if x.starts_with('-') {
                i += 1;
            } else {
                out.push(i);
                break;
            }
        }
    }
    out
}

/// A command line's words, as a shell splits them (quotes removed; `|`, `&&`, `;` words of
/// their own).
pub(super) fn split_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let flush = |w: &mut String, out: &mut Vec<String>| {
        if !w.is_empty() {
            out.push(std::mem::take(w));
        }
    };
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, c) if c.is_whitespace() => flush(&mut word, &mut out),
            (None, '|' | ';') => {
                flush(&mut word, &mut out);
                out.push(c.to_string());
            }
            (_, c) => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_as_a_shell_splits_them() {
        assert_eq!(
            split_words("sops -d 'a b.yaml'|kubectl apply -f -"),
            ["sops", "-d", "a b.yaml", "|", "kubectl", "apply", "-f", "-"]
        );
    }
}
