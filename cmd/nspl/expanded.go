package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nspl-dev/nspl/wire"
)

// expandedMode is the shell's \x: whether table output prints each row as
// a block of column | value lines instead of a table.
type expandedMode uint8

const (
	expandedOff  expandedMode = iota
	expandedOn                // every result set
	expandedAuto              // a table wider than autoExpandWidth columns
)

func (m expandedMode) String() string {
	switch m {
	case expandedOn:
		return "on"
	case expandedAuto:
		return "auto"
	}
	return "off"
}

// autoExpandWidth is how wide a table may be before \x auto prints it
// expanded: the width of a classic terminal, since the shell does not ask
// the terminal for its own.
const autoExpandWidth = 80

// writeExpanded writes set psql's expanded way, numbering its records from
// first: per row a header line -[ RECORD n ]-+----- then one line per
// column, its name padded to the widest name, " | " and the value. Names
// and cells pass through termSafe as writeTable's do.
func writeExpanded(w io.Writer, set *wire.ResultSet, first int) error {
	names := make([]string, len(set.Columns))
	nameWidth := 0
	for i, c := range set.Columns {
		names[i] = termSafe(c.Name)
		nameWidth = max(nameWidth, utf8.RuneCountInString(names[i]))
	}
	var b strings.Builder
	for r, row := range set.Rows {
		cells := make([]string, len(row))
		valueWidth := 0
		for i, v := range row {
			cells[i] = termSafe(v.String())
			valueWidth = max(valueWidth, utf8.RuneCountInString(cells[i]))
		}
		label := "-[ RECORD " + strconv.Itoa(first+r) + " ]"
		b.WriteString(label)
		if pad := nameWidth + 1 - len(label); pad > 0 {
			b.WriteString(strings.Repeat("-", pad))
		}
		b.WriteString("+")
		b.WriteString(strings.Repeat("-", valueWidth+1))
		b.WriteByte('\n')
		for i, cell := range cells {
			name := ""
			if i < len(names) {
				name = names[i]
			}
			fmt.Fprintf(&b, "%s%s | %s\n", name, strings.Repeat(" ", nameWidth-utf8.RuneCountInString(name)), cell)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tableTooWide reports whether drawn, a table writeTable drew, is wider
// than autoExpandWidth.
func tableTooWide(drawn string) bool {
	line, _, _ := strings.Cut(drawn, "\n")
	return utf8.RuneCountInString(line) > autoExpandWidth
}
