package main

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// kustomizeCases are the tests of fluxcd/pkg/kustomize (kustomize_generator_test.go,
// kustomize_generator_whitebox_test.go, kustomize_varsub_test.go), each as the Flux
// repository that reaches the same code: the test's folder under src/ and its Flux
// Kustomization (ks.yaml, or the fields the test sets) applied by the cluster. The tests
// call the generator, the build and the substitution one by one; a render runs them in the
// controller's order, so each case checks what the test feeds those steps, end to end.
func kustomizeCases(dir, version string) ([]renderCase, []entry, error) {
	td := func(p string) string { return filepath.Join(dir, "testdata", p) }
	read := func(p string) (string, error) {
		b, err := os.ReadFile(td(p))
		return string(b), err
	}
	from := func(file, test string) string {
		return fmt.Sprintf("fluxcd/pkg/kustomize %s %s %s", version, file, test)
	}
	gen := "kustomize_generator_test.go"
	var cases []renderCase
	var limits []entry
	add := func(c renderCase) {
		c.suite = "kustomize"
		cases = append(cases, c)
	}
	limit := func(id, file, test, why string) {
		limits = append(limits, entry{Suite: "kustomize", ID: "kustomize/" + id, From: from(file, test), Kind: "limit", Limit: why})
	}
	ks := func(file, path string) (map[string]interface{}, error) {
		text, err := read(file)
		if err != nil {
			return nil, err
		}
		return fromTest(text, path)
	}
	obj := func(file string) (map[string]interface{}, error) {
		text, err := read(file)
		if err != nil {
			return nil, err
		}
		var o map[string]interface{}
		err = yaml.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(text), "---")), &o)
		return o, err
	}
	// An empty folder cannot be committed: it holds a file no generator lists.
	keep := "an empty folder holds `.keep` (git keeps no empty folder; the generator lists only YAML and JSON files)"

	type simple struct {
		name, test, ksFile, dir, path, note string
		files                               map[string]string
	}
	for _, s := range []simple{
		{name: "generator-empty-dir", test: "TestGenerator_EmptyDir", ksFile: "empty/ks.yaml", path: "empty",
			files: map[string]string{"empty/.keep": ""}, note: keep},
		{name: "generator-no-resources", test: "TestGenerator_NoResources", ksFile: "noResources/ks.yaml", dir: "noResources", path: "."},
		{name: "generator-name-transformer", test: "TestGenerator_NameTransformer", ksFile: "name/ks.yaml", dir: "name", path: "."},
		{name: "generator-build-metadata", test: "TestGenerator_BuildMetadata", ksFile: "buildMetadata/ks.yaml", dir: "buildMetadata", path: "."},
		{name: "generate-manifest-existing", test: "TestGenerateManifest/existing kustomization returns unchanged action and file content",
			ksFile: "kustomization.yaml", dir: "resources", path: ".",
			note: "the test's own assertion (GenerateManifest writes nothing) is about the API; the case renders its inputs (without resources/.sourceignore, which only the flux build cases read)"},
		{name: "generate-manifest-empty", test: "TestGenerateManifest/empty dir returns created action with placeholder",
			ksFile: "empty/ks.yaml", path: "empty", files: map[string]string{"empty/.keep": ""},
			note: "the test's own assertion (GenerateManifest writes nothing) is about the API; the case renders its inputs; " + keep},
		{name: "kustomization-generator", test: "TestKustomizationGenerator", ksFile: "kustomization.yaml", dir: "resources", path: ".",
			note: "one case for both subtests (secured and not: the same expected output); resources/.sourceignore is left out, the test builds the folder without source-controller"},
		{name: "secure-build-panic", test: "Test_SecureBuild_panic", dir: "panic", path: "."},
		{name: "secure-build-rel-basedir", test: "Test_SecureBuild_rel_basedir", dir: "relbase", path: "clusters/staging/flux-system"},
	} {
		c := renderCase{name: s.name, from: from(gen, s.test), note: s.note, files: map[string]string{}, dirs: map[string]string{}}
		for k, v := range s.files {
			c.files[k] = v
		}
		if s.dir != "" {
			c.dirs["."] = td(s.dir)
		}
		var k map[string]interface{}
		var err error
		if s.ksFile != "" {
			k, err = ks(s.ksFile, s.path)
			if err != nil {
				return nil, nil, err
			}
		} else {
			k = ksObject("apps", "app", map[string]interface{}{"path": s.path})
		}
		c.kustomizations = append(c.kustomizations, k)
		add(c)
	}

	// The resources folder's .sourceignore (`/*`) is for the flux build tests only.
	for i := range cases {
		if cases[i].dirs["."] == td("resources") {
			cases[i].dirs = nil
			for _, f := range []string{"config.yaml", "deployment.yaml", "kustomization.yml"} {
				text, err := read("resources/" + f)
				if err != nil {
					return nil, nil, err
				}
				cases[i].files[f] = text
			}
		}
	}

	// TestKustomizationGenerator_WithSourceIgnore: `flux build`'s generator
	// (NewGeneratorWithIgnore) over the resources folder, its .sourceignore included.
	for _, t := range []struct{ name, ignore string }{{"without-ignore", ""}, {"with-ignore", "!config.yaml"}} {
		k, err := ks("kustomization.yaml", ".")
		if err != nil {
			return nil, nil, err
		}
		ignore := t.ignore
		add(renderCase{
			name: "build-ignore-" + t.name, from: from(gen, "TestKustomizationGenerator_WithSourceIgnore/"+strings.ReplaceAll(t.name, "-", " ")),
			dirs: map[string]string{".": td("resources")}, kustomizations: []map[string]interface{}{k},
			buildIgnore: &ignore,
			note:        "NewGeneratorWithIgnore is `flux build kustomization`'s generator: fluxsim's side is `fluxsim build --ignore-paths`, on the folder as it is (no source-controller archive)",
		})
	}
	limit("remote-resource", gen, "TestKustomizationGenerator_WithRemoteResource",
		"its kustomization lists a remote resource (https://raw.githubusercontent.com/...): a render offline cannot fetch it, and fluxsim reports such a Kustomization as needing the network")
	limit("openapi-path-http-url", gen, "TestOpenAPIPathHTTPURLMergesBuiltins",
		"the openapi schema is served over HTTP by the test: a render offline reads no URL (fluxsim reports the Kustomization as needing the network)")
	limit("is-local-relative-path", gen, "Test_IsLocalRelativePath",
		"a predicate on strings (which resource entries the flux build filter checks against the ignore rules); its only effect on a render goes through remote resources, as TestKustomizationGenerator_WithRemoteResource")

	// Test_Components: spec.components over the components folder, or none.
	g, err := parseGo(filepath.Join(dir, gen))
	if err != nil {
		return nil, nil, err
	}
	for i, r := range g.table(g.fn("Test_Components"), "fluxComponents") {
		name, err := g.str(r.fields["name"])
		if err != nil {
			return nil, nil, err
		}
		d, err := g.str(r.fields["dir"])
		if err != nil {
			return nil, nil, err
		}
		comps, err := g.strs(r.fields["fluxComponents"])
		if err != nil {
			return nil, nil, err
		}
		spec := map[string]interface{}{"path": "."}
		if len(comps) > 0 {
			spec["components"] = comps
		}
		c := renderCase{name: fmt.Sprintf("components-%d", i), from: from(gen, "Test_Components/"+name),
			kustomizations: []map[string]interface{}{ksObject("apps", "app", spec)}}
		if d != "" {
			c.dirs = map[string]string{".": td(d)}
		} else {
			c.files = map[string]string{".keep": ""}
			c.note = keep
		}
		add(c)
	}

	// Test_Images: its table, each row a kustomization with `images:` and a spec.images.
	imagesFn := g.fn("Test_Images")
	var deployment string
	ast.Inspect(imagesFn, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 1 {
			if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == "deployment" {
				deployment, err = g.str(as.Rhs[0])
			}
		}
		return deployment == ""
	})
	if deployment == "" || err != nil {
		return nil, nil, fmt.Errorf("Test_Images: no deployment: %v", err)
	}
	for i, r := range g.table(imagesFn, "fluxImages") {
		name, err := g.str(r.fields["name"])
		if err != nil {
			return nil, nil, err
		}
		existing, err := g.structs(r.fields["existingImages"])
		if err != nil {
			return nil, nil, err
		}
		flux, err := g.structs(r.fields["fluxImages"])
		if err != nil {
			return nil, nil, err
		}
		var images []kustypes.Image
		for _, m := range existing {
			images = append(images, kustypes.Image{Name: m["name"], NewName: m["newName"], NewTag: m["newTag"], Digest: m["digest"]})
		}
		kus, err := yaml.Marshal(kustypes.Kustomization{
			TypeMeta:  kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind},
			Resources: []string{"deployment.yaml"},
			Images:    images,
		})
		if err != nil {
			return nil, nil, err
		}
		var specImages []interface{}
		for _, m := range flux {
			im := map[string]interface{}{}
			for k, v := range m {
				im[k] = v
			}
			specImages = append(specImages, im)
		}
		add(renderCase{
			name: fmt.Sprintf("images-%d", i), from: from(gen, "Test_Images/"+name),
			files: map[string]string{"deployment.yaml": deployment, "kustomization.yaml": string(kus)},
			kustomizations: []map[string]interface{}{ksObject("apps", "app",
				map[string]interface{}{"path": ".", "images": specImages})},
		})
	}

	// TestGenerator_BuildMetadata_EmptySpec and _NoResources.
	add(renderCase{name: "build-metadata-empty-spec", from: from(gen, "TestGenerator_BuildMetadata_EmptySpec"),
		dirs:           map[string]string{".": td("buildMetadata")},
		kustomizations: []map[string]interface{}{ksObject("apps", "app", map[string]interface{}{"path": "."})}})
	add(renderCase{name: "build-metadata-no-resources", from: from(gen, "TestGenerator_BuildMetadata_NoResources"),
		dirs: map[string]string{".": td("noResources")},
		kustomizations: []map[string]interface{}{ksObject("apps", "app", map[string]interface{}{
			"path": ".", "buildMetadata": []interface{}{"transformerAnnotations"}})}})

	// Test_IgnoreMissingComponents: its table, an overlay folder whose generated
	// kustomization names components beside it.
	for i, r := range g.table(g.fn("Test_IgnoreMissingComponents"), "ignoreMissingComponents") {
		name, err := g.str(r.fields["name"])
		if err != nil {
			return nil, nil, err
		}
		comps, err := g.strs(r.fields["components"])
		if err != nil {
			return nil, nil, err
		}
		ignore, err := g.boolean(r.fields["ignoreMissingComponents"])
		if err != nil {
			return nil, nil, err
		}
		var rel []interface{}
		for _, c := range comps {
			rel = append(rel, "../"+c)
		}
		add(renderCase{
			name: fmt.Sprintf("ignore-missing-components-%d", i), from: from(gen, "Test_IgnoreMissingComponents/"+name),
			files: map[string]string{
				"existing-component/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: []\n",
				"overlay/.keep":                         "",
			},
			kustomizations: []map[string]interface{}{ksObject("apps", "app", map[string]interface{}{
				"path": "overlay", "components": rel, "ignoreMissingComponents": ignore})},
			note: keep,
		})
	}

	// TestOpenAPIPollution: the two builds, one after the other, as two Kustomizations.
	add(renderCase{name: "openapi-pollution", from: from(gen, "TestOpenAPIPollution"),
		dirs: map[string]string{"pollutor": td("openapiPollution/pollutor"), "victim": td("openapiPollution/victim")},
		kustomizations: []map[string]interface{}{
			ksObject("apps", "pollutor", map[string]interface{}{"path": "pollutor"}),
			ksObject("apps", "victim", map[string]interface{}{"path": "victim"}),
		},
		note: "the two builds are two Kustomizations of one cluster",
	})

	// TestOpenAPIPathMergesBuiltins: writeOpenAPIPathDaemonSetFixture's files.
	files, err := openAPIFixture(g)
	if err != nil {
		return nil, nil, err
	}
	add(renderCase{name: "openapi-path-merges-builtins", from: from(gen, "TestOpenAPIPathMergesBuiltins"), files: files,
		kustomizations: []map[string]interface{}{ksObject("default", "app", map[string]interface{}{"path": "."})}})

	// kustomize_generator_whitebox_test.go: scanManifests on the folders of its tables.
	wb := "kustomize_generator_whitebox_test.go"
	add(renderCase{name: "scan-manifests-valid", from: from(wb, "TestScanManifests/valid manifests"),
		dirs:           map[string]string{".": td("nokustomization/resources")},
		kustomizations: []map[string]interface{}{ksObject("apps", "app", map[string]interface{}{"path": "."})}})
	add(renderCase{name: "scan-manifests-malformed", from: from(wb, "TestScanManifests/malformed YAML - panic recovery error"),
		dirs:           map[string]string{".": td("nokustomization/panic")},
		kustomizations: []map[string]interface{}{ksObject("apps", "app", map[string]interface{}{"path": "."})}})
	limit("scan-manifests-empty", wb, "TestScanManifests/empty directory",
		"the same empty folder as TestGenerator_EmptyDir (kustomize/generator-empty-dir)")
	for _, t := range []struct{ name, test, dir, ignore string }{
		{"scan-ignore-basic", "basic directory - no ignore patterns", "basic", ""},
		{"scan-ignore-sops", "with .sops.yaml - no ignore patterns (should fail)", "with-sops", ""},
		{"scan-ignore-sops-ignored", "with .sops.yaml - ignore .sops.yaml", "with-sops", ".sops.yaml"},
		{"scan-ignore-gitlab-ci", "with .gitlab-ci.yml - no ignore patterns (should fail)", "with-gitlab-ci", ""},
		{"scan-ignore-gitlab-ci-ignored", "with .gitlab-ci.yml - ignore .gitlab-ci.yml", "with-gitlab-ci", ".gitlab-ci.yml"},
	} {
		c := renderCase{name: t.name, from: from(wb, "TestScanManifests_WithIgnorePatterns/"+t.test),
			dirs:           map[string]string{".": td("ignore-tests/" + t.dir)},
			kustomizations: []map[string]interface{}{ksObject("apps", "app", map[string]interface{}{"path": "."})}}
		if t.ignore != "" {
			ignore := t.ignore
			c.buildIgnore = &ignore
			c.note = "the patterns are `flux build --ignore-paths`'s (scanManifests with LoadIgnorePatterns plus the test's patterns)"
		} else if t.dir != "basic" {
			c.note = "as a GitRepository: source-controller's default patterns leave the file out of the artifact before the generator lists the folder, so Flux renders it (scanManifests alone, on the folder, fails)"
		}
		add(c)
	}

	// kustomize_varsub_test.go.
	vs := "kustomize_varsub_test.go"
	varsub, err := ks("kustomization_varsub.yaml", ".")
	if err != nil {
		return nil, nil, err
	}
	cm, err := obj("configmap.yaml")
	if err != nil {
		return nil, nil, err
	}
	resources := map[string]string{}
	for _, f := range []string{"config.yaml", "deployment.yaml", "kustomization.yml"} {
		if resources[f], err = read("resources/" + f); err != nil {
			return nil, nil, err
		}
	}
	add(renderCase{name: "varsub", from: from(vs, "TestKustomization_Varsub"), files: resources,
		kustomizations: []map[string]interface{}{varsub}, objects: []map[string]interface{}{cm},
		note: "not strict (SubstituteVariables' default); resources/.sourceignore left out, the test builds the folder itself"})
	for _, strict := range []bool{true, false} {
		k, err := ks("kustomization_varsub.yaml", ".")
		if err != nil {
			return nil, nil, err
		}
		name := "varsub-strict"
		if !strict {
			name = "varsub-not-strict"
		}
		add(renderCase{name: name, from: from(vs, "TestKustomization_Varsub (varsubstrict)"),
			dirs: map[string]string{".": td("varsubstrict")}, strict: strict,
			kustomizations: []map[string]interface{}{k}, objects: []map[string]interface{}{cm}})
	}
	novars, err := ks("kustomization_varsub_novars.yaml", ".")
	if err != nil {
		return nil, nil, err
	}
	add(renderCase{name: "varsub-always-disabled", from: from(vs, "TestKustomization_Varsub_Always/disabled: default values are not substituted"),
		dirs: map[string]string{".": td("varsubalways")}, kustomizations: []map[string]interface{}{novars},
		note: "no postBuild: the controller does not substitute at all (kustomization_controller.go build), which leaves the defaults as the test expects"})
	always, err := ks("kustomization_varsub_novars.yaml", ".")
	if err != nil {
		return nil, nil, err
	}
	always["spec"].(map[string]interface{})["postBuild"] = map[string]interface{}{"substituteStrategy": "Always"}
	add(renderCase{name: "varsub-always-enabled", from: from(vs, "TestKustomization_Varsub_Always/enabled: default values are substituted"),
		dirs: map[string]string{".": td("varsubalways")}, kustomizations: []map[string]interface{}{always},
		note: "SubstituteWithAlways is postBuild.substituteStrategy: Always"})
	empty, err := ks("kustomization_varsub_empty.yaml", ".")
	if err != nil {
		return nil, nil, err
	}
	cmEmpty, err := obj("configmap_empty.yaml")
	if err != nil {
		return nil, nil, err
	}
	secretEmpty, err := obj("secret_empty.yaml")
	if err != nil {
		return nil, nil, err
	}
	add(renderCase{name: "varsub-strict-empty-values", from: from(vs, "TestKustomization_Varsub_StrictEmptyValues"),
		dirs: map[string]string{".": td("varsubstrictempty")}, strict: true,
		kustomizations: []map[string]interface{}{empty}, objects: []map[string]interface{}{cmEmpty, secretEmpty}})
	dummy, err := ks("kustomization_varsub_dummy.yaml", ".")
	if err != nil {
		return nil, nil, err
	}
	add(renderCase{name: "varsub-strict-empty-values-omitted", from: from(vs, "TestKustomization_Varsub_StrictEmptyValues (omitted)"),
		dirs: map[string]string{".": td("varsubstrictempty")}, kustomizations: []map[string]interface{}{dummy}})
	return cases, limits, nil
}

var sprintfVerb = regexp.MustCompile(`%s`)

// openAPIFixture reads writeOpenAPIPathDaemonSetFixture's files, the schema path being the
// file it writes (custom-openapi.json).
func openAPIFixture(g *goFile) (map[string]string, error) {
	fn := g.fn("writeOpenAPIPathDaemonSetFixture")
	if fn == nil {
		return nil, fmt.Errorf("no writeOpenAPIPathDaemonSetFixture")
	}
	files := map[string]string{}
	var err error
	ast.Inspect(fn, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok || err != nil {
			return err == nil
		}
		if _, isMap := lit.Type.(*ast.MapType); !isMap {
			return true
		}
		for _, el := range lit.Elts {
			kv := el.(*ast.KeyValueExpr)
			var name, content string
			if name, err = g.str(kv.Key); err != nil {
				return false
			}
			if call, ok := kv.Value.(*ast.CallExpr); ok {
				var format string
				if format, err = g.str(call.Args[0]); err != nil {
					return false
				}
				content = sprintfVerb.ReplaceAllString(format, "custom-openapi.json")
			} else if content, err = g.str(kv.Value); err != nil {
				return false
			}
			files[name] = content
		}
		return false
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("writeOpenAPIPathDaemonSetFixture: no files")
	}
	return files, err
}
