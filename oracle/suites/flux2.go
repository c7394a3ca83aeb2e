package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	argPath    = regexp.MustCompile(`--path (\S+)`)
	argIgnore  = regexp.MustCompile(`--ignore-paths "([^"]*)"`)
	fluxnsTmpl = regexp.MustCompile(`\{\{ *\.fluxns *\}\}`)
)

// flux2Cases are `flux build kustomization`'s golden-file tests (flux2
// cmd/flux/build_kustomization_test.go: TestBuildKustomization, TestBuildLocalKustomization,
// TestBuildKustomizationPathNormalization): each distinct build (folder and --ignore-paths)
// is one case, its Kustomization testdata/build-kustomization/podinfo-kustomization.yaml
// (namespace flux-system), rendered by `flux build`'s own steps (NewGeneratorWithIgnore on
// the folder as it is, the build, substitution not strict); the golden file is kept beside
// it as golden.yaml (its {{ .fluxns }} is flux-system), which tests/it/flux_suites.rs
// compares with `fluxsim build`'s print.
func flux2Cases(dir, version string) ([]renderCase, []entry, error) {
	cmd := filepath.Join(dir, "cmd", "flux")
	g, err := parseGo(filepath.Join(cmd, "build_kustomization_test.go"))
	if err != nil {
		return nil, nil, err
	}
	ksText, err := os.ReadFile(filepath.Join(cmd, "testdata/build-kustomization/podinfo-kustomization.yaml"))
	if err != nil {
		return nil, nil, err
	}
	type build struct{ path, ignore, golden string }
	var order []build
	froms := map[build][]string{}
	var limits []entry
	from := func(test string) string {
		return fmt.Sprintf("fluxcd/flux2 %s cmd/flux/build_kustomization_test.go %s", version, test)
	}
	for _, fn := range g.tests() {
		rows := g.table(fn, "args")
		if len(rows) == 0 {
			limits = append(limits, entry{Suite: "flux2", ID: "flux2/" + caseName(fn.Name.Name), From: from(fn.Name.Name), Kind: "limit",
				Limit: "the command line's handling of --path (an absolute folder outside the working one): the same build as flux2/podinfo, from another working folder"})
			continue
		}
		for _, r := range rows {
			name, err := g.str(r.fields["name"])
			if err != nil {
				return nil, nil, err
			}
			test := fn.Name.Name + "/" + name
			assert, _ := g.str(r.fields["assertFunc"])
			result, _ := g.str(r.fields["resultFile"])
			// The args mix literals and the test's variables (a temporary file, an absolute
			// path): only the literal parts are read.
			args := literalParts(g, r.fields["args"])
			id := "flux2/" + caseName(name)
			switch {
			case assert == "assertError":
				limits = append(limits, entry{Suite: "flux2", ID: id + "-" + caseName(fn.Name.Name), From: from(test), Kind: "limit",
					Limit: "an error of the command line's arguments (" + result + "): `fluxsim build` takes a repository, not a --path or a --kustomization-file"})
				continue
			case strings.Contains(args, "--recursive"):
				limits = append(limits, entry{Suite: "flux2", ID: id + "-" + caseName(fn.Name.Name), From: from(test), Kind: "limit",
					Limit: "--recursive --local-sources builds the Flux Kustomization the build holds from GitRepository default/podinfo mapped to a folder: fluxsim renders nested Kustomizations of the cluster's own source, and a mapped one only with --source, which the suite's renders do not pass"})
				continue
			}
			m := argPath.FindStringSubmatch(args)
			b := build{golden: filepath.Base(result)}
			if m != nil {
				b.path = filepath.Base(filepath.Clean(m[1]))
			} else {
				// The absolute path of PathNormalization's first cases is a variable.
				b.path = "podinfo"
			}
			if im := argIgnore.FindStringSubmatch(args); im != nil {
				b.ignore = im[1]
			}
			if _, ok := froms[b]; !ok {
				order = append(order, b)
			}
			froms[b] = append(froms[b], test)
		}
	}
	var cases []renderCase
	for _, b := range order {
		k, err := fromTest(fluxnsTmpl.ReplaceAllString(string(ksText), "flux-system"), ".")
		if err != nil {
			return nil, nil, err
		}
		golden, err := os.ReadFile(filepath.Join(cmd, "testdata/build-kustomization", b.golden))
		if err != nil {
			return nil, nil, err
		}
		// `--ignore-paths` is a comma-separated list; NewGeneratorWithIgnore gets it one a line.
		ignore := strings.ReplaceAll(b.ignore, ",", "\n")
		name := b.path
		if b.ignore != "" {
			name += "-ignore-paths"
		}
		tests := froms[b]
		sort.Strings(tests)
		cases = append(cases, renderCase{
			suite: "flux2", name: name,
			from:           from(strings.Join(tests, "; ")),
			dirs:           map[string]string{".": filepath.Join(cmd, "testdata/build-kustomization", b.path)},
			kustomizations: []map[string]interface{}{k},
			buildIgnore:    &ignore,
			golden:         fluxnsTmpl.ReplaceAllString(string(golden), "flux-system"),
			note:           "rendered as `flux build kustomization --path` builds (NewGeneratorWithIgnore, the folder as it is); golden.yaml is flux2's golden file",
		})
	}
	return cases, limits, nil
}

// literalParts joins the string literals of a `+` expression, a variable read as a space.
func literalParts(g *goFile, e ast.Expr) string {
	if s, err := g.str(e); err == nil {
		return s
	}
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.ADD {
		return literalParts(g, b.X) + literalParts(g, b.Y)
	}
	return " "
}
