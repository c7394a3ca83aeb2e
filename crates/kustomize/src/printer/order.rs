//! go-yaml v2's key order (`sorter.go`): its "natural" order of keys, and the maps where
//! that order is not a total one.

use crate::node::Node;

/// Whether some mapping has keys that yaml.v2's `keyList.Less` does not order consistently
/// (it is not transitive: `a9t` < `a10` < `a92` < `a9t`). Go sorts such keys in an order
/// that depends on map iteration, which is random: kustomize's output is not predictable.
pub(crate) fn has_unstable_key_order(node: &Node) -> bool {
    match node {
        Node::Map(m) => {
            let keys: Vec<&str> = m.0.iter().map(|(k, _)| k.as_str()).collect();
            (may_be_intransitive(&keys) && has_inversion(&keys))
                || m.0.iter().any(|(_, v)| has_unstable_key_order(v))
        }
        Node::Seq(items) => items.iter().any(has_unstable_key_order),
        _ => false,
    }
}

/// Whether `keys`, sorted by [`key_order`], still have a pair out of order: the relation
/// is not transitive on them. Quadratic: only for keys [`may_be_intransitive`] lets through.
pub(super) fn has_inversion(keys: &[&str]) -> bool {
    let mut keys = keys.to_vec();
    keys.sort_by(|a, b| key_order(a, b));
    for i in 0..keys.len() {
        for j in (i + 1)..keys.len() {
            if key_less(keys[j], keys[i]) {
                return true;
            }
        }
    }
    false
}

/// Whether [`key_less`] may fail to be transitive on `keys`; false only when it certainly
/// is one total order on them, so the quadratic [`has_inversion`] runs only then (a
/// mapping of 10,000 numbered keys would otherwise cost 50 million comparisons).
///
/// Read as a sequence of tokens (a single non-digit character, or a maximal run of digits),
/// `key_less` is the lexicographic order in which the end of a key comes first, then other
/// non-letters by character, then digit runs by value and then length, then letters by
/// character, on every pair but one kind: a key whose digit run (say `9` in `a9t`) is a
/// prefix of another's (`a92`) and is followed by a letter, where `keyList.Less` compares
/// the letter with a digit (`a92` < `a9t`) while the tokens say `9` < `92`. That is what
/// makes `a9t` < `a10` < `a92` < `a9t`. So when no key ends a digit run with a letter at a
/// place where another key's run goes on, the relation is that token order, which is
/// transitive. Non-ASCII digits and runs too long for an `i64` (whose values `key_less`
/// wraps) are not reasoned about: they answer true.
pub(super) fn may_be_intransitive(keys: &[&str]) -> bool {
    const LONGEST_RUN: usize = 17;
    // Prefixes ending in a digit that a letter follows, and ones that a digit follows.
    let mut before_letter: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut before_digit: Vec<&str> = Vec::new();
    for key in keys {
        let mut run = 0;
        let mut chars = key.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if !is_digit(c) {
                run = 0;
                continue;
            }
            if !c.is_ascii_digit() {
                return true;
            }
            run += 1;
            if run > LONGEST_RUN {
                return true;
            }
            let end = i + c.len_utf8();
            match chars.peek() {
                Some((_, n)) if is_digit(*n) => before_digit.push(&key[..end]),
                Some((_, n)) if is_letter(*n) => {
                    before_letter.insert(&key[..end]);
                }
                _ => {}
            }
        }
    }
    !before_letter.is_empty() && before_digit.iter().any(|p| before_letter.contains(p))
}

/// yaml.v2 `sorter.go` `keyList.Less` for two string keys.
pub(super) fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if a == b {
        return Ordering::Equal;
    }
    if key_less(a, b) {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

fn key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = is_letter(ar[i]);
        let bl = is_letter(br[i]);
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(digit_value(ar[ai]));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(digit_value(br[bi]));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

/// Go's `int64(r - '0')` for a digit rune (any Unicode Nd digit).
fn digit_value(c: char) -> i64 {
    i64::from(u32::from(c)) - i64::from(u32::from('0'))
}

/// Go's `unicode.IsLetter`: general category L (Lu, Ll, Lt, Lm, Lo).
fn is_letter(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
    )
}

fn is_digit(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    c.is_ascii_digit() || (!c.is_ascii() && get_general_category(c) == G::DecimalNumber)
}
