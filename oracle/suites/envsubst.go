package main

import (
	"encoding/base64"
	"fmt"
	"go/ast"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/fluxcd/pkg/envsubst"
	"github.com/fluxcd/pkg/envsubst/parse"
)

// envsubstVector is one vector of testdata/conformance/README.md's schema (mode `raw`),
// with where it comes from.
type envsubstVector struct {
	ID           string            `json:"id"`
	From         string            `json:"from"`
	Mode         string            `json:"mode"`
	Strict       bool              `json:"strict"`
	Input        string            `json:"input"`
	Vars         map[string]string `json:"vars"`
	OK           bool              `json:"ok"`
	Output       *string           `json:"output,omitempty"`
	OutputBase64 string            `json:"output_base64,omitempty"`
	Error        string            `json:"error,omitempty"`
	Panic        bool              `json:"panic,omitempty"`
}

// evalVector runs envsubst.Eval as the raw mode does: strict, a var is set when it is in
// vars; not strict, every name is set (to "" when absent), as Flux's non-strict mapping.
func evalVector(id, from, input string, vars map[string]string, strict bool) (v envsubstVector) {
	v = envsubstVector{ID: id, From: from, Mode: "raw", Strict: strict, Input: input, Vars: vars}
	defer func() {
		if r := recover(); r != nil {
			v.OK, v.Output, v.Error, v.Panic = false, nil, fmt.Sprintf("panic: %v", r), true
		}
	}()
	out, err := envsubst.Eval(input, func(s string) (string, bool) {
		if strict {
			x, ok := vars[s]
			return x, ok
		}
		return vars[s], true
	})
	if err != nil {
		v.Error = err.Error()
		return v
	}
	v.OK = true
	if !utf8.ValidString(out) {
		v.OutputBase64 = base64.StdEncoding.EncodeToString([]byte(out))
		out = strings.ToValidUTF8(out, "\uFFFD")
	}
	v.Output = &out
	return v
}

// envsubstSuite turns the test tables of fluxcd/pkg/envsubst into vectors made by its own
// Eval: TestExpand (not strict) and TestExpandStrict (eval_test.go), the helper calls of
// funcs_test.go written as the expressions that reach them, and every text of
// parse/parse_test.go's table evaluated with a value for each name it references.
func envsubstSuite(dir, version string) ([]envsubstVector, []entry, error) {
	var vectors []envsubstVector
	from := func(file, test string) string {
		return fmt.Sprintf("fluxcd/pkg/envsubst %s %s %s", version, file, test)
	}

	eval, err := parseGo(filepath.Join(dir, "eval_test.go"))
	if err != nil {
		return nil, nil, err
	}
	for _, t := range []struct {
		fn     string
		strict bool
	}{{"TestExpand", false}, {"TestExpandStrict", true}} {
		fn := eval.fn(t.fn)
		if fn == nil {
			return nil, nil, fmt.Errorf("eval_test.go has no %s", t.fn)
		}
		for i, r := range eval.table(fn, "input") {
			input, err := eval.str(r.fields["input"])
			if err != nil {
				return nil, nil, err
			}
			params, err := eval.strMap(r.fields["params"])
			if err != nil {
				return nil, nil, err
			}
			id := fmt.Sprintf("envsubst/%s/%03d", t.fn, i)
			vectors = append(vectors, evalVector(id, from("eval_test.go", t.fn+" "+r.at), input, params, t.strict))
		}
	}

	funcs, err := parseGo(filepath.Join(dir, "funcs_test.go"))
	if err != nil {
		return nil, nil, err
	}
	// Each helper as the expression that calls it (template.go evalFunc), V holding the
	// helper's first argument and the others written as the expression's arguments.
	helpers := []struct {
		name string
		expr func(args []string) string
	}{
		{"toLen", func([]string) string { return "${#V}" }},
		{"toLower", func([]string) string { return "${V,,}" }},
		{"toLowerFirst", func([]string) string { return "${V,}" }},
		{"toUpper", func([]string) string { return "${V^^}" }},
		{"toUpperFirst", func([]string) string { return "${V^}" }},
		{"toDefault", func(a []string) string { return "${V:-" + strings.Join(a, "") + "}" }},
		{"toSubstr", func(a []string) string { return "${V:" + strings.Join(a, ":") + "}" }},
	}
	for _, test := range funcs.tests() {
		for _, h := range helpers {
			for n, c := range calls(test, h.name) {
				var args []string
				for _, a := range c.Args {
					s, err := funcs.str(a)
					if err != nil {
						return nil, nil, err
					}
					args = append(args, s)
				}
				if len(args) == 0 {
					continue
				}
				id := fmt.Sprintf("envsubst/%s/%s/%d", test.Name.Name, h.name, n)
				vectors = append(vectors, evalVector(id,
					from("funcs_test.go", test.Name.Name+" "+h.name+" "+funcs.where(c)),
					h.expr(args[1:]), map[string]string{"V": args[0]}, false))
			}
		}
	}

	p, err := parseGo(filepath.Join(dir, "parse", "parse_test.go"))
	if err != nil {
		return nil, nil, err
	}
	var table *ast.CompositeLit
	ast.Inspect(p.file, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "tests" {
			table, _ = vs.Values[0].(*ast.CompositeLit)
		}
		return table == nil
	})
	if table == nil {
		return nil, nil, fmt.Errorf("parse_test.go has no tests table")
	}
	for i, el := range table.Elts {
		lit, ok := el.(*ast.CompositeLit)
		if !ok {
			continue
		}
		for _, f := range lit.Elts {
			kv, ok := f.(*ast.KeyValueExpr)
			if !ok || kv.Key.(*ast.Ident).Name != "Text" {
				continue
			}
			text, err := p.str(kv.Value)
			if err != nil {
				return nil, nil, err
			}
			vars := map[string]string{}
			if t, err := parse.Parse(text); err == nil {
				for _, name := range names(t.Root) {
					vars[name] = "v-" + name + "/x.y"
				}
			}
			id := fmt.Sprintf("envsubst/TestParse/%03d", i)
			vectors = append(vectors, evalVector(id, from("parse/parse_test.go", "TestParse "+p.where(lit)), text, vars, false))
		}
	}

	sort.SliceStable(vectors, func(i, j int) bool { return vectors[i].ID < vectors[j].ID })
	var entries []entry
	for _, v := range vectors {
		entries = append(entries, entry{Suite: "envsubst", ID: v.ID, From: v.From, Kind: "envsubst"})
	}
	return vectors, entries, nil
}

// names lists the parameters a parse tree reads, in order, once each.
func names(n parse.Node) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch x := n.(type) {
		case *parse.FuncNode:
			if !seen[x.Param] {
				seen[x.Param] = true
				out = append(out, x.Param)
			}
			for _, a := range x.Args {
				walk(a)
			}
		case *parse.ListNode:
			for _, c := range x.Nodes {
				walk(c)
			}
		}
	}
	walk(n)
	return out
}
