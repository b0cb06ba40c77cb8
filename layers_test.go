package nspl_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLeafPackagesImportNothingOfOurs holds the bottom of the layering:
// clock and literal import no package of this module, grammar only
// literal, record only clock, wire only clock and literal, lifecycle only
// clock and record, and follow only clock, grammar, record and wire. It reads the import clauses of every
// non-test Go file in the package's directory, whatever its build
// constraints, so a file built only on another platform cannot slip an
// import past it.
func TestLeafPackagesImportNothingOfOurs(t *testing.T) {
	module := modulePath(t)
	for _, tc := range []struct {
		dir     string
		allowed []string // packages of this module the package may import
	}{
		{"clock", nil},
		// literal is the printer of names, durations, timestamps and
		// rates (and the keyword list) that grammar and wire share.
		{"literal", nil},
		{"grammar", []string{module + "/literal"}},
		// record is lifecycle's plain values without its transitions, the
		// part of the replicated vocabulary the client side names.
		{"record", []string{module + "/clock"}},
		{"lifecycle", []string{module + "/clock", module + "/record"}},
		{"wire", []string{module + "/clock", module + "/literal"}},
		// follow is the receiving side the remote client shares: below
		// session, it may name the typed lifecycle errors a failure
		// carries (record) but nothing that applies or serves state.
		{"follow", []string{module + "/clock", module + "/grammar", module + "/record", module + "/wire"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			may := "nothing"
			if len(tc.allowed) > 0 {
				may = "only " + strings.Join(tc.allowed, ", ")
			}
			for path, file := range ourImports(t, module, tc.dir) {
				require.Truef(t, slices.Contains(tc.allowed, path),
					"%s imports %s; package %s may import %s of this module", file, path, tc.dir, may)
			}
		})
	}
}

// modulePath returns the module path go.mod declares.
func modulePath(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			if path, err := strconv.Unquote(strings.TrimSpace(rest)); err == nil {
				return path
			}
			return strings.TrimSpace(rest)
		}
	}
	require.FailNow(t, "go.mod declares no module")
	return ""
}

// ourImports returns the packages of module that the non-test Go files in
// dir import, each with one file that imports it. It fails the test when
// dir holds no such file, so a renamed package cannot pass unchecked.
func ourImports(t *testing.T, module, dir string) map[string]string {
	t.Helper()
	imports, parsed := ourImportsIn(t, module, dir)
	require.NotZerof(t, parsed, "no non-test Go files in %s", dir)
	return imports
}

// ourImportsIn is ourImports for a directory that may hold no Go files: it
// also returns how many non-test files it read.
func ourImportsIn(t *testing.T, module, dir string) (map[string]string, int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	imports := map[string]string{}
	parsed := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		parsed++
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			require.NoError(t, err)
			if path == module || strings.HasPrefix(path, module+"/") {
				imports[path] = name
			}
		}
	}
	return imports, parsed
}

// TestOnlyTheTopImportsNode holds the seam above node: a serving node is
// opened by cluster, the composition root serve and the root package
// (cmd/nspl reaches nodes through those two), and every other package
// (session and server among them) runs on interfaces it defines. It reads
// the non-test Go files of every package directory in the module; tests may
// still open a real node.
func TestOnlyTheTopImportsNode(t *testing.T) {
	module := modulePath(t)
	nodePkg := module + "/node"
	allowed := []string{module, module + "/cluster", module + "/serve"}
	var importers []string
	eachPackageDir(t, module, func(pkg, dir string) {
		imports, _ := ourImportsIn(t, module, dir)
		for path, file := range imports {
			if path != nodePkg && !strings.HasPrefix(path, nodePkg+"/") {
				continue
			}
			importers = append(importers, pkg)
			require.Truef(t, slices.Contains(allowed, pkg),
				"%s imports %s; only %s may import node", file, path, strings.Join(allowed, ", "))
		}
	})
	require.NotEmpty(t, importers, "no package imports %s; was node renamed?", nodePkg)
}

// TestRemoteClientLinksNoRaftNode holds the seam between a remote client and
// a node: the client package's dependency closure, as the go command
// resolves it for this platform, contains neither raft nor bbolt, nor any
// package of this module that opens a node or applies replicated state
// (node, catalog, lifecycle), nor the server side of a session (session,
// server, and clockrt, whose clocks a session serves). The client decodes
// a server's stream with package follow and names the replicated values
// through package record. clockrt's leaf time source, clockrt/timesource,
// which imports nothing of ours, is the client's timer too, so clockrt is
// banned alone, not with its subtree.
func TestRemoteClientLinksNoRaftNode(t *testing.T) {
	module := modulePath(t)
	deps := linked(t, "./client")
	require.Contains(t, deps, module+"/client", "go list listed no client package")
	require.Contains(t, deps, module+"/follow", "the client no longer links follow; was it renamed?")
	require.Contains(t, deps, module+"/record", "the client no longer links record; was it renamed?")
	for _, dep := range deps {
		for _, banned := range []string{"github.com/hashicorp/raft", "go.etcd.io/bbolt", module + "/catalog", module + "/lifecycle", module + "/node", module + "/server", module + "/session"} {
			require.Falsef(t, dep == banned || strings.HasPrefix(dep, banned+"/"),
				"the client links %s; a remote client must not link a raft node, the lifecycle transitions or a server-side session", dep)
		}
		require.NotEqualf(t, module+"/clockrt", dep,
			"the client links %s; a remote client must not link the node-local clocks", dep)
	}
}

// TestNodeLinksNoPlanner holds the seam between a session and the node it
// runs on: node's dependency closure, as the go command resolves it for
// this platform, contains no planner. A node speaks lifecycle requests (a
// CREATE's lifecycle.CreateDomain, a START's lifecycle.StartRequest, a
// transaction's lifecycle.StepRequest steps, a RESTORE's
// backup.RestoreRequest); the session turns a plan into its request
// (planner.Start.Request, planner.Step), so a statement is planned above
// the node and never again inside it.
func TestNodeLinksNoPlanner(t *testing.T) {
	module := modulePath(t)
	deps := linked(t, "./node")
	require.Contains(t, deps, module+"/node", "go list listed no node package")
	require.Contains(t, deps, module+"/lifecycle", "node no longer links lifecycle; was it renamed?")
	for _, dep := range deps {
		require.Falsef(t, dep == module+"/planner" || strings.HasPrefix(dep, module+"/planner/"),
			"node links %s; a node takes lifecycle requests, and the session converts plans into them", dep)
	}
}

// TestClusterLinksNoSession holds the seam between a cluster member and the
// sessions served on it: cluster's dependency closure, as the go command
// resolves it for this platform, contains neither session nor server. What
// the two share (the SHOW CLUSTER STATUS rows among it) lives in wire, the
// vocabulary both speak; a session reaches the cluster only through the
// status source it is handed.
func TestClusterLinksNoSession(t *testing.T) {
	module := modulePath(t)
	deps := linked(t, "./cluster")
	require.Contains(t, deps, module+"/cluster", "go list listed no cluster package")
	for _, dep := range deps {
		for _, banned := range []string{module + "/session", module + "/server"} {
			require.Falsef(t, dep == banned || strings.HasPrefix(dep, banned+"/"),
				"cluster links %s; a cluster member must not depend on the sessions served on it", dep)
		}
	}
}

// TestAttachmentsStayOffTheInterconnect holds that a clock attachment adds
// no interconnect traffic. The packages that hold attachments, session and
// server, link nothing that talks to a peer or to consensus (interconnect,
// cluster, catalog, node): a session reaches its node only through
// session.Engine, so it serves every attachment from that node's own
// installation and accepted progress. And interconnect, whose routes are
// all that nodes say to each other, links neither of them, so no route can
// carry an attachment and no node can advertise one. It reads each
// package's dependency closure as the go command resolves it.
func TestAttachmentsStayOffTheInterconnect(t *testing.T) {
	module := modulePath(t)
	peers := []string{module + "/interconnect", module + "/cluster", module + "/catalog", module + "/node"}
	holders := []string{module + "/session", module + "/server"}
	for _, tc := range []struct {
		pkg    string
		banned []string
		why    string
	}{
		{"session", peers, "a session serves its attachments from its own node alone"},
		{"server", peers, "a server serves its sessions' attachments from its own node alone"},
		{"interconnect", holders, "no peer route may carry or advertise an attachment"},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			deps := linked(t, "./"+tc.pkg)
			require.Contains(t, deps, module+"/"+tc.pkg, "go list listed no %s package", tc.pkg)
			for _, dep := range deps {
				for _, banned := range tc.banned {
					require.Falsef(t, dep == banned || strings.HasPrefix(dep, banned+"/"),
						"%s links %s; %s", tc.pkg, dep, tc.why)
				}
			}
		})
	}
}

// linked returns the dependency closure of the package pattern pkg, the
// package itself included, as the go command resolves it for this
// platform.
func linked(t *testing.T, pkg string) []string {
	t.Helper()
	// go test puts the go command that runs it first on the test's PATH.
	out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
	require.NoErrorf(t, err, "go list -deps %s: %s", pkg, out)
	return strings.Fields(string(out))
}

// TestOneCompositionRoot holds that a serving member is put together in
// one place: package serve alone builds a cluster member (cluster.New,
// cluster.Start) and wires a server to it, so nspl serve and the test
// cluster run their members through serve.Start and a member under test
// is wired as one in production. Outside serve, only the embedding root
// package builds a server.Server (its console on an embedded node, which
// is no cluster member), and only it and cluster open a node. cmd/nspl and
// internal/testcluster must import serve. It reads the calls in every
// non-test Go file of the module; tests may still build their own.
func TestOneCompositionRoot(t *testing.T) {
	module := modulePath(t)
	allowed := map[string][]string{ // "package.Func" → the packages that may call it
		module + "/server.New":    {module + "/serve", module},
		module + "/cluster.New":   {module + "/serve"},
		module + "/cluster.Start": {module + "/serve"},
		module + "/node.New":      {module + "/serve", module + "/cluster", module},
		module + "/node.Open":     {module + "/serve", module + "/cluster", module},
	}
	seen := map[string]bool{}
	eachPackageDir(t, module, func(pkg, dir string) {
		for call, file := range ourCalls(t, module, dir) {
			callers, ok := allowed[call]
			if !ok {
				continue
			}
			seen[call] = true
			require.Truef(t, slices.Contains(callers, pkg),
				"%s calls %s; only %s may (package serve is the one composition root of a member and its server)", file, call, strings.Join(callers, ", "))
		}
	})
	for _, call := range []string{module + "/server.New", module + "/cluster.New", module + "/node.New"} {
		require.Truef(t, seen[call], "no package calls %s; was it renamed?", call)
	}
	for _, dir := range []string{"cmd/nspl", "internal/testcluster"} {
		imports := ourImports(t, module, dir)
		require.Containsf(t, imports, module+"/serve", "%s does not import serve; it must start its members through serve.Start", dir)
	}
}

// ourCalls returns the package-level functions of module that the non-test
// Go files in dir call or name, as "importpath.Func", each with one file
// that does.
func ourCalls(t *testing.T, module, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	calls := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		local := map[string]string{} // the name a file imports a package of ours under → its path
		for _, spec := range f.Imports {
			path, err := strconv.Unquote(spec.Path.Value)
			require.NoError(t, err)
			if path != module && !strings.HasPrefix(path, module+"/") {
				continue
			}
			as := path[strings.LastIndex(path, "/")+1:]
			if spec.Name != nil {
				as = spec.Name.Name
			}
			local[as] = path
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok {
				if path, ok := local[id.Name]; ok {
					calls[path+"."+sel.Sel.Name] = name
				}
			}
			return true
		})
	}
	return calls
}

// eachPackageDir calls visit with the import path and directory of every
// package directory of module, skipping testdata and directories whose
// names start with "." or "_", as the go command does.
func eachPackageDir(t *testing.T, module string, visit func(pkg, dir string)) {
	t.Helper()
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		pkg := module
		if dir != "." {
			pkg = module + "/" + filepath.ToSlash(dir)
		}
		visit(pkg, dir)
		return nil
	})
	require.NoError(t, err)
}
