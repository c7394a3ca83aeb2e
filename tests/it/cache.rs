//! The content-addressed build cache: builds keyed by the digest of their inputs, shared
//! between trees and kept across runs in `--cache-dir`, never trusted when corrupt; and the
//! renders of git revisions kept there under their tree's id.

// The shared harness serves several test crates; this one uses part of it.
use std::fs;
use std::path::Path;
use std::sync::Mutex;

use crate::common::{crate_path, fluxsim};
use fluxsim::cache::BuildCache;
use fluxsim::kustomize::{Builder, Built, Job};
use fluxsim::render::revisions::render_revision;
use fluxsim::render::{build_cache, make_builder, render_tree_cached, RepoOptions};
use fluxsim::source::{materialize, SourceOptions};

/// A builder that counts the builds it is asked for.
struct Counting {
    inner: Box<dyn Builder>,
    dirs: Mutex<Vec<std::path::PathBuf>>,
}

impl Builder for Counting {
    fn build(&self, job: &Job<'_>) -> Built {
        self.dirs.lock().unwrap().push(job.dir.clone());
        self.inner.build(job)
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
}

fn counting() -> Counting {
    Counting {
        inner: make_builder(&RepoOptions::default()).expect("kustomize or kubectl is installed"),
        dirs: Mutex::new(Vec::new()),
    }
}

fn fleet_tree() -> fluxsim::source::Tree {
    materialize(&crate_path("testdata/fleet"), &SourceOptions::default()).unwrap()
}

fn digests(r: &fluxsim::model::RepoRender) -> Vec<String> {
    r.clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .map(|k| {
            k.artifact
                .as_ref()
                .map(|a| a.sha256.clone())
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn the_same_inputs_in_another_tree_are_not_built_again() {
    let b = counting();
    let cache = BuildCache::new(&b);
    let opts = RepoOptions::default();
    let first = render_tree_cached(fleet_tree(), &cache, &opts).unwrap();
    let after_first = cache.builds_run();
    assert!(after_first > 0);
    // A second copy in another temporary directory: every build's inputs are the same.
    let second = render_tree_cached(fleet_tree(), &cache, &opts).unwrap();
    assert_eq!(
        cache.builds_run(),
        after_first,
        "{:#?}",
        b.dirs.lock().unwrap()
    );
    assert_eq!(digests(&first), digests(&second));
}

#[test]
fn a_changed_file_rebuilds_only_the_builds_that_read_it() {
    let b = counting();
    let cache = BuildCache::new(&b);
    let opts = RepoOptions::default();
    let base = render_tree_cached(fleet_tree(), &cache, &opts).unwrap();
    let before = cache.builds_run();
    let tree = fleet_tree();
    let file = tree.root().join("apps/wave-2/web/service.yaml");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, text.replacen("name:", "# a comment\n  name:", 1)).unwrap();
    let head = render_tree_cached(tree, &cache, &opts).unwrap();
    let rebuilt: Vec<String> = b.dirs.lock().unwrap()[before..]
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    // apps-wave-2 is one build shared by dev and prod; a comment changes no object, so its
    // substituted objects print as before (the reprint is cached too).
    assert_eq!(rebuilt.len(), 1, "{rebuilt:#?}");
    assert!(rebuilt[0].ends_with("apps/wave-2"), "{rebuilt:#?}");
    assert_eq!(digests(&base), digests(&head));
}

#[test]
fn a_warm_cache_dir_serves_every_build_and_gives_the_same_output() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let fleet = crate_path("testdata/fleet");
    let args = [
        "render",
        fleet.to_str().unwrap(),
        "--format",
        "json",
        "--cache-dir",
        dir,
    ];
    let cold = fluxsim(&args);
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    let warm = fluxsim(&args);
    assert_eq!(warm.stdout, cold.stdout);
    let table = fluxsim(&["render", fleet.to_str().unwrap(), "--cache-dir", dir]);
    let summary = table.stdout.lines().last().unwrap().to_string();
    assert!(summary.contains(", 0 builds, "), "{summary}");
    assert!(summary.contains(" from the build cache"), "{summary}");
}

#[test]
fn a_corrupt_cache_entry_is_rebuilt_never_trusted() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().to_str().unwrap();
    let fleet = crate_path("testdata/fleet");
    let args = [
        "render",
        fleet.to_str().unwrap(),
        "--format",
        "json",
        "--cache-dir",
        dir,
    ];
    let cold = fluxsim(&args);
    // Corrupt every entry: flip the body of half, cut the others short.
    let mut entries = Vec::new();
    for shard in fs::read_dir(cache.path().join("builds")).unwrap() {
        for e in fs::read_dir(shard.unwrap().path()).unwrap() {
            entries.push(e.unwrap().path());
        }
    }
    assert!(entries.len() > 5);
    for (i, e) in entries.iter().enumerate() {
        let text = fs::read_to_string(e).unwrap();
        let bad = if i % 2 == 0 {
            text.replace("apiVersion", "apiVersiom")
        } else {
            text[..text.len() / 2].to_string()
        };
        fs::write(e, bad).unwrap();
    }
    let again = fluxsim(&args);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, cold.stdout, "corrupt entries were used");
    // And they were written back whole: the next run builds nothing.
    let table = fluxsim(&["render", fleet.to_str().unwrap(), "--cache-dir", dir]);
    assert!(table.stdout.contains(", 0 builds, "), "{}", table.stdout);
}

#[test]
fn no_cache_reads_and_writes_nothing() {
    let fleet = crate_path("testdata/fleet");
    let out = fluxsim(&["render", fleet.to_str().unwrap(), "--no-cache"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stdout.contains("from the build cache"));
    let both = fluxsim(&[
        "render",
        fleet.to_str().unwrap(),
        "--no-cache",
        "--cache-dir",
        "x",
    ]);
    assert_eq!(both.code, 2);
}

#[test]
fn each_kustomization_says_which_builder_made_it_also_from_the_cache() {
    // `sortOptions` is outside the native subset: that one build goes to kustomize.
    let repo = tempfile::tempdir().unwrap();
    crate::common::copy_dir(&crate_path("testdata/fleet"), repo.path());
    let file = repo.path().join("apps/wave-1/kustomization.yaml");
    let text = fs::read_to_string(&file).unwrap();
    fs::write(&file, format!("{text}sortOptions:\n  order: legacy\n")).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let args = [
        "render",
        repo.path().to_str().unwrap(),
        "--format",
        "json",
        "--builder",
        "auto",
        "--cache-dir",
        cache.path().to_str().unwrap(),
    ];
    let cold = fluxsim(&args);
    assert_eq!(cold.code, 0, "{}", cold.stderr);
    let json = cold.json();
    for cluster in ["dev", "prod"] {
        let by = |name: &str| crate::common::kustomization(&json, cluster, name)["builtBy"].clone();
        assert_eq!(by("apps-wave-1"), "kustomize");
        assert_eq!(by("apps-wave-0"), "native");
        assert_eq!(by("platform"), "native");
    }
    // A warm run serves every build from the cache and still names who made each.
    let warm = fluxsim(&args);
    assert_eq!(warm.stdout, cold.stdout);
    let forced = fluxsim(&[
        "render",
        repo.path().to_str().unwrap(),
        "--format",
        "json",
        "--builder",
        "kustomize",
        "--no-cache",
    ]);
    let forced = forced.json();
    assert_eq!(
        crate::common::kustomization(&forced, "dev", "platform")["builtBy"],
        "kustomize"
    );
}

/// Renders revision `rev` of `repo` as a new run would: a fresh build cache in front of the
/// store in `cache_dir`. Gives the render and how many builds ran or came from the store.
fn revision_run(
    repo: &Path,
    rev: &str,
    cache_dir: &Path,
) -> (fluxsim::render::revisions::RevisionRender, usize) {
    let opts = RepoOptions {
        cache_dir: Some(cache_dir.to_path_buf()),
        ..RepoOptions::default()
    };
    let builder = make_builder(&opts).unwrap();
    let cache = build_cache(builder.as_ref(), &opts);
    let r = render_revision(repo, rev, &cache, &opts).unwrap();
    (r, cache.builds_run() + cache.stored_hits())
}

/// Every field of every Kustomization's render, as text.
fn everything(r: &fluxsim::render::revisions::RevisionRender) -> String {
    format!("{:#?}", r.clusters)
}

#[test]
fn a_stored_revision_render_is_reused_and_gives_the_same_render() {
    let repo = crate::common::repo_from("testdata/fleet");
    let cache = tempfile::tempdir().unwrap();
    let (first, _) = revision_run(repo.path(), "HEAD", cache.path());
    assert!(!first.stored);
    let (second, builds) = revision_run(repo.path(), "HEAD", cache.path());
    assert!(second.stored);
    assert_eq!(builds, 0, "nothing is built or read from the build cache");
    assert_eq!(everything(&second), everything(&first));
    assert_eq!(second.known.digests, first.known.digests);
    // Keyed by the tree, not the commit: a new commit of the same files is the same render.
    crate::common::commit_all(repo.path(), "empty");
    let (third, _) = revision_run(repo.path(), "HEAD", cache.path());
    assert!(third.stored);
    assert_ne!(third.commit, first.commit);
    assert_eq!(everything(&third), everything(&first));
}

#[test]
fn a_corrupt_stored_revision_render_is_rendered_again() {
    let repo = crate::common::repo_from("testdata/fleet");
    let cache = tempfile::tempdir().unwrap();
    let (first, _) = revision_run(repo.path(), "HEAD", cache.path());
    let mut entries = Vec::new();
    for shard in fs::read_dir(cache.path().join("revisions")).unwrap() {
        for e in fs::read_dir(shard.unwrap().path()).unwrap() {
            entries.push(e.unwrap().path());
        }
    }
    assert_eq!(entries.len(), 1);
    let text = fs::read_to_string(&entries[0]).unwrap();
    for bad in [
        text.replacen("replicas", "replicaz", 1),
        text[..text.len() / 2].to_string(),
    ] {
        fs::write(&entries[0], bad).unwrap();
        let (again, builds) = revision_run(repo.path(), "HEAD", cache.path());
        assert!(!again.stored, "a corrupt entry was used");
        assert!(builds > 0);
        assert_eq!(everything(&again), everything(&first));
        // Written back whole.
        let (after, _) = revision_run(repo.path(), "HEAD", cache.path());
        assert!(after.stored);
    }
}

#[test]
fn a_revision_whose_build_fails_is_never_stored() {
    // The kustomization of `apps/broken` lists a file that does not exist, with a
    // buildMetadata the native builder hands over: the kustomize binary's build fails. (A
    // kustomization that is not YAML fails in Flux's generator, before any build: the tree
    // decides that, and it is stored.)
    let repo = rejected_build_repo();
    let cache = tempfile::tempdir().unwrap();
    let (first, _) = revision_run(repo.path(), "HEAD", cache.path());
    assert!(first
        .clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .any(|k| matches!(k.status, fluxsim::model::Status::Failed(_))));
    let (second, _) = revision_run(repo.path(), "HEAD", cache.path());
    assert!(!second.stored);
    assert!(!cache.path().join("revisions").exists());
}

// An undefined var (strict substitution), a spec.path that does not exist: the tree decides.
#[test]
fn a_revision_that_fails_before_or_after_its_builds_is_stored() {
    for case in ["undefined-var", "missing-path"] {
        let repo = crate::common::bad_fixture(case);
        let cache = tempfile::tempdir().unwrap();
        let (first, _) = revision_run(repo.path(), "HEAD", cache.path());
        assert!(
            first
                .clusters
                .iter()
                .flat_map(|c| &c.kustomizations)
                .any(|k| matches!(k.status, fluxsim::model::Status::Failed(_))),
            "{case}"
        );
        let (second, _) = revision_run(repo.path(), "HEAD", cache.path());
        assert!(second.stored, "{case}");
        assert_eq!(everything(&second), everything(&first), "{case}");
    }
}

/// A committed repository whose `apps/broken` is handed to the kustomize binary
/// (buildMetadata), which rejects it (a missing file).
fn rejected_build_repo() -> tempfile::TempDir {
    let repo = crate::common::bad_fixture("bad-kustomization-yaml");
    std::fs::write(
        repo.path().join("apps/broken/kustomization.yaml"),
        "resources:\n- missing.yaml\nbuildMetadata: [managedByLabel]\n",
    )
    .unwrap();
    crate::common::commit_all(repo.path(), "a build that fails");
    repo
}

fn failures(r: &fluxsim::model::RepoRender) -> Vec<String> {
    r.clusters
        .iter()
        .flat_map(|c| &c.kustomizations)
        .filter_map(|k| match &k.status {
            fluxsim::model::Status::Failed(e) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_build_kustomize_rejects_is_kept_in_the_cache_dir_like_an_output() {
    let store = tempfile::tempdir().unwrap();
    let opts = RepoOptions {
        cache_dir: Some(store.path().to_path_buf()),
        ..RepoOptions::default()
    };
    let run = || {
        let repo = rejected_build_repo();
        let tree = materialize(repo.path(), &SourceOptions::default()).unwrap();
        let b = counting();
        let cache = build_cache(&b, &opts);
        let r = render_tree_cached(tree, &cache, &opts).unwrap();
        let built = b.dirs.lock().unwrap().len();
        (failures(&r), built, cache.stored_hits())
    };
    let (first, built_first, _) = run();
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(first[0].contains("missing.yaml"), "{first:?}");
    assert!(built_first > 0);
    // Another checkout of the same content: nothing is built, the failure reads the same
    // (it names the repository's files, not the first run's folders).
    let (second, built_second, hits) = run();
    assert_eq!(second, first);
    assert_eq!(built_second, 0, "a build was run again");
    assert_eq!(hits, built_first);
}

#[test]
fn a_failure_that_may_be_the_machines_is_not_kept() {
    /// A builder whose every build times out.
    struct Slow;
    impl Builder for Slow {
        fn build(&self, _: &Job<'_>) -> Built {
            Built {
                output: Err(fluxsim::kustomize::BuildError::Timeout(
                    std::time::Duration::from_secs(1),
                )),
                maker: fluxsim::model::Maker::Kustomize,
                delegated: None,
            }
        }
        fn describe(&self) -> String {
            "slow".into()
        }
    }
    let store = tempfile::tempdir().unwrap();
    let opts = RepoOptions {
        cache_dir: Some(store.path().to_path_buf()),
        ..RepoOptions::default()
    };
    for _ in 0..2 {
        let cache = build_cache(&Slow, &opts);
        let r = render_tree_cached(fleet_tree(), &cache, &opts).unwrap();
        assert!(!failures(&r).is_empty());
        assert_eq!(cache.stored_hits(), 0, "a timeout was kept");
    }
}

// Issue 16: a delegated build is handed only its input closure (and fluxsim's kustomization
// file), never a copy of the whole tree.
#[test]
fn a_delegated_build_is_given_only_its_input_closure_on_disk() {
    /// Looks at the folder a delegated build is given, then builds it.
    struct Looking {
        inner: Box<dyn Builder>,
        root: std::path::PathBuf,
        seen: Mutex<Vec<(String, bool, bool)>>,
    }
    impl Builder for Looking {
        fn build(&self, job: &Job<'_>) -> Built {
            if job.dir.ends_with("apps/wave-1") {
                let rel = "apps/wave-1";
                let disk = job.disk_dir().unwrap();
                assert!(disk.ends_with(rel), "{}", disk.display());
                let copy_root = disk.ancestors().nth(2).unwrap();
                assert!(
                    !copy_root.starts_with(&self.root),
                    "built in the tree itself"
                );
                self.seen.lock().unwrap().push((
                    rel.to_string(),
                    copy_root.join("apps/wave-1/orders").is_dir(),
                    copy_root.join("platform").exists() || copy_root.join("clusters").exists(),
                ));
            }
            self.inner.build(job)
        }
        fn describe(&self) -> String {
            self.inner.describe()
        }
    }
    let repo = crate::common::repo_from("testdata/fleet");
    let k = repo.path().join("apps/wave-1/kustomization.yaml");
    let text = fs::read_to_string(&k).unwrap() + "buildMetadata: [managedByLabel]\n";
    fs::write(&k, text).unwrap();
    crate::common::commit_all(repo.path(), "a build the native builder hands over");
    let tree = fluxsim::source::in_place(repo.path(), &SourceOptions::default()).unwrap();
    let b = Looking {
        inner: make_builder(&RepoOptions::default()).unwrap(),
        root: tree.root().to_path_buf(),
        seen: Mutex::new(Vec::new()),
    };
    let opts = RepoOptions::default();
    let r = render_tree_cached(tree, &BuildCache::new(&b), &opts).unwrap();
    assert!(failures(&r).is_empty(), "{:?}", failures(&r));
    let seen = b.seen.into_inner().unwrap();
    assert!(!seen.is_empty(), "apps/wave-1 was not built");
    for (rel, has_inputs, has_others) in seen {
        assert!(has_inputs, "{rel}: its inputs are missing");
        assert!(!has_others, "{rel}: files outside its closure were copied");
    }
}

// Issue 18: the progress line has a total — the Kustomizations the clusters are known to
// apply — and when the render ends every one of them is counted as rendered.
#[test]
fn the_progress_counts_end_with_every_kustomization_rendered() {
    let opts = RepoOptions::default();
    let b = make_builder(&opts).unwrap();
    let r = render_tree_cached(fleet_tree(), &build_cache(b.as_ref(), &opts), &opts).unwrap();
    let total: usize = r.clusters.iter().map(|c| c.kustomizations.len()).sum();
    assert!(total > 10);
    assert_eq!(opts.progress.counts(), (total, total));
}
