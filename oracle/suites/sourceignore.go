package main

import (
	"fmt"
	"go/ast"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"

	"github.com/fluxsim/oracle/reconcile"
)

// patternText is one gitignore line and the folder it is scoped to.
type patternText struct {
	Line   string   `json:"line"`
	Domain []string `json:"domain"`
}

// ignoreVector is one check of fluxcd/pkg/sourceignore, answered by its own code. Kinds:
//   - `pattern`: gitignore.ParsePattern(line, domain).Match(path, dir) is `result`
//     (NoMatch, Exclude or Include);
//   - `matcher`: a matcher of `patterns` (sourceignore.NewMatcher, or
//     NewDefaultMatcher(patterns, defaults) when `defaultMatcher`) matches path: `match`;
//   - `archive`: a checkout holding `files` (path -> content), archived as
//     source-controller archives it with spec.ignore `ignore`, keeps `archived`.
type ignoreVector struct {
	ID       string        `json:"id"`
	From     string        `json:"from"`
	Kind     string        `json:"kind"`
	Patterns []patternText `json:"patterns,omitempty"`
	// DefaultMatcher: NewDefaultMatcher(patterns, defaults) rather than NewMatcher.
	DefaultMatcher bool              `json:"defaultMatcher,omitempty"`
	Defaults       []string          `json:"defaults,omitempty"`
	Path           []string          `json:"path,omitempty"`
	Dir            bool              `json:"dir,omitempty"`
	Result         string            `json:"result,omitempty"`
	Match          *bool             `json:"match,omitempty"`
	Files          map[string]string `json:"files,omitempty"`
	Ignore         *string           `json:"ignore,omitempty"`
	Archived       []string          `json:"archived,omitempty"`
}

var matchResults = map[gitignore.MatchResult]string{
	gitignore.NoMatch: "NoMatch",
	gitignore.Exclude: "Exclude",
	gitignore.Include: "Include",
}

// sourceignoreSuite turns the tests of fluxcd/pkg/sourceignore (sourceignore_test.go, and
// the gitignore package's pattern_test.go and matcher_test.go) into vectors made by its
// own code.
func sourceignoreSuite(dir, version string) ([]ignoreVector, []entry, error) {
	var vs []ignoreVector
	from := func(file, test string) string {
		return fmt.Sprintf("fluxcd/pkg/sourceignore %s %s %s", version, file, test)
	}

	// gitignore/pattern_test.go and matcher_test.go: ParsePattern(...) then .Match(...),
	// or NewMatcher of the patterns parsed so far then .Match(...).
	for _, file := range []string{"gitignore/pattern_test.go", "gitignore/matcher_test.go"} {
		g, err := parseGo(filepath.Join(dir, file))
		if err != nil {
			return nil, nil, err
		}
		for _, test := range g.tests() {
			var parsed []patternText
			for _, c := range calls(test, "ParsePattern") {
				line, err := g.str(c.Args[0])
				if err != nil {
					return nil, nil, err
				}
				domain, err := g.strs(c.Args[1])
				if err != nil {
					return nil, nil, err
				}
				parsed = append(parsed, patternText{Line: line, Domain: domain})
			}
			matcher := len(calls(test, "NewMatcher")) > 0
			for n, c := range calls(test, "Match") {
				path, err := g.strs(c.Args[0])
				if err != nil {
					return nil, nil, err
				}
				isDir, err := g.boolean(c.Args[1])
				if err != nil {
					return nil, nil, err
				}
				v := ignoreVector{
					ID:   fmt.Sprintf("sourceignore/%s/%d", test.Name.Name, n),
					From: from(file, test.Name.Name+" "+g.where(c)),
					Path: path,
					Dir:  isDir,
				}
				if matcher {
					v.Kind, v.Patterns = "matcher", parsed
					m := gitignore.NewMatcher(patterns(parsed))
					match := m.Match(path, isDir)
					v.Match = &match
				} else {
					if len(parsed) != 1 {
						return nil, nil, fmt.Errorf("%s: %d patterns for one Match", g.where(c), len(parsed))
					}
					v.Kind, v.Patterns = "pattern", parsed
					v.Result = matchResults[patterns(parsed)[0].Match(path, isDir)]
				}
				vs = append(vs, v)
			}
		}
	}

	// sourceignore_test.go: the tables of TestReadPatterns (NewMatcher(ReadPatterns(...))),
	// TestVCSPatterns and TestDefaultPatterns (NewDefaultMatcher(patterns, domain)), each
	// `matches` and `mismatches` path a vector; TestLoadExcludePatterns's tree archived.
	g, err := parseGo(filepath.Join(dir, "sourceignore_test.go"))
	if err != nil {
		return nil, nil, err
	}
	for _, name := range []string{"TestReadPatterns", "TestVCSPatterns", "TestDefaultPatterns"} {
		fn := g.fn(name)
		if fn == nil {
			return nil, nil, fmt.Errorf("sourceignore_test.go has no %s", name)
		}
		for i, r := range g.table(fn, "name") {
			var domain []string
			if e, ok := r.fields["domain"]; ok {
				if domain, err = g.strs(e); err != nil {
					return nil, nil, err
				}
			}
			var ps []patternText
			if e, ok := r.fields["ignore"]; ok {
				text, err := g.str(e)
				if err != nil {
					return nil, nil, err
				}
				for _, line := range readLines(text) {
					ps = append(ps, patternText{Line: line, Domain: domain})
				}
			}
			if e, ok := r.fields["patterns"]; ok {
				for _, c := range calls(e, "ParsePattern") {
					line, err := g.str(c.Args[0])
					if err != nil {
						return nil, nil, err
					}
					d, err := g.strs(c.Args[1])
					if err != nil {
						return nil, nil, err
					}
					ps = append(ps, patternText{Line: line, Domain: d})
				}
			}
			defaultMatcher := name != "TestReadPatterns"
			m := sourceignore.NewMatcher(patterns(ps))
			if defaultMatcher {
				m = sourceignore.NewDefaultMatcher(patterns(ps), domain)
			}
			for _, field := range []string{"matches", "mismatches"} {
				e, ok := r.fields[field]
				if !ok {
					continue
				}
				paths, err := g.strs(e)
				if err != nil {
					return nil, nil, err
				}
				for j, p := range paths {
					path := strings.Split(p, "/")
					match := m.Match(path, false)
					vs = append(vs, ignoreVector{
						ID:             fmt.Sprintf("sourceignore/%s/%d/%s/%d", name, i, field, j),
						From:           from("sourceignore_test.go", name+" "+r.at),
						Kind:           "matcher",
						Patterns:       ps,
						DefaultMatcher: defaultMatcher,
						Defaults:       domain,
						Path:           path,
						Match:          &match,
					})
				}
			}
		}
	}
	fn := g.fn("TestLoadExcludePatterns")
	if fn == nil {
		return nil, nil, fmt.Errorf("sourceignore_test.go has no TestLoadExcludePatterns")
	}
	var files map[string]string
	ast.Inspect(fn, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 1 {
			if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == "files" {
				files, err = g.strMap(as.Rhs[0])
			}
		}
		return files == nil
	})
	if files == nil || err != nil {
		return nil, nil, fmt.Errorf("TestLoadExcludePatterns: no files map: %v", err)
	}
	// The test's tree as source-controller archives it; then with a spec.ignore whose
	// negation re-includes what the VCS patterns leave out (added here: the test compares
	// pattern lists only).
	for i, ignore := range []*string{nil, ptr("!d/.gitignore\n")} {
		archived, err := archiveOf(files, ignore)
		if err != nil {
			return nil, nil, err
		}
		vs = append(vs, ignoreVector{
			ID:       fmt.Sprintf("sourceignore/TestLoadExcludePatterns/%d", i),
			From:     from("sourceignore_test.go", "TestLoadExcludePatterns "+g.where(fn)),
			Kind:     "archive",
			Files:    files,
			Ignore:   ignore,
			Archived: archived,
		})
	}

	var entries []entry
	for _, v := range vs {
		entries = append(entries, entry{Suite: "sourceignore", ID: v.ID, From: v.From, Kind: "sourceignore"})
	}
	// ReadIgnoreFile's cases read a temporary file and compare pattern structs (no path is
	// matched): what they read is what TestReadPatterns and the archive vectors check.
	entries = append(entries, entry{Suite: "sourceignore", ID: "sourceignore/TestReadIgnoreFile",
		From: from("sourceignore_test.go", "TestReadIgnoreFile"), Kind: "limit",
		Limit: "compares the parsed pattern structs of a temporary file (no path is matched); what it reads is matched by the TestReadPatterns and archive vectors"})
	return vs, entries, nil
}

func ptr(s string) *string { return &s }

// readLines is sourceignore.ReadPatterns' line selection (no comment, not blank).
func readLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") && strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func patterns(ps []patternText) []gitignore.Pattern {
	var out []gitignore.Pattern
	for _, p := range ps {
		out = append(out, gitignore.ParsePattern(p.Line, p.Domain))
	}
	return out
}

// archiveOf writes files into a checkout and lists, sorted, the files Archive keeps.
func archiveOf(files map[string]string, ignore *string) ([]string, error) {
	src, err := os.MkdirTemp("", "fluxsim-suites-src-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(src)
	dst, err := os.MkdirTemp("", "fluxsim-suites-dst-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dst)
	for name, content := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	if err := reconcile.Archive(src, dst, ignore); err != nil {
		return nil, err
	}
	var out []string
	err = filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dst, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	sort.Strings(out)
	return out, err
}
