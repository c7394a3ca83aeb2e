//! Fuzz target: parsing and evaluating any input, strict or not, never panics or hangs.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let vars: BTreeMap<String, String> = [("A", "alpha"), ("E", ""), ("U", "éclair/ß.tar.gz")]
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect();
    if let Ok(t) = fluxsim::envsubst::Template::parse(data) {
        let _ = t.eval(&vars, false);
        let _ = t.eval(&vars, true);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = fluxsim::postbuild::substitute_text(text, &vars, true);
    }
});
