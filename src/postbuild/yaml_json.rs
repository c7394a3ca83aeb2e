//! Re-reading substituted YAML the way Go's `sigs.k8s.io/yaml.YAMLToJSON` does.
