// Command envsubstvectors runs envsubst conformance vectors (the schema of
// testdata/conformance/README.md) again through the pinned github.com/fluxcd/pkg/envsubst,
// keeping each vector's id, mode, strictness, input and vars: a vector whose result (ok,
// output, panic) is what the code gives now is written back as it was read, one that
// changed is written again with the new result (ok, output, output_base64, error, panic):
//
//	go run ./envsubstvectors < IN.jsonl > OUT.jsonl
//
// Mode `raw` is envsubst.Eval with the mapping the README describes; mode `flux` is
// fluxcd/pkg/kustomize kustomize_varsub.go `varSubstitution` (unexported; its three steps are
// written here as it writes them: the var-name check, envsubst.Eval, sigs.k8s.io/yaml
// YAMLToJSON). On standard error: how many vectors changed, and the first few.
// scripts/gen-envsubst-vectors regenerates testdata/conformance/envsubst-public.jsonl with it
// when the pinned envsubst moves.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/fluxcd/pkg/envsubst"
	"sigs.k8s.io/yaml"
)

// varsubRegex is kustomize_varsub.go's.
var varsubRegex = regexp.MustCompile("^[_[:alpha:]][_[:alpha:][:digit:]]*$")

func varSubstitution(data string, vars map[string]string, strict bool) (string, error) {
	for v := range vars {
		if !varsubRegex.MatchString(v) {
			return "", fmt.Errorf("'%s' var name is invalid, must match '%s'", v, varsubRegex)
		}
	}
	output, err := eval(data, vars, strict)
	if err != nil {
		return "", fmt.Errorf("variable substitution failed: %w", err)
	}
	jsonData, err := yaml.YAMLToJSON([]byte(output))
	if err != nil {
		return "", fmt.Errorf("YAMLToJSON: %w", err)
	}
	return string(jsonData), nil
}

func eval(data string, vars map[string]string, strict bool) (string, error) {
	return envsubst.Eval(data, func(s string) (string, bool) {
		if strict {
			v, exists := vars[s]
			return v, exists
		}
		return vars[s], true
	})
}

// run is one vector's result, a panic recovered as the controller's runtime recovers it.
func run(mode, input string, vars map[string]string, strict bool) (out string, err error, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			out, err, panicked = "", fmt.Errorf("panic: %v", r), true
		}
	}()
	if mode == "flux" {
		out, err = varSubstitution(input, vars, strict)
	} else {
		out, err = eval(input, vars, strict)
	}
	return out, err, false
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	changed := 0
	for in.Scan() {
		line := in.Bytes()
		var v map[string]any
		if err := json.Unmarshal(line, &v); err != nil {
			fmt.Fprintln(os.Stderr, "envsubstvectors:", err)
			os.Exit(2)
		}
		vars := map[string]string{}
		for k, x := range v["vars"].(map[string]any) {
			vars[k] = x.(string)
		}
		mode, _ := v["mode"].(string)
		input, _ := v["input"].(string)
		strict, _ := v["strict"].(bool)
		res, err, panicked := run(mode, input, vars, strict)
		now := map[string]any{"ok": err == nil}
		if err == nil {
			now["output"] = res
			if !utf8.ValidString(res) {
				now["output"] = strings.ToValidUTF8(res, "\uFFFD")
				now["output_base64"] = base64.StdEncoding.EncodeToString([]byte(res))
			}
		} else if panicked {
			now["panic"] = true
		}
		// A vector is unchanged when what a runner compares is: ok, the output (its bytes),
		// and whether it panicked. The error text is for information only.
		same := v["ok"] == now["ok"] && v["panic"] == now["panic"]
		if _, lossy := now["output_base64"]; lossy {
			// `output` holds a lossy copy of invalid UTF-8: the base64 field is the bytes.
			same = same && v["output_base64"] == now["output_base64"]
		} else if err == nil {
			same = same && v["output"] == now["output"] && v["output_base64"] == nil
		}
		if same {
			out.Write(line)
			out.WriteByte('\n')
			continue
		}
		changed++
		if changed <= 20 {
			fmt.Fprintf(os.Stderr, "changed %v: %q -> ok=%v %q %v\n", v["id"], input, err == nil, res, err)
		}
		for _, k := range []string{"ok", "output", "output_base64", "error", "panic"} {
			delete(v, k)
		}
		for k, x := range now {
			v[k] = x
		}
		if err != nil {
			v["error"] = err.Error()
		}
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			fmt.Fprintln(os.Stderr, "envsubstvectors:", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "envsubstvectors:", err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "%d vectors changed\n", changed)
}
