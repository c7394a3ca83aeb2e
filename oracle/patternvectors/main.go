// Command patternvectors writes envsubst conformance vectors for the shell patterns of the
// trim operators (`${V#p}`, `${V##p}`, `${V%p}`, `${V%%p}`), each run through
// github.com/fluxcd/pkg/envsubst v1.7.1 (its own `path` matcher, where `*` and `?` match `/`):
//
//	go run ./patternvectors > ../testdata/conformance/envsubst-patterns.jsonl
//
// (scripts/gen-pattern-vectors does exactly that.) The schema is the `raw` mode of
// testdata/conformance/README.md (non-strict: every name reads as set). Values and patterns
// are drawn (fixed seed) from alphabets holding `/`, stars, question marks, classes,
// negations, ranges, escapes, a multi-byte character and malformed pieces.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"unicode/utf8"

	"github.com/fluxcd/pkg/envsubst"
)

func main() {
	r := rand.New(rand.NewSource(27))
	valAlpha := []string{"a", "b", "c", "/", ".", "-", "é", "]", "[", "*", "?", "\\", "^"}
	patAlpha := []string{"a", "b", "/", ".", "*", "*", "?", "[a-c]", "[^/]", "[/]", "[", "]", "\\*", "\\", "[^a]", "[\\]]", "é", "-", "^", "[é-ê]"}
	ops := []string{"#", "##", "%", "%%"}
	fixed := [][3]string{
		{"path/to/file", "##", "*/"}, {"a/b/c", "%%", "/*"}, {"/abc", "#", "?"},
		{"/path/to/file.tar.gz", "##", "*."}, {"/path/to/file.tar.gz", "#", "*/"},
		{"/path/to/file.tar.gz", "%", "/*"}, {"a/b/c", "%", "/*"}, {"a/b/c", "#", "*/"},
		{"a/b/c", "##", "?/"}, {"x/y", "%", "?"}, {"a/b", "#", "[/a]"}, {"a/b", "%%", "[^a]*"},
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	n := 0
	emit := func(v, op, p string) {
		input := "${V" + op + p + "}"
		vars := map[string]string{"V": v}
		out, err := envsubst.Eval(input, func(k string) (string, bool) { return vars[k], true })
		rec := map[string]interface{}{
			"id": fmt.Sprintf("pattern-%04d", n), "mode": "raw", "strict": false,
			"input": input, "vars": vars, "ok": err == nil,
		}
		if err == nil {
			rec["output"] = out
			if !utf8.ValidString(out) {
				rec["output_base64"] = base64.StdEncoding.EncodeToString([]byte(out))
			}
		} else {
			rec["error"] = err.Error()
		}
		n++
		enc.Encode(rec)
	}
	for _, f := range fixed {
		emit(f[0], f[1], f[2])
	}
	for n < 1500 {
		v := ""
		for i := r.Intn(7); i > 0; i-- {
			v += valAlpha[r.Intn(len(valAlpha))]
		}
		p := ""
		for i := 1 + r.Intn(4); i > 0; i-- {
			p += patAlpha[r.Intn(len(patAlpha))]
		}
		emit(v, ops[r.Intn(len(ops))], p)
	}
}
