package main

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// renderFields are the Kustomization spec fields a render reads (the generator's, the
// build's and postBuild's); the others (intervals, health checks, kubeConfig, the source
// reference, which the case sets to the cluster's GitRepository) are left out.
var renderFields = map[string]bool{
	"path": true, "targetNamespace": true, "namePrefix": true, "nameSuffix": true,
	"patches": true, "images": true, "components": true, "ignoreMissingComponents": true,
	"commonMetadata": true, "postBuild": true, "buildMetadata": true, "prune": true,
}

// controllerLimits are the controller tests whose subject no render reaches, by file, with
// the reason. A test of another file that cannot be read as a render is a limit too, with
// what the evaluator could not read.
var controllerLimits = map[string]string{
	"kustomization_decryptor_test.go": "SOPS decryption with the test's keys: fluxsim never decrypts (no keys offline), encrypted Secrets ship as they are",
	"kustomization_fuzzer_test.go":    "a fuzzer over the controller against a test API server, not a case",
	"tmpdir_test.go":                  "the controller's housekeeping of its temporary folders (tmpdir.go), no build",
	"suite_test.go":                   "the test suite's setup (a test API server and source server), not a case",
}

// controllerTestLimits are single tests whose subject is not what the controller builds,
// with the reason (their setup is also out of the evaluator's reach: loops, helpers).
var controllerTestLimits = map[string]string{
	"TestKustomizationReconciler_deleteBeforeFinalizer":           "a Kustomization deleted before its finalizer is set: the object's lifecycle on the cluster, no artifact is built",
	"TestKustomizationReconciler_DeletionPolicyDelete":            "what deleting a Kustomization deletes (spec.deletionPolicy, a table of cluster states): garbage collection, not a build",
	"TestKustomizationReconciler_DirectSourceFetch_Bucket":        "the artifact of a Bucket source fetched directly (a helper makes it): a source fluxsim reports as external unless mapped with --source",
	"TestKustomizationReconciler_DirectSourceFetch_OCIRepository": "the artifact of an OCIRepository fetched directly (a helper makes it): a source fluxsim reports as external unless mapped with --source",
	"TestPruneSurvivors": "which objects survive a prune (an inventory on the cluster): garbage collection, not a build",
}

// controllerCases reads every Test function of kustomize-controller's controller tests
// (internal/controller/*_test.go): the Flux Kustomization it creates, the ConfigMaps and
// Secrets it creates beside it, and the first artifact it serves (a testdata folder or the
// files it writes), as one render case each. Most tests are about what the controller does
// on the cluster (apply, prune, wait, health checks, status); a render checks what they
// build and substitute, which is what would be applied.
func controllerCases(dir, version string) ([]renderCase, []entry, error) {
	ctrl := filepath.Join(dir, "internal", "controller")
	files, err := filepath.Glob(filepath.Join(ctrl, "*_test.go"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	var cases []renderCase
	var limits []entry
	for _, file := range files {
		base := filepath.Base(file)
		g, err := parseGo(file)
		if err != nil {
			return nil, nil, err
		}
		for _, fn := range g.tests() {
			name := fn.Name.Name
			from := fmt.Sprintf("fluxcd/kustomize-controller %s internal/controller/%s %s", version, base, name)
			id := "controller/" + caseName(name)
			if why, ok := controllerTestLimits[name]; ok {
				limits = append(limits, entry{Suite: "controller", ID: id, From: from, Kind: "limit", Limit: why})
				continue
			}
			if why, ok := controllerLimits[base]; ok {
				limits = append(limits, entry{Suite: "controller", ID: id, From: from, Kind: "limit", Limit: why})
				continue
			}
			cs, why := controllerCase(g, ctrl, name)
			if why != "" {
				limits = append(limits, entry{Suite: "controller", ID: id, From: from, Kind: "limit", Limit: why})
				continue
			}
			for _, c := range cs {
				c.name, c.suite, c.from = caseName(name)+c.name, "controller", from
				cases = append(cases, c)
			}
		}
	}
	return cases, limits, nil
}

// caseName is a test's name as a folder: TestKustomizationReconciler_Varsub -> varsub,
// "build with recursive (in-memory)" -> build-with-recursive-in-memory.
func caseName(test string) string {
	name := strings.TrimPrefix(strings.TrimPrefix(test, "TestKustomizationReconciler_"), "Test")
	var b strings.Builder
	dash := false
	for i, r := range name {
		upper := r >= 'A' && r <= 'Z'
		if upper && i > 0 && !(name[i-1] >= 'A' && name[i-1] <= 'Z') {
			dash = true
		}
		switch {
		case upper:
			r += 'a' - 'A'
		case !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9'):
			dash = true
			continue
		}
		if dash && b.Len() > 0 {
			b.WriteByte('-')
		}
		dash = false
		b.WriteRune(r)
	}
	return b.String()
}

// controllerCase evaluates one test: its cases, or why it has none. A test that creates as
// many Kustomizations as it serves artifacts gives one case per pair (named -0, -1 ...);
// otherwise its first Kustomization on its first artifact.
func controllerCase(g *goFile, ctrl, test string) ([]renderCase, string) {
	ev := newEvaluator(g)
	ev.run(g.fn(test).Body)
	var kss []*structVal
	var objects []map[string]interface{}
	for _, o := range ev.created {
		sv, ok := o.(*structVal)
		if !ok {
			continue
		}
		switch sv.typ {
		case "kustomizev1.Kustomization":
			kss = append(kss, sv)
		case "corev1.ConfigMap", "corev1.Secret":
			obj := toJSON(sv, nil).(map[string]interface{})
			obj["apiVersion"] = "v1"
			obj["kind"] = strings.TrimPrefix(sv.typ, "corev1.")
			objects = append(objects, obj)
		}
	}
	if len(kss) == 0 {
		return nil, "it creates no Flux Kustomization the evaluator can read (its objects are made by helpers or in loops): no render to compare"
	}
	if len(ev.served) == 0 {
		return nil, "it serves no artifact the evaluator can read (made by a helper): no source to render"
	}
	pairs := 1
	if len(kss) == len(ev.served) {
		pairs = len(kss)
	}
	var cases []renderCase
	for i := 0; i < pairs; i++ {
		c, why := controllerPair(g, ctrl, test, kss[i], ev.served[i], objects)
		if why != "" {
			return nil, why
		}
		if pairs == 1 && (len(kss) > 1 || len(ev.served) > 1) {
			c.note = fmt.Sprintf("the first of the %d Kustomizations the test creates, on the first of the %d artifacts it serves", len(kss), len(ev.served))
		}
		if pairs > 1 {
			c.name = fmt.Sprintf("-%d", i)
			c.note = fmt.Sprintf("Kustomization %d of %d, on artifact %d", i+1, pairs, i+1)
		}
		cases = append(cases, c)
	}
	return cases, ""
}

// controllerPair is one Kustomization of a test on one of its artifacts.
func controllerPair(g *goFile, ctrl, test string, ks *structVal, a artifact, objects []map[string]interface{}) (renderCase, string) {
	obj := toJSON(ks, nil).(map[string]interface{})
	md, _ := obj["metadata"].(map[string]interface{})
	name, _ := md["name"].(string)
	namespace, _ := md["namespace"].(string)
	if name == "" || namespace == "" {
		return renderCase{}, "its Kustomization's name or namespace is not literal"
	}
	spec, _ := obj["spec"].(map[string]interface{})
	kept := map[string]interface{}{}
	for k, v := range spec {
		if renderFields[k] {
			kept[k] = v
		}
	}
	if p, ok := kept["path"].(string); !ok || p == "" {
		kept["path"] = "."
	}
	c := renderCase{
		kustomizations: []map[string]interface{}{ksObject(namespace, name, kept)},
		objects:        objects,
		// The test suite's reconciler substitutes without the StrictPostBuildSubstitutions
		// gate, unless the test sets reconciler.StrictSubstitutions.
		strict: setsStrict(g.fn(test)),
	}
	if a.dir != "" {
		c.dirs = map[string]string{".": filepath.Join(ctrl, a.dir)}
		if _, err := os.Stat(c.dirs["."]); err != nil {
			return renderCase{}, "its testdata folder is missing: " + a.dir
		}
	} else {
		c.files = a.files
		if len(c.files) == 0 {
			c.files = map[string]string{".keep": ""}
		}
	}
	return c, ""
}

// setsStrict: the test sets `reconciler.StrictSubstitutions = true`.
func setsStrict(fn *ast.FuncDecl) bool {
	strict := false
	ast.Inspect(fn, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
			return true
		}
		sel, ok := as.Lhs[0].(*ast.SelectorExpr)
		val, ok2 := as.Rhs[0].(*ast.Ident)
		if ok && ok2 && sel.Sel.Name == "StrictSubstitutions" && val.Name == "true" {
			strict = true
		}
		return true
	})
	return strict
}
