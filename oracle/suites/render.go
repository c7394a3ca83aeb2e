package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fluxsim/oracle/reconcile"
)

// renderCase is one case of a Flux test written as a Flux repository that fluxsim renders:
// the test's files under src/, a cluster `suite` (clusters/suite/) whose root Kustomization
// applies the case's Flux Kustomizations and the objects the test puts on the cluster.
// The expected result of each Kustomization is what Flux's own code makes of that
// repository (package reconcile: source-controller's archive, the generator, the build,
// postBuild, the read-back), written to case.json.
type renderCase struct {
	suite, name string
	// from names the Flux test (module version file Test/subtest).
	from string
	// dirs copies folders of the module into src/ (destination -> source folder).
	dirs map[string]string
	// files writes files into src/ (path -> content).
	files map[string]string
	// kustomizations are the Flux Kustomizations; spec.path is relative to src/ and
	// sourceRef is the cluster's GitRepository.
	kustomizations []map[string]interface{}
	// objects are put on the cluster beside them (var sources).
	objects []map[string]interface{}
	// ignore is the GitRepository's spec.ignore.
	ignore *string
	// strict is kustomize-controller's StrictPostBuildSubstitutions.
	strict bool
	// buildIgnore renders as `flux build kustomization --ignore-paths` does (see
	// reconcile.Job.BuildIgnore); fluxsim's side is `fluxsim build --ignore-paths`.
	buildIgnore *string
	// note says how the case differs from the test's own steps, when it does.
	note string
	// golden is the test's own expected output, when it has one (golden.yaml).
	golden string
}

// caseFile is case.json.
type caseFile struct {
	From        string                      `json:"from"`
	Note        string                      `json:"note,omitempty"`
	Strict      bool                        `json:"strict"`
	BuildIgnore *string                     `json:"buildIgnore,omitempty"`
	Expected    map[string]reconcile.Result `json:"expected"`
}

// ksObject is a Flux Kustomization named namespace/name with the given spec fields.
func ksObject(namespace, name string, spec map[string]interface{}) map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]interface{}{"name": name, "namespace": namespace},
		"spec":       spec,
	}
}

// fromTest makes a case's Flux Kustomization from one a Flux test reads (its YAML): the
// test's metadata and spec, at kustomize.toolkit.fluxcd.io/v1 (v1beta2's `validation` is
// gone in v1), its sourceRef the cluster's GitRepository, and spec.path `path` (relative
// to src/).
func fromTest(text, path string) (map[string]interface{}, error) {
	var obj map[string]interface{}
	if err := yaml.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(text), "---")), &obj); err != nil {
		return nil, err
	}
	spec, _ := obj["spec"].(map[string]interface{})
	if spec == nil {
		spec = map[string]interface{}{}
	}
	delete(spec, "validation")
	spec["path"] = path
	md, _ := obj["metadata"].(map[string]interface{})
	return ksObject(md["namespace"].(string), md["name"].(string), spec), nil
}

// write lays the case out under dir (removing what was there) and runs Flux's code on it.
func (c renderCase) write(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	repo := filepath.Join(dir, "repo")
	src := filepath.Join(repo, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	for to, from := range c.dirs {
		if err := copyDir(from, filepath.Join(src, to)); err != nil {
			return err
		}
	}
	for name, content := range c.files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	gitRepo := map[string]interface{}{
		"interval": "1m0s",
		"ref":      map[string]interface{}{"branch": "main"},
		"url":      "https://example.invalid/suite.git",
	}
	if c.ignore != nil {
		gitRepo["ignore"] = *c.ignore
	}
	root := []map[string]interface{}{
		{
			"apiVersion": "source.toolkit.fluxcd.io/v1",
			"kind":       "GitRepository",
			"metadata":   map[string]interface{}{"name": "flux-system", "namespace": "flux-system"},
			"spec":       gitRepo,
		},
		ksObject("flux-system", "flux-system", map[string]interface{}{
			"interval":  "10m0s",
			"path":      "./clusters/suite",
			"prune":     true,
			"sourceRef": map[string]interface{}{"kind": "GitRepository", "name": "flux-system"},
		}),
	}
	var applied []map[string]interface{}
	for _, k := range c.kustomizations {
		spec := k["spec"].(map[string]interface{})
		spec["path"] = "./" + filepath.ToSlash(filepath.Join("src", spec["path"].(string)))
		spec["sourceRef"] = map[string]interface{}{"kind": "GitRepository", "name": "flux-system", "namespace": "flux-system"}
		if _, ok := spec["interval"]; !ok {
			spec["interval"] = "10m0s"
		}
		if _, ok := spec["prune"]; !ok {
			spec["prune"] = true
		}
		applied = append(applied, k)
	}
	applied = append(applied, c.objects...)
	clusters := filepath.Join(repo, "clusters", "suite")
	if err := os.MkdirAll(clusters, 0o755); err != nil {
		return err
	}
	if err := writeYAML(filepath.Join(clusters, "flux-system.yaml"), root); err != nil {
		return err
	}
	if err := writeYAML(filepath.Join(clusters, "case.yaml"), applied); err != nil {
		return err
	}

	// The objects as the API server hands them to the controller: JSON values
	// ([]interface{}, float64), not the Go types the cases were written with.
	for i := range c.kustomizations {
		if err := viaJSON(&c.kustomizations[i]); err != nil {
			return err
		}
	}
	for i := range c.objects {
		if err := viaJSON(&c.objects[i]); err != nil {
			return err
		}
	}
	cf := caseFile{From: c.from, Note: c.note, Strict: c.strict, BuildIgnore: c.buildIgnore,
		Expected: map[string]reconcile.Result{}}
	for _, k := range c.kustomizations {
		md := k["metadata"].(map[string]interface{})
		id := md["namespace"].(string) + "/" + md["name"].(string)
		// `flux build` reads the folder as it is; the controller, source-controller's archive.
		archive := &reconcile.ArchiveSpec{Ignore: c.ignore}
		if c.buildIgnore != nil {
			archive = nil
		}
		r := reconcile.Do(reconcile.Job{
			ID:            id,
			Root:          repo,
			Archive:       archive,
			Kustomization: k,
			Objects:       c.objects,
			Strict:        c.strict,
			BuildIgnore:   c.buildIgnore,
		})
		// Error texts name the oracle's temporary folder: only the relative part stays.
		r.Error = tmpPath.ReplaceAllString(r.Error, "<tmp>")
		cf.Expected[id] = r
	}
	if c.golden != "" {
		if err := os.WriteFile(filepath.Join(dir, "golden.yaml"), []byte(c.golden), 0o644); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dir, "case.json"), cf)
}

// writeYAML writes objects as a YAML stream.
func writeYAML(path string, objects []map[string]interface{}) error {
	var parts []string
	for _, o := range objects {
		b, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		parts = append(parts, string(b))
	}
	return os.WriteFile(path, []byte(strings.Join(parts, "---\n")), 0o644)
}

// copyDir copies a module folder (read-only files) into dst, regular files and folders.
func copyDir(from, to string) error {
	return filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		switch {
		case fi.IsDir():
			return os.MkdirAll(target, 0o755)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
		return nil
	})
}

// writeRenderCases writes every case of a suite under out/<suite>/<name>/.
func writeRenderCases(out string, cases []renderCase) ([]entry, error) {
	var entries []entry
	seen := map[string]bool{}
	for _, c := range cases {
		id := c.suite + "/" + c.name
		if seen[id] {
			return nil, fmt.Errorf("two cases named %s", id)
		}
		seen[id] = true
		if err := c.write(filepath.Join(out, c.suite, c.name)); err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		entries = append(entries, entry{Suite: c.suite, ID: id, From: c.from, Kind: "render"})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].ID < entries[j].ID })
	return entries, nil
}

// viaJSON replaces an object by its JSON reading.
func viaJSON(o *map[string]interface{}) error {
	b, err := json.Marshal(*o)
	if err != nil {
		return err
	}
	*o = nil
	return json.Unmarshal(b, o)
}

// writeJSON writes v indented, with <, > and & as they are.
func writeJSON(path string, v interface{}) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
