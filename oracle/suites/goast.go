package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
)

// A Go test file read as syntax, so that its tables are read as the test wrote them (a new
// Flux release's new cases are taken without editing the generator).
type goFile struct {
	path string
	fset *token.FileSet
	file *ast.File
	// consts holds the file's string constants (`const digest = "sha256:..."`).
	consts map[string]string
}

func parseGo(path string) (*goFile, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	g := &goFile{path: path, fset: fset, file: f, consts: map[string]string{}}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if s, err := g.str(vs.Values[i]); err == nil {
						g.consts[name.Name] = s
					}
				}
			}
		}
		return true
	})
	return g, nil
}

// where names a node's place: `line N` (of the file the caller names), or file:line in
// an error message.
func (g *goFile) where(n ast.Node) string {
	return fmt.Sprintf("line %d", g.fset.Position(n.Pos()).Line)
}

// fn is the top-level function named name.
func (g *goFile) fn(name string) *ast.FuncDecl {
	for _, d := range g.file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Name.Name == name {
			return f
		}
	}
	return nil
}

// tests lists the file's Test functions in order.
func (g *goFile) tests() []*ast.FuncDecl {
	var out []*ast.FuncDecl
	for _, d := range g.file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && strings.HasPrefix(f.Name.Name, "Test") {
			out = append(out, f)
		}
	}
	return out
}

// str evaluates a string expression: a literal, a constant of the file, or a `+` of those.
func (g *goFile) str(e ast.Expr) (string, error) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			return strconv.Unquote(x.Value)
		}
	case *ast.Ident:
		if s, ok := g.consts[x.Name]; ok {
			return s, nil
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			a, err := g.str(x.X)
			if err != nil {
				return "", err
			}
			b, err := g.str(x.Y)
			if err != nil {
				return "", err
			}
			return a + b, nil
		}
	case *ast.ParenExpr:
		return g.str(x.X)
	}
	return "", fmt.Errorf("%s %s: not a string constant", filepath.Base(g.path), g.where(e))
}

// strs evaluates a []string expression: nil, a literal, or strings.Split of constants.
func (g *goFile) strs(e ast.Expr) ([]string, error) {
	switch x := e.(type) {
	case *ast.Ident:
		if x.Name == "nil" {
			return nil, nil
		}
	case *ast.CompositeLit:
		out := []string{}
		for _, el := range x.Elts {
			s, err := g.str(el)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case *ast.CallExpr:
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Split" && len(x.Args) == 2 {
			s, err := g.str(x.Args[0])
			if err != nil {
				return nil, err
			}
			sep, err := g.str(x.Args[1])
			if err != nil {
				return nil, err
			}
			return strings.Split(s, sep), nil
		}
	}
	return nil, fmt.Errorf("%s: not a []string constant", g.where(e))
}

// strMap evaluates a map[string]string literal.
func (g *goFile) strMap(e ast.Expr) (map[string]string, error) {
	out := map[string]string{}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
			return out, nil
		}
		return nil, fmt.Errorf("%s: not a map literal", g.where(e))
	}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("%s: not a key: value", g.where(el))
		}
		k, err := g.str(kv.Key)
		if err != nil {
			return nil, err
		}
		v, err := g.str(kv.Value)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// boolean evaluates `true` or `false`.
func (g *goFile) boolean(e ast.Expr) (bool, error) {
	if id, ok := e.(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
		return id.Name == "true", nil
	}
	return false, fmt.Errorf("%s: not a bool constant", g.where(e))
}

// row is one element of a test table: its keyed fields, and where it is.
type row struct {
	fields map[string]ast.Expr
	at     string
}

// table finds, inside fn, the composite literals of a struct type whose elements are keyed
// struct literals with a field named key, and gives their rows in order.
func (g *goFile) table(fn *ast.FuncDecl, key string) []row {
	var rows []row
	ast.Inspect(fn, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if _, isArray := lit.Type.(*ast.ArrayType); !isArray {
			return true
		}
		found := false
		for _, el := range lit.Elts {
			inner, ok := el.(*ast.CompositeLit)
			if !ok {
				continue
			}
			r := row{fields: map[string]ast.Expr{}, at: g.where(inner)}
			for _, f := range inner.Elts {
				if kv, ok := f.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok {
						r.fields[id.Name] = kv.Value
					}
				}
			}
			if _, ok := r.fields[key]; ok {
				rows = append(rows, r)
				found = true
			}
		}
		return !found
	})
	return rows
}

// calls lists, in order, the calls inside n to a function or method named name.
func calls(n ast.Node, name string) []*ast.CallExpr {
	var out []*ast.CallExpr
	ast.Inspect(n, func(x ast.Node) bool {
		c, ok := x.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch f := c.Fun.(type) {
		case *ast.Ident:
			if f.Name == name {
				out = append(out, c)
			}
		case *ast.SelectorExpr:
			if f.Sel.Name == name {
				out = append(out, c)
			}
		}
		return true
	})
	return out
}

// structs evaluates a slice of keyed struct literals whose fields are strings
// (`[]kustypes.Image{{Name: containerImage, NewTag: "v1"}}`) as maps keyed by the field
// names as JSON writes them (the first letter lowered); nil or a missing field is none.
func (g *goFile) structs(e ast.Expr) ([]map[string]string, error) {
	if e == nil {
		return nil, nil
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		if id, ok := e.(*ast.Ident); ok && id.Name == "nil" {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: not a slice literal", g.where(e))
	}
	var out []map[string]string
	for _, el := range lit.Elts {
		inner, ok := el.(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("%s: not a struct literal", g.where(el))
		}
		m := map[string]string{}
		for _, f := range inner.Elts {
			kv, ok := f.(*ast.KeyValueExpr)
			if !ok {
				return nil, fmt.Errorf("%s: not a keyed field", g.where(f))
			}
			s, err := g.str(kv.Value)
			if err != nil {
				return nil, err
			}
			name := kv.Key.(*ast.Ident).Name
			m[strings.ToLower(name[:1])+name[1:]] = s
		}
		out = append(out, m)
	}
	return out, nil
}
