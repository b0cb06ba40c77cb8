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
const knownMeta = `\? or \h (help), \i FILE (run a script file), \timing [on|off], \q (leave)`

// parseMeta recognises help, exit and quit (an optional trailing ';' is
// allowed) and any line starting with a backslash. Backslash commands are
// never statements, so an unknown one is refused rather than left to open a
// continuation prompt.
func parseMeta(line string) (metaCommand, bool) {
	l := strings.TrimSpace(line)
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
// the shell goes on; only an output failure is returned.
func (s *shell) runMeta(ctx context.Context, out io.Writer, cmd metaCommand) (leave bool, err error) {
	var msg string
	switch cmd.name {
	case "exit":
		return true, nil
	case "help":
		if _, err := io.WriteString(out, helpText); err != nil {
			return false, ioError(err)
		}
		return false, nil
	case `\timing`:
		switch strings.ToLower(cmd.arg) {
		case "":
			s.run.timing = !s.run.timing
		case "on":
			s.run.timing = true
		case "off":
			s.run.timing = false
		default:
			msg = fmt.Sprintf(`\timing takes on or off, not %q`, cmd.arg)
		}
		if msg == "" {
			state := "off"
			if s.run.timing {
				state = "on"
			}
			return false, writeLine(out, "timing is "+state)
		}
	case `\i`:
		if cmd.arg == "" {
			msg = `\i needs a file: \i FILE`
			break
		}
		if err := s.editor.SaveHistory(`\i ` + cmd.arg); err != nil {
			fmt.Fprintf(s.stderr, "warning: cannot save history: %v\n", err)
		}
		b, err := readFileLimited(cmd.arg, maxScriptBytes)
		if err != nil {
			msg = fmt.Sprintf(`\i: %v`, err)
			break
		}
		return false, s.runCancellable(ctx, cmd.arg, grammar.Split(string(b)))
	default:
		msg = fmt.Sprintf("unknown command %s; the shell knows %s, and statements end with ';'", cmd.name, knownMeta)
	}
	if _, err := fmt.Fprintln(s.stderr, "error: "+msg); err != nil {
		return false, ioError(err)
	}
	return false, nil
}
