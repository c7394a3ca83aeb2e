// Command yamlvectors writes conformance vectors for the YAML 1.1 re-read that follows
// postBuild substitution: values a var can carry into a manifest as kustomize prints it,
// each run through Flux's own code. One JSON vector per line on standard output:
//
//	go run ./yamlvectors > ../testdata/conformance/yaml-reread.jsonl
//
// (scripts/gen-yaml-vectors does exactly that.) The schema is the `flux` mode of
// testdata/conformance/README.md, with three more fields: `placement` (where the var sits),
// `value` (what V holds) and `object` (the object SubstituteVariables leaves, as JSON) or
// `object_error`.
//
// What runs, as kustomize-controller runs it (fluxcd/pkg/kustomize v1.35.6,
// kustomize_varsub.go SubstituteVariables): the template object is loaded as a kustomize
// resource and printed with res.AsYAML() (MarshalJSON, then sigs.k8s.io/yaml JSONToYAML:
// the text `kustomize build` prints, and the text Flux substitutes); varSubstitution runs
// envsubst.Eval (github.com/fluxcd/pkg/envsubst v1.7.1) and sigs.k8s.io/yaml v1.6.0
// YAMLToJSON (go.yaml.in/yaml/v2 v2.4.x, YAML 1.1); the JSON goes back into the resource
// (res.UnmarshalJSON). varSubstitution is not exported, so its three steps are copied here
// (the var-name check, the strict mapping, YAMLToJSON); SubstituteVariables itself runs too,
// for the object and the error text, and the two must agree.
//
// "hand-written" placements are not kustomize prints (a print has no flow collection but
// `[]` and `{}`, and double-quotes only what needs escapes): they hold the var in flow
// collections and quoted or folded scalars, as a manifest file would.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"strings"

	"github.com/fluxcd/pkg/envsubst"
	generator "github.com/fluxcd/pkg/kustomize"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/provider"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/yaml"
)

type vector struct {
	ID          string            `json:"id"`
	Mode        string            `json:"mode"`
	Strict      bool              `json:"strict"`
	Placement   string            `json:"placement"`
	Value       string            `json:"value"`
	Input       string            `json:"input"`
	Vars        map[string]string `json:"vars"`
	OK          bool              `json:"ok"`
	Output      *string           `json:"output,omitempty"`
	Error       string            `json:"error,omitempty"`
	Object      json.RawMessage   `json:"object,omitempty"`
	ObjectError string            `json:"object_error,omitempty"`
}

// placement is where the var sits: either a template object (printed as kustomize prints
// it) or a hand-written text.
type placement struct {
	name     string
	object   map[string]interface{}
	text     string
	allValue bool // run every value here (else only `some`)
}

func configMap(data map[string]interface{}) map[string]interface{} {
	return map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]interface{}{"name": "cm"},
		"data":       data,
	}
}

func with(obj map[string]interface{}, key string, v interface{}) map[string]interface{} {
	obj[key] = v
	return obj
}

const lorem = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"

func placements() []placement {
	d := func(v string) map[string]interface{} { return configMap(map[string]interface{}{"k": v}) }
	return []placement{
		{name: "plain", object: d("${V}"), allValue: true},
		{name: "plain-prefix", object: d("pre-${V}"), allValue: true},
		{name: "plain-suffix", object: d("${V}-post"), allValue: true},
		{name: "plain-digit-prefix", object: d("1${V}"), allValue: true},
		{name: "plain-inner", object: d("a ${V} b")},
		{name: "plain-twice", object: d("${V}${V}")},
		{name: "single-quoted", object: d(" ${V}"), allValue: true},
		{name: "single-quoted-colon", object: d("${V}: x")},
		{name: "double-quoted", object: d("\t${V}"), allValue: true},
		{name: "double-quoted-end", object: d("${V}\t")},
		{name: "literal", object: d("${V}\n"), allValue: true},
		{name: "literal-strip", object: d("a\n${V}\nb")},
		{name: "literal-keep", object: d("a\n${V}\n\n")},
		{name: "literal-indent-indicator", object: d(" a\n${V}\n")},
		{name: "double-quoted-multiline", object: d("a \n${V}")},
		{name: "key", object: configMap(map[string]interface{}{"${V}": "x"}), allValue: true},
		{name: "key-quoted", object: configMap(map[string]interface{}{" ${V}": "x"})},
		{name: "key-and-value", object: configMap(map[string]interface{}{"${V}": "${V}"})},
		{name: "top-level-key", object: with(configMap(map[string]interface{}{"k": "v"}), "${V}", "x"), allValue: true},
		{name: "sequence-item", object: with(configMap(nil), "args", []interface{}{"${V}", "b"}), allValue: true},
		{name: "sequence-of-maps", object: with(configMap(nil), "items", []interface{}{map[string]interface{}{"name": "${V}", "v": 1}})},
		{name: "nested-label", object: map[string]interface{}{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]interface{}{"name": "cm", "labels": map[string]interface{}{"app": "${V}"}},
		}},
		{name: "name", object: map[string]interface{}{
			"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]interface{}{"name": "${V}"},
		}},
		{name: "long-plain-wrapped", object: d(lorem + " ${V} " + lorem)},
		{name: "long-single-quoted-wrapped", object: d(" " + lorem + " ${V} " + lorem)},
		{name: "long-double-quoted-wrapped", object: d("\t" + lorem + " ${V} " + lorem)},
		{name: "hand-written flow-sequence", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: [a, ${V}]\n", allValue: true},
		{name: "hand-written flow-sequence-first", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: [${V}, b]\n"},
		{name: "hand-written flow-mapping", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: {a: ${V}}\n", allValue: true},
		{name: "hand-written flow-mapping-key", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: {${V}: 1, b: 2}\n"},
		{name: "hand-written double-quoted", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: \"${V}\"\n", allValue: true},
		{name: "hand-written single-quoted", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: '${V}'\n"},
		{name: "hand-written folded", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: >\n    ${V}\n    next\n"},
		{name: "hand-written comment-after", text: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: ${V} # note\n"},
	}
}

// values a var can hold; Flux removes "\n" from every value (LoadVariables), so none has one.
// `all` runs in the main placements, `some` (one or two of each kind) in the others.
func values() (some, all []string) {
	some = []string{
		"yes", "No", "on", "y", "~", "null", "", "010", "08", "0x1F", "0o17", "1_000",
		"9223372036854775808", "-0.0", "1e3", ".5", "1e400", ".inf", ".nan", "190:20:30",
		"1:30", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "=", "<<", "-", "---", "...",
		"- a", "? a", ":", "a:", "a: b", "a #b", "#c", "[x]", "[x", "x]", "{x}", "}", "[a, b]",
		"{a: b}", "[a:]", "&a x", "*a", "!tag x", "!!int x", "!!binary aGk=", "|", "> a",
		"'", "\"", "it's", "%YAML 1.2", "@at", "`tick`", "\\", "\\/", "\\x41", "\\n",
		"\\\"", "\\L", " lead", "trail ", "\t", "a\tb", "\ta", "\r", "a\rb", "\r---\r",
		"\rb: c", "a\r- b", "\u0085", "a\u2028b", "\ufeff", "\u00a0", "é", "😀", "\u0001",
		"\ufffe", "<b> & c", "$$",
	}
	all = []string{
		// YAML 1.1 booleans and nulls.
		"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE",
		"false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "yES", "oN",
		"~", "null", "Null", "NULL", "nULL", "",
		// Integers in every YAML 1.1 (and Go ParseInt) form.
		"0", "00", "010", "017", "-017", "+017", "08", "09", "019", "0x1F", "0X1F", "0x1f",
		"-0x1F", "+0x1F", "0o17", "0O17", "0b101", "0B101", "-0b101", "1_000", "-1_000",
		"0x_1F", "1__0", "_1", "1_", "0x", "0b", "0o", "0b2", "0o8",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551615", "18446744073709551616",
		"0x7FFFFFFFFFFFFFFF", "0xFFFFFFFFFFFFFFFF", "0x10000000000000000",
		// Floats.
		"1e3", "1E3", "1e+3", "1e-3", "1.5e3", ".5", "-.5", "+.5", "5.", "1.0", "1.50",
		"-0", "-0.0", "+0", "0.", "-.0", "1e21", "1e20", "1e-7", "0.000001", "1e400",
		"1e-400", "123456789012345678", "3.141592653589793238", "685_230.15", "1._5",
		".inf", ".Inf", ".INF", "-.inf", "+.inf", ".nan", ".NaN", ".NAN", "inf", "nan",
		"Infinity", ".infinity",
		// Sexagesimal (YAML 1.1 base 60).
		"190:20:30", "190:20:30.15", "-190:20:30", "1:30", "12:30", "01:30", "1:60",
		"1:30:00", "0:0",
		// Timestamps.
		"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
		"2001-12-15T02:59:43.1Z", "2001-2-3", "2001-12-14T21:59", "2001-13-14",
		// Special keys and markers.
		"=", "<<", "-", "--", "---", "...", "--- a", "... a", "- a", "-a", "- ", "? a",
		"?a", "?", ":", ": a", "a:", "a:b", "a: b", "a: b: c", "a :b", "a, b: c",
		// Comments, flow indicators.
		"a #b", "a#b", "#c", "# c", "x: y # c", "[x]", "[x", "x]", "{x}", "{x", "x}",
		"[a, b]", "{a: b}", "{a: 1, b: [2]}", "[]", "{}", "]", "}", "[a]b", "x, y", ",",
		"a,b", "[a, b:]", "[a:]", "{a:}", "[a: b]", "{a, b}",
		// Anchors, aliases, tags.
		"&a x", "&a", "*a", "*", "&", "!tag x", "!", "!!str 1", "!!int 1", "!!int x",
		"!!binary aGk=", "!!binary x", "!!float 1", "!!bool yes", "!!null", "!!null x",
		"!!timestamp 2001-12-14", "!!timestamp x", "!<tag:yaml.org,2002:str> 1",
		"!!map", "!!seq", "&a [1]",
		// Block indicators, quotes.
		"|", "|-", ">", "> a", "| a", "'q'", "'", "''", "\"", "\"dq\"", "it's", "a\"b",
		// Directives and other indicators.
		"%pct", "%YAML 1.2", "%YAML 1.1", "%TAG ! x", "@at", "`tick`",
		// Backslash escapes (only double-quoted scalars read them).
		"\\", "\\/", "\\x41", "\\u00e9", "\\n", "\\t", "\\\"", "\\N", "\\_", "\\L", "\\P",
		"\\e", "\\0", "\\U0001F600", "\\z", "\\ ", "\\\\", "\\x4", "\\u12",
		// White space and line breaks ("\r", NEL, LS, PS are breaks to YAML 1.1).
		" lead", "trail ", "  ", "\t", "a\tb", "\ta", "a\t", "\t#c", "a\t#c", "\r", "a\rb",
		"\r---\r", "\r...\r", "\rb: c", "a\r  b", "a\r- b", "\u0085", "a\u0085b", "\u2028",
		"a\u2028b", "\u2029", "a\u2029b", "a\r\rb",
		// Other characters.
		"\ufeff", "\ufeffa", "\u00a0", "a\u00a0", "\u200b", "é", "日本", "😀", "\u0001",
		"\u007f", "\u0080", "\u009f", "\ufffe", "\uffff", "<b> & c", "$", "$$", "${X}",
		"%", "@", "`",
	}
	long := []string{
		strings.Repeat("a", 100),
		strings.Repeat("word ", 40),
		strings.Repeat("x", 1100), // past yaml.v2's 1024-character simple key
		"a: " + strings.Repeat("b", 100),
		strings.Repeat("9", 400),
	}
	all = append(all, long...)
	return some, all
}

var varsubRegex = regexp.MustCompile(`^[_[:alpha:]][_[:alpha:][:digit:]]*$`)

// varSubstitution is kustomize_varsub.go varSubstitution (unexported there), step for step.
func varSubstitution(data []byte, vars map[string]string, strict bool) ([]byte, error) {
	for v := range vars {
		if !varsubRegex.MatchString(v) {
			return nil, fmt.Errorf("'%s' var name is invalid, must match '%s'", v, varsubRegex.String())
		}
	}
	output, err := envsubst.Eval(string(data), func(s string) (string, bool) {
		if strict {
			v, exists := vars[s]
			return v, exists
		}
		return vars[s], true
	})
	if err != nil {
		return nil, fmt.Errorf("variable substitution failed: %w", err)
	}
	jsonData, err := yaml.YAMLToJSON([]byte(output))
	if err != nil {
		return nil, fmt.Errorf("YAMLToJSON: %w", err)
	}
	return jsonData, nil
}

func main() {
	factory := provider.NewDefaultDepProvider().GetResourceFactory()
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	some, all := values()
	n := 0
	for _, p := range placements() {
		input := p.text
		if p.object != nil {
			b, err := json.Marshal(p.object)
			check(err)
			res, err := factory.FromBytes(b)
			check(err)
			y, err := res.AsYAML()
			check(err)
			input = string(y)
		}
		vals := some
		if p.allValue {
			vals = all
		}
		for _, v := range vals {
			n++
			vars := map[string]string{"V": v}
			vec := vector{
				ID:        fmt.Sprintf("yaml-%05d", n),
				Mode:      "flux",
				Strict:    true,
				Placement: p.name,
				Value:     v,
				Input:     input,
				Vars:      vars,
			}
			out, err := varSubstitution([]byte(input), vars, true)
			if err != nil {
				// SubstituteVariables wraps varSubstitution's error so.
				vec.Error = "envsubst error: " + err.Error()
			} else {
				vec.OK = true
				s := string(out)
				vec.Output = &s
			}
			if vec.OK && p.object != nil {
				// SubstituteVariables: res.UnmarshalJSON(jsonData). Recorded only where the
				// object differs from the JSON (hand-written inputs do not load: kustomize
				// reads `${V}` in a flow collection as a flow mapping, so they have no object).
				obj, err := unmarshalInto(factory, input, out)
				if err != nil {
					vec.ObjectError = "envsubst error: UnmarshalJSON: " + err.Error()
				} else if !sameJSON(obj, out) {
					vec.Object = obj
				}
			}
			if p.object != nil {
				// The copy of varSubstitution must agree with SubstituteVariables itself.
				obj, err := substituteVariables(factory, input, v)
				switch {
				case err != nil && vec.OK && vec.ObjectError == "":
					check(fmt.Errorf("%s: SubstituteVariables failed (%v), the copy did not", vec.ID, err))
				case err != nil && !vec.OK && err.Error() != vec.Error:
					check(fmt.Errorf("%s: error texts differ: %q vs %q", vec.ID, vec.Error, err.Error()))
				case err == nil && (!vec.OK || !sameJSON(obj, out)) != (vec.Object != nil):
					check(fmt.Errorf("%s: SubstituteVariables gave %s, the copy %q %s", vec.ID, obj, vec.Error, vec.Object))
				}
			}
			check(enc.Encode(vec))
		}
	}
	fmt.Fprintf(os.Stderr, "yamlvectors: %d vectors\n", n)
}

// unmarshalInto loads input as a kustomize resource and sets it from JSON, as
// SubstituteVariables does with varSubstitution's output (res.UnmarshalJSON).
func unmarshalInto(factory *resource.Factory, input string, out []byte) (json.RawMessage, error) {
	res, err := factory.FromBytes([]byte(input))
	if err != nil {
		return nil, fmt.Errorf("loading the input: %w", err)
	}
	if err := res.UnmarshalJSON(out); err != nil {
		return nil, err
	}
	return res.MarshalJSON()
}

// substituteVariables runs Flux's SubstituteVariables on the printed input with the inline
// var V (dry run: no cluster to read var sources from) and returns the object it leaves.
func substituteVariables(factory *resource.Factory, input, value string) (json.RawMessage, error) {
	res, err := factory.FromBytes([]byte(input))
	if err != nil {
		return nil, fmt.Errorf("loading the input: %w", err)
	}
	ks := unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]interface{}{"name": "k", "namespace": "flux-system"},
		"spec": map[string]interface{}{
			"postBuild": map[string]interface{}{
				"substitute": map[string]interface{}{"V": value},
			},
		},
	}}
	out, err := generator.SubstituteVariables(context.Background(), nil, ks, res,
		generator.SubstituteWithDryRun(true), generator.SubstituteWithStrict(true))
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, fmt.Errorf("substitution skipped")
	}
	b, err := out.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("MarshalJSON: %w", err)
	}
	return b, nil
}

// sameJSON tells whether two JSON texts hold the same value (numbers compared exactly).
func sameJSON(a, b []byte) bool {
	var x, y interface{}
	for _, t := range []struct {
		text []byte
		into *interface{}
	}{{a, &x}, {b, &y}} {
		d := json.NewDecoder(bytes.NewReader(t.text))
		d.UseNumber()
		if err := d.Decode(t.into); err != nil {
			return false
		}
	}
	return sameValue(x, y)
}

func sameValue(x, y interface{}) bool {
	switch a := x.(type) {
	case map[string]interface{}:
		b, ok := y.(map[string]interface{})
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []interface{}:
		b, ok := y.([]interface{})
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := y.(json.Number)
		if !ok {
			return false
		}
		// Exact decimal comparison; the sign of a zero counts.
		p, _, err1 := big.ParseFloat(string(a), 10, 4096, big.ToNearestEven)
		q, _, err2 := big.ParseFloat(string(b), 10, 4096, big.ToNearestEven)
		return err1 == nil && err2 == nil && p.Cmp(q) == 0 && p.Signbit() == q.Signbit()
	default:
		return x == y
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "yamlvectors: %v\n", err)
		os.Exit(1)
	}
}
