// Command pincheck checks the one list of pinned versions (../versions.env) against what
// the Flux release ships, and the oracle's go.mod files against the controllers' own:
//
//	go run ./pincheck [-root ..]
//
// (scripts/pin-check runs it). With the Go module proxy it reads:
//
//   - github.com/fluxcd/flux2/v2@FLUX: manifests/bases/<controller>/kustomization.yaml names
//     each controller's release (KUSTOMIZE_CONTROLLER, SOURCE_CONTROLLER, HELM_CONTROLLER,
//     SOURCE_WATCHER);
//   - each controller's go.mod at that version: the fluxcd/pkg modules, kustomize's api and
//     kyaml (after its replace directives) and helm it builds with;
//   - sigs.k8s.io/kustomize/kustomize/v5@KUSTOMIZE: the api its CLI release is built on;
//
// and checks that oracle/go.mod requires every module it shares with kustomize-controller's
// go.mod at the controller's version (replace directives included), and oracle/helm/go.mod
// likewise with helm-controller's. Every disagreement is printed; exit 1 if any.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/fluxsim/oracle/pins"
)

// GoMod is what a go.mod requires, after its replace directives (module -> version).
type GoMod struct {
	Require map[string]string
	Replace map[string]string
}

// Version is the version a build with this go.mod uses for module ("" if none).
func (g GoMod) Version(module string) string {
	if v, ok := g.Replace[module]; ok {
		return v
	}
	return g.Require[module]
}

var modLine = regexp.MustCompile(`^\s*(?:require\s+)?(\S+)\s+(v\S+)`)
var replaceLine = regexp.MustCompile(`^\s*(?:replace\s+)?(\S+)(?:\s+v\S+)?\s+=>\s+(\S+)(?:\s+(v\S+))?`)

// ReadGoMod reads the require and replace directives of a go.mod file.
func ReadGoMod(path string) (GoMod, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return GoMod{}, err
	}
	g := GoMod{Require: map[string]string{}, Replace: map[string]string{}}
	block := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == ")":
			block = ""
			continue
		case strings.HasSuffix(trimmed, "(") && (strings.HasPrefix(trimmed, "require") || strings.HasPrefix(trimmed, "replace")):
			block = strings.Fields(trimmed)[0]
			continue
		}
		kind := block
		if strings.HasPrefix(trimmed, "require ") {
			kind = "require"
		} else if strings.HasPrefix(trimmed, "replace ") {
			kind = "replace"
		}
		switch kind {
		case "require":
			if m := modLine.FindStringSubmatch(trimmed); m != nil {
				g.Require[m[1]] = m[2]
			}
		case "replace":
			if m := replaceLine.FindStringSubmatch(trimmed); m != nil && m[3] != "" && m[1] == m[2] {
				g.Replace[m[1]] = m[3]
			}
		}
	}
	return g, sc.Err()
}

type checker struct{ failures []string }

func (c *checker) expect(what, got, want string) {
	status := "ok"
	if got != want {
		status = "DIFFERENT"
		c.failures = append(c.failures, fmt.Sprintf("%s: %s, pinned %s", what, got, want))
	}
	fmt.Printf("%-9s %s: %s\n", status, what, got)
}

var releaseURL = regexp.MustCompile(`github\.com/fluxcd/([a-z-]+)/releases/download/(v[0-9][^/]*)/`)

// shipped is the controller release Flux's manifests name for component.
func shipped(fluxDir, component string) (string, error) {
	b, err := os.ReadFile(filepath.Join(fluxDir, "manifests", "bases", component, "kustomization.yaml"))
	if err != nil {
		return "", err
	}
	for _, m := range releaseURL.FindAllStringSubmatch(string(b), -1) {
		if m[1] == component {
			return m[2], nil
		}
	}
	return "", fmt.Errorf("flux2 manifests/bases/%s names no release", component)
}

// sameAsController checks that the oracle's go.mod uses the controller's version of every
// module both name.
func (c *checker) sameAsController(oracleMod, label string, controller GoMod) {
	ours, err := ReadGoMod(oracleMod)
	if err != nil {
		c.failures = append(c.failures, err.Error())
		return
	}
	var shared, differ []string
	for m := range ours.Require {
		want := controller.Version(m)
		if want == "" {
			continue
		}
		shared = append(shared, m)
		if got := ours.Version(m); got != want {
			differ = append(differ, fmt.Sprintf("%s %s (controller: %s)", m, got, want))
		}
	}
	sort.Strings(differ)
	for _, d := range differ {
		c.failures = append(c.failures, fmt.Sprintf("%s: %s", oracleMod, d))
	}
	status := "ok"
	if len(differ) > 0 {
		status = "DIFFERENT"
	}
	fmt.Printf("%-9s %s: %d modules shared with %s, %d at another version\n", status, oracleMod, len(shared), label, len(differ))
	for _, d := range differ {
		fmt.Printf("          %s\n", d)
	}
}

func main() {
	root := flag.String("root", "..", "the repository root (where versions.env is)")
	flag.Parse()
	pinned, err := pins.Read(filepath.Join(*root, "versions.env"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pincheck:", err)
		os.Exit(2)
	}
	need := func(name string) string {
		v, ok := pinned[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "pincheck: versions.env has no %s\n", name)
			os.Exit(2)
		}
		return v
	}
	must := func(dir string, err error) string {
		if err != nil {
			fmt.Fprintln(os.Stderr, "pincheck:", err)
			os.Exit(2)
		}
		return dir
	}
	var c checker

	flux := must(pins.ModDir("github.com/fluxcd/flux2/v2", need("FLUX")))
	for _, p := range []struct{ component, pin string }{
		{"kustomize-controller", "KUSTOMIZE_CONTROLLER"},
		{"source-controller", "SOURCE_CONTROLLER"},
		{"helm-controller", "HELM_CONTROLLER"},
		{"source-watcher", "SOURCE_WATCHER"},
	} {
		v, err := shipped(flux, p.component)
		if err != nil {
			c.failures = append(c.failures, err.Error())
			continue
		}
		c.expect(fmt.Sprintf("flux %s ships %s", need("FLUX"), p.component), v, need(p.pin))
	}

	read := func(dir string) GoMod { return must2(ReadGoMod(filepath.Join(dir, "go.mod"))) }
	kc := read(must(pins.ModDir("github.com/fluxcd/kustomize-controller", need("KUSTOMIZE_CONTROLLER"))))
	label := "kustomize-controller " + need("KUSTOMIZE_CONTROLLER")
	for _, p := range []struct{ module, pin string }{
		{"github.com/fluxcd/pkg/kustomize", "FLUXCD_PKG_KUSTOMIZE"},
		{"github.com/fluxcd/pkg/envsubst", "FLUXCD_PKG_ENVSUBST"},
		{"github.com/fluxcd/pkg/ssa", "FLUXCD_PKG_SSA"},
		{"sigs.k8s.io/kustomize/api", "KUSTOMIZE_API"},
		{"sigs.k8s.io/kustomize/kyaml", "KUSTOMIZE_KYAML"},
	} {
		c.expect(label+" builds with "+p.module, kc.Version(p.module), need(p.pin))
	}
	sc := read(must(pins.ModDir("github.com/fluxcd/source-controller", need("SOURCE_CONTROLLER"))))
	c.expect("source-controller "+need("SOURCE_CONTROLLER")+" builds with github.com/fluxcd/pkg/sourceignore",
		sc.Version("github.com/fluxcd/pkg/sourceignore"), need("FLUXCD_PKG_SOURCEIGNORE"))
	hc := read(must(pins.ModDir("github.com/fluxcd/helm-controller", need("HELM_CONTROLLER"))))
	hlabel := "helm-controller " + need("HELM_CONTROLLER")
	c.expect(hlabel+" builds with github.com/fluxcd/pkg/chartutil", hc.Version("github.com/fluxcd/pkg/chartutil"), need("FLUXCD_PKG_CHARTUTIL"))
	c.expect(hlabel+" builds with helm.sh/helm/v4", hc.Version("helm.sh/helm/v4"), need("HELM"))
	c.expect(hlabel+" builds with sigs.k8s.io/kustomize/api", hc.Version("sigs.k8s.io/kustomize/api"), need("KUSTOMIZE_API"))
	kz := read(must(pins.ModDir("sigs.k8s.io/kustomize/kustomize/v5", need("KUSTOMIZE"))))
	c.expect("kustomize "+need("KUSTOMIZE")+" is built on sigs.k8s.io/kustomize/api", kz.Version("sigs.k8s.io/kustomize/api"), need("KUSTOMIZE_API"))

	c.sameAsController("go.mod", label, kc)
	if _, err := os.Stat(filepath.Join("helm", "go.mod")); err == nil {
		c.sameAsController(filepath.Join("helm", "go.mod"), hlabel, hc)
	}

	if len(c.failures) > 0 {
		fmt.Printf("\n%d disagreements with versions.env or the controllers' go.mod:\n", len(c.failures))
		for _, f := range c.failures {
			fmt.Println("  " + f)
		}
		os.Exit(1)
	}
	fmt.Println("\nversions.env is what Flux " + need("FLUX") + " ships; the oracles build with the controllers' versions")
}

func must2(g GoMod, err error) GoMod {
	if err != nil {
		fmt.Fprintln(os.Stderr, "pincheck:", err)
		os.Exit(2)
	}
	return g
}
