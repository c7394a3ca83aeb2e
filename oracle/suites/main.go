// Command suites turns the test suites of the Flux modules that versions.env pins into
// fluxsim's conformance suite, testdata/flux-suites/ (scripts/gen-flux-suites runs it):
//
//	go run ./suites [-root ..]
//
// Each module is read at its pinned version through the Go module proxy (`go mod download`
// serves every module with its tests and testdata):
//
//   - fluxcd/pkg/kustomize (FLUXCD_PKG_KUSTOMIZE): its generator, build and substitution
//     tests, each a Flux repository under kustomize/ (render cases, kustomize.go);
//   - fluxcd/pkg/envsubst (FLUXCD_PKG_ENVSUBST): its test tables, envsubst.jsonl (vectors of
//     testdata/conformance/README.md's schema, envsubst.go);
//   - fluxcd/pkg/sourceignore (FLUXCD_PKG_SOURCEIGNORE): its tests, sourceignore.jsonl
//     (sourceignore.go);
//   - kustomize-controller (KUSTOMIZE_CONTROLLER): the build, substitution and validation
//     cases of its controller tests and their testdata, under controller/ (controller.go);
//   - flux2 (FLUX): `flux build kustomization`'s golden files, under flux2/ (flux2.go).
//
// Every expected result is made by Flux's own code (package reconcile for renders), never
// copied from the test's assertions. index.json lists every case with the test it comes
// from; a case a render cannot express is listed as a limit with the reason.
// tests/it/flux_suites.rs runs them all.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/fluxsim/oracle/pins"
)

// entry is one case of index.json.
type entry struct {
	Suite string `json:"suite"`
	ID    string `json:"id"`
	From  string `json:"from"`
	// Kind: render (a case folder), envsubst or sourceignore (a vector), limit (not
	// expressible; Limit says why).
	Kind  string `json:"kind"`
	Limit string `json:"limit,omitempty"`
}

// tmpPath is a temporary folder of the oracle in an error text.
var tmpPath = regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/fluxsim-oracle-[0-9]+`)

func main() {
	root := flag.String("root", "..", "the fluxsim repository")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "suites:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	pinned, err := pins.Read(filepath.Join(root, "versions.env"))
	if err != nil {
		return err
	}
	out := filepath.Join(root, "testdata", "flux-suites")
	var index []entry

	dir, err := pins.ModDir("github.com/fluxcd/pkg/envsubst", pinned["FLUXCD_PKG_ENVSUBST"])
	if err != nil {
		return err
	}
	vectors, entries, err := envsubstSuite(dir, pinned["FLUXCD_PKG_ENVSUBST"])
	if err != nil {
		return fmt.Errorf("envsubst: %w", err)
	}
	if err := writeJSONL(filepath.Join(out, "envsubst.jsonl"), vectors); err != nil {
		return err
	}
	index = append(index, entries...)

	if dir, err = pins.ModDir("github.com/fluxcd/pkg/sourceignore", pinned["FLUXCD_PKG_SOURCEIGNORE"]); err != nil {
		return err
	}
	ivs, entries, err := sourceignoreSuite(dir, pinned["FLUXCD_PKG_SOURCEIGNORE"])
	if err != nil {
		return fmt.Errorf("sourceignore: %w", err)
	}
	if err := writeJSONL(filepath.Join(out, "sourceignore.jsonl"), ivs); err != nil {
		return err
	}
	index = append(index, entries...)

	for _, s := range []struct {
		suite, module, pin string
		cases              func(dir, version string) ([]renderCase, []entry, error)
	}{
		{"kustomize", "github.com/fluxcd/pkg/kustomize", "FLUXCD_PKG_KUSTOMIZE", kustomizeCases},
		{"controller", "github.com/fluxcd/kustomize-controller", "KUSTOMIZE_CONTROLLER", controllerCases},
		{"flux2", "github.com/fluxcd/flux2/v2", "FLUX", flux2Cases},
	} {
		dir, err := pins.ModDir(s.module, pinned[s.pin])
		if err != nil {
			return err
		}
		cases, limits, err := s.cases(dir, pinned[s.pin])
		if err != nil {
			return fmt.Errorf("%s: %w", s.suite, err)
		}
		if err := os.RemoveAll(filepath.Join(out, s.suite)); err != nil {
			return err
		}
		entries, err := writeRenderCases(out, cases)
		if err != nil {
			return err
		}
		index = append(index, entries...)
		index = append(index, limits...)
	}

	sort.SliceStable(index, func(i, j int) bool {
		if index[i].Suite != index[j].Suite {
			return index[i].Suite < index[j].Suite
		}
		return index[i].ID < index[j].ID
	})
	counts := map[string]int{}
	for _, e := range index {
		counts[e.Kind]++
	}
	fmt.Fprintf(os.Stderr, "suites: %d cases: %d render, %d envsubst, %d sourceignore, %d limits\n",
		len(index), counts["render"], counts["envsubst"], counts["sourceignore"], counts["limit"])
	return writeJSON(filepath.Join(out, "index.json"), index)
}

func writeJSONL[T any](path string, items []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, it := range items {
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(it); err != nil {
			return err
		}
		b.Write(line.Bytes())
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
