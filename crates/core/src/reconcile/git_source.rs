//! A GitRepository other than the cluster's own, cloned with git in the tool box
//! ([`crate::sandbox`]: the network on, no redirects, https and ssh only unless
//! fluxsim.toml names insecure hosts, the scratch folder its only place to write).
//!
//! The reference as source-controller reads `spec.ref` (`api/v1/gitrepository_types.go`,
//! `GitRepositoryRef`; `internal/controller/gitrepository_controller.go`): `name` (a full
//! ref, `refs/...`) before `commit`, before `semver` (the highest tag in the range), before
//! `tag`, before `branch`; no `ref` at all is the branch `master` (fluxcd/pkg
//! `git.DefaultBranch`). A `commit` is checked out of `branch` when one is given. The
//! artifact is the checkout's files without `.git`, less what `spec.ignore` (or a
//! `.sourceignore`) excludes.
//!
//! Credentials are never the repository's (`secretRef` is not read): the one fluxsim.toml
//! names for the repository's host (`[network.credentials."HOST"]`, from environment
//! variables) is sent to that host only, as git's `http.<scheme://host/>.extraHeader` (no
//! redirect is followed). Without one, a repository that asks for credentials fails to clone
//! and its Kustomizations stay external.
//!
//! Not reproduced: `spec.include` (another GitRepository's artifact copied in),
//! `recurseSubmodules` and `verify`.
//!
//! Every value of the repository given to git is an option's value (`--branch=...`) or
//! follows `--`, and a commit or ref name is checked first, so none is read as a flag.

use std::ffi::OsString;
use std::path::Path;

use serde_json::Value;

use super::pulled::{Missing, Pulled};
use crate::flux::str_at;
use crate::net::Network;

/// fluxcd/pkg `git.DefaultBranch`: the branch of a GitRepository without `spec.ref`.
const DEFAULT_BRANCH: &str = "master";
/// git's output read (a clone says little; `ls-remote` lists refs).
const OUTPUT_LIMIT: usize = 4 << 20;

/// What `spec.ref` asks for, as source-controller picks among its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Wanted {
    Name(String),
    Commit {
        commit: String,
        branch: Option<String>,
    },
    Semver(String),
    Tag(String),
    Branch(String),
}

fn wanted(obj: &Value) -> Wanted {
    let at = |k: &str| str_at(obj, &["spec", "ref", k]).filter(|v| !v.is_empty());
    if let Some(n) = at("name") {
        Wanted::Name(n.to_string())
    } else if let Some(c) = at("commit") {
        Wanted::Commit {
            commit: c.to_string(),
            branch: at("branch").map(str::to_string),
        }
    } else if let Some(r) = at("semver") {
        Wanted::Semver(r.to_string())
    } else if let Some(t) = at("tag") {
        Wanted::Tag(t.to_string())
    } else {
        Wanted::Branch(at("branch").unwrap_or(DEFAULT_BRANCH).to_string())
    }
}

/// The clone of `obj` (`spec.url` is `url`) at its reference.
pub(super) fn pull(obj: &Value, url: &str, network: &Network) -> Result<Pulled, Missing> {
    network
        .fetch_box
        .precheck(url)
        .map_err(|e| Missing::Unreached(e.0))?;
    let git = Git {
        network,
        url_insecure: network.fetch_box.insecure_host(url),
        header: credential_header(network, url),
    };
    let dir = crate::scratch::tempdir(crate::scratch::Kind::Source)
        .map_err(|e| Missing::Unreached(format!("a folder for the clone: {e}")))?
        .keep();
    let checkout = dir.join("checkout");
    let dest = checkout.as_os_str().to_os_string();
    let url_arg = OsString::from(url);
    let clone = |branch: Option<&str>, depth: bool| {
        let mut args: Vec<OsString> = vec!["clone".into(), "--quiet".into()];
        if depth {
            args.push("--depth=1".into());
        }
        if let Some(b) = branch {
            args.push("--single-branch".into());
            args.push(format!("--branch={b}").into());
        }
        args.extend(["--".into(), url_arg.clone(), dest.clone()]);
        git.run(&dir, &args)
    };
    let reference = match wanted(obj) {
        Wanted::Branch(b) => {
            clone(Some(&b), true)?;
            b
        }
        Wanted::Tag(t) => {
            clone(Some(&t), true)?;
            t
        }
        Wanted::Semver(range) => {
            let tags = git.tags(&dir, url)?;
            let tag = crate::net::oci::pick_tag(&tags, &range)
                .map_err(|e| Missing::Invalid(format!("no tag in semver range `{range}`: {e}")))?;
            clone(Some(&tag), true)?;
            tag
        }
        Wanted::Commit { commit, branch } => {
            if !is_commit(&commit) {
                return Err(Missing::Invalid(format!(
                    "spec.ref.commit `{commit}` is no commit SHA"
                )));
            }
            clone(branch.as_deref(), false)?;
            let args: Vec<OsString> = vec![
                "-C".into(),
                dest.clone(),
                "checkout".into(),
                "--quiet".into(),
                "--detach".into(),
                commit.clone().into(),
            ];
            git.run(&dir, &args).map_err(|_| {
                Missing::Invalid(format!(
                    "commit {commit} is not in the repository's history"
                ))
            })?;
            commit
        }
        Wanted::Name(name) => {
            if !name.starts_with("refs/") || name.starts_with('-') || name.contains("..") {
                return Err(Missing::Invalid(format!(
                    "spec.ref.name `{name}` is no full ref name (refs/...)"
                )));
            }
            git.run(&dir, &["init".into(), "--quiet".into(), dest.clone()])?;
            let c = |args: &[&str]| -> Vec<OsString> {
                let mut v: Vec<OsString> = vec!["-C".into(), dest.clone()];
                v.extend(args.iter().map(OsString::from));
                v
            };
            let mut fetch = c(&["fetch", "--quiet", "--depth=1", "--"]);
            fetch.extend([url_arg.clone(), name.clone().into()]);
            git.run(&dir, &fetch)?;
            git.run(&dir, &c(&["checkout", "--quiet", "--detach", "FETCH_HEAD"]))?;
            name
        }
    };
    let head: Vec<OsString> = vec!["-C".into(), dest, "rev-parse".into(), "HEAD".into()];
    let commit = git.run(&dir, &head)?.trim().to_string();
    let opts = crate::source::SourceOptions {
        include_untracked: false,
        spec_ignore: str_at(obj, &["spec", "ignore"]).map(str::to_string),
    };
    let tree = crate::source::in_place(&checkout, &opts)
        .map_err(|e| Missing::Invalid(format!("the clone's files: {e}")))?;
    Ok(Pulled {
        tree,
        reference,
        content: format!("sha1:{commit}"),
    })
}

/// A commit SHA as `spec.ref.commit` takes it: 7 to 40 hex digits (or 64, SHA-256).
fn is_commit(s: &str) -> bool {
    (7..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

struct Git<'a> {
    network: &'a Network,
    url_insecure: bool,
    /// `(http.<origin>/.extraHeader, Authorization: ...)`: the host's credential.
    header: Option<(String, String)>,
}

/// The git setting that sends the credential fluxsim.toml names for `url`'s host, to that
/// host (`scheme://host[:port]/`) only.
fn credential_header(network: &Network, url: &str) -> Option<(String, String)> {
    let secret = network.fetch_box.credential(url)?;
    let u = url::Url::parse(url).ok()?;
    let origin = match u.port() {
        Some(p) => format!("{}://{}:{p}/", u.scheme(), u.host_str()?),
        None => format!("{}://{}/", u.scheme(), u.host_str()?),
    };
    Some((
        format!("http.{origin}.extraHeader"),
        format!("Authorization: {}", secret.header()),
    ))
}

impl Git<'_> {
    /// git `args` in the box, in `dir`; its stdout, or why it failed (git's words).
    fn run(&self, dir: &Path, args: &[OsString]) -> Result<String, Missing> {
        let mut tool = crate::sandbox::Tool::new("git", self.network.fetch_box.timeout());
        if let Some((key, value)) = &self.header {
            tool = tool.git_config(key, value);
        }
        let out = tool
            .args(args)
            .dir(dir)
            .confined()
            .network(true)
            .git_http(self.url_insecure)
            .output_limit(OUTPUT_LIMIT)
            .run()
            .map_err(|e| Missing::Unreached(format!("git: {e}")))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            let said = crate::scratch::scrub(said.trim());
            return Err(Missing::Unreached(format!("git: {said}")));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The repository's tags (`git ls-remote --tags --refs`).
    fn tags(&self, dir: &Path, url: &str) -> Result<Vec<String>, Missing> {
        let args: Vec<OsString> = ["ls-remote", "--tags", "--refs", "--", url]
            .iter()
            .map(OsString::from)
            .collect();
        let listed = self.run(dir, &args)?;
        Ok(listed
            .lines()
            .filter_map(|l| l.split_once('\t')?.1.strip_prefix("refs/tags/"))
            .map(str::to_string)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(r: &Value) -> Value {
        serde_json::json!({"spec": {"url": "https://example.com/r.git", "ref": r.clone()}})
    }

    // source-controller's precedence (gitrepository_types.go GitRepositoryRef): name, then
    // commit, then semver, then tag, then branch; no ref is the branch `master`.
    #[test]
    fn a_git_repository_ref_is_read_in_source_controller_s_precedence() {
        let all = serde_json::json!({"name": "refs/heads/x", "commit": "abc1234",
            "semver": ">=1", "tag": "v1", "branch": "main"});
        assert_eq!(wanted(&obj(&all)), Wanted::Name("refs/heads/x".into()));
        assert_eq!(
            wanted(&obj(
                &serde_json::json!({"commit": "abc1234", "branch": "main", "tag": "v1"})
            )),
            Wanted::Commit {
                commit: "abc1234".into(),
                branch: Some("main".into())
            }
        );
        assert_eq!(
            wanted(&obj(&serde_json::json!({"semver": ">=1", "tag": "v1"}))),
            Wanted::Semver(">=1".into())
        );
        assert_eq!(
            wanted(&obj(&serde_json::json!({"tag": "v1", "branch": "main"}))),
            Wanted::Tag("v1".into())
        );
        assert_eq!(
            wanted(&serde_json::json!({"spec": {"url": "u"}})),
            Wanted::Branch("master".into())
        );
    }

    #[test]
    fn a_commit_is_only_hex_digits() {
        assert!(is_commit("0123abc"));
        assert!(!is_commit("--upload-pack=x"));
        assert!(!is_commit("abc"));
    }
}
