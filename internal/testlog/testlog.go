// Package testlog captures what a component logs the way its operator
// reads it: a log/slog JSON handler writes every record into a Buffer, and
// a test decodes the lines and reads a record's message, level and
// attributes, the error attribute's full text included.
//
// It is for tests only and must never be imported by production code. A
// Buffer is safe for the concurrent writes of the goroutines under test.
package testlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Buffer is the sink of the loggers it makes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Logger returns a logger that writes each record of level or above as one
// JSON line into b.
func (b *Buffer) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: level}))
}

// Write appends p; the handler writes one whole line per call.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// Record is one logged line: its keys ("time", "level", "msg" and the
// attributes, a logger's With attributes included) and their values.
type Record map[string]any

// Get returns the value of key as text: strings as they are, numbers as
// written, anything else as JSON; "" when the record has no such key.
func (r Record) Get(key string) string {
	switch v := r[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	default:
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(out)
	}
}

// Records returns, in order, the records whose message is msg. A line that
// is not a JSON object fails t.
func (b *Buffer) Records(t testing.TB, msg string) []Record {
	t.Helper()
	b.mu.Lock()
	text := b.b.String()
	b.mu.Unlock()
	var out []Record
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.UseNumber()
		var rec Record
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("testlog: a logged line is not JSON (%v): %s", err, line)
		}
		if rec.Get(slog.MessageKey) == msg {
			out = append(out, rec)
		}
	}
	return out
}
