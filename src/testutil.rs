//! Helpers for the unit tests.

/// A temporary folder holding `files` (relative path, content).
pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("a temporary folder");
    for (path, text) in files {
        let p = t.path().join(path);
        std::fs::create_dir_all(p.parent().expect("a relative path")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    t
}
