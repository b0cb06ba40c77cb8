package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// toolOptions are the invocations that describe nspl or complete its input
// instead of running statements: --version, help, completion and --suggest.
type toolOptions struct {
	version    bool
	help       bool
	helpArgs   []string
	completion string  // the shell nspl completion prints a script for
	suggest    *string // --suggest TEXT; nil when not given
	cursor     int     // --cursor BYTE; -1 is the end of TEXT
}

// addToolFlags registers --version, --suggest and --cursor on nspl's own
// flag set.
func addToolFlags(fs *flag.FlagSet, t *toolOptions) {
	t.cursor = -1
	fs.BoolVar(&t.version, "version", false, "print the version and build information, then exit")
	fs.Func("suggest", "print the completions of the statement `TEXT` at --cursor as JSON, then exit", func(s string) error {
		t.suggest = &s
		return nil
	})
	fs.IntVar(&t.cursor, "cursor", -1, "with --suggest, the byte offset `BYTE` of the cursor in TEXT (default: its end)")
}

// active reports whether t replaces the run (a --cursor without --suggest
// does too, to be refused).
func (t toolOptions) active() bool {
	return t.version || t.help || t.completion != "" || t.suggest != nil || t.cursor != -1
}

// parseToolArgs parses nspl help [COMMAND], nspl version and nspl
// completion SHELL.
func parseToolArgs(o options, name string, args []string) (options, error) {
	if name == "help" {
		if len(args) > 0 && isHelpArg(args[0]) {
			return o, &helpRequest{command: "help"}
		}
		o.tool.help, o.tool.helpArgs = true, args
		return o, nil
	}
	fs := flag.NewFlagSet("nspl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return o, flagParseError(fs, name, err)
	}
	rest := fs.Args()
	if name == "version" {
		if len(rest) > 0 {
			return o, usageErrorf("version: unexpected argument %q", rest[0])
		}
		o.tool.version = true
		return o, nil
	}
	if len(rest) != 1 {
		return o, usageErrorf("completion: name one shell: bash, zsh or fish")
	}
	if _, ok := completionScripts[rest[0]]; !ok {
		return o, usageErrorf("completion: unknown shell %q; use bash, zsh or fish", rest[0])
	}
	o.tool.completion = rest[0]
	return o, nil
}

// runTool runs --version, help, completion or --suggest.
func (m *Main) runTool(ctx context.Context, opts options) error {
	t := opts.tool
	if opts.serve != nil || opts.admin != nil || opts.subcommand() || len(opts.sources) > 0 {
		return usageErrorf("--version, --suggest, help and completion run alone; drop -f, -c and the subcommand")
	}
	switch {
	case t.help:
		return m.runHelp(ctx, t.helpArgs)
	case t.version:
		return m.printVersion()
	case t.completion != "":
		return writeLine(m.Stdout, completionScript(t.completion))
	}
	return m.runSuggest(ctx, opts)
}

// suggestReply is what nspl --suggest prints: one JSON object on one line.
// Completion scripts read it with a pattern, so the field order is fixed
// and a candidate's text never needs escaping (keywords and domain names,
// bare or in backticks).
type suggestReply struct {
	Candidates []suggestCandidate `json:"candidates"`
}

type suggestCandidate struct {
	Text    string    `json:"text"`
	Kind    string    `json:"kind"`
	Replace textRange `json:"replace"`
}

// textRange is the byte range of TEXT a candidate replaces, from Start to
// End (the cursor).
type textRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// runSuggest prints the completions of TEXT at the cursor: the shell's
// completer, so keywords come from the grammar and domain names from the
// node. Only a position that takes a domain name reaches a node, and only
// one named by --connect or --data-dir; an in-memory node would have none.
// When the node cannot be reached the keywords are still printed and the
// failure goes to stderr.
func (m *Main) runSuggest(ctx context.Context, opts options) error {
	if opts.tool.suggest == nil {
		return usageErrorf("--cursor needs --suggest TEXT")
	}
	text, cursor := *opts.tool.suggest, opts.tool.cursor
	if cursor == -1 {
		cursor = len(text)
	}
	if cursor < 0 || cursor > len(text) {
		return usageErrorf("--cursor %d is outside the %d bytes of --suggest's text", cursor, len(text))
	}
	if cursor < len(text) && !utf8.RuneStart(text[cursor]) {
		return usageErrorf("--cursor %d falls inside a character; give the byte offset of a character's start", cursor)
	}
	comp := statementCompleter{domains: func() []string {
		if opts.remote.connect == "" && opts.dataDir == "" {
			return nil
		}
		sess, _, closeSession, err := m.openSession(ctx, opts)
		if err != nil {
			fmt.Fprintf(m.Stderr, "nspl: --suggest: no domain names: %s\n", termSafe(err.Error()))
			return nil
		}
		defer closeSession()
		names, err := sess.DomainNames(ctx)
		if err != nil {
			fmt.Fprintf(m.Stderr, "nspl: --suggest: no domain names: %s\n", termSafe(err.Error()))
		}
		return names
	}}
	words, partial := comp.candidates(text[:cursor])
	reply := suggestReply{Candidates: []suggestCandidate{}}
	for _, w := range words {
		reply.Candidates = append(reply.Candidates, suggestCandidate{
			Text: w.text, Kind: string(w.kind),
			Replace: textRange{Start: cursor - len(partial), End: cursor},
		})
	}
	b, err := json.Marshal(reply)
	if err != nil {
		return ioError(err)
	}
	return writeLine(m.Stdout, strings.TrimSpace(string(b)))
}
