//! Finding the file and line in the repository that a rendered object (or a piece of its
//! text) came from, through the origins kustomize recorded (`config.kubernetes.io/origin`).

use std::collections::BTreeMap;
use std::path::Path;

use crate::artifact::Origin;
use crate::finding::Location;
use crate::source::SourceFs;

/// A place found for a needle: where it is, and whether the source quoted it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    /// File, line and column.
    pub(crate) location: Location,
    /// The character just before the needle is a `"` or `'` (the template quoted it).
    pub(crate) quoted: bool,
}

pub(crate) use crate::locate::{comment_start, is_word_char, Needle};
use crate::locate::{document_range, nth_in_lines};

/// The object whose source is searched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ObjectRef<'a> {
    /// Where kustomize says it came from.
    pub(crate) origin: Option<&'a Origin>,
    /// `kind`.
    pub(crate) kind: &'a str,
    /// Names to try for its document, best first (the rendered name, then without the
    /// Kustomization's namePrefix/nameSuffix).
    pub(crate) names: &'a [String],
    /// The Kustomization's build directory, used when the origin is unknown.
    pub(crate) fallback_dir: &'a str,
}

/// The repository's files, read once each.
pub(crate) struct Sources<'a> {
    fs: &'a SourceFs,
    files: BTreeMap<String, Option<String>>,
}

impl<'a> Sources<'a> {
    /// The files of the source tree `fs`.
    pub(crate) fn new(fs: &'a SourceFs) -> Sources<'a> {
        Sources {
            fs,
            files: BTreeMap::new(),
        }
    }

    /// The text of `file` (relative to the root), if it can be read as UTF-8.
    pub(crate) fn text(&mut self, file: &str) -> Option<&str> {
        let fs = self.fs;
        self.files
            .entry(file.to_string())
            .or_insert_with(|| {
                // Origins never leave the root, but a crafted one must not either.
                if Path::new(file)
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
                {
                    return None;
                }
                fs.read_to_string(&fs.root().join(file)).ok()
            })
            .as_deref()
    }

    /// Where `needle` is in the object's source document; the object's own line when the
    /// needle is not found there; the file when not even the object is.
    pub(crate) fn find(&mut self, obj: ObjectRef<'_>, needle: Option<Needle<'_>>) -> Place {
        let candidates = self.candidate_files(obj);
        let Some(first) = candidates.first().cloned() else {
            return Place {
                location: Location::file(dir_display(obj.fallback_dir)),
                quoted: false,
            };
        };
        let mut object_place = None;
        for file in &candidates {
            let Some(text) = self.text(file) else {
                continue;
            };
            let (start, end, name_line) = document_range(text, obj.kind, obj.names);
            if object_place.is_none() && file == &first {
                object_place = Some(Location::at(
                    file.clone(),
                    name_line.unwrap_or(start + 1),
                    1,
                ));
            }
            if let Some(n) = needle {
                if let Some((line, column, quoted)) = nth_in_lines(text, n, start, end) {
                    return Place {
                        location: Location::at(file.clone(), line, column),
                        quoted,
                    };
                }
            }
        }
        Place {
            location: object_place.unwrap_or_else(|| Location::file(first)),
            quoted: false,
        }
    }

    /// The object's file; for a generated object, the kustomization file that configured it
    /// and then the files beside it (a script read by `configMapGenerator.files`).
    fn candidate_files(&mut self, obj: ObjectRef<'_>) -> Vec<String> {
        let Some(origin) = obj.origin else {
            return Vec::new();
        };
        if let Some(p) = &origin.path {
            return vec![p.clone()];
        }
        let Some(conf) = &origin.configured_in else {
            return Vec::new();
        };
        let mut out = vec![conf.clone()];
        let dir = conf.rsplit_once('/').map_or("", |(d, _)| d);
        let mut found = Vec::new();
        files_under(self.fs, dir, &mut found);
        found.sort();
        out.extend(found.into_iter().filter(|f| f != conf));
        out
    }
}

/// How many files a generated object's folder is searched through, at most.
const MAX_GENERATOR_FILES: usize = 256;

/// The regular files under `dir` (relative to the root of `fs`), recursively, hidden folders
/// skipped, at most [`MAX_GENERATOR_FILES`]: where a generator's `files:` and `envs:` come
/// from.
fn files_under(fs: &SourceFs, dir: &str, out: &mut Vec<String>) {
    let root = fs.root();
    let Ok(entries) = fs.read_dir(&root.join(dir)) else {
        return;
    };
    for e in entries {
        if out.len() >= MAX_GENERATOR_FILES {
            return;
        }
        let name = e.name.to_string_lossy().into_owned();
        let rel = if dir.is_empty() {
            name.clone()
        } else {
            format!("{dir}/{name}")
        };
        if e.is_dir {
            if !name.starts_with('.') {
                files_under(fs, &rel, out);
            }
        } else if fs.is_file(&root.join(&rel)) {
            out.push(rel);
        }
    }
}

/// A build directory as a finding shows it (`apps/vms`, or `.` for the root).
pub(crate) fn dir_display(dir: &str) -> String {
    let d = dir.trim_start_matches("./");
    if d.is_empty() || d == "." {
        ".".to_string()
    } else {
        d.to_string()
    }
}

/// One step of a Kubernetes field path (`spec.containers[0].image`, map keys in brackets:
/// `metadata.labels[app.kubernetes.io/name]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldStep {
    /// A field or a map key.
    Key(String),
    /// An element of a list.
    Index(usize),
}

/// The steps of a field path as Kubernetes' `field.Path` prints it (and the validation
/// findings carry it): `.` between fields, `[n]` for list elements, `[key]` for map keys.
pub(crate) fn field_steps(path: &str) -> Vec<FieldStep> {
    let mut steps = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').unwrap_or(after.len());
            let inner = &after[..end];
            steps.push(match inner.parse::<usize>() {
                Ok(i) => FieldStep::Index(i),
                Err(_) => FieldStep::Key(inner.to_string()),
            });
            rest = after.get(end + 1..).unwrap_or("");
        } else {
            let rest_trimmed = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_trimmed.find(['.', '[']).unwrap_or(rest_trimmed.len());
            steps.push(FieldStep::Key(rest_trimmed[..end].to_string()));
            rest = &rest_trimmed[end..];
        }
    }
    steps
}

/// A line of a document as the field walk sees it: its 1-based number, the column its
/// content starts at, and the content. `- a: 1` is two entries: the dash at its column and
/// `a: 1` two columns further, on the same line.
#[derive(Debug, Clone, Copy)]
struct Token<'t> {
    line: usize,
    indent: usize,
    text: &'t str,
}

fn tokens<'t>(lines: &[&'t str], start: usize, end: usize) -> Vec<Token<'t>> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate().take(end).skip(start) {
        let mut indent = l.len() - l.trim_start_matches(' ').len();
        let mut text = &l[indent..];
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        // `- - x` and `- key: v`: each dash, then what follows it.
        while let Some(after) = text.strip_prefix('-') {
            if !(after.is_empty() || after.starts_with(' ')) {
                break;
            }
            out.push(Token {
                line: i + 1,
                indent,
                text: "-",
            });
            let spaces = after.len() - after.trim_start_matches(' ').len();
            indent += 1 + spaces;
            text = &after[spaces..];
            if text.is_empty() || text.starts_with('#') {
                break;
            }
        }
        if !text.is_empty() && !text.starts_with('#') {
            out.push(Token {
                line: i + 1,
                indent,
                text,
            });
        }
    }
    out
}

/// Whether `text` is the line of mapping key `key` (plain or quoted).
fn is_key_line(text: &str, key: &str) -> bool {
    [
        format!("{key}:"),
        format!("\"{key}\":"),
        format!("'{key}':"),
    ]
    .iter()
    .any(|k| {
        text.strip_prefix(k.as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

/// The line of the field `steps` leads to in the block `toks` (a document's lines, as
/// tokens), walking the block structure of the YAML text as it is written: the deepest
/// step found when the text does not hold the whole path (a field a patch or a generator
/// added, a flow collection), `None` when not even the first step is there. This reads the
/// text, not a YAML tree, because what is wanted is a line of the user's file, as written.
fn walk_field(toks: &[Token<'_>], steps: &[FieldStep]) -> Option<usize> {
    let mut block = toks;
    let mut found = None;
    for step in steps {
        let Some(first) = block.first() else { break };
        let indent = first.indent;
        let at = match step {
            FieldStep::Key(k) => block
                .iter()
                .position(|t| t.indent == indent && is_key_line(t.text, k)),
            FieldStep::Index(n) => block
                .iter()
                .enumerate()
                .filter(|(_, t)| t.indent == indent && t.text == "-")
                .nth(*n)
                .map(|(i, _)| i),
        };
        let Some(at) = at else { break };
        let tok = block[at];
        found = Some(tok.line);
        let rest = &block[at + 1..];
        // The value's block: what is deeper than the token, and for a key, the dashes of a
        // list written at the key's own column (`key:\n- a`) with what is under them.
        let end = rest
            .iter()
            .position(|t| {
                !(t.indent > tok.indent
                    || (matches!(step, FieldStep::Key(_))
                        && t.indent == tok.indent
                        && t.text == "-"))
            })
            .unwrap_or(rest.len());
        block = &rest[..end];
    }
    found
}

impl Sources<'_> {
    /// The file and line of the field `path` (a Kubernetes field path) of an object: the
    /// line of the field in the object's source document as written, the deepest part of the
    /// path the document holds, or the object's own line.
    pub(crate) fn find_field(&mut self, obj: ObjectRef<'_>, path: &str) -> Place {
        let object = self.find(obj, None);
        let Some(line) = object.location.line else {
            return object;
        };
        let file = object.location.file.clone();
        let Some(text) = self.text(&file) else {
            return object;
        };
        let (start, end, _) = document_range(text, obj.kind, obj.names);
        if !(start < line && line <= end) {
            return object;
        }
        let lines: Vec<&str> = text.lines().collect();
        let toks = tokens(&lines, start, end.min(lines.len()));
        match walk_field(&toks, &field_steps(path)) {
            Some(l) => Place {
                location: Location::at(file, l, 1),
                quoted: false,
            },
            None => object,
        }
    }
}

#[cfg(test)]
mod field_tests {
    use super::*;

    fn line_of(text: &str, path: &str) -> Option<usize> {
        let lines: Vec<&str> = text.lines().collect();
        walk_field(&tokens(&lines, 0, lines.len()), &field_steps(path))
    }

    const DEPLOYMENT: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: init
        image: busybox
      -   name: web
          image: nginx
          ports:
            - containerPort: 80
              protocol: TCP
            # a comment
            - containerPort: 443
  selector: {matchLabels: {app: web}}
";

    #[test]
    fn field_steps_read_kubernetes_field_paths() {
        assert_eq!(
            field_steps("spec.containers[1].ports[0].containerPort"),
            vec![
                FieldStep::Key("spec".into()),
                FieldStep::Key("containers".into()),
                FieldStep::Index(1),
                FieldStep::Key("ports".into()),
                FieldStep::Index(0),
                FieldStep::Key("containerPort".into()),
            ]
        );
        assert_eq!(
            field_steps("metadata.labels[app.kubernetes.io/name]"),
            vec![
                FieldStep::Key("metadata".into()),
                FieldStep::Key("labels".into()),
                FieldStep::Key("app.kubernetes.io/name".into()),
            ]
        );
    }

    #[test]
    fn field_line_follows_maps_lists_at_the_key_column_and_indented_lists() {
        assert_eq!(line_of(DEPLOYMENT, "spec.replicas"), Some(8));
        assert_eq!(
            line_of(DEPLOYMENT, "spec.template.spec.containers[0].image"),
            Some(13)
        );
        assert_eq!(
            line_of(DEPLOYMENT, "spec.template.spec.containers[1].name"),
            Some(14)
        );
        assert_eq!(
            line_of(
                DEPLOYMENT,
                "spec.template.spec.containers[1].ports[1].containerPort"
            ),
            Some(20)
        );
        assert_eq!(
            line_of(
                DEPLOYMENT,
                "spec.template.spec.containers[1].ports[0].protocol"
            ),
            Some(18)
        );
        assert_eq!(
            line_of(DEPLOYMENT, "metadata.labels[app.kubernetes.io/name]"),
            Some(6)
        );
    }

    #[test]
    fn field_line_is_the_deepest_part_written_when_the_text_lacks_the_rest() {
        // A flow mapping: the walk stops at the key that holds it.
        assert_eq!(
            line_of(DEPLOYMENT, "spec.selector.matchLabels.app"),
            Some(21)
        );
        // A field a patch added: the nearest written parent.
        assert_eq!(
            line_of(DEPLOYMENT, "spec.template.spec.hostNetwork"),
            Some(10)
        );
        assert_eq!(line_of(DEPLOYMENT, "status.replicas"), None);
    }
}
