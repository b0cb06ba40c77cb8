package console

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/record"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// table is a result set as the page shows it: every value already rendered
// as the shell prints it (wire.Value.String), null as nil, so that no
// nanosecond count passes through a JavaScript number.
type table struct {
	Columns []string    `json:"columns"`
	Rows    [][]*string `json:"rows"`
}

// newTable renders set.
func newTable(set *wire.ResultSet) *table {
	if set == nil {
		return nil
	}
	t := &table{Columns: make([]string, len(set.Columns)), Rows: make([][]*string, len(set.Rows))}
	for i, col := range set.Columns {
		t.Columns[i] = col.Name
	}
	for r, row := range set.Rows {
		t.Rows[r] = make([]*string, len(row))
		for i, v := range row {
			if v.IsNull() {
				continue
			}
			s := v.String()
			t.Rows[r][i] = &s
		}
	}
	return t
}

// field returns the value of column name in the table's first row, "" when
// it has none.
func (t *table) field(name string) string {
	if t == nil || len(t.Rows) == 0 {
		return ""
	}
	for i, col := range t.Columns {
		if col == name && t.Rows[0][i] != nil {
			return *t.Rows[0][i]
		}
	}
	return ""
}

// maxListedDomains bounds the rows of the domain list a page receives.
const maxListedDomains = 500

// listColumns are the domain list's columns, each read from the domain's
// DESCRIBE DOMAIN row.
var listColumns = []string{"name", "pace", "status", "generation", "placement", "authority"}

// domainList reads the domain list: the DESCRIBE DOMAIN fields of
// listColumns of every domain whose name matches like (a stored LIKE
// pattern; "" for every domain), at most maxListedDomains of them (more
// says how many were left out). The list streams (ExecRows): it keeps the
// first maxListedDomains names and only counts the rest, so a page costs
// the same memory at any number of domains.
func domainList(ctx context.Context, sess *session.Session, like string) (t *table, more int, err error) {
	var names []string
	_, err = sess.ExecRows(ctx, planner.ListDomains{Like: like}, func(chunk *wire.ResultSet) error {
		for _, row := range chunk.Rows {
			if len(names) < maxListedDomains {
				names = append(names, row[0].Text())
			} else {
				more++
			}
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	t = &table{Columns: listColumns, Rows: make([][]*string, 0, len(names))}
	for _, name := range names {
		d, err := sess.Exec(ctx, planner.DescribeDomain{Name: name})
		if err != nil {
			// Dropped between the list and its description.
			continue
		}
		dt := newTable(d.Set)
		out := make([]*string, len(listColumns))
		for c, col := range listColumns {
			if v := dt.field(col); v != "" {
				out[c] = &v
			}
		}
		t.Rows = append(t.Rows, out)
	}
	return t, more, nil
}

// describe reads DESCRIBE DOMAIN name, nil with the error's message when
// it fails; gone reports that it failed because the domain is not in the
// catalog (it was dropped), which the page says in its own words.
func describe(ctx context.Context, sess *session.Session, name string) (t *table, msg string, gone bool) {
	res, err := sess.Exec(ctx, planner.DescribeDomain{Name: name})
	if err != nil {
		if errors.Is(err, record.ErrDomainNotFound) {
			return nil, "Domain " + grammar.FormatName(name) + " is not in the catalog: it was dropped, or never created.", true
		}
		return nil, errorText(err), false
	}
	return newTable(res.Set), "", false
}

// clusterStatus reads SHOW CLUSTER STATUS, its domain rows those whose
// name matches like ("" for all).
func clusterStatus(ctx context.Context, sess *session.Session, like string) (*table, string) {
	res, err := sess.Exec(ctx, planner.ShowClusterStatus{Like: like})
	if err != nil {
		return nil, errorText(err)
	}
	return newTable(res.Set), ""
}

// errorText is err's message without a statement position, for errors of
// statements the console wrote itself.
func errorText(err error) string {
	if ge := follow.AsStatementError(err); ge != nil {
		return ge.Msg
	}
	return err.Error()
}

// observed is an observed clock as the page projects it. Every instant and
// duration is a decimal string of nanoseconds, which the page reads with
// BigInt; the rate is the exact value of the float64 TIME RATE as a
// fraction num/den, so the page's projection floor(elapsed × num / den)
// is the node's to the nanosecond.
type observed struct {
	Generation   string `json:"generation"`
	State        string `json:"state"`
	Period       string `json:"period_ns,omitempty"`
	Skew         string `json:"skew_ns,omitempty"`
	PeriodText   string `json:"period,omitempty"`
	SkewText     string `json:"skew,omitempty"`
	LogicalStart string `json:"logical_start_ns,omitempty"`
	WallStarted  string `json:"wall_started_at_ns,omitempty"`
	Rate         string `json:"rate,omitempty"`
	RateNum      string `json:"rate_num,omitempty"`
	RateDen      string `json:"rate_den,omitempty"`
}

// newObserved renders o.
func newObserved(o clock.Observed) observed {
	v := observed{Generation: strconv.FormatUint(o.Generation, 10), State: o.State.String()}
	if o.State != clock.Paced {
		return v
	}
	v.Period, v.Skew = strconv.FormatUint(o.Period, 10), strconv.FormatUint(o.Skew, 10)
	v.PeriodText, v.SkewText = grammar.FormatDuration(o.Period), grammar.FormatDuration(o.Skew)
	v.LogicalStart, v.WallStarted = strconv.FormatInt(o.LogicalStart, 10), strconv.FormatInt(o.WallStartedAt, 10)
	v.Rate = grammar.FormatRate(o.Rate)
	r := new(big.Rat)
	if r.SetFloat64(o.Rate) != nil {
		v.RateNum, v.RateDen = r.Num().String(), r.Denom().String()
	}
	return v
}

// frameView is one clock frame as the page receives it.
type frameView struct {
	Domain     string    `json:"domain"`
	Attachment uint64    `json:"attachment"`
	Kind       string    `json:"kind"`
	Clock      *observed `json:"clock,omitempty"`
	Generation string    `json:"generation,omitempty"`
	Tick       string    `json:"tick,omitempty"`
	Boundary   string    `json:"boundary_ns,omitempty"`
	BoundaryAt string    `json:"boundary,omitempty"`
	Reading    string    `json:"reading_ns,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Failure    string    `json:"failure,omitempty"`
	// Text is the frame's line as the shell prints it
	// (follow.FormatEventLine): "[clock prod] tick 42 at … (generation 1)".
	Text string `json:"text"`
}

// newFrameView renders f.
func newFrameView(f wire.Frame) frameView {
	v := frameView{Domain: f.Domain, Attachment: f.Attachment, Kind: f.Kind.String(), Text: follow.FormatEventLine(f)}
	switch f.Kind {
	case wire.FrameState:
		o := newObserved(f.Clock)
		v.Clock = &o
	case wire.FrameTick:
		v.Generation = strconv.FormatUint(f.Tick.Generation, 10)
		v.Tick = strconv.FormatUint(f.Tick.ID, 10)
		v.Boundary = strconv.FormatInt(f.Tick.Boundary, 10)
		v.BoundaryAt = grammar.FormatTimestamp(f.Tick.Boundary)
		v.Reading = strconv.FormatInt(f.Reading, 10)
	case wire.FrameEnd:
		v.Reason = f.Reason.String()
	case wire.FrameError, wire.FrameInterrupted:
		v.Generation = strconv.FormatUint(f.Failure.Generation, 10)
		v.Failure = f.Failure.Message
	}
	return v
}

// outcome is one statement's answer in the statement box: a reply, or an
// error positioned in the submitted text with the line it is on and a
// caret under its column.
type outcome struct {
	Statement string   `json:"statement,omitempty"`
	Message   string   `json:"message,omitempty"`
	Table     *table   `json:"table,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	Error     *failure `json:"error,omitempty"`
}

type failure struct {
	Message string `json:"message"`
	Code    string `json:"code"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Source  string `json:"source"`
	Caret   string `json:"caret"`
}

// newFailure positions err in text.
func newFailure(text string, err error) *failure {
	w := follow.EncodeError(err)
	f := &failure{Message: w.Message, Code: w.Code, Line: w.Line, Column: w.Column}
	f.Source, f.Caret = sourceAndCaret(text, w.Line, w.Column)
	return f
}

// maxSourceRunes bounds the source line a failure shows: a longer line
// (a whole submission on one line) is shown as a window of it around the
// column, so that an outcome does not repeat the submission.
const maxSourceRunes = 160

// sourceAndCaret returns line of text and a caret under column (both
// 1-based), or two empty strings when text has no such line. A line longer
// than maxSourceRunes is cut to a window around the column, marked with
// "…" where it was cut.
func sourceAndCaret(text string, line, column int) (source, caret string) {
	lines := strings.Split(text, "\n")
	if line < 1 || line > len(lines) {
		return "", ""
	}
	src := []rune(strings.TrimRight(lines[line-1], "\r"))
	col := column - 1
	if col < 0 {
		col = 0
	}
	var prefix, suffix string
	if len(src) > maxSourceRunes {
		start := max(0, min(col-maxSourceRunes/2, len(src)-maxSourceRunes))
		end := start + maxSourceRunes
		if start > 0 {
			prefix = "…"
		}
		if end < len(src) {
			suffix = "…"
		}
		src = src[start:end]
		col -= start
		if prefix != "" {
			col++ // under the window, past the mark
		}
	}
	shown := []rune(prefix + string(src) + suffix)
	col = min(col, len(shown)) // at most just past the line's end
	// The column counts runes of the line; tabs keep their width.
	pad := make([]rune, 0, col)
	for i, r := range shown {
		if i >= col {
			break
		}
		if r == '\t' {
			pad = append(pad, '\t')
		} else {
			pad = append(pad, ' ')
		}
	}
	for len(pad) < col {
		pad = append(pad, ' ')
	}
	return string(shown), string(pad) + "^"
}
