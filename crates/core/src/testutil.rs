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

/// Everything the folder `dir` holds but symbolic links, as a source tree's value (named by
/// its resolved path).
pub(crate) fn source_fs(dir: &std::path::Path) -> crate::source::SourceFs {
    fn walk(
        root: &std::path::Path,
        dir: &std::path::Path,
        files: &mut std::collections::BTreeSet<std::path::PathBuf>,
        dirs: &mut std::collections::BTreeSet<std::path::PathBuf>,
    ) {
        for e in std::fs::read_dir(dir).expect("a folder") {
            let e = e.expect("an entry");
            let p = e.path();
            let rel = p.strip_prefix(root).expect("under the root").to_path_buf();
            let kind = e.file_type().expect("a file type");
            if kind.is_symlink() {
                // Never archived.
            } else if kind.is_dir() {
                dirs.insert(rel);
                walk(root, &p, files, dirs);
            } else {
                files.insert(rel);
            }
        }
    }
    let root = std::fs::canonicalize(dir).expect("a folder");
    let (mut files, mut dirs) = Default::default();
    walk(&root, &root, &mut files, &mut dirs);
    crate::source::SourceFs::on_folder(root.clone(), root, files, dirs, false)
}
