package nspl_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// wallClockReads are the functions of package time that read wall time or
// arm a timer.
var wallClockReads = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true,
}

// clockOwners are the directories whose production code may call them:
// the one clock source, test support that issues certificates valid from
// the moment a test runs, the in-process cluster test support, which
// binds ports and bounds its waits for a real cluster on the real clock,
// the fault layer that test cluster's traffic runs through, whose delays
// stand for a network's on that same clock, and the browser test support,
// which bounds its waits for a real browser.
var clockOwners = map[string]bool{
	"clockrt/timesource":   true,
	"internal/testpki":     true,
	"internal/testcluster": true,
	"internal/faultnet":    true,
	"internal/testbrowser": true,
}

// contextDeadlines are the functions that turn a context's deadline, an
// instant the context package measures on the real clock, into the timeout
// an API without a context takes (raft's Apply and configuration changes).
// An injected source would be wrong there: a fake one does not move the
// context's deadline.
var contextDeadlines = map[string]bool{
	"catalog/propose.go:raftTimeout": true,
}

// TestOnlyTheClockSourceReadsWallTime holds the time-class boundary: no
// production file outside clockrt/timesource reads wall time or arms a
// timer through package time, so every other path takes its time, logical
// or physical, from an injected source. It parses every non-test Go file
// of the module, whatever its build constraints, and resolves the name
// each file imports package time under.
func TestOnlyTheClockSourceReadsWallTime(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || clockOwners[filepath.ToSlash(filepath.Dir(path))] {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, name := range timeImportNames(f) {
			for _, decl := range f.Decls {
				fn := funcName(decl)
				ast.Inspect(decl, func(n ast.Node) bool {
					sel, ok := n.(*ast.SelectorExpr)
					if !ok || !wallClockReads[sel.Sel.Name] {
						return true
					}
					x, ok := sel.X.(*ast.Ident)
					if !ok || x.Name != name {
						return true
					}
					if sel.Sel.Name == "Until" && contextDeadlines[filepath.ToSlash(path)+":"+fn] {
						return true
					}
					where := fset.Position(sel.Pos()).String()
					if fn != "" {
						where += " (" + fn + ")"
					}
					t.Errorf("%s: time.%s reads wall time or arms a timer; take a timesource.Source instead", where, sel.Sel.Name)
					return true
				})
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 50, "the walk found the module's files")
}

// timeImportNames returns the names f refers to package time by.
func timeImportNames(f *ast.File) []string {
	var names []string
	for _, imp := range f.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err != nil || p != "time" {
			continue
		}
		switch {
		case imp.Name == nil:
			names = append(names, "time")
		case imp.Name.Name != "_" && imp.Name.Name != ".":
			names = append(names, imp.Name.Name)
		}
	}
	return names
}

// funcName names a declaration as contextDeadlines does: Recv.Name for a
// method, Name for a function, "" for anything else.
func funcName(decl ast.Decl) string {
	fn, ok := decl.(*ast.FuncDecl)
	if !ok {
		return ""
	}
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
