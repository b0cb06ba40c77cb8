package main

import (
	"context"
	"io"
	"strings"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// rowStreamer is a session that hands a LIST DOMAINS's rows over as they
// are produced (nspl.Session, client.Client).
type rowStreamer interface {
	ExecTextRows(ctx context.Context, text string, sink wire.RowSink) ([]wire.Result, error)
}

// tablePageRows is how many rows the table format gathers before it draws
// them: its column widths need the rows, so a streamed result set is drawn
// as a table per page of this many rows, each with its header, as psql's
// FETCH_COUNT does. The other formats print each chunk as it arrives.
const tablePageRows = 1024

// streamedList reports whether st is a LIST DOMAINS, the statement whose
// rows stream, telling it by its keywords without parsing it.
func streamedList(st grammar.StatementSource) bool {
	first, second := st.Keywords()
	return first == "LIST" && second == "DOMAINS"
}

// canonicalStatement returns the canonical text of source's one statement,
// or source itself when it does not plan (which a statement whose rows
// streamed always does).
func canonicalStatement(source string) string {
	stmt, err := grammar.ParseStatement(source)
	if err != nil {
		return source
	}
	p, err := planner.PlanStatement(stmt)
	if err != nil {
		return source
	}
	return p.String()
}

// rowPrinter prints a streamed result set in its format as chunks arrive,
// and the reply's tail (message, warnings) once the statement ends.
//
// JSON output of a streamed statement is the same object as renderResult's
// with the rows before the message, which is known only at the end:
// {"statement":…,"rows":[…],"message":…}.
type rowPrinter struct {
	w      io.Writer
	format outputFormat
	quiet  bool
	// source is the statement's text. The JSON object starts with the
	// statement's canonical text, which the reply carries only after the
	// rows; so JSON output, and it alone, parses the statement here once
	// more for it, when its first rows arrive.
	source string

	expanded expandedMode // the shell's \x, in table output

	started bool
	rows    int             // rows printed so far (JSON commas)
	page    *wire.ResultSet // table format: the page being gathered
}

// chunk is the rowPrinter's wire.RowSink.
func (p *rowPrinter) chunk(c *wire.ResultSet) error {
	first := !p.started
	p.started = true
	var b strings.Builder
	switch p.format {
	case formatJSON:
		if first {
			buf := []byte(`{"statement":`)
			buf = wire.AppendString(buf, canonicalStatement(p.source))
			buf = append(buf, `,"rows":[`...)
			b.Write(buf)
		}
		for _, row := range c.Rows {
			one := follow.AppendSetJSON(nil, &wire.ResultSet{Columns: c.Columns, Rows: [][]wire.Value{row}})
			if p.rows > 0 {
				b.WriteByte(',')
			}
			b.Write(one[1 : len(one)-1]) // the row object without the array's brackets
			p.rows++
		}
	case formatCSV:
		if err := writeCSVRows(&b, c, first); err != nil {
			return err
		}
	case formatPlain:
		var lines strings.Builder
		writePlainSet(&lines, c)
		s := lines.String()
		if !first { // the header line is printed once
			s = s[strings.IndexByte(s, '\n')+1:]
		}
		b.WriteString(s)
	default:
		if p.page == nil {
			p.page = &wire.ResultSet{Columns: c.Columns}
		}
		p.page.Rows = append(p.page.Rows, c.Rows...)
		if len(p.page.Rows) < tablePageRows {
			return nil
		}
		return p.flushPage()
	}
	_, err := io.WriteString(p.w, b.String())
	return err
}

// flushPage draws the gathered table page.
func (p *rowPrinter) flushPage() error {
	if p.page == nil || len(p.page.Rows) == 0 {
		return nil
	}
	var b strings.Builder
	if err := writeTableExpanded(&b, p.page, p.expanded, p.rows+1); err != nil {
		return err
	}
	p.rows += len(p.page.Rows)
	p.page = nil
	_, err := io.WriteString(p.w, b.String())
	return err
}

// finish prints the reply after its streamed rows: a reply whose rows never
// streamed (none, or a statement that streams none) is printed whole by
// renderReply; otherwise the last table page, then the message and
// warnings in the format's way.
func (p *rowPrinter) finish(res wire.Result) error {
	if !p.started {
		return renderReplyExpanded(p.w, p.format, p.quiet, p.expanded, res)
	}
	if err := p.flushPage(); err != nil {
		return err
	}
	res.Set = nil
	if p.format == formatJSON {
		buf := []byte(`],"message":`)
		buf = wire.AppendString(buf, res.Message)
		tail, err := jsonTail(res)
		if err != nil {
			return err
		}
		_, err = p.w.Write(append(buf, tail...))
		return err
	}
	if p.format == formatCSV || p.format == formatPlain {
		res.Message = "" // a result set's formats print no message after it
	}
	return renderReply(p.w, p.format, p.quiet, res)
}

// abort ends a streamed JSON object whose statement failed after rows had
// been printed, so the output stays one valid object per line before the
// error's object.
func (p *rowPrinter) abort() error {
	if !p.started || p.format != formatJSON {
		return p.flushPage()
	}
	_, err := io.WriteString(p.w, "]}\n")
	return err
}

// jsonTail is the end of a JSON reply object after its message: the
// warnings, if any, and the closing brace.
func jsonTail(res wire.Result) ([]byte, error) {
	var buf []byte
	if len(res.Warnings) > 0 {
		buf = append(buf, `,"warnings":[`...)
		for i, w := range res.Warnings {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = wire.AppendString(buf, w)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}', '\n'), nil
}

// writeCSVRows writes a chunk as CSV records, with the header first when
// header is set, as writeCSVSet does for a whole set: the records after the
// first chunk are writeCSVSet's output without its header line.
func writeCSVRows(b *strings.Builder, c *wire.ResultSet, header bool) error {
	var all, hdr strings.Builder
	if err := writeCSVSet(&all, c); err != nil {
		return err
	}
	if header {
		b.WriteString(all.String())
		return nil
	}
	if err := writeCSVSet(&hdr, &wire.ResultSet{Columns: c.Columns}); err != nil {
		return err
	}
	b.WriteString(all.String()[hdr.Len():])
	return nil
}
