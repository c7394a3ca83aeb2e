//! Builds whose kustomization file exists only in memory (Flux's generated file): the native
//! builder reads it from memory and makes nothing on disk; a build it hands to the kustomize
//! binary gets the folder made first, and both give kustomize's bytes.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fluxsim::cache::{BuildCache, Request};
use fluxsim::kustomize::native::vfs::Vfs;
use fluxsim::kustomize::{
    AutoBuilder, BuildError, Builder, Built, Job, KustomizeBinary, NativeBuilder, OnDisk,
};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n";

fn tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("app")).unwrap();
    std::fs::write(tmp.path().join("app/cm.yaml"), CM).unwrap();
    // On disk: a kustomization the in-memory one must shadow.
    std::fs::write(
        tmp.path().join("app/kustomization.yaml"),
        "resources: [missing.yaml]\n",
    )
    .unwrap();
    tmp
}

/// The same folder written out, as fluxsim's overlay would hold it.
fn write_out(content: &str) -> tempfile::TempDir {
    let out = tempfile::tempdir().unwrap();
    std::fs::write(out.path().join("cm.yaml"), CM).unwrap();
    std::fs::write(out.path().join("kustomization.yaml"), content).unwrap();
    out
}

fn kubectl() -> KustomizeBinary {
    KustomizeBinary::locate(None, Duration::from_secs(60)).expect("kubectl or kustomize on PATH")
}

fn build_in_memory(builder: &dyn Builder, dir: &Path, content: &str) -> (Built, bool) {
    let made: Cell<Option<tempfile::TempDir>> = Cell::new(None);
    let asked = Cell::new(false);
    let on_disk = || -> Result<PathBuf, BuildError> {
        asked.set(true);
        let out = write_out(content);
        let path = out.path().to_path_buf();
        made.set(Some(out));
        Ok(path)
    };
    let mut files = Vfs::disk();
    files.insert(&dir.join("kustomization.yaml"), content);
    let job = Job {
        dir: dir.to_path_buf(),
        files,
        on_disk: OnDisk::Make(&on_disk),
        network: false,
        git_http: false,
    };
    let built = BuildCache::new(builder).get(&Request {
        key: "k",
        inputs: None,
        job: &job,
    });
    (built, asked.get())
}

#[test]
fn a_native_build_reads_the_generated_kustomization_from_memory_and_writes_nothing() {
    let tmp = tree();
    let content = "resources: [cm.yaml]\nnamespace: apps\n";
    let (built, made) = build_in_memory(&NativeBuilder, &tmp.path().join("app"), content);
    let out = built.output.unwrap();
    assert!(!made, "the native builder asked for the folder on disk");
    let want = kubectl()
        .run(write_out(content).path(), false, false)
        .unwrap();
    assert_eq!(out, want);
    assert!(out.contains("namespace: apps"));
    // The user's kustomization on disk is untouched.
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("app/kustomization.yaml")).unwrap(),
        "resources: [missing.yaml]\n"
    );
}

#[test]
fn a_build_the_native_builder_hands_over_is_made_on_disk_for_the_binary() {
    let tmp = tree();
    // `sortOptions` is not in the native subset: auto delegates it.
    let content = "resources: [cm.yaml]\nsortOptions:\n  order: legacy\n";
    let auto = AutoBuilder::new(kubectl());
    let (built, made) = build_in_memory(&auto, &tmp.path().join("app"), content);
    assert!(made, "the delegated build was not given a folder on disk");
    let why = built.delegated.clone().unwrap_or_default();
    assert!(
        why.contains("sortOptions"),
        "the reason names the feature: {why}"
    );
    let out = built.output.unwrap();
    assert!(out.contains("a: b"), "{out}");
    assert_eq!(
        auto.stats().as_deref(),
        Some("native for 0 builds, 1 delegated")
    );
}

#[test]
fn auto_builds_natively_from_memory_when_it_can() {
    let tmp = tree();
    let content = "resources: [cm.yaml]\n";
    let auto = AutoBuilder::new(kubectl());
    let (built, made) = build_in_memory(&auto, &tmp.path().join("app"), content);
    assert!(!made);
    assert_eq!(built.delegated, None);
    let out = built.output.unwrap();
    assert_eq!(
        out,
        kubectl()
            .run(write_out(content).path(), false, false)
            .unwrap()
    );
    assert_eq!(
        auto.stats().as_deref(),
        Some("native for 1 builds, 0 delegated")
    );
}
