package main

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/wire"
)

// renderResult writes one statement's reply in format:
//
//   - table: the result set as an ASCII table (header as named, cells left
//     aligned, no wrapping; a single row of more than verticalColumns
//     columns as column/value lines), then the message;
//   - plain: a result set as tab-separated lines, header first, without the
//     message; any other reply as its message;
//   - json: one JSON object per statement on one line:
//     {"statement":"…","message":"…"} plus "rows":[{column:value,…}] for a
//     result set, with keys in column order, and "warnings":["…"] when the
//     statement succeeded with warnings;
//   - csv: a result set as RFC 4180 records, header first; any other reply
//     as its message.
//
// In table, plain and csv output each warning follows as a "warning: …"
// line, and every text of the reply (message, warnings, column names and
// cells) is passed through termSafe, so a control character a server or an
// archive put in it is shown as an escape instead of acting on the
// terminal; a csv field keeps its line feeds, which its quoting marks.
func renderResult(w io.Writer, format outputFormat, res wire.Result) error {
	return renderReply(w, format, false, res)
}

// renderReply is renderResult, and with quiet (--quiet) writes only result
// sets: no message line in table, plain and csv output. JSON output is
// unchanged, its objects being data already.
func renderReply(w io.Writer, format outputFormat, quiet bool, res wire.Result) error {
	return renderReplyExpanded(w, format, quiet, expandedOff, res)
}

// renderReplyExpanded is renderReply with the shell's \x: in table output a
// result set is printed expanded (writeExpanded) when expanded is on, or
// auto and its table would be wider than autoExpandWidth.
func renderReplyExpanded(w io.Writer, format outputFormat, quiet bool, expanded expandedMode, res wire.Result) error {
	if quiet && format != formatJSON {
		res.Message = ""
	}
	if format != formatJSON {
		// The reply may come from a server: no text of it reaches the
		// terminal raw (termSafe); the set's cells are escaped as they
		// are formatted.
		res.Message = termSafe(res.Message)
		if len(res.Warnings) > 0 {
			ws := make([]string, len(res.Warnings))
			for i, w := range res.Warnings {
				ws[i] = termSafe(w)
			}
			res.Warnings = ws
		}
	}
	var b strings.Builder
	switch format {
	case formatJSON:
		buf := []byte(`{"statement":`)
		buf = wire.AppendString(buf, res.Statement)
		buf = append(buf, `,"message":`...)
		buf = wire.AppendString(buf, res.Message)
		if res.Set != nil {
			buf = append(buf, `,"rows":`...)
			buf = follow.AppendSetJSON(buf, res.Set)
		}
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
		buf = append(buf, '}', '\n')
		b.Write(buf)
	case formatCSV:
		if res.Set != nil {
			if err := writeCSVSet(&b, res.Set); err != nil {
				return err
			}
		} else if res.Message != "" {
			b.WriteString(res.Message)
			b.WriteByte('\n')
		}
		writeWarnings(&b, res.Warnings)
	case formatPlain:
		if res.Set != nil {
			writePlainSet(&b, res.Set)
		} else if res.Message != "" {
			b.WriteString(res.Message)
			b.WriteByte('\n')
		}
		writeWarnings(&b, res.Warnings)
	default:
		if res.Set != nil {
			if err := writeTableExpanded(&b, res.Set, expanded, 1); err != nil {
				return err
			}
		}
		if res.Message != "" {
			b.WriteString(res.Message)
			b.WriteByte('\n')
		}
		writeWarnings(&b, res.Warnings)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeWarnings writes each warning on a line of its own after the reply.
func writeWarnings(b *strings.Builder, warnings []string) {
	for _, w := range warnings {
		b.WriteString("warning: ")
		b.WriteString(w)
		b.WriteByte('\n')
	}
}

// verticalColumns is the number of columns above which a one-row result set
// (DESCRIBE DOMAIN) is printed as column/value pairs, one per line, rather
// than as one very wide row.
const verticalColumns = 6

// writeTable renders set as tablewriter draws it with the options below.
// Every option that changes the look is set here rather than left to the
// library's defaults, so an upgrade cannot silently change the output
// scripts compare against. A table whose text is all printable ASCII is
// drawn by appendASCIITable instead, to the same bytes: tablewriter builds
// large caches for every table it draws, a measurable share of a short
// nspl -c run.
func writeTable(w io.Writer, set *wire.ResultSet) error {
	header := make([]string, len(set.Columns))
	for i, c := range set.Columns {
		header[i] = termSafe(c.Name)
	}
	rows := make([][]string, len(set.Rows))
	for r, row := range set.Rows {
		rows[r] = make([]string, len(row))
		for i, v := range row {
			rows[r][i] = termSafe(v.String())
		}
	}
	if len(rows) == 1 && len(header) > verticalColumns {
		pairs := make([][]string, len(header))
		for i := range header {
			pairs[i] = []string{header[i], rows[0][i]}
		}
		header, rows = []string{"column", "value"}, pairs
	}
	if b, ok := appendASCIITable(nil, header, rows); ok {
		_, err := w.Write(b)
		return err
	}
	return drawTable(w, header, rows)
}

// writeTableExpanded is writeTable, or writeExpanded (its records numbered
// from first) as expanded asks.
func writeTableExpanded(w io.Writer, set *wire.ResultSet, expanded expandedMode, first int) error {
	switch expanded {
	case expandedOn:
		return writeExpanded(w, set, first)
	case expandedAuto:
		var t strings.Builder
		if err := writeTable(&t, set); err != nil {
			return err
		}
		if tableTooWide(t.String()) {
			return writeExpanded(w, set, first)
		}
		_, err := io.WriteString(w, t.String())
		return err
	}
	return writeTable(w, set)
}

// drawTable draws header and rows with tablewriter and writeTable's
// options.
func drawTable(w io.Writer, header []string, rows [][]string) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.Border{Left: tw.On, Right: tw.On, Top: tw.On, Bottom: tw.On},
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.On},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithEastAsian(tw.Off),
	)
	t.Header(header)
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// appendASCIITable appends to b the table writeTable's tablewriter draws
// for header and rows, and reports true, when there is a header, every row
// has as many cells as it, and every header and cell is printable ASCII
// (' ' to '~'): then each byte is one column wide, no cell spans lines and
// nothing is escaped or expanded, so the drawing is a plain grid. Otherwise
// it returns b unchanged and false, and tablewriter draws the table, with
// its rules for wide runes, tabs, line breaks and escape sequences.
func appendASCIITable(b []byte, header []string, rows [][]string) ([]byte, bool) {
	if len(header) == 0 {
		return b, false
	}
	widths := make([]int, len(header))
	for i, h := range header {
		if !printableASCII(h) {
			return b, false
		}
		widths[i] = len(h)
	}
	for _, row := range rows {
		if len(row) != len(header) {
			return b, false
		}
		for i, cell := range row {
			if !printableASCII(cell) {
				return b, false
			}
			widths[i] = max(widths[i], len(cell))
		}
	}
	rule := func(b []byte) []byte {
		b = append(b, '+')
		for _, w := range widths {
			for range w + 2 {
				b = append(b, '-')
			}
			b = append(b, '+')
		}
		return append(b, '\n')
	}
	line := func(b []byte, cells []string) []byte {
		b = append(b, '|')
		for i, c := range cells {
			b = append(b, ' ')
			b = append(b, c...)
			for range widths[i] - len(c) + 1 {
				b = append(b, ' ')
			}
			b = append(b, '|')
		}
		return append(b, '\n')
	}
	b = rule(b)
	b = line(b, header)
	b = rule(b)
	for _, row := range rows {
		b = line(b, row)
	}
	if len(rows) > 0 {
		b = rule(b)
	}
	return b, true
}

// printableASCII reports whether s is all bytes from ' ' to '~'.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// writePlainSet writes set as tab-separated lines, header first. Tabs and
// newlines inside values are replaced by spaces so every row stays one line.
func writePlainSet(b *strings.Builder, set *wire.ResultSet) {
	clean := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
	for i, c := range set.Columns {
		if i > 0 {
			b.WriteByte('\t')
		}
		b.WriteString(termSafe(c.Name))
	}
	b.WriteByte('\n')
	for _, row := range set.Rows {
		for i, v := range row {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(termSafe(clean.Replace(v.String())))
		}
		b.WriteByte('\n')
	}
}

// writeCSVSet writes set as RFC 4180 records, header first: fields holding
// a comma, a quote or a line break are quoted. Lines end in \n, as psql's
// CSV does, so they match the message lines around them. NULL is written
// as an empty field.
func writeCSVSet(b *strings.Builder, set *wire.ResultSet) error {
	cw := csv.NewWriter(b)
	record := make([]string, len(set.Columns))
	for i, c := range set.Columns {
		record[i] = termSafe(c.Name)
	}
	if err := cw.Write(record); err != nil {
		return err
	}
	for _, row := range set.Rows {
		for i, v := range row {
			record[i] = ""
			if v.Kind() != wire.KindNull {
				record[i] = termSafeLines(v.String())
			}
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeJSONError writes a failed statement as one JSON object on its own
// line, in place of the object its success would have printed:
//
//	{"error":{"code":"…","message":"…","position":{"line":L,"column":C,"offset":O}}}
//
// code is the failure's stable wire code, the one a remote client
// receives (a lifecycle refusal's own, such as domain_not_found or
// already_running; syntax, canceled, …; "error" when it has none), and the
// position is d's: in the script, as the diagnostic on stderr prints it.
func writeJSONError(w io.Writer, d diagnostic, err error) error {
	code := follow.EncodeError(err).Code
	buf := []byte(`{"error":{"code":`)
	buf = wire.AppendString(buf, code)
	buf = append(buf, `,"message":`...)
	buf = wire.AppendString(buf, d.Msg)
	buf = append(buf, `,"position":{"line":`...)
	buf = strconv.AppendInt(buf, int64(d.Pos.Line), 10)
	buf = append(buf, `,"column":`...)
	buf = strconv.AppendInt(buf, int64(d.Pos.Column), 10)
	buf = append(buf, `,"offset":`...)
	buf = strconv.AppendInt(buf, int64(d.Pos.Offset), 10)
	buf = append(buf, "}}}\n"...)
	_, err = w.Write(buf)
	return err
}
