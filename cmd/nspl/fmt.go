package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/internal/atomicfile"
)

// fmtUsage is what nspl fmt --help prints.
const fmtUsage = `nspl fmt - lay out .nspl scripts canonically

Usage:
  nspl fmt [--check] [--diff] [FILE|DIR|-]...

Each FILE is rewritten in place (crash-safely, keeping its mode) when
formatting changes it; a DIR stands for every *.nspl file under it,
recursively; - reads stdin and writes the result to stdout, as does no
argument at all when stdin is not a terminal. No symbolic link is
followed: one inside a DIR is skipped with a note on stderr, and one given
as an argument is refused.

Flags:
  --check     write nothing; print the name of each file formatting would
              change, and exit 1 if there is one
  --diff      write nothing; print a unified diff of what formatting would
              change (with --check, instead of the names)
  -h, --help  print this help

The layout: keywords upper-case, one statement per line ending in ';',
tokens one space apart, names lower-case with backticks only where needed,
strings in single quotes. Statements a blank line separated stay separated
by one. Every comment stays where it was: on its statement's line, or on
a line of its own. Formatting formatted text changes nothing, and the
formatted text means the same statements.

Exit codes:
  0  every file is formatted (or was rewritten)
  1  with --check: a file is not formatted
  2  usage error
  3  a file does not parse: FILE:LINE:COL: error: message
  4  I/O error: a file could not be read or written
When several apply the highest wins; every file is still visited.
`

// fmtOptions are the parsed nspl fmt command line.
type fmtOptions struct {
	check bool
	diff  bool
	paths []string
}

// fmtFlagSet is nspl fmt's flags, which parse into o; the completion
// scripts list them from it.
func fmtFlagSet(o *fmtOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("nspl fmt", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&o.check, "check", false, "write nothing; list the files formatting would change")
	fs.BoolVar(&o.diff, "diff", false, "write nothing; print a diff of what formatting would change")
	return fs
}

// parseFmtArgs parses args (after "fmt"). Flags may come before, between
// or after the paths; "--" ends the flags. It returns flag.ErrHelp when help
// was asked for.
func parseFmtArgs(args []string) (fmtOptions, error) {
	var o fmtOptions
	paths, err := parseFlagsAndPaths(fmtFlagSet(&o), "fmt", args)
	if err != nil {
		return o, err
	}
	o.paths = paths
	stdin := 0
	for _, p := range o.paths {
		switch {
		case p == "":
			return o, usageErrorf("fmt: empty path; give a file, a directory or - for stdin")
		case p == "-":
			stdin++
		}
	}
	if stdin > 1 {
		return o, usageErrorf("fmt: stdin (-) can be read only once")
	}
	return o, nil
}

// runFmt runs nspl fmt with args (after "fmt").
func (m *Main) runFmt(_ context.Context, args []string) error {
	opts, err := parseFmtArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		return m.writeText(fmtUsage)
	}
	if err != nil {
		return err
	}
	if len(opts.paths) == 0 {
		if m.stdinIsTerminal() {
			return usageErrorf("fmt: give the files or directories to format, or - to format stdin")
		}
		opts.paths = []string{"-"}
	}
	f := &formatRun{m: m, opts: opts}
	for _, p := range opts.paths {
		f.visit(p)
	}
	return f.result()
}

// formatRun formats the paths of one nspl fmt and remembers the worst
// outcome. Each problem is printed as it is found, so a run reports every
// file, not only the first bad one.
type formatRun struct {
	m           *Main
	opts        fmtOptions
	unformatted int // files --check found unformatted
	syntax      int // files that do not parse
	io          int // reads and writes that failed
}

// visit formats one command-line path: stdin, a file or a directory.
//
// It follows no symbolic link: a link named on the command line is refused
// (an I/O error, exit 4), and one met while walking a directory is skipped
// with a note on stderr, whatever it points to, so a link cannot make fmt
// rewrite a file outside the tree it was given or twice inside it.
func (f *formatRun) visit(path string) {
	if path == "-" {
		f.stdin()
		return
	}
	fi, err := os.Lstat(path)
	if err != nil {
		f.ioFailed(err)
		return
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		f.ioFailed(fmt.Errorf("%s is a symbolic link; nspl fmt writes through no link, so name the file it points to", path))
		return
	}
	if !fi.IsDir() {
		f.file(path)
		return
	}
	err = walkScripts(path, "fmt", f.m.Stderr,
		func(p string, _ fs.DirEntry) { f.file(p) },
		func(_ string, err error) { f.ioFailed(err) })
	if err != nil {
		f.ioFailed(err)
	}
}

// file formats the file at path, rewriting it unless --check or --diff
// asked only to look. path is never followed through a symbolic link: a
// link is not a regular file here, and the rewrite replaces the path
// itself (atomicfile.WriteFile follows no link).
func (f *formatRun) file(path string) {
	fi, err := os.Lstat(path)
	if err != nil {
		f.ioFailed(err)
		return
	}
	if !fi.Mode().IsRegular() {
		f.ioFailed(fmt.Errorf("%s is not a regular file; give a .nspl file or a directory", path))
		return
	}
	b, err := readFileLimited(path, maxScriptBytes)
	if err != nil {
		f.ioFailed(err)
		return
	}
	src := string(b)
	out, ok := f.format(path, src)
	if !ok || out == src {
		return
	}
	if f.opts.check || f.opts.diff {
		f.report(path, src, out)
		return
	}
	if err := atomicfile.WriteFile(path, []byte(out), fi.Mode().Perm()); err != nil {
		f.ioFailed(err)
	}
}

// stdin formats stdin to stdout, or with --check or --diff only reports.
func (f *formatRun) stdin() {
	const name = "<stdin>"
	b, err := readLimited(f.m.Stdin, maxScriptBytes, "the script on stdin")
	if err != nil {
		f.ioFailed(fmt.Errorf("read stdin: %w", err))
		return
	}
	src := string(b)
	out, ok := f.format(name, src)
	switch {
	case !ok:
	case f.opts.check || f.opts.diff:
		if out != src {
			f.report(name, src, out)
		}
	default:
		if _, err := io.WriteString(f.m.Stdout, out); err != nil {
			f.ioFailed(fmt.Errorf("write stdout: %w", err))
		}
	}
}

// format formats src, printing a positioned diagnostic when it does not
// parse.
func (f *formatRun) format(name, src string) (string, bool) {
	out, err := grammar.Format(src)
	if err == nil {
		return out, true
	}
	f.syntax++
	d := diagnostic{File: name, Source: src, Msg: err.Error()}
	var ge *grammar.Error
	if errors.As(err, &ge) {
		d.Pos, d.Msg = ge.Pos, ge.Msg
	}
	if werr := d.write(f.m.Stderr); werr != nil {
		f.io++
	}
	return "", false
}

// report prints what --check and --diff say about a file formatting would
// change: its diff with --diff, otherwise its name.
func (f *formatRun) report(name, src, out string) {
	if f.opts.check {
		f.unformatted++
	}
	var err error
	if f.opts.diff {
		_, err = f.m.Stdout.Write(diff.Diff(name+".orig", []byte(src), name, []byte(out)))
	} else {
		_, err = fmt.Fprintln(f.m.Stdout, name)
	}
	if err != nil {
		f.ioFailed(fmt.Errorf("write stdout: %w", err))
	}
}

func (f *formatRun) ioFailed(err error) {
	f.io++
	fmt.Fprintf(f.m.Stderr, "nspl fmt: %v\n", err)
}

// result is the run's error, already reported, carrying the exit code of
// the worst outcome.
func (f *formatRun) result() error {
	switch {
	case f.io > 0:
		return &RunError{Kind: ErrIO, Err: fmt.Errorf("%d file operation(s) failed", f.io), Reported: true, Code: ExitFmtIO}
	case f.syntax > 0:
		return &RunError{Kind: ErrSyntax, Err: fmt.Errorf("%d file(s) do not parse", f.syntax), Reported: true, Code: ExitFmtSyntax}
	case f.unformatted > 0:
		return &RunError{Kind: ErrUnformatted, Err: fmt.Errorf("%d file(s) not formatted", f.unformatted), Reported: true, Code: ExitFmtUnformatted}
	}
	return nil
}
