package planner

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"
)

// benchScript is a representative 20-statement script: every statement
// form, comments, mixed case, and each literal kind.
const benchScript = `-- set up two domains and run one
CREATE PACED DOMAIN production
  WITH PERIOD 1s SKEW 100ms
  PLACEMENT REQUIRE COLOCATION;
CREATE IF NOT EXISTS UNPACED DOMAIN archive PLACEMENT SUGGEST SEPARATION;
create domain scratch;
USE production;
ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;
/* start at a fixed instant, accelerated */
START AT '2026-01-01T00:00:00Z' TIME RATE 60;
ATTACH DOMAIN CLOCK;
DETACH DOMAIN CLOCK;
STOP;
START AT NOW TIME RATE 1.5;
STOP;
START;
LIST DOMAINS;
DESCRIBE DOMAIN;
DESCRIBE DOMAIN archive;
BEGIN;
STOP;
REVERT;
CREATE PACED DOMAIN ` + "`eu-west~1`" + ` WITH PERIOD 1h30m SKEW 1.5s;
DROP DOMAIN IF EXISTS scratch;
`

const benchStatements = 20

func BenchmarkParsePlan(b *testing.B) {
	plans, err := PlanScript(benchScript)
	require.NoError(b, err)
	require.Len(b, plans, benchStatements)
	b.ReportAllocs()
	b.SetBytes(int64(len(benchScript)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		if _, err := PlanScript(benchScript); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/benchStatements, "ns/statement")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N)/benchStatements, "allocs/statement")
}

// goEquivalent renders benchScript as Go source for go/parser: each
// statement becomes one call statement whose callee and arguments are the
// statement's tokens (a keyword or name as an identifier, a number as a
// number, a quoted string as a string), so both parsers see the same
// number of statements and about the same number of tokens.
func goEquivalent(script string) string {
	var b strings.Builder
	b.WriteString("package p\n\nfunc f() {\n")
	for _, line := range strings.Split(script, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		if i, j := strings.Index(line, "/*"), strings.Index(line, "*/"); i >= 0 && j > i {
			line = line[:i] + line[j+2:]
		}
		b.WriteString(line)
		b.WriteByte(' ')
	}
	text := b.String()
	b.Reset()
	head, body, _ := strings.Cut(text, "{")
	b.WriteString(head + "{\n")
	for _, stmt := range strings.Split(body, ";") {
		words := strings.Fields(stmt)
		if len(words) == 0 {
			continue
		}
		for i, w := range words {
			switch {
			case w[0] == '\'':
				words[i] = strconv.Quote(strings.Trim(w, "'"))
			case w[0] >= '0' && w[0] <= '9' && strings.Trim(w, "0123456789.") == "":
			default:
				words[i] = "x_" + strings.Map(func(r rune) rune {
					if unicode.IsLetter(r) || unicode.IsDigit(r) {
						return r
					}
					return '_'
				}, w)
			}
		}
		fmt.Fprintf(&b, "\t%s(%s)\n", words[0], strings.Join(words[1:], ", "))
	}
	b.WriteString("}\n")
	return b.String()
}

// BenchmarkParsePlanRatio reports parse and plan time per statement as a
// ratio to go/parser parsing the same statements as Go (goEquivalent),
// both timed in each iteration, which of the two runs first alternating.
func BenchmarkParsePlanRatio(b *testing.B) {
	goSrc := goEquivalent(benchScript)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "bench.go", goSrc, parser.SkipObjectResolution)
	require.NoError(b, err, goSrc)
	require.Len(b, f.Decls[0].(*ast.FuncDecl).Body.List, benchStatements)
	var nspl, goparser time.Duration
	runNSPL := func() {
		start := time.Now()
		if _, err := PlanScript(benchScript); err != nil {
			b.Fatal(err)
		}
		nspl += time.Since(start)
	}
	runGo := func() {
		start := time.Now()
		if _, err := parser.ParseFile(token.NewFileSet(), "bench.go", goSrc, parser.SkipObjectResolution); err != nil {
			b.Fatal(err)
		}
		goparser += time.Since(start)
	}
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			runNSPL()
			runGo()
		} else {
			runGo()
			runNSPL()
		}
		i++
	}
	b.ReportMetric(float64(nspl.Nanoseconds())/float64(i)/benchStatements, "nspl-ns/statement")
	b.ReportMetric(float64(goparser.Nanoseconds())/float64(i)/benchStatements, "goparser-ns/statement")
	b.ReportMetric(float64(nspl)/float64(goparser), "ratio")
}

// maxAllocsPerStatement is the allocation budget of parsing and planning
// one statement of benchScript.
const maxAllocsPerStatement = 20

// TestParsePlanAllocationBudget holds parsing and planning to its
// allocation budget, which BenchmarkParsePlan reports against: an
// allocation is deterministic where a duration is not, so it is the part
// of the cost a test can hold.
func TestParsePlanAllocationBudget(t *testing.T) {
	var planErr error
	perScript := testing.AllocsPerRun(50, func() {
		if _, err := PlanScript(benchScript); err != nil {
			planErr = err
		}
	})
	require.NoError(t, planErr)
	require.LessOrEqual(t, perScript/benchStatements, float64(maxAllocsPerStatement))
}
