package nspl_test

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/console"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/record"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

var updateCodes = flag.Bool("update-codes", false, "rewrite testdata/error-codes.golden from the code table")

// codeLists is the module's one error-code table, built in this one place
// from the list each package exports of the coded sentinels it declares.
// Nothing consults it at run time: a sentinel carries its code
// (wire.Coded), and a remote failure matches the sentinel its code names.
// The table holds what no single package can check: that no two
// sentinels of the module share a code or an older spelling, since two
// that did would match each other's remote failures.
var codeLists = map[string][]error{
	"wire":         wire.Sentinels(),
	"grammar":      grammar.Sentinels(),
	"record":       record.Sentinels(),
	"follow":       follow.Sentinels(),
	"session":      session.Sentinels(),
	"catalog":      catalog.Sentinels(),
	"clockrt":      clockrt.Sentinels(),
	"backup":       backup.Sentinels(),
	"interconnect": interconnect.Sentinels(),
	"console":      console.Sentinels(),
}

// TestOneCodeTable holds the code table: every listed sentinel has a code,
// no code or older spelling names two sentinels, each package lists every
// coded sentinel its source declares (so one added without a listing is
// caught), and the codes are the committed ones of
// testdata/error-codes.golden: a code is part of the wire format, and a
// renamed one would leave older peers matching nothing (keep the old
// spelling as an alias: wire.NewSentinel's aliases). Run with
// -update-codes after adding a code.
func TestOneCodeTable(t *testing.T) {
	owner := map[string]string{} // code or alias -> package
	var lines []string
	for pkg, list := range codeLists {
		for _, s := range list {
			code := wire.CodeOf(s)
			require.NotEmpty(t, code, "%s lists %q, which has no code", pkg, s)
			names := append([]string{code}, wire.AliasesOf(s)...)
			for i, name := range names {
				prev, dup := owner[name]
				require.False(t, dup, "code %q names a sentinel of %s and one of %s", name, prev, pkg)
				owner[name] = pkg
				if i == 0 {
					lines = append(lines, fmt.Sprintf("%s %s", pkg, name))
				} else {
					lines = append(lines, fmt.Sprintf("%s %s (alias of %s)", pkg, name, code))
				}
			}
		}
		require.Equal(t, declaredCodes(t, pkg), listedCodes(list), "package %s lists exactly the coded sentinels it declares", pkg)
	}
	slices.Sort(lines)
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "error-codes.golden")
	if *updateCodes {
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), got, "the committed codes changed; a renamed code breaks older peers (run with -update-codes only for an added one)")
}

// listedCodes returns the codes of list, sorted.
func listedCodes(list []error) []string {
	var codes []string
	for _, s := range list {
		codes = append(codes, wire.CodeOf(s))
	}
	slices.Sort(codes)
	return codes
}

// declaredCodes returns the codes the non-test source of package dir
// declares: the first argument of every wire.NewSentinel call, and of
// grammar's and record's own newSentinel (record's names a Code constant,
// resolved through the record.Code constants).
func declaredCodes(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var codes []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 || !isSentinelCall(call.Fun) {
				return true
			}
			switch arg := call.Args[0].(type) {
			case *ast.BasicLit:
				code, err := strconv.Unquote(arg.Value)
				require.NoError(t, err)
				codes = append(codes, code)
			case *ast.Ident:
				codes = append(codes, constantValue(t, dir, arg.Name))
			default:
				t.Fatalf("%s: a sentinel's code is a literal or a constant", name)
			}
			return true
		})
	}
	slices.Sort(codes)
	return codes
}

func isSentinelCall(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.SelectorExpr:
		x, ok := f.X.(*ast.Ident)
		return ok && x.Name == "wire" && f.Sel.Name == "NewSentinel"
	case *ast.Ident:
		return f.Name == "newSentinel" || f.Name == "NewSentinel"
	}
	return false
}

// constantValue returns the string value of the constant name declared in
// package dir.
func constantValue(t *testing.T, dir, name string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name == name && i < len(vs.Values) {
						lit, ok := vs.Values[i].(*ast.BasicLit)
						require.True(t, ok, "%s is a string literal constant", name)
						v, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						return v
					}
				}
			}
		}
	}
	t.Fatalf("no constant %s in %s", name, dir)
	return ""
}
