// Command mutate proves that the tests docs/spec-coverage.md names hold
// the behaviour of their rows. For every behavioural row the mutation
// list (docs/mutations/*.txt) holds at least one change to the product
// that breaks the row's behaviour; the tool makes each change in a
// scratch overlay (`go test -overlay`: the work tree is never written),
// runs the tests the row names, and fails when
//
//   - a mutation makes none of its rows' named tests fail (a survivor),
//   - a test a row names fails under none of that row's mutations (the
//     row names a test that does not hold it),
//   - a mutation does not compile, or its text is not found exactly once,
//   - a behavioural row has no mutation, or the table's mutation column
//     is not the one the list gives (-write-table rewrites it).
//
// Before any mutation it runs every named test unchanged: a test that
// fails, is skipped or does not exist there is an error, since a kill
// would then prove nothing. `make mutate` runs it; it is not part of
// `make test`. Run from the module root.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type options struct {
	table, list string
	rows        string
	check       bool
	writeTable  bool
	jobs        int
	timeout     time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.table, "table", "docs/spec-coverage.md", "the coverage table")
	fs.StringVar(&o.list, "list", "docs/mutations", "the folder of mutation lists (*.txt)")
	fs.StringVar(&o.rows, "rows", "", "only these rows: ids and ranges, comma-separated (T37,C51-C53); the completeness check is skipped")
	fs.BoolVar(&o.check, "check", false, "read and check the table and the lists, run no test")
	fs.BoolVar(&o.writeTable, "write-table", false, "rewrite the table's mutation column from the lists, run no test")
	fs.IntVar(&o.jobs, "j", 1, "mutations run at once")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "the test binary's -timeout for each run")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./internal/mutate [flags]\n\n%s\n\nflags:\n", strings.TrimSpace(usageText))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() != 0 || o.jobs < 1 || o.timeout <= 0 {
		fs.Usage()
		return 2
	}
	if err := runOptions(ctx, o, stdout); err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 1
	}
	return 0
}

const usageText = `
Applies each mutation of the list to the product in a scratch copy,
runs the tests the coverage table names for its rows, and fails on a
mutation no named test notices, on a named test no mutation of its row
makes fail, and on a behavioural row with no mutation.`

// plan is the table and the lists read and checked against each other.
type plan struct {
	tab   *table
	muts  []*mutation
	byRow map[string][]*mutation
}

func load(o options) (*plan, error) {
	text, err := os.ReadFile(o.table)
	if err != nil {
		return nil, err
	}
	tab, err := parseTable(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s:%w", o.table, err)
	}
	files, err := filepath.Glob(filepath.Join(o.list, "*.txt"))
	if err != nil {
		return nil, err
	}
	p := &plan{tab: tab, byRow: map[string][]*mutation{}}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		muts, err := parseList(filepath.ToSlash(f), string(body))
		if err != nil {
			return nil, err
		}
		p.muts = append(p.muts, muts...)
	}
	for _, m := range p.muts {
		for _, id := range m.rows {
			r, ok := tab.byID[id]
			switch {
			case !ok:
				return nil, fmt.Errorf("%s: row %s is not in %s", m.source, id, o.table)
			case r.scope:
				return nil, fmt.Errorf("%s: row %s is out of scope: it names no test a mutation could fail", m.source, id)
			}
			p.byRow[id] = append(p.byRow[id], m)
		}
		src, err := os.ReadFile(filepath.FromSlash(m.file))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.source, err)
		}
		if _, err := m.apply(string(src)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func runOptions(ctx context.Context, o options, out io.Writer) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run from the module root (no go.mod here)")
	}
	p, err := load(o)
	if err != nil {
		return err
	}
	if o.writeTable {
		text := p.tab.withColumn(p.byRow)
		if err := os.WriteFile(o.table, []byte(text), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote the mutation column of %s\n", o.table)
		return nil
	}
	selected, err := p.selectRows(o.rows)
	if err != nil {
		return err
	}
	if err := p.tab.rowErrors(func(r *row) bool { return o.rows == "" || slices.Contains(selected, r) }); err != nil {
		return fmt.Errorf("%s:\n%w", o.table, err)
	}
	if o.rows == "" {
		if err := p.complete(o.table); err != nil {
			return err
		}
	}
	if o.check {
		if o.rows == "" {
			fmt.Fprintf(out, "%d mutations for %d rows, %d behavioural rows, each with a mutation; table column current\n", len(p.muts), len(p.byRow), p.behavioural())
		} else {
			fmt.Fprintf(out, "%d mutations for %d rows; the rows selected read cleanly\n", len(p.muts), len(p.byRow))
		}
		return nil
	}
	return p.execute(ctx, o, selected, out)
}

func (p *plan) behavioural() int {
	n := 0
	for _, r := range p.tab.rows {
		if !r.scope {
			n++
		}
	}
	return n
}

// complete checks that every behavioural row has a mutation and that the
// table's column says what the lists say.
func (p *plan) complete(tablePath string) error {
	var missing []string
	for _, r := range p.tab.rows {
		if !r.scope && len(p.byRow[r.id]) == 0 {
			missing = append(missing, r.id)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%d behavioural rows have no mutation: %s", len(missing), strings.Join(missing, " "))
	}
	if want := p.tab.withColumn(p.byRow); want != strings.Join(p.tab.lines, "\n") {
		return fmt.Errorf("the mutation column of %s is not the lists': run go run ./internal/mutate -write-table", tablePath)
	}
	return nil
}

// selectRows reads a selection such as "T37,C51-C53"; empty is every
// behavioural row.
func (p *plan) selectRows(spec string) ([]*row, error) {
	var out []*row
	if spec == "" {
		for _, r := range p.tab.rows {
			if !r.scope {
				out = append(out, r)
			}
		}
		return out, nil
	}
	want := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		if !rowID.MatchString(lo) || !rowID.MatchString(hi) || lo[0] != hi[0] {
			return nil, fmt.Errorf("-rows: %q is not a row id or a range such as C51-C53", part)
		}
		a, _ := strconv.Atoi(lo[1:])
		b, _ := strconv.Atoi(hi[1:])
		for i := a; i <= b; i++ {
			want[fmt.Sprintf("%c%d", lo[0], i)] = true
		}
	}
	for _, r := range p.tab.rows {
		if want[r.id] && !r.scope {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-rows %s selects no behavioural row", spec)
	}
	return out, nil
}

// verdict is what one mutation did.
type verdict struct {
	m      *mutation
	killed map[testRef]bool
	err    error
}

func (p *plan) execute(ctx context.Context, o options, rows []*row, out io.Writer) error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	// Each worker has a scratch copy of its own, made once.
	copies := make([]string, o.jobs)
	defer func() {
		for _, c := range copies {
			if c != "" {
				os.RemoveAll(c)
			}
		}
	}()
	for i := range copies {
		if copies[i], err = scratchCopy(root); err != nil {
			return err
		}
	}
	tester := goTester{dir: copies[0], timeout: o.timeout}

	// The named tests must pass unchanged before a failure can mean a kill.
	var all []testRef
	chosen := map[string]bool{}
	for _, r := range rows {
		all = append(all, r.tests...)
		chosen[r.id] = true
	}
	pkgs, tops := byPackage(all)
	fmt.Fprintf(out, "baseline: %d named tests in %d packages\n", len(all), len(pkgs))
	for _, pkg := range pkgs {
		res, buildFailed, buildOut, err := tester.run(ctx, pkg, tops[pkg])
		if err != nil {
			return err
		}
		if buildFailed {
			return fmt.Errorf("baseline: %s does not build:\n%s", pkg, buildOut)
		}
		for _, r := range rows {
			for _, t := range r.tests {
				if t.pkg != pkg {
					continue
				}
				if got := res[t.name]; got != "pass" {
					if got == "" {
						got = "did not run (is the name right? the package's run ended with:\n" + buildOut + ")"
					}
					return fmt.Errorf("baseline: row %s names %s, which %s unchanged", r.id, t, got)
				}
			}
		}
	}

	var todo []*mutation
	for _, m := range p.muts {
		for _, id := range m.rows {
			if chosen[id] {
				todo = append(todo, m)
				break
			}
		}
	}
	fmt.Fprintf(out, "%d mutations for %d rows\n", len(todo), len(rows))
	verdicts := make([]verdict, len(todo))
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < o.jobs; w++ {
		wg.Add(1)
		tester := goTester{dir: copies[w], timeout: o.timeout}
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(todo) || ctx.Err() != nil {
					return
				}
				v := p.try(ctx, tester, todo[i])
				mu.Lock()
				verdicts[i] = v
				report(out, v, p)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return summarize(out, rows, p, verdicts)
}

// try makes one mutation and runs its rows' named tests.
func (p *plan) try(ctx context.Context, tester goTester, m *mutation) (v verdict) {
	v = verdict{m: m, killed: map[testRef]bool{}}
	restore, err := mutateIn(tester.dir, m)
	if err != nil {
		v.err = err
		return v
	}
	defer func() {
		if err := restore(); err != nil && v.err == nil {
			v.err = fmt.Errorf("%s: restoring the scratch copy: %w", m.source, err)
		}
	}()
	var named []testRef
	for _, id := range m.rows {
		named = append(named, p.tab.byID[id].tests...)
	}
	pkgs, tops := byPackage(named)
	for _, pkg := range pkgs {
		res, buildFailed, buildOut, err := tester.run(ctx, pkg, tops[pkg])
		if err != nil {
			v.err = err
			return v
		}
		if buildFailed {
			v.err = fmt.Errorf("%s: the mutated product does not build in %s:\n%s", m.source, pkg, buildOut)
			return v
		}
		for _, t := range named {
			if t.pkg == pkg && res[t.name] != "pass" {
				v.killed[t] = true
			}
		}
	}
	return v
}

func report(out io.Writer, v verdict, p *plan) {
	switch {
	case v.err != nil:
		fmt.Fprintf(out, "ERROR    %s\n         %v\n", v.m, v.err)
	case len(v.killed) == 0:
		fmt.Fprintf(out, "SURVIVED %s\n", v.m)
	default:
		var names []string
		for t := range v.killed {
			names = append(names, t.String())
		}
		slices.Sort(names)
		fmt.Fprintf(out, "killed   %s\n         by %s\n", v.m, strings.Join(names, ", "))
	}
}

func summarize(out io.Writer, rows []*row, p *plan, verdicts []verdict) error {
	var problems []string
	killedBy := map[string]map[testRef]bool{}
	for _, v := range verdicts {
		if v.err != nil {
			problems = append(problems, v.err.Error())
			continue
		}
		if len(v.killed) == 0 {
			problems = append(problems, "survivor: "+v.m.String())
		}
		for _, id := range v.m.rows {
			if killedBy[id] == nil {
				killedBy[id] = map[testRef]bool{}
			}
			for _, t := range p.tab.byID[id].tests {
				if v.killed[t] {
					killedBy[id][t] = true
				}
			}
		}
	}
	for _, r := range rows {
		if len(p.byRow[r.id]) == 0 {
			problems = append(problems, fmt.Sprintf("row %s has no mutation", r.id))
			continue
		}
		for _, t := range r.tests {
			if !killedBy[r.id][t] {
				problems = append(problems, fmt.Sprintf("row %s names %s, which no mutation of the row makes fail", r.id, t))
			}
		}
	}
	fmt.Fprintf(out, "%d mutations, %d rows\n", len(verdicts), len(rows))
	if len(problems) > 0 {
		for _, pr := range problems {
			fmt.Fprintln(out, "FAIL", pr)
		}
		return fmt.Errorf("%d problems", len(problems))
	}
	fmt.Fprintln(out, "every mutation was killed and every named test failed under its row's mutations")
	return nil
}
