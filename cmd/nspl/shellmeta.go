package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/nspl-dev/nspl/grammar"
)

// metaCommand is a shell command that is not a statement: help, exit, or a
// backslash command typed at the start of a statement.
type metaCommand struct {
	name string // "help", "exit", or the backslash command as typed: \i
	arg  string // the rest of the line, trimmed
}

// knownMeta lists the backslash commands, as the refusal of an unknown one
// prints them.
const knownMeta = `\? or \h (help), \i FILE (run a script file), \timing [on|off], \x [on|off|auto] (expanded display), \set [NAME [VALUE]], \unset NAME, \o [FILE] (replies to FILE), \watch [SECONDS [COUNT]], \sleep DURATION, \wait tick N, \d [NAME|PATTERN], \dt [PATTERN], \l (list or describe domains), \q (leave)`

// parseMeta recognises help, exit and quit (an optional trailing ';' is
// allowed), any line starting with a backslash and, for sqlite3's habits,
// any line starting with a dot. Neither is ever a statement, so an unknown
// one is refused rather than left to open a continuation prompt.
func parseMeta(line string) (metaCommand, bool) {
	l := strings.TrimSpace(line)
	if strings.HasPrefix(l, ".") {
		name, arg, _ := strings.Cut(l, " ")
		return metaCommand{name: strings.ToLower(strings.TrimSuffix(name, ";")), arg: strings.TrimSpace(arg)}, true
	}
	if strings.HasPrefix(l, `\`) {
		name, arg, _ := strings.Cut(l, " ")
		arg = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(arg), ";"))
		name = strings.TrimSuffix(name, ";")
		switch strings.ToLower(name) {
		case `\?`, `\h`:
			return metaCommand{name: "help"}, true
		case `\q`:
			return metaCommand{name: "exit"}, true
		}
		return metaCommand{name: name, arg: arg}, true
	}
	w := strings.ToLower(strings.TrimSpace(strings.TrimSuffix(l, ";")))
	switch w {
	case "help":
		return metaCommand{name: "help"}, true
	case "exit", "quit":
		return metaCommand{name: "exit"}, true
	}
	return metaCommand{}, false
}

// runMeta runs cmd and reports whether the shell should leave. Problems with
// the command (an unknown one, a missing file) are reported on stderr and
// the shell goes on; only an output failure is returned. Ctrl-C stops a
// command that runs statements (\i, \d, \watch) through interrupt.
func (s *shell) runMeta(ctx context.Context, out io.Writer, cmd metaCommand) (leave bool, err error) {
	switch cmd.name {
	case "exit":
		return true, nil
	case "help":
		if _, err := io.WriteString(out, helpText); err != nil {
			return false, ioError(err)
		}
		return false, nil
	case `\i`:
		if cmd.arg != "" {
			if err := s.editor.SaveHistory(`\i ` + cmd.arg); err != nil {
				fmt.Fprintf(s.stderr, "warning: cannot save history: %v\n", err)
			}
		}
	}
	var res metaResult
	err = s.cancellable(ctx, func(ctx context.Context) error {
		var err error
		res, err = s.run.meta(ctx, "", cmd, false)
		return err
	})
	if err != nil || res.leave {
		return res.leave, err
	}
	if res.msg != "" {
		if _, err := fmt.Fprintln(s.stderr, "error: "+res.msg); err != nil {
			return false, ioError(err)
		}
	}
	return false, nil
}

// listOrDescribe is the statement a psql describe or list command stands
// for: DESCRIBE DOMAIN for \d with a name that is no pattern, LIST DOMAINS
// otherwise, with LIKE for a pattern (psql's * and ? as LIKE's % and _).
func listOrDescribe(name, arg string) (string, error) {
	if arg == "" {
		return "LIST DOMAINS;", nil
	}
	if name == `\d` && !strings.ContainsAny(arg, "*?") {
		n, err := grammar.ParseName(arg)
		if err != nil {
			return "", fmt.Errorf(`\d takes a domain name or a pattern with * or ?: %v`, err)
		}
		return "DESCRIBE DOMAIN " + grammar.FormatName(n) + ";", nil
	}
	like := strings.NewReplacer("'", "''", "*", "%", "?", "_").Replace(arg)
	return "LIST DOMAINS LIKE '" + like + "';", nil
}
