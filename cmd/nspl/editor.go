package main

import (
	"errors"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/chzyer/readline"
)

// errLineInterrupted is what a lineEditor returns when Ctrl-C is pressed
// while a line is being edited.
var errLineInterrupted = errors.New("line interrupted")

// lineEditor is the line editing the shell needs. It is ours, not the
// library's, so the editor behind it can be replaced without touching the
// shell.
type lineEditor interface {
	// ReadLine shows prompt and returns the line typed, without its newline.
	// Ctrl-C returns errLineInterrupted; Ctrl-D on an empty line returns
	// io.EOF.
	ReadLine(prompt string) (string, error)
	// SaveHistory appends one entry (a whole statement) to the history.
	SaveHistory(entry string) error
	// Output returns the writer for everything the shell prints. While a
	// line is being edited, text written to it appears above the prompt and
	// the prompt and the line are redrawn intact below it.
	Output() io.Writer
	// PrintAbove prints one line above the prompt: the prompt and the line
	// being edited are redrawn intact below it. Safe to call from any
	// goroutine.
	PrintAbove(line string) error
	// Close restores the terminal.
	Close() error
}

// noticeEditor is the shell's lineEditor, which also prints the remote
// client's notices above the prompt.
type noticeEditor interface {
	lineEditor
	// PrintNoticeAbove is PrintAbove on standard error.
	PrintNoticeAbove(line string)
}

// completer returns what may complete line at the cursor: the suffixes to
// insert and how many runes before the cursor they extend.
type completer interface {
	Do(line []rune, pos int) (suffixes [][]rune, length int)
}

// readlineEditor is the lineEditor on chzyer/readline.
type readlineEditor struct {
	rl *readline.Instance

	inRead atomic.Bool // ReadLine is running
}

// promptSettleSpins bounds how long PrintAbove yields for readline to
// start reading after it has drawn the prompt (a window of a few
// instructions between drawing the prompt and marking itself reading).
const promptSettleSpins = 10000

// newReadlineEditor opens a line editor on a terminal. history is the file
// statements are saved to ("" keeps no history); colour is what the
// editor's own escape sequences may do (NO_COLOR, TERM=dumb).
func newReadlineEditor(stdin io.Reader, stdout, stderr io.Writer, history string, complete completer, colour colourMode) (*readlineEditor, error) {
	in, ok := stdin.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(stdin)
	}
	if colour != colourAllowed {
		stdout = &sgrFilter{w: stdout, mode: colour}
	}
	cfg := &readline.Config{
		Prompt:                 "nspl> ",
		HistoryFile:            history,
		HistoryLimit:           1000,
		DisableAutoSaveHistory: true, // saved per statement, not per line
		HistorySearchFold:      true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "\n",
		Stdin:                  in,
		Stdout:                 stdout,
		Stderr:                 stderr,
		FuncIsTerminal:         func() bool { return true },
	}
	if history == "" {
		cfg.HistoryLimit = -1
	}
	if complete != nil {
		cfg.AutoComplete = complete
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return nil, err
	}
	return &readlineEditor{rl: rl}, nil
}

func (e *readlineEditor) ReadLine(prompt string) (string, error) {
	e.rl.SetPrompt(prompt)
	e.inRead.Store(true)
	line, err := e.rl.Readline()
	e.inRead.Store(false)
	switch {
	case errors.Is(err, readline.ErrInterrupt):
		return line, errLineInterrupted
	case err != nil:
		return line, err
	}
	return line, nil
}

func (e *readlineEditor) SaveHistory(entry string) error { return e.rl.SaveHistory(entry) }

func (e *readlineEditor) Output() io.Writer { return e.rl.Stdout() }

// PrintAbove writes through readline's own writer, which clears the prompt
// line, writes and redraws the prompt and the edited line, but only once
// readline is reading; text written while it draws its prompt would land
// after the prompt. So inside ReadLine it first yields until readline reads.
func (e *readlineEditor) PrintAbove(line string) error {
	return e.printAbove(e.rl.Stdout(), line)
}

// PrintNoticeAbove is PrintAbove on standard error, for the remote
// client's notices (a lost connection, a reconnect, a restored clock).
func (e *readlineEditor) PrintNoticeAbove(line string) {
	_ = e.printAbove(e.rl.Stderr(), line)
}

func (e *readlineEditor) printAbove(w io.Writer, line string) error {
	if e.inRead.Load() {
		for i := 0; i < promptSettleSpins && !e.rl.Terminal.IsReading() && e.inRead.Load(); i++ {
			runtime.Gosched()
		}
	}
	_, err := w.Write([]byte(line + "\n"))
	return err
}

func (e *readlineEditor) Close() error { return e.rl.Close() }
