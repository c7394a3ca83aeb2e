//! A deterministic fuzz smoke test that runs with the ordinary test suite: random inputs built
//! from the characters that matter to Flux's parser never panic, and always terminate.
//! (The coverage-guided target lives in `fuzz/`; see the README.)

use std::collections::BTreeMap;

use fluxsim::envsubst::Template;

/// A small xorshift generator: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const PIECES: &[&str] = &[
    "$", "{", "}", "${", "$$", "A", "E", "U", "M", ":", "-", "=", "+", "?", "#", "%", "/", "\\",
    "^", ",", "[", "]", "0", "1", "-1", "*", "é", "ß", "\0", "\n", " ", "a: ", "\"", "'",
];

#[test]
fn random_templates_never_panic() {
    let vars: BTreeMap<String, String> = [("A", "alpha"), ("E", ""), ("U", "éclair/ß.tar.gz")]
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut parsed = 0;
    for _ in 0..20_000 {
        let len = (rng.next() % 24) as usize;
        let mut s = String::new();
        for _ in 0..len {
            s.push_str(PIECES[(rng.next() % PIECES.len() as u64) as usize]);
        }
        if let Ok(t) = Template::parse(s.as_bytes()) {
            parsed += 1;
            let _ = t.eval(&vars, false);
            let _ = t.eval(&vars, true);
        }
        let _ = fluxsim::postbuild::substitute_text(&s, &vars, false);
    }
    // The generator must exercise both paths, or the test proves nothing.
    assert!(parsed > 1_000 && parsed < 20_000, "parsed {parsed}");
}
