package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// A row is one sentence of docs/spec-coverage.md: its id, the cell that
// names its tests, and the tests read from that cell.
type row struct {
	id    string
	line  int // 1-based line in the table file
	cell  string
	scope bool  // the row is out of scope: no test holds it, no mutation is asked of it
	err   error // the cell cannot be read
	tests []testRef
}

// A testRef names one test the way the table does: the package directory
// relative to the module root ("." for the root) and the test, with a
// subtest after a slash.
type testRef struct {
	pkg  string
	name string // TestX or TestX/sub
}

func (t testRef) String() string { return t.pkg + " · " + t.name }

// top is the top-level test a -run pattern selects.
func (t testRef) top() string {
	top, _, _ := strings.Cut(t.name, "/")
	return top
}

// mutationColumn is the header of the column the tool writes.
const mutationColumn = "mutation that fails it"

var (
	rowID    = regexp.MustCompile(`^[TCFLNV][0-9]+$`)
	testName = regexp.MustCompile(`^Test[A-Za-z0-9_]+(/\S+)?$`)
	subName  = regexp.MustCompile(`^/\S+$`)
	pkgName  = regexp.MustCompile(`(?:^|\s)(\.|[a-z][a-z0-9]*(?:/[a-z0-9]+)*) · `)
)

// splitCells splits a Markdown table line into its cells, without the
// outer pipes. A pipe inside backticks is part of its cell.
func splitCells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	inCode := false
	for _, r := range line {
		switch {
		case r == '`':
			inCode = !inCode
			cur.WriteRune(r)
		case r == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	if inCode {
		// An unclosed code span protects nothing: split on every pipe.
		cells = strings.Split(line, "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// stripAsides removes every parenthesised aside and every backtick span
// from a cell, so that what remains names tests and prose only. An
// unbalanced parenthesis is an error: the cell would be read wrongly.
func stripAsides(s string) (string, error) {
	var b strings.Builder
	depth, inCode := 0, false
	for _, r := range s {
		switch {
		case r == '`':
			inCode = !inCode
		case inCode:
		case r == '(':
			depth++
		case r == ')':
			if depth == 0 {
				return "", fmt.Errorf("a ')' closes no '('")
			}
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	if depth != 0 || inCode {
		return "", fmt.Errorf("an aside or a code span is not closed")
	}
	return b.String(), nil
}

// parseTests reads the tests a cell names: parts separated by "; ", each
// "pkg · TestA, TestB/sub, /sub2" followed by prose that names no test.
// A token that starts with "Test" but is not a test name is an error,
// so that a name the tool cannot read is never silently dropped.
func parseTests(cell string) ([]testRef, error) {
	plain, err := stripAsides(cell)
	if err != nil {
		return nil, err
	}
	var refs []testRef
	for _, part := range strings.Split(plain, ";") {
		loc := pkgName.FindStringSubmatchIndex(part)
		if loc == nil {
			continue
		}
		pkg := part[loc[2]:loc[3]]
		rest := part[loc[1]:]
		last := ""
		for _, tok := range strings.Split(rest, ", ") {
			tok = strings.TrimSpace(tok)
			switch {
			case testName.MatchString(tok):
				refs = append(refs, testRef{pkg: pkg, name: tok})
				last, _, _ = strings.Cut(tok, "/")
			case subName.MatchString(tok) && last != "":
				refs = append(refs, testRef{pkg: pkg, name: last + tok})
			case strings.HasPrefix(tok, "Test"):
				return nil, fmt.Errorf("cannot read %q as a test name (write pkg · TestName, asides in parentheses)", tok)
			default:
				goto nextPart
			}
		}
	nextPart:
		if more := pkgName.FindStringIndex(rest); more != nil {
			return nil, fmt.Errorf("%q names a second package in one part; separate parts with \"; \"", strings.TrimSpace(part))
		}
	}
	return refs, nil
}

// rowErrors joins the errors of the rows keep selects.
func (t *table) rowErrors(keep func(*row) bool) error {
	var errs []error
	for _, r := range t.rows {
		if r.err != nil && keep(r) {
			errs = append(errs, r.err)
		}
	}
	return errors.Join(errs...)
}

// table is the coverage file: its lines, and its rows in order.
type table struct {
	lines []string
	rows  []*row
	byID  map[string]*row
}

func parseTable(text string) (*table, error) {
	t := &table{lines: strings.Split(text, "\n"), byID: map[string]*row{}}
	var errs []error
	for i, line := range t.lines {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := splitCells(line)
		if len(cells) < 3 || !rowID.MatchString(cells[0]) {
			continue
		}
		r := &row{id: cells[0], line: i + 1, cell: cells[2]}
		if _, dup := t.byID[r.id]; dup {
			errs = append(errs, fmt.Errorf("line %d: row %s appears twice", i+1, r.id))
		}
		r.scope = strings.HasPrefix(r.cell, "out of scope")
		var rowErrs []error
		if strings.Contains(r.cell, "gap:") {
			rowErrs = append(rowErrs, fmt.Errorf("line %d: row %s is marked gap: every behavioural row names the tests that hold it", i+1, r.id))
		}
		if !r.scope {
			refs, err := parseTests(r.cell)
			switch {
			case err != nil:
				rowErrs = append(rowErrs, fmt.Errorf("line %d: row %s: %w", i+1, r.id, err))
			case len(refs) == 0:
				rowErrs = append(rowErrs, fmt.Errorf("line %d: row %s names no test (write pkg · TestName, or start the cell with \"out of scope:\")", i+1, r.id))
			}
			r.tests = refs
		}
		r.err = errors.Join(rowErrs...)
		t.rows = append(t.rows, r)
		t.byID[r.id] = r
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(t.rows) == 0 {
		return nil, fmt.Errorf("no rows: the file holds no table of coverage rows")
	}
	return t, nil
}

// withColumn returns the file with every row's mutation column set from
// muts (each row's mutations in list order) and each table's header and
// separator widened to hold it. A line that already has the column has it
// replaced, so writing twice gives the same file.
func (t *table) withColumn(muts map[string][]*mutation) string {
	out := make([]string, len(t.lines))
	copy(out, t.lines)
	rowAt := map[int]*row{}
	for _, r := range t.rows {
		rowAt[r.line-1] = r
	}
	for i, line := range t.lines {
		cells := splitCells(line)
		switch r := rowAt[i]; {
		case r != nil:
			cells = append(cells[:3:3], mutationCell(r, muts[r.id]))
		case strings.HasPrefix(line, "| # |") && len(cells) >= 3:
			cells = append(cells[:3:3], mutationColumn)
		case strings.HasPrefix(line, "|---|") && len(cells) >= 3 && i > 0 && strings.HasPrefix(t.lines[i-1], "| # |"):
			out[i] = "|---|---|---|---|"
			continue
		default:
			continue
		}
		out[i] = "| " + strings.Join(cells, " | ") + " |"
	}
	return strings.Join(out, "\n")
}

func mutationCell(r *row, muts []*mutation) string {
	if r.scope {
		return "—"
	}
	if len(muts) == 0 {
		return "none yet"
	}
	parts := make([]string, len(muts))
	for i, m := range muts {
		parts[i] = "`" + m.file + "`: " + strings.ReplaceAll(m.what, "|", "\\|")
	}
	return strings.Join(parts, "; ")
}
