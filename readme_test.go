package nspl_test

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEEmbeddingMatchesExample keeps README.md's embedding program
// honest: its main body must be Example_followClock's body, whose output go
// test checks, and the output README shows must be the example's Output
// block. The README program therefore compiles and prints what it claims as
// long as the example does.
func TestREADMEEmbeddingMatchesExample(t *testing.T) {
	readme := readFile(t, "README.md")
	example := readFile(t, "example_test.go")

	goBlocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(readme, -1)
	require.Len(t, goBlocks, 1, "README.md has one Go block, the embedding program; add an Example for any other")
	program := goBlocks[0][1]

	mainBody := regexp.MustCompile(`(?s)\nfunc main\(\) \{\n(.*)\n\}\n$`).FindStringSubmatch(program)
	require.NotNil(t, mainBody, "README's Go block is a complete program ending in func main")

	ex := regexp.MustCompile(`(?s)\nfunc Example_followClock\(\) \{\n(.*?)\n\t// Output:\n(.*?)\n\}\n`).FindStringSubmatch(example)
	require.NotNil(t, ex, "example_test.go has Example_followClock with an Output block")
	require.Equal(t, strings.TrimRight(ex[1], "\n\t "), mainBody[1],
		"README's main body and Example_followClock's body differ; copy the example into README.md")

	var want []string
	for _, line := range strings.Split(ex[2], "\n") {
		want = append(want, strings.TrimPrefix(line, "\t// "))
	}
	printed := regexp.MustCompile("(?s)It prints:\n\n```text\n(.*?)\n```").FindStringSubmatch(readme)
	require.NotNil(t, printed, "README shows the embedding program's output after 'It prints:'")
	require.Equal(t, strings.Join(want, "\n"), printed[1],
		"README's shown output and Example_followClock's Output block differ")
}

// TestEmbeddingExampleImportsTheRootAlone holds the embedding example, and
// so README's program, to the root package: it imports no other package of
// this module, so go doc of the root is enough to write it. README's
// program imports exactly what the example does.
func TestEmbeddingExampleImportsTheRootAlone(t *testing.T) {
	module := modulePath(t)
	f, err := parser.ParseFile(token.NewFileSet(), "example_test.go", nil, parser.ImportsOnly)
	require.NoError(t, err)
	var imports []string
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		require.NoError(t, err)
		imports = append(imports, path)
		if strings.HasPrefix(path, module+"/") {
			t.Errorf("example_test.go imports %s; the embedding example may use the root package %s alone", path, module)
		}
	}
	require.Contains(t, imports, module, "the embedding example imports the root package")

	program := regexp.MustCompile("(?s)```go\n(.*?)```").FindStringSubmatch(readFile(t, "README.md"))
	require.NotNil(t, program, "README.md has the embedding program")
	rf, err := parser.ParseFile(token.NewFileSet(), "README.go", program[1], parser.ImportsOnly)
	require.NoError(t, err, "README's embedding program parses")
	var readmeImports []string
	for _, spec := range rf.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		require.NoError(t, err)
		readmeImports = append(readmeImports, path)
	}
	require.Equal(t, imports, readmeImports, "README's program imports what Example_followClock does")
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}

// TestREADMEWalkthroughRunsInItsOwnDirectory holds README's cluster
// walk-through out of the repository root: its first command after the
// build moves into walkthrough/, every command that writes a CA,
// certificates, data directories or a token comes after it, and
// .gitignore ignores that directory, so a followed walk-through leaves
// nothing (ca.key least of all) for git to pick up.
func TestREADMEWalkthroughRunsInItsOwnDirectory(t *testing.T) {
	readme := readFile(t, "README.md")
	const enter = "mkdir -p walkthrough && cp nspl walkthrough/ && cd walkthrough\n"
	at := strings.Index(readme, "make nspl ")
	require.NotEqual(t, -1, at, "README builds the binary with make nspl")
	build := readme[at:]
	build = build[strings.IndexByte(build, '\n')+1:]
	require.True(t, strings.HasPrefix(build, enter), "the walk-through enters its directory right after make nspl")
	start := len(readme) - len(build)

	writers := regexp.MustCompile(`(?m)^[^\n]*(?:--dir certs|--data-dir n\d|> token)[^\n]*$`)
	found := writers.FindAllStringIndex(readme, -1)
	require.NotEmpty(t, found, "README's walk-through writes certificates, data directories and a token")
	for _, w := range found {
		require.Greaterf(t, w[0], start, "%q writes into the repository root: it comes before the walk-through enters walkthrough/", readme[w[0]:w[1]])
	}

	var ignored bool
	for line := range strings.Lines(readFile(t, ".gitignore")) {
		ignored = ignored || strings.TrimSpace(line) == "/walkthrough/"
	}
	require.True(t, ignored, ".gitignore ignores /walkthrough/")
}
