//! The source stage against real git repositories built in temporary directories.

use std::fs;
use std::path::{Path, PathBuf};

// The shared harness serves several test crates; this one uses only its git helper.
use crate::common::git;
use fluxsim::source::{
    in_place, materialize, materialize_rev, revision_in_place, secure_join, Exclusion, LeftOut,
    PatternSource, SourceError, SourceOptions, Tree,
};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A repository with the given files committed.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    git(tmp.path(), &["init", "-q"]);
    for (rel, text) in files {
        write(tmp.path(), rel, text);
    }
    commit(tmp.path(), "initial");
    tmp
}

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
}

fn files(tree: &Tree) -> Vec<String> {
    tree.files()
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

fn reason(tree: &Tree, rel: &str) -> Option<Exclusion> {
    tree.excluded()
        .iter()
        .find(|e| e.path == Path::new(rel))
        .map(|e| e.reason.clone())
}

fn opts() -> SourceOptions {
    SourceOptions::default()
}

/// Every file under `root`, relative, sorted (to compare a copy with its listing).
fn on_disk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(rel) = pending.pop() {
        for item in fs::read_dir(root.join(&rel)).unwrap() {
            let item = item.unwrap();
            let path = rel.join(item.file_name());
            if item.file_type().unwrap().is_dir() {
                pending.push(path);
            } else {
                out.push(path.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn tracked_files_are_copied_and_untracked_left_out_unless_asked() {
    let repo = repo(&[("apps/a.yaml", "a: 1\n")]);
    write(repo.path(), "apps/new.yaml", "new: 1\n");
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(files(&tree), ["apps/a.yaml"]);
    assert_eq!(reason(&tree, "apps/new.yaml"), Some(Exclusion::NotTracked));
    assert_eq!(on_disk(tree.root()), ["apps/a.yaml"]);

    let with = SourceOptions {
        include_untracked: true,
        ..opts()
    };
    let tree = materialize(repo.path(), &with).unwrap();
    assert_eq!(files(&tree), ["apps/a.yaml", "apps/new.yaml"]);
}

#[test]
fn work_tree_contents_are_copied_not_the_committed_ones() {
    let repo = repo(&[("a.yaml", "old\n"), ("gone.yaml", "x\n")]);
    fs::write(repo.path().join("a.yaml"), "edited\n").unwrap();
    fs::remove_file(repo.path().join("gone.yaml")).unwrap();
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(
        fs::read_to_string(tree.root().join("a.yaml")).unwrap(),
        "edited\n"
    );
    assert_eq!(files(&tree), ["a.yaml"]);
    assert_eq!(
        reason(&tree, "gone.yaml"),
        Some(Exclusion::DeletedFromWorkTree)
    );
}

#[test]
fn gitignored_untracked_files_are_not_copied_even_when_asked() {
    let repo = repo(&[(".gitignore", "*.log\n"), ("a.yaml", "a\n")]);
    write(repo.path(), "debug.log", "x\n");
    let with = SourceOptions {
        include_untracked: true,
        ..opts()
    };
    let tree = materialize(repo.path(), &with).unwrap();
    // `.gitignore` itself is a VCS file: source-controller excludes it.
    assert_eq!(files(&tree), ["a.yaml"]);
}

#[test]
fn a_file_the_folder_holds_but_the_tree_leaves_out_says_why() {
    let repo = repo(&[(".gitignore", "ignored.toml\n"), ("a.yaml", "a\n")]);
    write(repo.path(), "untracked.toml", "x\n");
    write(repo.path(), "ignored.toml", "x\n");
    let tree = in_place(repo.path(), &opts()).unwrap();
    assert_eq!(tree.left_out("untracked.toml"), Some(LeftOut::NotTracked));
    assert_eq!(tree.left_out("ignored.toml"), Some(LeftOut::IgnoredByGit));
    assert_eq!(tree.left_out("a.yaml"), None);
    assert_eq!(tree.left_out("absent.toml"), None);
    // Tracked, but a .sourceignore rule leaves it out of what Flux sees.
    write(repo.path(), ".sourceignore", "*.toml\n");
    write(repo.path(), "config.toml", "x\n");
    commit(repo.path(), "config");
    let tree = in_place(repo.path(), &opts()).unwrap();
    assert!(
        matches!(
            tree.left_out("config.toml"),
            Some(LeftOut::Excluded(Exclusion::Ignored { .. }))
        ),
        "{:?}",
        tree.left_out("config.toml")
    );
    // A revision's files are git's: nothing of the folder is left out of it.
    let rev = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert_eq!(rev.left_out("ignored.toml"), None);
}

// fluxcd/pkg artifact/storage/archive.go: Archive skips anything not regular or a folder.
#[cfg(unix)]
#[test]
fn symlinks_are_never_copied() {
    let repo = repo(&[("base/a.yaml", "a\n")]);
    std::os::unix::fs::symlink("base/a.yaml", repo.path().join("link.yaml")).unwrap();
    std::os::unix::fs::symlink("base", repo.path().join("linkdir")).unwrap();
    commit(repo.path(), "links");
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(files(&tree), ["base/a.yaml"]);
    assert_eq!(reason(&tree, "link.yaml"), Some(Exclusion::Symlink));
    assert_eq!(reason(&tree, "linkdir"), Some(Exclusion::Symlink));
    assert!(tree.root().join("link.yaml").symlink_metadata().is_err());

    let rev = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert_eq!(files(&rev), ["base/a.yaml"]);
    assert_eq!(reason(&rev, "link.yaml"), Some(Exclusion::Symlink));
}

// fluxcd/pkg sourceignore/sourceignore.go: ExcludeVCS, ExcludeExt, ExcludeCI, ExcludeExtra.
#[test]
fn default_patterns_exclude_ci_folders_images_and_vcs_files() {
    let repo = repo(&[
        (".github/workflows/ci.yaml", "on: push\n"),
        ("x.png", "png"),
        ("docs/y.zip", "zip"),
        (".gitattributes", "* text\n"),
        ("clusters/.sops.yaml", "creation_rules: []\n"),
        ("clusters/dev/kustomization.yaml", "resources: []\n"),
    ]);
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(files(&tree), ["clusters/dev/kustomization.yaml"]);
    assert_eq!(
        reason(&tree, "x.png"),
        Some(Exclusion::Ignored {
            pattern: "*.png".into(),
            source: PatternSource::Default
        })
    );
    assert_eq!(
        reason(&tree, ".gitattributes"),
        Some(Exclusion::Ignored {
            pattern: ".gitattributes".into(),
            source: PatternSource::Vcs
        })
    );
    // The excluded CI folder is not recreated empty either.
    assert!(!tree.root().join(".github").exists());
}

// fluxcd/pkg sourceignore.go LoadIgnorePatterns: each file's patterns get its folder as domain.
#[test]
fn sourceignore_is_scoped_to_its_folder() {
    let repo = repo(&[
        ("apps/.sourceignore", "secret.yaml\n/local.yaml\n"),
        ("apps/secret.yaml", "s\n"),
        ("apps/sub/secret.yaml", "s\n"),
        ("apps/local.yaml", "l\n"),
        ("apps/sub/local.yaml", "l\n"),
        ("secret.yaml", "s\n"),
        ("local.yaml", "l\n"),
    ]);
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(
        files(&tree),
        [
            "apps/.sourceignore",
            "apps/sub/local.yaml",
            "local.yaml",
            "secret.yaml"
        ]
    );
    assert_eq!(
        reason(&tree, "apps/sub/secret.yaml"),
        Some(Exclusion::Ignored {
            pattern: "secret.yaml".into(),
            source: PatternSource::SourceIgnore("apps/.sourceignore".into())
        })
    );
}

// Flux's documented spec.ignore example; go-git matches each file on its own path, so a
// negation re-includes files below an excluded folder.
#[test]
fn negation_reincludes_what_an_earlier_pattern_excluded() {
    let repo = repo(&[
        (".sourceignore", "/*\n!/deploy\n*.md\n!keep.md\n"),
        ("src/main.go", "package main\n"),
        ("deploy/app.yaml", "a\n"),
        ("deploy/notes.md", "n\n"),
        ("deploy/keep.md", "k\n"),
    ]);
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(files(&tree), ["deploy/app.yaml", "deploy/keep.md"]);
}

// artifact/storage/archive.go SourceIgnoreFilter: with any user pattern only VCS stays.
#[test]
fn spec_ignore_drops_default_patterns_but_keeps_vcs_exclusion() {
    let repo = repo(&[
        (".gitignore", "tmp/\n"),
        (".github/ci.yaml", "c\n"),
        ("x.png", "png"),
        ("a.yaml", "a\n"),
        ("b.yaml", "b\n"),
    ]);
    let spec = SourceOptions {
        spec_ignore: Some("b.yaml\n".into()),
        ..opts()
    };
    let tree = materialize(repo.path(), &spec).unwrap();
    assert_eq!(files(&tree), [".github/ci.yaml", "a.yaml", "x.png"]);
    assert_eq!(
        reason(&tree, ".gitignore"),
        Some(Exclusion::Ignored {
            pattern: ".gitignore".into(),
            source: PatternSource::Vcs
        })
    );
    assert_eq!(
        reason(&tree, "b.yaml"),
        Some(Exclusion::Ignored {
            pattern: "b.yaml".into(),
            source: PatternSource::SpecIgnore
        })
    );
}

// Same `len(ps) > 0` test: `.sourceignore` patterns count as user patterns too.
#[test]
fn a_sourceignore_pattern_also_drops_the_defaults() {
    let repo = repo(&[
        (".sourceignore", "nothing\n"),
        ("x.png", "png"),
        ("a.yaml", "a\n"),
    ]);
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(files(&tree), [".sourceignore", "a.yaml", "x.png"]);
}

// A comment-only spec.ignore adds no pattern, so the defaults stay.
#[test]
fn a_comment_only_spec_ignore_keeps_the_defaults() {
    let repo = repo(&[("x.png", "png"), ("a.yaml", "a\n")]);
    let spec = SourceOptions {
        spec_ignore: Some("# nothing\n\n".into()),
        ..opts()
    };
    let tree = materialize(repo.path(), &spec).unwrap();
    assert_eq!(files(&tree), ["a.yaml"]);
}

// source-controller gitrepository_controller.go reconcileArtifact: LoadIgnorePatterns (the
// `.sourceignore` files, depth first), then spec.ignore appended last, one matcher where the
// last matching pattern decides: a negation in spec.ignore re-includes a file a nested
// `.sourceignore` excluded. A tree read once without spec.ignore and narrowed for a
// GitRepository that has one (as a render does per cluster) holds exactly what reading the
// source with it holds, for a work tree and for a revision.
#[test]
fn spec_ignore_negation_reincludes_what_a_nested_sourceignore_excluded() {
    let repo = repo(&[
        ("resources/.sourceignore", "/*\n"),
        ("resources/config.yaml", "c\n"),
        ("resources/other.yaml", "o\n"),
        ("x.png", "png"),
        ("kept.yaml", "k\n"),
    ]);
    let spec = "!config.yaml\n";
    let direct = materialize(
        repo.path(),
        &SourceOptions {
            spec_ignore: Some(spec.into()),
            ..opts()
        },
    )
    .unwrap();
    // The defaults are dropped (user patterns exist either way) and config.yaml is back.
    assert_eq!(
        files(&direct),
        ["kept.yaml", "resources/config.yaml", "x.png"]
    );
    let head = git(repo.path(), &["rev-parse", "HEAD"]);
    for tree in [
        in_place(repo.path(), &opts()).unwrap(),
        materialize(repo.path(), &opts()).unwrap(),
        materialize_rev(repo.path(), head.trim(), &opts()).unwrap(),
    ] {
        assert_eq!(files(&tree), ["kept.yaml", "x.png"]);
        let narrowed = tree.narrowed(spec).unwrap();
        assert_eq!(files(&narrowed), files(&direct));
        let config = narrowed.root().join("resources/config.yaml");
        assert_eq!(narrowed.fs().read(&config).unwrap(), b"c\n");
        assert!(narrowed.fs().is_dir(&narrowed.root().join("resources")));
        assert_eq!(narrowed.excluded(), direct.excluded());
    }
}

// The same pattern order: sourceignore.go LoadIgnorePatterns reads a folder's own file, then
// its sub-folders in name order (os.ReadDir). A folder whose name sorts before
// `.sourceignore` (`-a`) still comes after the root's file.
#[test]
fn sourceignore_files_apply_in_load_ignore_patterns_depth_first_order() {
    let repo = repo(&[
        (".sourceignore", "*.yaml\n"),
        ("-a/.sourceignore", "!keep.yaml\n"),
        ("-a/keep.yaml", "k\n"),
        ("-a/drop.yaml", "d\n"),
        ("b/keep.yaml", "k\n"),
    ]);
    let tree = materialize(repo.path(), &opts()).unwrap();
    assert_eq!(
        files(&tree),
        ["-a/.sourceignore", "-a/keep.yaml", ".sourceignore"]
    );
}

#[test]
fn spec_ignore_wins_over_sourceignore() {
    let repo = repo(&[(".sourceignore", "!a.yaml\n"), ("a.yaml", "a\n")]);
    let spec = SourceOptions {
        spec_ignore: Some("a.yaml\n".into()),
        ..opts()
    };
    let tree = materialize(repo.path(), &spec).unwrap();
    assert_eq!(files(&tree), [".sourceignore"]);
}

#[test]
fn materialize_rev_reads_an_older_commit() {
    let repo = repo(&[("apps/a.yaml", "v1\n"), ("apps/x.png", "png")]);
    let first = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_owned();
    git(repo.path(), &["tag", "v1"]);
    write(repo.path(), "apps/a.yaml", "v2\n");
    write(repo.path(), "apps/b.yaml", "b\n");
    commit(repo.path(), "second");

    for rev in [first.as_str(), "v1", "HEAD~1"] {
        let tree = materialize_rev(repo.path(), rev, &opts()).unwrap();
        assert_eq!(files(&tree), ["apps/a.yaml"], "at {rev}");
        assert_eq!(
            fs::read_to_string(tree.root().join("apps/a.yaml")).unwrap(),
            "v1\n"
        );
        assert_eq!(tree.revision(), Some(first.as_str()));
    }
    let head = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert_eq!(files(&head), ["apps/a.yaml", "apps/b.yaml"]);
}

#[test]
fn a_sub_directory_is_the_root_as_flux_sees_it() {
    let repo = repo(&[
        ("fleet/clusters/dev/k.yaml", "k\n"),
        ("fleet/.sourceignore", "dev/\n"),
        ("other/o.yaml", "o\n"),
    ]);
    let fleet = repo.path().join("fleet");
    write(repo.path(), "fleet/clusters/prod/k.yaml", "k\n");
    commit(repo.path(), "prod");
    for tree in [
        materialize(&fleet, &opts()).unwrap(),
        materialize_rev(&fleet, "HEAD", &opts()).unwrap(),
    ] {
        assert_eq!(
            files(&tree),
            [".sourceignore", "clusters/prod/k.yaml"],
            "paths are relative to the folder given"
        );
    }
    let old = materialize_rev(&fleet, "HEAD~1", &opts()).unwrap();
    assert_eq!(files(&old), [".sourceignore"]);
}

#[test]
fn materialize_rev_does_not_read_the_work_tree() {
    let repo = repo(&[("a.yaml", "committed\n")]);
    fs::write(repo.path().join("a.yaml"), "edited\n").unwrap();
    write(repo.path(), "untracked.yaml", "u\n");
    let with = SourceOptions {
        include_untracked: true,
        ..opts()
    };
    let tree = materialize_rev(repo.path(), "HEAD", &with).unwrap();
    assert_eq!(files(&tree), ["a.yaml"]);
    assert_eq!(
        fs::read_to_string(tree.root().join("a.yaml")).unwrap(),
        "committed\n"
    );
}

// A work tree holding the revision (a CI checkout of the head) is read in place: the same
// files and digests as the revision read out of git, nothing copied, nothing else shown. Any
// difference in a file of the revision (an edit, a line-ending conversion, another revision)
// reads the revision out of git instead.
#[test]
fn a_work_tree_holding_exactly_the_revision_is_read_in_place() {
    let repo = repo(&[
        ("a.yaml", "a: 1\n"),
        ("d/b.yaml", "b: 2\n"),
        ("x.png", "png"),
    ]);
    write(repo.path(), "untracked.yaml", "u\n");
    let in_place = revision_in_place(repo.path(), "HEAD", &opts())
        .unwrap()
        .expect("a clean checkout is the revision");
    let copied = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert!(in_place.in_place() && !copied.in_place());
    assert_eq!(files(&in_place), files(&copied));
    assert_eq!(in_place.digests(), copied.digests());
    assert_eq!(in_place.revision(), copied.revision());
    assert_eq!(in_place.root(), fs::canonicalize(repo.path()).unwrap());
    // An edit of a tracked file.
    fs::write(repo.path().join("a.yaml"), "a: 2\n").unwrap();
    assert!(revision_in_place(repo.path(), "HEAD", &opts())
        .unwrap()
        .is_none());
    fs::write(repo.path().join("a.yaml"), "a: 1\n").unwrap();
    // Another revision of the folder.
    commit(repo.path(), "second");
    write(repo.path(), "c.yaml", "c: 3\n");
    commit(repo.path(), "third");
    assert!(revision_in_place(repo.path(), "HEAD~1", &opts())
        .unwrap()
        .is_none());
    assert!(revision_in_place(repo.path(), "HEAD", &opts())
        .unwrap()
        .is_some());
    // A file staged but not committed, or not tracked at all, is not in the revision, nor in
    // the tree read in place.
    write(repo.path(), "e.yaml", "e: 5\n");
    git(repo.path(), &["add", "e.yaml"]);
    write(repo.path(), "loose.yaml", "l: 6\n");
    let tree = revision_in_place(repo.path(), "HEAD", &opts())
        .unwrap()
        .expect("the revision's files are as committed");
    // (`untracked.yaml` was committed with the second commit; `x.png` is ignored.)
    assert_eq!(
        files(&tree),
        ["a.yaml", "c.yaml", "d/b.yaml", "untracked.yaml"]
    );
    assert!(!tree.fs().is_file(&tree.root().join("e.yaml")));
    assert!(!tree.fs().is_file(&tree.root().join("loose.yaml")));
}

// Line endings converted on checkout: the work tree's bytes are not the blob's.
#[test]
fn a_work_tree_whose_bytes_differ_from_the_blobs_is_not_the_revision() {
    let repo = repo(&[("a.yaml", "a: 1\nb: 2\n")]);
    write(repo.path(), ".gitattributes", "*.yaml text eol=crlf\n");
    commit(repo.path(), "crlf");
    fs::remove_file(repo.path().join("a.yaml")).unwrap();
    git(repo.path(), &["checkout", "--", "a.yaml"]);
    assert_eq!(
        fs::read_to_string(repo.path().join("a.yaml")).unwrap(),
        "a: 1\r\nb: 2\r\n"
    );
    assert!(revision_in_place(repo.path(), "HEAD", &opts())
        .unwrap()
        .is_none());
    let copied = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert_eq!(
        fs::read_to_string(copied.root().join("a.yaml")).unwrap(),
        "a: 1\nb: 2\n"
    );
}

#[test]
fn the_users_tree_and_git_status_are_unchanged() {
    let repo = repo(&[("a.yaml", "a\n"), ("x.png", "png"), ("d/b.yaml", "b\n")]);
    fs::write(repo.path().join("a.yaml"), "edited\n").unwrap();
    write(repo.path(), "new.yaml", "n\n");
    git(repo.path(), &["add", "new.yaml"]);
    write(repo.path(), "loose.yaml", "l\n");
    let status = git(repo.path(), &["status", "--porcelain"]);
    let listing = on_disk(repo.path());
    let index = fs::read(repo.path().join(".git/index")).unwrap();

    let a = materialize(repo.path(), &opts()).unwrap();
    let b = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert!(!a.root().starts_with(repo.path()));
    assert_ne!(a.root(), b.root());

    assert_eq!(git(repo.path(), &["status", "--porcelain"]), status);
    assert_eq!(on_disk(repo.path()), listing);
    assert_eq!(fs::read(repo.path().join(".git/index")).unwrap(), index);
    assert_eq!(
        fs::read_to_string(repo.path().join("a.yaml")).unwrap(),
        "edited\n"
    );
    // Staged files are tracked: `git ls-files` lists the index.
    assert_eq!(files(&a), ["a.yaml", "d/b.yaml", "new.yaml"]);
    // The copy goes away with the tree.
    let root = a.root().to_path_buf();
    drop(a);
    assert!(!root.exists());
}

#[test]
fn a_plain_directory_copies_every_regular_file() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "apps/a.yaml", "a\n");
    write(tmp.path(), "apps/logo.png", "png");
    write(tmp.path(), "apps/.sourceignore", "skip.yaml\n");
    write(tmp.path(), "apps/skip.yaml", "s\n");
    fs::create_dir_all(tmp.path().join("empty")).unwrap();
    let tree = materialize(tmp.path(), &opts()).unwrap();
    // The `.sourceignore` pattern drops the defaults, so the image stays.
    assert_eq!(
        files(&tree),
        ["apps/.sourceignore", "apps/a.yaml", "apps/logo.png"]
    );
    // Archive keeps folder entries, so an empty folder exists in Flux's copy too.
    assert!(tree.root().join("empty").is_dir());
    assert_eq!(tree.revision(), None);
}

#[test]
fn outputs_are_sorted_and_repeatable() {
    let repo = repo(&[
        ("b/z.yaml", "z\n"),
        ("a-c/y.yaml", "y\n"),
        ("a/b/x.yaml", "x\n"),
        ("a.png", "p"),
        ("z.zip", "z"),
    ]);
    let one = materialize(repo.path(), &opts()).unwrap();
    let two = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert_eq!(files(&one), ["a/b/x.yaml", "a-c/y.yaml", "b/z.yaml"]);
    assert_eq!(one.files(), two.files());
    assert_eq!(one.excluded(), two.excluded());
    let mut sorted = one.excluded().to_vec();
    sorted.sort();
    assert_eq!(one.excluded(), sorted.as_slice());
}

#[test]
fn an_unknown_revision_is_an_error_that_names_it() {
    let repo = repo(&[("a.yaml", "a\n")]);
    for rev in ["no-such-branch", "--output=/tmp/x", ""] {
        let err = materialize_rev(repo.path(), rev, &opts()).unwrap_err();
        assert!(
            matches!(err, SourceError::NotARevision { .. }),
            "{rev}: {err}"
        );
        assert!(err.to_string().contains("is not a commit"), "{err}");
    }
}

#[test]
fn a_revision_of_a_plain_directory_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let err = materialize_rev(tmp.path(), "HEAD", &opts()).unwrap_err();
    assert!(
        matches!(err, SourceError::NotAGitRepository { .. }),
        "{err}"
    );
}

#[test]
fn a_missing_directory_is_an_error_that_names_it() {
    let err = materialize(Path::new("/nonexistent/fluxsim/dir"), &opts()).unwrap_err();
    assert!(
        err.to_string().contains("/nonexistent/fluxsim/dir"),
        "{err}"
    );
}

// kustomize-controller: securejoin.SecureJoin(tmpDir, obj.Spec.Path).
#[test]
fn secure_join_clamps_parent_segments_to_the_root() {
    let repo = repo(&[("clusters/dev/k.yaml", "k\n")]);
    let tree = materialize(repo.path(), &opts()).unwrap();
    let root = tree.root();
    assert_eq!(secure_join(root, "../../etc").unwrap(), root.join("etc"));
    assert_eq!(
        secure_join(root, "./clusters/dev").unwrap(),
        secure_join(root, "clusters/dev").unwrap()
    );
    assert!(secure_join(root, "../clusters/dev").unwrap().is_dir());
}

#[test]
fn a_submodule_is_excluded_and_left_as_an_empty_folder() {
    let repo = repo(&[("a.yaml", "a\n")]);
    let head = git(repo.path(), &["rev-parse", "HEAD"]).trim().to_owned();
    let gitlink = format!("160000,{head},vendor/lib");
    git(
        repo.path(),
        &["update-index", "--add", "--cacheinfo", &gitlink],
    );
    // Not `commit()`: `add -A` would drop the gitlink, whose folder is not checked out.
    git(repo.path(), &["commit", "-q", "-m", "gitlink"]);
    let tree = materialize_rev(repo.path(), "HEAD", &opts()).unwrap();
    assert_eq!(files(&tree), ["a.yaml"]);
    assert_eq!(reason(&tree, "vendor/lib"), Some(Exclusion::Submodule));
    assert!(tree.root().join("vendor/lib").is_dir());
}
