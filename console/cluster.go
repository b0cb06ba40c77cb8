package console

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The cluster page reads SHOW CLUSTER STATUS for people: its node rows and
// its domain rows in tables of their own, each without the columns that
// hold nothing for its rows, the leader and how many nodes are available
// at a glance, long ids shortened with the whole value on hover, and no
// NULL (an empty cell). Every column is read by its name, never by its
// position, so that columns SHOW CLUSTER STATUS gains later are shown too:
// an unknown column gets a label made of its name and its values as the
// statement wrote them.

// cell is one value as a view shows it: its text ("" for null), the whole
// value as its title when the text shortens it, a class that colours it,
// and a badge shown beside the text (a node's "leader").
type cell struct {
	Text  string `json:"text,omitempty"`
	Title string `json:"title,omitempty"`
	Class string `json:"class,omitempty"`
	Badge string `json:"badge,omitempty"`
}

// viewColumn is one column of a view table: the statement's column name
// and the label the page shows.
type viewColumn struct {
	Name  string `json:"name"`
	Label string `json:"label"`
}

// viewTable is a table as the page shows it, every cell rendered.
type viewTable struct {
	Columns []viewColumn `json:"columns"`
	Rows    [][]cell     `json:"rows"`
}

// clusterView is the cluster page's content.
type clusterView struct {
	// Leader is the leader node's name, "" when no node says it leads.
	Leader string `json:"leader"`
	// Nodes and Available count the node rows and those available;
	// Available is -1 when the status has no available column.
	Nodes     int `json:"nodes"`
	Available int `json:"available"`
	// Domains counts the domain rows.
	Domains int `json:"domains"`
	// NodeTable and DomainTable are the node and domain rows; Other holds
	// rows of a kind the console does not know, nil when there are none.
	NodeTable   viewTable  `json:"node_table"`
	DomainTable viewTable  `json:"domain_table"`
	Other       *viewTable `json:"other,omitempty"`
}

// columnLabels are the labels of the columns the console knows; any other
// column is labelled by its name (columnLabel).
var columnLabels = map[string]string{
	"name":          "Name",
	"incarnation":   "Incarnation",
	"voter":         "Voter",
	"leader":        "Role",
	"available":     "Availability",
	"revision":      "Revision",
	"authority":     "Authority",
	"generation":    "Generation",
	"status":        "Status",
	"clock_failure": "Clock failure",
	"pace":          "Pace",
	"period":        "Period",
	"skew":          "Skew",
	"raft_term":     "Raft term",
	"warnings":      "Warnings",
	"cordoned":      "Cordoned",
	"placement":     "Placement",
}

// columnLabel is name's label: its known label, or the name with spaces
// for underscores and a capital first letter.
func columnLabel(name string) string {
	if l, ok := columnLabels[name]; ok {
		return l
	}
	s := strings.ReplaceAll(name, "_", " ")
	if r, n := utf8.DecodeRuneInString(s); n > 0 && r < utf8.RuneSelf {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

// newClusterView lays SHOW CLUSTER STATUS's table out for the page.
func newClusterView(t *table) *clusterView {
	if t == nil {
		return nil
	}
	col := make(map[string]int, len(t.Columns))
	for i, c := range t.Columns {
		if _, dup := col[c]; !dup {
			col[c] = i
		}
	}
	get := func(row []*string, name string) (string, bool) {
		i, ok := col[name]
		if !ok || i >= len(row) || row[i] == nil {
			return "", false
		}
		return *row[i], true
	}
	v := &clusterView{Available: -1}
	if _, ok := col["available"]; ok {
		v.Available = 0
	}
	var nodes, domains, other [][]*string
	for _, row := range t.Rows {
		kind, _ := get(row, "kind")
		switch kind {
		case "node":
			nodes = append(nodes, row)
			v.Nodes++
			if a, _ := get(row, "available"); a == "yes" {
				v.Available++
			}
			if l, _ := get(row, "leader"); l == "yes" && v.Leader == "" {
				v.Leader, _ = get(row, "name")
			}
		case "domain":
			// The cluster page is about clock authorities: an unpaced
			// domain has none, and the domains page lists it.
			if pace, _ := get(row, "pace"); pace == "UNPACED" {
				continue
			}
			domains = append(domains, row)
			v.Domains++
		default:
			other = append(other, row)
		}
	}
	v.NodeTable = section(t.Columns, nodes, "node", get)
	v.DomainTable = section(t.Columns, domains, "domain", get)
	if len(other) > 0 {
		o := section(t.Columns, other, "", get)
		v.Other = &o
	}
	return v
}

// section is the view table of rows: the name column first, then every
// other column in the status's order but kind and those null in every row
// (a node has no authority, a domain no incarnation). kind is the rows'
// kind ("" for rows of another kind, which keep their kind column).
func section(columns []string, rows [][]*string, kind string, get func([]*string, string) (string, bool)) viewTable {
	var names []string
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		for _, row := range rows {
			if _, ok := get(row, name); ok {
				names = append(names, name)
				return
			}
		}
	}
	add("name")
	for _, c := range columns {
		if c != "kind" || kind == "" {
			add(c)
		}
	}
	vt := viewTable{Columns: make([]viewColumn, len(names)), Rows: make([][]cell, 0, len(rows))}
	for i, n := range names {
		vt.Columns[i] = viewColumn{Name: n, Label: columnLabel(n)}
		if n == "name" && kind != "" {
			vt.Columns[i].Label = strings.ToUpper(kind[:1]) + kind[1:]
		}
	}
	for _, row := range rows {
		out := make([]cell, len(names))
		for i, n := range names {
			s, ok := get(row, n)
			if !ok {
				continue
			}
			out[i] = clusterCell(n, s, row, get)
		}
		vt.Rows = append(vt.Rows, out)
	}
	return vt
}

// clusterCell renders the value s of column name.
func clusterCell(name, s string, row []*string, get func([]*string, string) (string, bool)) cell {
	switch name {
	case "name":
		c := cell{Text: s}
		if l, _ := get(row, "leader"); l == "yes" {
			c.Badge = "leader"
		}
		return c
	case "incarnation", "raft_term":
		return shortID(s)
	case "authority":
		return authorityCell(s)
	case "leader":
		switch s {
		case "yes":
			return cell{Text: "leader", Class: "ok"}
		case "no":
			if v, _ := get(row, "voter"); v == "no" {
				return cell{Text: "non-voter", Class: "muted"}
			}
			return cell{Text: "follower", Class: "muted"}
		}
	case "voter":
		switch s {
		case "yes":
			return cell{Text: "voter"}
		case "no":
			return cell{Text: "non-voter", Class: "muted"}
		}
	case "available":
		switch s {
		case "yes":
			return cell{Text: "available", Class: "ok dot"}
		case "no":
			return cell{Text: "unavailable", Class: "bad dot"}
		}
	case "status":
		return cell{Text: s, Class: "status " + strings.Map(classRune, s)}
	case "clock_failure", "warnings":
		return cell{Text: s, Class: "bad wrap"}
	case "cordoned":
		switch s {
		case "yes":
			return cell{Text: "cordoned", Class: "warn"}
		case "no":
			return cell{}
		}
	}
	return cell{Text: s, Class: "wrap"}
}

// classRune keeps the runes of a CSS class name, dropping the others.
func classRune(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
		return r
	}
	return -1
}

// shortIDDigits is how many leading characters a shortened id keeps.
const shortIDDigits = 6

// shortID is an id (an incarnation, 20 digits) shortened to its first
// shortIDDigits characters and "…", the whole id its title; a short one
// is kept whole.
func shortID(s string) cell {
	if utf8.RuneCountInString(s) <= shortIDDigits+2 {
		return cell{Text: s}
	}
	return cell{Text: string([]rune(s)[:shortIDDigits]) + "…", Title: s, Class: "id"}
}

// authorityCell is a domain's authority, "node#incarnation" (SHOW
// CLUSTER STATUS) or "node#incarnation@revision" (DESCRIBE DOMAIN), as the
// node's name and its shortened incarnation (and the revision), the whole
// authority its title; "unassigned" (with its revision) is muted.
func authorityCell(s string) cell {
	if s == "unassigned" || strings.HasPrefix(s, "unassigned@") {
		return cell{Text: s, Class: "muted"}
	}
	node, inc, ok := strings.Cut(s, "#")
	if !ok {
		return cell{Text: s, Class: "wrap"}
	}
	inc, rev, hasRev := strings.Cut(inc, "@")
	if _, err := strconv.ParseUint(inc, 10, 64); err != nil || len(inc) <= shortIDDigits+2 {
		return cell{Text: s}
	}
	text := node + " #" + inc[:shortIDDigits] + "…"
	if hasRev {
		text += " @" + rev
	}
	return cell{Text: text, Title: s, Class: "id"}
}

// listView lays the domain list out for the page: its cells rendered as
// the cluster page's (an authority shortened, a null empty), the name
// first as the page links it.
func listView(t *table) *viewTable {
	if t == nil {
		return nil
	}
	col := make(map[string]int, len(t.Columns))
	for i, c := range t.Columns {
		col[c] = i
	}
	get := func(row []*string, name string) (string, bool) {
		i, ok := col[name]
		if !ok || i >= len(row) || row[i] == nil {
			return "", false
		}
		return *row[i], true
	}
	vt := &viewTable{Columns: make([]viewColumn, len(t.Columns)), Rows: make([][]cell, 0, len(t.Rows))}
	for i, c := range t.Columns {
		vt.Columns[i] = viewColumn{Name: c, Label: columnLabel(c)}
	}
	for _, row := range t.Rows {
		out := make([]cell, len(t.Columns))
		for i, c := range t.Columns {
			if s, ok := get(row, c); ok {
				out[i] = clusterCell(c, s, row, get)
			}
		}
		vt.Rows = append(vt.Rows, out)
	}
	return vt
}
