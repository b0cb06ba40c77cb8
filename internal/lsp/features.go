package lsp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/internal/complete"
	"github.com/nspl-dev/nspl/planner"
)

// lspPosition is a 0-based line and a 0-based character offset in UTF-16
// code units on that line, as LSP counts them.
type lspPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start lspPosition `json:"start"`
	End   lspPosition `json:"end"`
}

type diagnostic struct {
	Range    lspRange `json:"range"`
	Severity int      `json:"severity"`
	Source   string   `json:"source"`
	Message  string   `json:"message"`
}

type publishParams struct {
	URI         string       `json:"uri"`
	Diagnostics []diagnostic `json:"diagnostics"`
}

// positionOf converts the byte offset off of text to an LSP position.
// Lines end at '\n' (a '\r' before it is the line's last character).
func positionOf(text string, off int) lspPosition {
	off = max(0, min(off, len(text)))
	var p lspPosition
	lineStart := 0
	for i := 0; i < off; i++ {
		if text[i] == '\n' {
			p.Line++
			lineStart = i + 1
		}
	}
	for _, r := range text[lineStart:off] {
		p.Character += utf16Len(r)
	}
	return p
}

// offsetOf converts an LSP position to a byte offset of text. A line past
// the end is the end of text; a character past its line's end is the end
// of the line; one inside a character's UTF-16 pair is that character's
// start.
func offsetOf(text string, p lspPosition) int {
	off := 0
	for line := 0; line < p.Line; line++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	units := 0
	for off < len(text) && text[off] != '\n' {
		r, size := utf8.DecodeRuneInString(text[off:])
		if units+utf16Len(r) > p.Character {
			break
		}
		units += utf16Len(r)
		off += size
	}
	return off
}

func utf16Len(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

func rangeOf(text string, start, end int) lspRange {
	return lspRange{Start: positionOf(text, start), End: positionOf(text, end)}
}

// diagnose parses and plans text as a script does and returns its error,
// if any, as a diagnostic over the token it starts at. Command lines
// (\sleep, \wait, \set, …; grammar.CommandLines) are the runner's, not
// statements: they are blanked first, so positions stay the document's.
func diagnose(text string) []diagnostic {
	statements, _ := grammar.CommandLines(text)
	_, err := planner.PlanScript(statements)
	if err == nil {
		return []diagnostic{}
	}
	d := diagnostic{Severity: 1, Source: "nspl", Message: err.Error()}
	var ge *grammar.Error
	if errors.As(err, &ge) {
		d.Message = ge.Msg
		start := max(0, min(ge.Pos.Offset, len(text)))
		d.Range = rangeOf(text, start, tokenEnd(text, start))
	}
	return []diagnostic{d}
}

// tokenEnd returns the end of the token that starts at off: a quoted
// string or name to its closing quote (or the line's end), any other run
// of characters to white space or punctuation, and at least one character
// when one that is not a line break is there.
func tokenEnd(text string, off int) int {
	if off >= len(text) {
		return off
	}
	if q := text[off]; q == '\'' || q == '`' {
		for i := off + 1; i < len(text); i++ {
			switch text[i] {
			case q:
				return i + 1
			case '\n':
				return i
			}
		}
		return len(text)
	}
	end := off
	for end < len(text) && !strings.ContainsRune(" \t\r\n;(),'`", rune(text[end])) {
		end++
	}
	if end == off && text[off] != '\n' && text[off] != '\r' {
		_, size := utf8.DecodeRuneInString(text[off:])
		end += size
	}
	return end
}

// createdDomain is a CREATE … DOMAIN statement of a document, with byte
// offsets.
type createdDomain struct {
	name               string
	detail             string
	stmtStart, stmtEnd int
	nameStart, nameEnd int
}

// createdDomains returns the domains text creates, in order. Each
// statement is parsed alone, so one that does not parse hides no other.
func createdDomains(text string) []createdDomain {
	var out []createdDomain
	statements, _ := grammar.CommandLines(text)
	for _, st := range grammar.Split(statements).Statements {
		parsed, err := grammar.ParseStatement(st.Text)
		if err != nil {
			continue
		}
		cd, ok := parsed.(*grammar.CreateDomain)
		if !ok {
			continue
		}
		detail := "unpaced domain"
		if cd.Pace == grammar.Paced {
			detail = "paced domain"
		}
		base := st.Start.Offset
		out = append(out, createdDomain{
			name: cd.Name.Value, detail: detail,
			stmtStart: base, stmtEnd: base + len(st.Text),
			nameStart: base + cd.Name.Start.Offset, nameEnd: base + cd.Name.End.Offset,
		})
	}
	return out
}

// LSP kinds.
const (
	completionKeyword = 14
	completionSnippet = 15
	completionValue   = 12
	symbolModule      = 2
)

type completionItem struct {
	Label    string    `json:"label"`
	Kind     int       `json:"kind"`
	Detail   string    `json:"detail,omitempty"`
	TextEdit *textEdit `json:"textEdit,omitempty"`
}

type textEdit struct {
	Range   lspRange `json:"range"`
	NewText string   `json:"newText"`
}

type completionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []completionItem `json:"items"`
}

// completion returns the completions at pos: the shell's completer's
// keywords and domain names (those the document creates, and the node's
// when Options.Domains is set), and at a statement's start the help's
// example statements.
func (s *server) completion(ctx context.Context, text string, pos lspPosition) completionList {
	off := offsetOf(text, pos)
	prefix := text[:off]
	domains := func() []string {
		var names []string
		for _, d := range createdDomains(text) {
			names = append(names, d.name)
		}
		if s.opts.Domains != nil {
			dctx, cancel := context.WithTimeout(ctx, s.opts.DomainsTimeout)
			node, err := s.opts.Domains(dctx)
			cancel()
			if err != nil && s.opts.Log != nil {
				fmt.Fprintf(s.opts.Log, "nspl lsp: completion offers no node's domain names: %v\n", err)
			}
			names = append(names, node...)
		}
		sort.Strings(names)
		return slicesCompact(names)
	}
	words, partial := complete.Candidates(prefix, domains)
	start := off - len(partial)
	r := rangeOf(text, start, off)
	list := completionList{Items: []completionItem{}}
	for _, w := range words {
		item := completionItem{Label: w.Text, Kind: completionKeyword, Detail: "keyword", TextEdit: &textEdit{Range: r, NewText: w.Text}}
		if w.Kind == complete.Domain {
			item.Kind, item.Detail = completionValue, "domain"
		}
		list.Items = append(list.Items, item)
	}
	if atStatementStart(text[:start]) {
		for _, ex := range helpExamples(s.opts.Help) {
			if len(ex) >= len(partial) && strings.EqualFold(ex[:len(partial)], partial) {
				list.Items = append(list.Items, completionItem{Label: ex, Kind: completionSnippet, Detail: "statement", TextEdit: &textEdit{Range: r, NewText: ex}})
			}
		}
	}
	return list
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// atStatementStart reports whether a new statement begins after prefix.
func atStatementStart(prefix string) bool {
	sc := grammar.Split(prefix)
	if sc.Err != nil {
		return false
	}
	n := len(sc.Statements)
	return n == 0 || sc.Statements[n-1].Terminated
}

// helpEntry is one entry of the shell's help: a statement's syntax line and
// the example lines under it, or a paragraph line of its own.
type helpEntry struct {
	syntax   string
	examples []string
}

// helpEntries cuts the shell's help into entries: a line indented two
// spaces starts a statement's entry, a line indented six is an example of
// the entry before it, any other non-empty line is an entry of its own.
func helpEntries(help string) []helpEntry {
	var out []helpEntry
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "      ") && len(out) > 0:
			out[len(out)-1].examples = append(out[len(out)-1].examples, strings.TrimSpace(line))
		default:
			out = append(out, helpEntry{syntax: strings.TrimSpace(line)})
		}
	}
	return out
}

// helpExamples returns the example statements of the help.
func helpExamples(help string) []string {
	var out []string
	for _, e := range helpEntries(help) {
		out = append(out, e.examples...)
	}
	return out
}

type hoverResult struct {
	Contents markupContent `json:"contents"`
	Range    lspRange      `json:"range"`
}

type markupContent struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// hover returns the help of the keyword at pos: the help's entries whose
// syntax names it; nil when pos is on no keyword.
func hover(help, text string, pos lspPosition) *hoverResult {
	off := offsetOf(text, pos)
	start, end := off, off
	for start > 0 && isWordByte(text[start-1]) {
		start--
	}
	for end < len(text) && isWordByte(text[end]) {
		end++
	}
	word := strings.ToUpper(text[start:end])
	if word == "" || !grammar.IsKeyword(word) || inStringOrComment(text, start) {
		return nil
	}
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(word) + `\b`)
	var b strings.Builder
	for _, e := range helpEntries(help) {
		if !re.MatchString(e.syntax) {
			continue
		}
		b.WriteString(e.syntax + "\n")
		for _, ex := range e.examples {
			b.WriteString("    " + ex + "\n")
		}
	}
	value := fmt.Sprintf("**%s** is an NSPL keyword.", word)
	if b.Len() > 0 {
		value = fmt.Sprintf("**%s**\n\n```\n%s```", word, b.String())
	}
	return &hoverResult{Contents: markupContent{Kind: "markdown", Value: value}, Range: rangeOf(text, start, end)}
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// inStringOrComment reports whether the byte at off lies inside a string,
// a quoted name or a comment, where a word is no keyword.
func inStringOrComment(text string, off int) bool {
	sc := grammar.Split(text[:off] + " x;")
	if sc.Err != nil {
		return true // an unterminated string, name or block comment
	}
	n := len(sc.Statements)
	// Outside them the probe is a statement's last word and ';'; in a
	// line comment it is swallowed.
	return n == 0 || sc.Statements[n-1].End.Offset != off+3
}

// formatting returns the edit that makes text what nspl fmt makes it: one
// edit replacing the whole document, none when it already is, and none
// when it does not parse (its diagnostic says why).
func formatting(text string) []textEdit {
	out, err := grammar.Format(text)
	if err != nil || out == text {
		return []textEdit{}
	}
	return []textEdit{{Range: rangeOf(text, 0, len(text)), NewText: out}}
}

type documentSymbol struct {
	Name           string   `json:"name"`
	Detail         string   `json:"detail"`
	Kind           int      `json:"kind"`
	Range          lspRange `json:"range"`
	SelectionRange lspRange `json:"selectionRange"`
}

// documentSymbols returns the domains text creates.
func documentSymbols(text string) []documentSymbol {
	out := []documentSymbol{}
	for _, d := range createdDomains(text) {
		out = append(out, documentSymbol{
			Name: d.name, Detail: d.detail, Kind: symbolModule,
			Range:          rangeOf(text, d.stmtStart, d.stmtEnd),
			SelectionRange: rangeOf(text, d.nameStart, d.nameEnd),
		})
	}
	return out
}
