package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// LineReader reads newline-terminated messages of at most Limit bytes. A
// longer line is ErrMessageTooLarge and nothing more of it is buffered.
type LineReader struct {
	r     *bufio.Reader
	limit int
	buf   []byte
}

// NewLineReader returns a reader of r capped at limit bytes per line.
func NewLineReader(r io.Reader, limit int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// Next returns the next non-empty line without its newline. The slice is
// valid until the next call. io.EOF ends a stream cleanly only between lines.
func (l *LineReader) Next() ([]byte, error) {
	for {
		l.buf = l.buf[:0]
		for {
			chunk, err := l.r.ReadSlice('\n')
			if len(l.buf)+len(chunk) > l.limit+2 { // +2: a "\r\n" ending
				return nil, l.tooLarge()
			}
			l.buf = append(l.buf, chunk...)
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) && len(l.buf) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line := bytes.TrimSuffix(bytes.TrimSuffix(l.buf, []byte("\n")), []byte("\r"))
		if len(line) > l.limit {
			return nil, l.tooLarge()
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

// Pending reports whether the reader holds buffered bytes of a next line
// other than blank space, which Next returns without waiting for them.
func (l *LineReader) Pending() bool {
	b, _ := l.r.Peek(l.r.Buffered())
	return len(bytes.TrimSpace(b)) > 0
}

func (l *LineReader) tooLarge() error {
	return fmt.Errorf("%w: a line is longer than %d bytes", ErrMessageTooLarge, l.limit)
}
