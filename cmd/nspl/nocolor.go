package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// colourMode is what the line editor's own escape sequences may do to the
// terminal. nspl writes no colour itself; the editor (chzyer/readline)
// shows the candidate chosen in the Tab menu black on white, the one
// colour the shell would otherwise show.
type colourMode uint8

const (
	colourAllowed colourMode = iota
	// colourNone is NO_COLOR: no colour; the chosen candidate is shown in
	// reverse video, an attribute rather than a colour, so it stays
	// visible.
	colourNone
	// colourNoAttributes is TERM=dumb: no SGR sequence at all.
	colourNoAttributes
)

// colourModeFor reads NO_COLOR (set and not empty, as no-color.org says)
// and TERM.
func colourModeFor(lookup func(string) (string, bool)) colourMode {
	if term, _ := lookup("TERM"); term == "dumb" {
		return colourNoAttributes
	}
	if v, _ := lookup("NO_COLOR"); v != "" {
		return colourNone
	}
	return colourAllowed
}

// menuHighlight is the SGR sequence readline marks the chosen Tab
// candidate with, and reverseVideo its colourless stand-in.
const (
	menuHighlight = "\x1b[30;47m"
	reverseVideo  = "\x1b[7m"
)

// sgrFilter passes what the editor writes to w with its SGR (Select
// Graphic Rendition, ESC [ … m) sequences rewritten for mode: under
// colourNone the menu highlight becomes reverse video and any other
// sequence setting a colour is dropped; under colourNoAttributes every SGR
// sequence is dropped. Other escape sequences (cursor movement, erasing)
// pass unchanged. A sequence split across writes is held until its end
// arrives.
type sgrFilter struct {
	w    io.Writer
	mode colourMode

	mu      sync.Mutex
	pending []byte // an escape sequence begun and not yet ended
}

// maxEscapeBytes bounds a held sequence: one longer is not an SGR
// sequence the filter knows and is passed on as it is.
const maxEscapeBytes = 64

func (f *sgrFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data := p
	if len(f.pending) > 0 {
		data = append(f.pending, p...)
		f.pending = nil
	}
	var out bytes.Buffer
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], 0x1b)
		if j < 0 {
			out.Write(data[i:])
			break
		}
		out.Write(data[i : i+j])
		i += j
		seq, complete := escapeAt(data[i:])
		if !complete {
			if len(data)-i <= maxEscapeBytes {
				f.pending = append([]byte(nil), data[i:]...)
				break
			}
			seq = data[i : i+1]
		}
		out.WriteString(f.rewrite(string(seq)))
		i += len(seq)
	}
	if _, err := f.w.Write(out.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// escapeAt returns the escape sequence b starts with (b[0] is ESC): a CSI
// sequence through its final byte, or ESC and the byte after it. complete
// is false when b ends inside it.
func escapeAt(b []byte) (seq []byte, complete bool) {
	if len(b) < 2 {
		return b, false
	}
	if b[1] != '[' {
		return b[:2], true
	}
	for k := 2; k < len(b); k++ {
		if c := b[k]; c >= 0x40 && c <= 0x7e {
			return b[:k+1], true
		}
	}
	return b, false
}

// rewrite is what seq, one escape sequence, becomes under the mode.
func (f *sgrFilter) rewrite(seq string) string {
	if f.mode == colourAllowed || !strings.HasPrefix(seq, "\x1b[") || !strings.HasSuffix(seq, "m") {
		return seq
	}
	if f.mode == colourNoAttributes {
		return ""
	}
	if seq == menuHighlight {
		return reverseVideo
	}
	for _, p := range strings.Split(seq[2:len(seq)-1], ";") {
		if colourParameter(p) {
			return ""
		}
	}
	return seq
}

// colourParameter reports whether p, one SGR parameter, sets a colour:
// 30–39 and 40–49 (38 and 48 with their extended forms), 90–97, 100–107.
func colourParameter(p string) bool {
	if len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p[1] >= '0' && p[1] <= '9' {
		return p[0] != '9' || p[1] <= '7'
	}
	return len(p) == 3 && p[0] == '1' && p[1] == '0' && p[2] >= '0' && p[2] <= '7'
}
