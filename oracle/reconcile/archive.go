package reconcile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/sourceignore/gitignore"
)

// Archive copies into dst what source-controller archives of the checkout src for a
// GitRepository whose spec.ignore is ignore (nil: no spec.ignore), as kustomize-controller
// then unpacks it.
//
// source-controller v1.9.5 internal/controller/gitrepository_controller.go
// reconcileArtifact: the patterns are sourceignore.LoadIgnorePatterns(dir, domain) (every
// .sourceignore, depth first, .git left out) followed by spec.ignore read with
// sourceignore.ReadPatterns, the domain being the checkout's path split at "/"; the archive
// is r.Storage.Archive(&artifact, dir, storage.SourceIgnoreFilter(ps, domain)).
//
// fluxcd/pkg/artifact storage/archive.go (the module v0.18.3 that source-controller v1.9.5
// requires is not served by the Go module proxy; v0.18.0's archive.go, which is, is
// followed): SourceIgnoreFilter matches with sourceignore.NewDefaultMatcher(ps, domain)
// (the VCS and default patterns under the user's) when ps is empty, else with
// sourceignore.NewMatcher(VCSPatterns(domain) + ps); Archive walks dir with filepath.Walk,
// skips anything that is neither a regular file nor a folder (symlinks), and skips each
// path the filter matches, a folder without skipping what is below it (its files are
// matched on their own); every folder kept is written to the tarball, so it exists after
// the unpacking even when all its files were left out. fluxcd/pkg/tar Untar recreates the
// tree (files 0644 here; modes are not compared).
func Archive(src, dst string, ignore *string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	domain := strings.Split(abs, string(filepath.Separator))
	ps, err := sourceignore.LoadIgnorePatterns(abs, domain)
	if err != nil {
		return fmt.Errorf("failed to load source ignore patterns from repository: %w", err)
	}
	if ignore != nil {
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(*ignore), domain)...)
	}
	matcher := sourceignore.NewDefaultMatcher(ps, domain)
	if len(ps) > 0 {
		matcher = sourceignore.NewMatcher(append(sourceignore.VCSPatterns(domain), ps...))
	}
	filtered := func(p string, fi os.FileInfo) bool {
		return matcher.Match(strings.Split(p, string(filepath.Separator)), fi.IsDir())
	}
	return filepath.Walk(abs, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if m := fi.Mode(); !(m.IsRegular() || m.IsDir()) {
			return nil
		}
		if filtered(p, fi) {
			return nil
		}
		rel, err := filepath.Rel(abs, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(p, target)
	})
}

// Patterns is sourceignore's reading of pattern text (ReadPatterns) with the given domain.
func Patterns(text string, domain []string) []gitignore.Pattern {
	return sourceignore.ReadPatterns(strings.NewReader(text), domain)
}

func copyFile(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
