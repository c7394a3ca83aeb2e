//! Wording every message shares, the pipeline's and the reports'.

/// `1 cluster`, `2 clusters`: a count and its noun (`one`), in the plural when it is not 1.
#[must_use]
pub fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}
