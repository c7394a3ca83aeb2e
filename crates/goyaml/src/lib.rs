//! Go's YAML and JSON, as Flux and kustomize read and print them, written once: go-yaml v2's
//! syntax ([`v2`], a port of its reader, scanner and parser), YAML 1.1 scalar resolution,
//! Go's `strconv` number syntax and float formatting ([`strconv`]), `time.Parse` for
//! timestamps ([`gotime`]), `encoding/json` strings ([`json`]) and `sigs.k8s.io/yaml`'s
//! `YAMLToJSON` ([`yaml_json`]) built from them, and reading the objects of a YAML stream
//! with it ([`manifest`]). Everything here mirrors a Go file and depends on nothing else in
//! fluxsim.

pub mod alias;
pub mod gotime;
pub mod json;
pub mod manifest;
pub mod resolve;
pub mod strconv;
pub mod stream;
pub mod v2;
pub mod yaml_json;
