package main

import (
	"encoding/base64"
	"fmt"
	"go/ast"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// A small evaluator of the literal setup of kustomize-controller's tests: the test's own
// objects (a Flux Kustomization, ConfigMaps and Secrets created on the cluster, the files of
// the artifact) are read from its syntax, so a new release's tests are read as written.
// Only what those tests use is known: literals, composite literals, `&`, local variables,
// selectors of them, function literals called with arguments, fmt.Sprintf, []byte(...),
// and the test helpers randStringRunes (a fixed string per call) and
// testServer.ArtifactFromFiles / ArtifactFromDir (recorded).

// structVal is a struct literal: its type's name and its fields by Go name.
type structVal struct {
	typ    string
	fields map[string]interface{}
}

// bytesVal is a []byte(...) conversion (a Secret's data).
type bytesVal string

// funcVal is a function literal with the variables it closes over.
type funcVal struct {
	lit *ast.FuncLit
	env map[string]interface{}
}

var objectMetaFields = map[string]bool{"Name": true, "Namespace": true, "Labels": true, "Annotations": true}

// artifact is what a test serves as the GitRepository's artifact.
type artifact struct {
	dir   string            // testdata folder (ArtifactFromDir)
	files map[string]string // or files (ArtifactFromFiles)
}

type evaluator struct {
	g       *goFile
	env     map[string]interface{}
	rand    int
	created []interface{} // k8sClient.Create's objects, in order
	served  []artifact
}

func newEvaluator(g *goFile) *evaluator {
	return &evaluator{g: g, env: map[string]interface{}{}}
}

func (ev *evaluator) errorf(n ast.Node, format string, args ...interface{}) error {
	return fmt.Errorf("%s %s: %s", ev.g.path[strings.LastIndex(ev.g.path, "/")+1:], ev.g.where(n), fmt.Sprintf(format, args...))
}

// run walks a function body's statements in order (and the bodies of t.Run closures),
// binding variables and recording created objects and served artifacts; a statement it
// cannot evaluate is skipped (its variables stay unbound).
func (ev *evaluator) run(body *ast.BlockStmt) {
	for _, st := range body.List {
		switch s := st.(type) {
		case *ast.AssignStmt:
			ev.assign(s)
		case *ast.DeclStmt:
			if gd, ok := s.Decl.(*ast.GenDecl); ok {
				for _, spec := range gd.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok {
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								if v, err := ev.eval(vs.Values[i]); err == nil {
									ev.env[n.Name] = v
								}
							}
						}
					}
				}
			}
		case *ast.ExprStmt:
			if c, ok := s.X.(*ast.CallExpr); ok {
				ev.call(c)
			}
		}
	}
}

// call records k8sClient.Create (also inside g.Expect(...)) and runs t.Run closures.
func (ev *evaluator) call(c *ast.CallExpr) {
	ast.Inspect(c, func(n ast.Node) bool {
		inner, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := inner.Fun.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "k8sClient" && sel.Sel.Name == "Create" && len(inner.Args) >= 2 {
				if v, err := ev.eval(inner.Args[1]); err == nil {
					// As created: later changes to the variable are not this object.
					ev.created = append(ev.created, deepCopy(v))
				}
				return false
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "t" && sel.Sel.Name == "Run" && len(inner.Args) == 2 {
				if fl, ok := inner.Args[1].(*ast.FuncLit); ok {
					ev.run(fl.Body)
				}
				return false
			}
		}
		return true
	})
}

func (ev *evaluator) assign(s *ast.AssignStmt) {
	// err = k8sClient.Create(ctx, obj)
	for _, r := range s.Rhs {
		if c, ok := r.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Create" {
				ev.call(c)
				return
			}
		}
	}
	// artifact, err := testServer.ArtifactFromFiles(...) / ArtifactFromDir(...)
	if len(s.Rhs) == 1 {
		if c, ok := s.Rhs[0].(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "ArtifactFrom") {
				if a, err := ev.artifact(sel.Sel.Name, c); err == nil {
					ev.served = append(ev.served, a)
				}
				return
			}
		}
	}
	if len(s.Lhs) != len(s.Rhs) {
		return
	}
	for i, lhs := range s.Lhs {
		v, err := ev.eval(s.Rhs[i])
		if err != nil {
			continue
		}
		switch l := lhs.(type) {
		case *ast.Ident:
			ev.env[l.Name] = v
		case *ast.SelectorExpr:
			// x.Spec = ..., x.Spec.Field = ...: set the field of the struct held.
			if target, err := ev.eval(l.X); err == nil {
				if sv, ok := target.(*structVal); ok {
					// obj.Name, obj.Namespace: fields of the embedded ObjectMeta.
					if _, own := sv.fields[l.Sel.Name]; !own && objectMetaFields[l.Sel.Name] {
						md, ok := sv.fields["ObjectMeta"].(*structVal)
						if !ok {
							md = &structVal{typ: "metav1.ObjectMeta", fields: map[string]interface{}{}}
							sv.fields["ObjectMeta"] = md
						}
						md.fields[l.Sel.Name] = v
						continue
					}
					sv.fields[l.Sel.Name] = v
				}
			}
		}
	}
}

func (ev *evaluator) artifact(name string, c *ast.CallExpr) (artifact, error) {
	if len(c.Args) == 0 {
		return artifact{}, ev.errorf(c, "no arguments")
	}
	v, err := ev.eval(c.Args[0])
	if err != nil {
		return artifact{}, err
	}
	if name == "ArtifactFromDir" {
		s, ok := v.(string)
		if !ok {
			return artifact{}, ev.errorf(c, "not a folder")
		}
		return artifact{dir: s}, nil
	}
	files := map[string]string{}
	list, ok := v.([]interface{})
	if !ok && v != nil {
		return artifact{}, ev.errorf(c, "not a list of files")
	}
	for _, f := range list {
		sv, ok := f.(*structVal)
		if !ok {
			return artifact{}, ev.errorf(c, "not a testserver.File")
		}
		n, _ := sv.fields["Name"].(string)
		b, _ := sv.fields["Body"].(string)
		files[n] = b
	}
	return artifact{files: files}, nil
}

var sprintfArg = regexp.MustCompile(`%(\[(\d+)\])?[sdv]`)

func (ev *evaluator) eval(e ast.Expr) (interface{}, error) {
	switch x := e.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			return strconv.Unquote(x.Value)
		case token.INT:
			return strconv.ParseInt(x.Value, 0, 64)
		}
	case *ast.Ident:
		switch x.Name {
		case "true", "false":
			return x.Name == "true", nil
		case "nil":
			return nil, nil
		}
		if v, ok := ev.env[x.Name]; ok {
			return v, nil
		}
		if s, ok := ev.g.consts[x.Name]; ok {
			return s, nil
		}
	case *ast.ParenExpr:
		return ev.eval(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.AND {
			return ev.eval(x.X)
		}
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			a, err := ev.eval(x.X)
			if err != nil {
				return nil, err
			}
			b, err := ev.eval(x.Y)
			if err != nil {
				return nil, err
			}
			as, ok1 := a.(string)
			bs, ok2 := b.(string)
			if ok1 && ok2 {
				return as + bs, nil
			}
		}
	case *ast.SelectorExpr:
		if v, err := ev.eval(x.X); err == nil {
			if sv, ok := v.(*structVal); ok {
				if f, ok := sv.fields[x.Sel.Name]; ok {
					return f, nil
				}
				return nil, ev.errorf(x, "no field %s", x.Sel.Name)
			}
		}
	case *ast.FuncLit:
		env := map[string]interface{}{}
		for k, v := range ev.env {
			env[k] = v
		}
		return &funcVal{lit: x, env: env}, nil
	case *ast.CompositeLit:
		return ev.composite(x, x.Type)
	case *ast.CallExpr:
		return ev.evalCall(x)
	}
	return nil, ev.errorf(e, "cannot evaluate %T", e)
}

func typeName(t ast.Expr) string {
	switch x := t.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return typeName(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return typeName(x.X)
	case *ast.ArrayType:
		return "[]" + typeName(x.Elt)
	case *ast.MapType:
		return "map"
	}
	return ""
}

// composite evaluates a composite literal; typ is its type (or its enclosing slice's
// element type when elided).
func (ev *evaluator) composite(x *ast.CompositeLit, typ ast.Expr) (interface{}, error) {
	if x.Type != nil {
		typ = x.Type
	}
	switch t := typ.(type) {
	case *ast.ArrayType:
		out := []interface{}{}
		for _, el := range x.Elts {
			var v interface{}
			var err error
			if lit, ok := el.(*ast.CompositeLit); ok {
				v, err = ev.composite(lit, t.Elt)
			} else {
				v, err = ev.eval(el)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *ast.MapType:
		out := map[string]interface{}{}
		for _, el := range x.Elts {
			kv := el.(*ast.KeyValueExpr)
			k, err := ev.eval(kv.Key)
			if err != nil {
				return nil, err
			}
			var v interface{}
			if lit, ok := kv.Value.(*ast.CompositeLit); ok {
				v, err = ev.composite(lit, t.Value)
			} else {
				v, err = ev.eval(kv.Value)
			}
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, ev.errorf(kv, "a key that is not a string")
			}
			out[ks] = v
		}
		return out, nil
	}
	sv := &structVal{typ: typeName(typ), fields: map[string]interface{}{}}
	if st, ok := typ.(*ast.StarExpr); ok {
		sv.typ = typeName(st.X)
	}
	for _, el := range x.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, ev.errorf(el, "a struct literal without keys")
		}
		v, err := ev.eval(kv.Value)
		if err != nil {
			// A field the evaluator cannot read (a duration, a typed constant) is left out:
			// the cases keep only the fields of a render.
			continue
		}
		sv.fields[kv.Key.(*ast.Ident).Name] = v
	}
	return sv, nil
}

func (ev *evaluator) evalCall(c *ast.CallExpr) (interface{}, error) {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		if f.Name == "randStringRunes" {
			ev.rand++
			return fmt.Sprintf("rnd%02d", ev.rand), nil
		}
		if v, ok := ev.env[f.Name].(*funcVal); ok {
			return ev.apply(v, c)
		}
	case *ast.ArrayType:
		if id, ok := f.Elt.(*ast.Ident); ok && id.Name == "byte" && len(c.Args) == 1 {
			v, err := ev.eval(c.Args[0])
			if err != nil {
				return nil, err
			}
			s, ok := v.(string)
			if !ok {
				return nil, ev.errorf(c, "[]byte of a non-string")
			}
			return bytesVal(s), nil
		}
	case *ast.SelectorExpr:
		// obj.DeepCopy()
		if f.Sel.Name == "DeepCopy" && len(c.Args) == 0 {
			v, err := ev.eval(f.X)
			if err != nil {
				return nil, err
			}
			return deepCopy(v), nil
		}
		if x, ok := f.X.(*ast.Ident); ok && x.Name == "fmt" && f.Sel.Name == "Sprintf" && len(c.Args) > 0 {
			format, err := ev.eval(c.Args[0])
			if err != nil {
				return nil, err
			}
			var args []string
			for _, a := range c.Args[1:] {
				v, err := ev.eval(a)
				if err != nil {
					return nil, err
				}
				args = append(args, fmt.Sprint(v))
			}
			n := 0
			var bad error
			out := sprintfArg.ReplaceAllStringFunc(format.(string), func(m string) string {
				i := n
				if sub := sprintfArg.FindStringSubmatch(m); sub[2] != "" {
					i, _ = strconv.Atoi(sub[2])
					i--
				} else {
					n++
				}
				if i < 0 || i >= len(args) {
					bad = ev.errorf(c, "Sprintf argument %d of %d", i+1, len(args))
					return m
				}
				return args[i]
			})
			return out, bad
		}
	}
	return nil, ev.errorf(c, "cannot call %s", typeName(c.Fun))
}

// apply calls a function literal: its parameters bound to the arguments, the value of its
// return statement.
func (ev *evaluator) apply(f *funcVal, c *ast.CallExpr) (interface{}, error) {
	inner := &evaluator{g: ev.g, env: map[string]interface{}{}, rand: ev.rand}
	for k, v := range f.env {
		inner.env[k] = v
	}
	i := 0
	for _, field := range f.lit.Type.Params.List {
		for _, name := range field.Names {
			if i >= len(c.Args) {
				return nil, ev.errorf(c, "too few arguments")
			}
			v, err := ev.eval(c.Args[i])
			if err != nil {
				return nil, err
			}
			inner.env[name.Name] = v
			i++
		}
	}
	for _, st := range f.lit.Body.List {
		switch s := st.(type) {
		case *ast.AssignStmt:
			inner.assign(s)
		case *ast.ReturnStmt:
			if len(s.Results) == 1 {
				v, err := inner.eval(s.Results[0])
				ev.rand = inner.rand
				return v, err
			}
		}
	}
	return nil, ev.errorf(c, "no single return value")
}

// toJSON turns an evaluated value into what the API reads: struct fields by their JSON
// names (the Go name with its first letter lowered; ObjectMeta is metadata, TypeMeta goes),
// []byte as base64, fields listed in drop left out.
func toJSON(v interface{}, drop map[string]bool) interface{} {
	switch x := v.(type) {
	case *structVal:
		out := map[string]interface{}{}
		for k, f := range x.fields {
			if drop[k] || k == "TypeMeta" {
				continue
			}
			name := strings.ToLower(k[:1]) + k[1:]
			if k == "ObjectMeta" {
				name = "metadata"
			}
			if k == "APIVersion" {
				name = "apiVersion"
			}
			out[name] = toJSON(f, drop)
		}
		return out
	case []interface{}:
		out := []interface{}{}
		for _, e := range x {
			out = append(out, toJSON(e, drop))
		}
		return out
	case map[string]interface{}:
		out := map[string]interface{}{}
		for k, e := range x {
			out[k] = toJSON(e, drop)
		}
		return out
	case bytesVal:
		return base64.StdEncoding.EncodeToString([]byte(x))
	}
	return v
}

func deepCopy(v interface{}) interface{} {
	switch x := v.(type) {
	case *structVal:
		c := &structVal{typ: x.typ, fields: map[string]interface{}{}}
		for k, f := range x.fields {
			c.fields[k] = deepCopy(f)
		}
		return c
	case []interface{}:
		c := make([]interface{}, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	case map[string]interface{}:
		c := map[string]interface{}{}
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	}
	return v
}
