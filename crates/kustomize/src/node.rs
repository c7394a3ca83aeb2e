//! The value a resource is while kustomize works on it: what survives kustomize's JSON round
//! trip (`resource.AsYAML` marshals to JSON, then `sigs.k8s.io/yaml.JSONToYAML` prints it),
//! so no comments, styles or anchors, and numbers already in the form JSON gives them.

/// One YAML/JSON value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits an `int64`.
    Int(i64),
    /// An integer above `int64` that fits a `uint64`.
    Uint(u64),
    /// Any other number.
    Float(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in insertion order (the printer sorts keys).
    Map(Map),
}

/// A mapping with string keys, in insertion order.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Map(pub(crate) Vec<(String, Node)>);

impl Map {
    /// The value at `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value at `key`, mutably.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key` (replacing its value in place, or appending).
    pub(crate) fn insert(&mut self, key: &str, value: Node) {
        match self.get_mut(key) {
            Some(v) => *v = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Node> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    /// Whether the mapping has no entries.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Node {
    /// The mapping, if this is one.
    pub(crate) fn as_map(&self) -> Option<&Map> {
        match self {
            Node::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The mapping, mutably, if this is one.
    pub(crate) fn as_map_mut(&mut self) -> Option<&mut Map> {
        match self {
            Node::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The value at a path of mapping keys.
    pub(crate) fn get_path(&self, path: &[&str]) -> Option<&Node> {
        let mut n = self;
        for key in path {
            n = n.as_map()?.get(key)?;
        }
        Some(n)
    }

    /// The string at a path of mapping keys.
    pub(crate) fn str_at(&self, path: &[&str]) -> Option<&str> {
        self.get_path(path).and_then(Node::as_str)
    }

    /// Converts a JSON value (from `serde_json`) into a node.
    pub(crate) fn from_json(v: &serde_json::Value) -> Node {
        match v {
            serde_json::Value::Null => Node::Null,
            serde_json::Value::Bool(b) => Node::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Node::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Node::Uint(u)
                } else {
                    Node::Float(n.as_f64().unwrap_or(0.0))
                }
            }
            serde_json::Value::String(s) => Node::Str(s.clone()),
            serde_json::Value::Array(a) => Node::Seq(a.iter().map(Node::from_json).collect()),
            serde_json::Value::Object(o) => Node::Map(Map(o
                .iter()
                .map(|(k, v)| (k.clone(), Node::from_json(v)))
                .collect())),
        }
    }
}
