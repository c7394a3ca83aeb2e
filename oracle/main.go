// Command oracle does, for one Flux Kustomization at a time, what source-controller and
// kustomize-controller do between the git checkout and the apply, with Flux's own libraries
// at the versions the controllers build with (versions.env; package reconcile). It is
// fluxsim's reference for the whole pipeline (a test tool: never part of the fluxsim binary).
//
// Input: JSON jobs (reconcile.Job), one per line, on standard input:
//
//	{"id": "...", "root": "/abs/checkout", "archive": {"ignore": "..."},
//	 "kustomization": {...}, "objects": [{...}], "strict": true}
//
// `root` is the git checkout when `archive` is given (the oracle applies source-controller's
// archive filter, the .sourceignore files and the GitRepository's spec.ignore, itself), else
// the artifact as unpacked; `kustomization` the Flux Kustomization object; `objects` the
// ConfigMaps and Secrets on the cluster, which postBuild.substituteFrom reads. Output: one
// JSON result per line, in the same order: {"id", "ok", "objects": [{"yaml", "object"}],
// "error"}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/fluxsim/oracle/reconcile"
)

func main() {
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	for {
		var j reconcile.Job
		if err := dec.Decode(&j); err == io.EOF {
			return
		} else if err != nil {
			fmt.Fprintf(os.Stderr, "oracle: reading a job: %v\n", err)
			os.Exit(2)
		}
		if err := out.Encode(reconcile.Do(j)); err != nil {
			fmt.Fprintf(os.Stderr, "oracle: writing a result: %v\n", err)
			os.Exit(2)
		}
	}
}
