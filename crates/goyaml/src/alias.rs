//! The bound on alias expansion that go-yaml applies against "billion laughs", shared by
//! every YAML reader fluxsim runs on repository text (this crate's `YAMLToJSON` and the
//! native kustomize reader), plus a byte budget of fluxsim's own for what aliases copy.
//!
//! go-yaml v3 `decode.go` (`decoder.unmarshal`, `allowedAliasRatio`; the same rule as v2
//! since 2.2.8): every decoded node counts once, every node decoded while an alias is being
//! expanded counts as alias-driven too, and once more than 100 alias-driven decodes and more
//! than 1000 decodes are made, alias-driven decodes may not exceed 99% of the decodes of a
//! document up to 400,000 decodes, scaling down to 10% at 4,000,000.
//!
//! The ratio alone lets a few large nodes through (a 1 MB string aliased 300 times is 301
//! decodes), so fluxsim also bounds the bytes of scalars aliases copy: [`MAX_ALIASED_BYTES`]
//! a document. go-yaml has no such bound (a difference, written in docs/fidelity.md).

/// The most bytes of scalar text (keys and values) that aliases may copy in one document.
pub const MAX_ALIASED_BYTES: u64 = 32 << 20;

/// decode.go `allowedAliasRatio()`: 99% aliases for small documents, scaling down to 10%.
#[must_use]
pub fn allowed_alias_ratio(decode_count: u64) -> f64 {
    const LOW: u64 = 400_000;
    const HIGH: u64 = 4_000_000;
    if decode_count <= LOW {
        0.99
    } else if decode_count >= HIGH {
        0.10
    } else {
        #[allow(clippy::cast_precision_loss)]
        let scaled = (decode_count - LOW) as f64 / (HIGH - LOW) as f64;
        0.99 - 0.89 * scaled
    }
}

/// Which bound alias expansion crossed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AliasBound {
    /// go-yaml's ratio of alias-driven decodes.
    Ratio {
        /// Alias-driven decodes.
        aliased: u64,
        /// All decodes.
        decoded: u64,
    },
    /// fluxsim's budget of bytes copied by aliases ([`MAX_ALIASED_BYTES`]).
    Bytes {
        /// Bytes the aliases would copy, at least.
        bytes: u64,
    },
}

impl std::fmt::Display for AliasBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            AliasBound::Ratio { aliased, decoded } => write!(
                f,
                "the document contains excessive aliasing ({aliased} of {decoded} decoded nodes come from aliases, above go-yaml's bound of {:.0}%)",
                allowed_alias_ratio(decoded) * 100.0
            ),
            AliasBound::Bytes { bytes } => write!(
                f,
                "the document's aliases copy more than fluxsim's bound of {} MiB of text (at least {bytes} bytes)",
                MAX_ALIASED_BYTES >> 20
            ),
        }
    }
}

/// The counts of one document being decoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct AliasGuard {
    decoded: u64,
    aliased: u64,
    aliased_bytes: u64,
}

impl AliasGuard {
    /// A guard for a new document.
    #[must_use]
    pub fn new() -> Self {
        AliasGuard::default()
    }

    /// decode.go `unmarshal()`'s count of one node (`in_alias`: decoded while an alias is
    /// being expanded), with the ratio checked as go-yaml checks it at every node.
    ///
    /// # Errors
    /// When the alias-driven share crosses go-yaml's bound.
    pub fn count(&mut self, in_alias: bool) -> Result<(), AliasBound> {
        self.add(1, u64::from(in_alias), 0)
    }

    /// An alias expanded as a whole: `nodes` nodes holding `bytes` bytes of scalar text,
    /// each counted as go-yaml counts the nodes of an alias it decodes. Checked once after
    /// adding them all: the alias-driven share only grows while an alias is expanded and
    /// the allowed ratio only falls, so go-yaml's per-node check fails inside an alias
    /// exactly when it fails at its last node.
    ///
    /// # Errors
    /// When the alias-driven share crosses go-yaml's bound or the bytes fluxsim's.
    pub fn expand(&mut self, nodes: u64, bytes: u64) -> Result<(), AliasBound> {
        self.add(nodes, nodes, bytes)
    }

    /// Bytes of scalar text an alias copies, one at a time (a decoder that walks the alias).
    ///
    /// # Errors
    /// When the bytes cross fluxsim's bound.
    pub fn copy_bytes(&mut self, bytes: u64) -> Result<(), AliasBound> {
        self.add(0, 0, bytes)
    }

    fn add(&mut self, nodes: u64, aliased: u64, bytes: u64) -> Result<(), AliasBound> {
        self.decoded = self.decoded.saturating_add(nodes);
        self.aliased = self.aliased.saturating_add(aliased);
        self.aliased_bytes = self.aliased_bytes.saturating_add(bytes);
        #[allow(clippy::cast_precision_loss)]
        let ratio = self.aliased as f64 / self.decoded.max(1) as f64;
        if self.aliased > 100 && self.decoded > 1000 && ratio > allowed_alias_ratio(self.decoded) {
            return Err(AliasBound::Ratio {
                aliased: self.aliased,
                decoded: self.decoded,
            });
        }
        if self.aliased_bytes > MAX_ALIASED_BYTES {
            return Err(AliasBound::Bytes {
                bytes: self.aliased_bytes,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_alias_ratio_scales_from_99_to_10_percent_as_go_yaml_v3() {
        assert!((allowed_alias_ratio(1000) - 0.99).abs() < 1e-12);
        assert!((allowed_alias_ratio(400_000) - 0.99).abs() < 1e-12);
        assert!((allowed_alias_ratio(2_200_000) - 0.545).abs() < 1e-9);
        assert!((allowed_alias_ratio(4_000_000) - 0.10).abs() < 1e-12);
        assert!((allowed_alias_ratio(u64::MAX) - 0.10).abs() < 1e-12);
    }

    #[test]
    fn a_small_document_may_be_almost_all_aliases_but_not_more() {
        // 1000 plain nodes then 99,000 aliased ones: exactly 99%, allowed.
        let mut g = AliasGuard::new();
        for _ in 0..1000 {
            g.count(false).unwrap();
        }
        g.expand(99_000, 0).unwrap();
        // One more aliased node tips it over.
        assert!(matches!(g.expand(1, 0), Err(AliasBound::Ratio { .. })));
    }

    #[test]
    fn the_ratio_is_not_checked_below_100_aliases_or_1000_decodes() {
        let mut g = AliasGuard::new();
        g.count(false).unwrap();
        g.expand(100, 0).unwrap();
        let mut g = AliasGuard::new();
        g.count(false).unwrap();
        g.expand(998, 0).unwrap();
    }

    #[test]
    fn bytes_copied_by_aliases_are_bounded() {
        let mut g = AliasGuard::new();
        g.count(false).unwrap();
        for _ in 0..32 {
            g.expand(1, 1 << 20).unwrap();
        }
        let err = g.expand(1, 1).unwrap_err();
        assert_eq!(
            err,
            AliasBound::Bytes {
                bytes: (32 << 20) + 1
            }
        );
        assert!(err.to_string().contains("32 MiB"), "{err}");
    }
}
