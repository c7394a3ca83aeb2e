//! A change to Kubernetes objects as a person reviews it (fluxsim issue 26): a semantic
//! diff of objects, noise filters, a Markdown report that always fits a pull-request
//! comment, a self-contained HTML report, a text report and JSON.
//!
//! This crate depends on nothing of fluxsim: JSON values in, text out. fluxsim's `diff` and
//! `prove` build a [`model::Review`] from what they computed, and print one of its reports.
//!
//! # Pipeline
//!
//! ```text
//! model::Review ──analysis::analyze(&review, &Filters)──▶ analysis::Analysis ──▶ text::report
//!  (clusters → Kustomizations /                (filters applied, semantic    ├──▶ markdown::comments / document
//!   HelmReleases → objects base/head,           changes per object, counts,  ├──▶ html::report
//!   failures, prune deletions, image            what the filters hid)        └──▶ json::to_value
//!   bumps, hazards)
//! ```
//!
//! ```
//! use review::analysis::analyze;
//! use review::markdown::{comments, Flavor, MarkdownOptions};
//! use review::model::{Cluster, Object, ObjectId, Review, Status, Unit, UnitKind};
//! use review::strip::Filters;
//! use serde_json::json;
//!
//! let base = json!({"apiVersion": "apps/v1", "kind": "Deployment",
//!     "metadata": {"name": "web", "namespace": "apps", "labels": {"helm.sh/chart": "web-1.0.0"}},
//!     "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "web:1.0.0"}]}}}});
//! let mut head = base.clone();
//! head["metadata"]["labels"]["helm.sh/chart"] = json!("web-1.1.0");
//! head["spec"]["template"]["spec"]["containers"][0]["image"] = json!("web:1.1.0");
//! let review = Review {
//!     base: "main".into(),
//!     head: "pr".into(),
//!     clusters: vec![Cluster {
//!         name: "prod".into(),
//!         units: vec![Unit {
//!             kind: UnitKind::Kustomization,
//!             name: "flux-system/apps".into(),
//!             status: Status::Changed,
//!             objects: vec![Object { id: ObjectId::of(&base), base: Some(base), head: Some(head) }],
//!             ..Unit::default()
//!         }],
//!         ..Cluster::default()
//!     }],
//!     ..Review::default()
//! };
//! let mut filters = Filters::new(); // the default set: chart labels, checksum/* annotations
//! filters.strip("spec.template.spec.containers[name=app].resources").unwrap(); // --strip
//! let analysis = analyze(&review, &filters);
//! let text = review::text::report(&analysis);
//! assert!(text.contains("  spec.template.spec.containers[name=app].image\n-   web:1.0.0\n+   web:1.1.0\n"));
//! assert!(text.contains("1 change hidden by the default filters"));
//! let parts = comments(&analysis, &MarkdownOptions::new(Flavor::GitHub)).unwrap();
//! assert_eq!(parts.len(), 1);
//! let page = review::html::report(&analysis);
//! assert!(page.starts_with("<!DOCTYPE html>"));
//! let changes = review::json::to_value(&analysis);
//! assert_eq!(changes["clusters"][0]["units"][0]["objects"][0]["changes"][0],
//!     json!({"path": "spec.template.spec.containers[name=app].image", "op": "changed",
//!            "before": "web:1.0.0", "after": "web:1.1.0"}));
//! ```
//!
//! # Wiring it into fluxsim (what is left to do outside this crate)
//!
//! Building the input, from `compare::RevisionDiff` and its neighbours:
//!
//! - [`model::Review`] `{ base, head }` ← `RevisionDiff { base, head }`; one
//!   [`model::Cluster`] per `ClusterDiff` (`presence` maps one to one).
//! - [`model::Unit`] per `KustomizationDiff`: `name` ← `kustomization`, `status` ←
//!   `change` (`compare::Change` and [`model::Status`] have the same five values), `problem`
//!   ← `base_problem.or(head_problem)`; a `--helm` entry `<ks>/helm/<ns>/<name>` is a
//!   [`model::UnitKind::HelmRelease`] named `<ns>/<name>` with `parent: Some(<ks>)`.
//!   `objects`: the artifact objects as `serde_json::Value`s on each side (only those that
//!   differ is enough; equal ones are dropped anyway), Secret data masked by
//!   `report::mask` unless `--show-secrets` (this crate shows what it is given). `order`:
//!   the `ObjectId`s of both artifacts in order, so that a `resources:` reorder reads "order
//!   changed". `moves_pruned`: whether the objects that leave it are deleted first (the move
//!   hazard's `prune_outage`; a HelmRelease its Kustomization prunes), which a rename's line
//!   says ([`analysis::renames`] pairs a removed unit with an added one).
//! - `failures` ← `RevisionDiff::failures()` of the cluster (`Failure { kustomization →
//!   unit, side, error, below }`); `image_bumps` ← `images::diff_images` (`ImageChange`
//!   has the same fields); `prune_deletions` ← objects removed from a Kustomization with
//!   `prune: true` (and the inventories of removed ones); `hazards` ← sentences with
//!   `` `code` `` spans: moves with `prune_outage`, audit or graph findings the change
//!   introduces.
//! - [`model::ObjectId`] has `flux::ObjectId`'s fields; [`model::ObjectId::of`] reads one from
//!   an object.
//!
//! Flags:
//!
//! - `--diff-style semantic` (the new default) prints [`text::report`]; `--diff-style
//!   lines` keeps today's unified diffs.
//! - `--strip PATH` → [`strip::Filters::strip`] (the syntax of `--strip-field`, plus
//!   `[name=x]` and `[0]` items: a path shown in a report can be pasted back);
//!   `--strip-label KEY` → [`strip::Filters::strip_label`]; `--no-default-strip` →
//!   [`strip::Filters::without_defaults`]; [`strip::DEFAULT_FILTERS`] lists the default set
//!   for `--help`. A path's error ([`strip::PathError`]) is one sentence with a hint.
//! - `--format markdown|gitlab|gitea`: [`markdown::document`] for a job summary or a file,
//!   [`markdown::comments`] for comments (`MarkdownOptions { flavor, limit, report_url }`:
//!   `limit` in bytes, less what the caller adds to each comment, such as the action's
//!   `<!-- fluxsim-comment: NAME -->` marker line; `report_url` links the uploaded HTML
//!   artifact from the summary). `--format html` → [`html::report`]; `--format json` gains
//!   [`json::to_value`] (per object `changes: [{path, op, before, after}]`).
//! - The action posts `comments()`' parts in order as sticky comments, each with its own
//!   marker (`NAME-1`, `NAME-2` ...): edit those that exist, create the missing ones, delete
//!   those past the new count when the diff shrinks. Each part is valid Markdown on its own
//!   and says which part it is; the first always holds the whole summary.
//!
//! # Modules
//!
//! - [`model`]: the input. [`analysis`]: the input read with the filters.
//! - [`semantic`]: the diff of two objects; [`keys`]: the merge keys it matches list items
//!   by (the Kubernetes API's, in one table with its source); [`path`]: how a change's
//!   place is written; [`strip`]: the filters.
//! - [`text`], [`markdown`], [`html`], [`json`]: the reports; [`lines`] and [`yaml`]: how
//!   values are shown; [`escape`]: escaping for each format (copied from fluxsim's
//!   `src/report/escape.rs`).

pub mod analysis;
pub mod escape;
pub mod html;
pub mod json;
pub mod keys;
pub mod lines;
pub mod markdown;
pub mod model;
pub mod path;
pub mod semantic;
pub mod strip;
pub mod text;
pub mod yaml;
