package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/grammar"
)

// testHelp stands for the shell's help text, in its layout.
const testHelp = `Statements (end each with ;):
  CREATE PACED DOMAIN <name> WITH PERIOD <d> SKEW <d> [PLACEMENT <policy>];
      CREATE PACED DOMAIN prod WITH PERIOD 1s SKEW 100ms;
  USE <name>;                                     make <name> the active domain
      USE prod;
  STOP;
      STOP;
`

// editor drives a server the way an editor does, over pipes.
type editor struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
	next int
}

func startEditor(t *testing.T, opts Options) *editor {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e := &editor{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := Serve(context.Background(), inR, outW, opts)
		_ = outW.Close()
		e.done <- err
	}()
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	return e
}

func (e *editor) send(v any) {
	e.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(e.t, err)
	_, err = fmt.Fprintf(e.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
	require.NoError(e.t, err)
}

// read returns the next message the server sends.
func (e *editor) read() map[string]any {
	e.t.Helper()
	body, err := readMessage(e.out, DefaultMaxMessage)
	require.NoError(e.t, err)
	var m map[string]any
	require.NoError(e.t, json.Unmarshal(body, &m))
	return m
}

// call sends a request and returns its response.
func (e *editor) call(method string, params any) map[string]any {
	e.t.Helper()
	e.next++
	e.send(map[string]any{"jsonrpc": "2.0", "id": e.next, "method": method, "params": params})
	m := e.read()
	require.EqualValues(e.t, e.next, m["id"], "%v", m)
	return m
}

func (e *editor) notify(method string, params any) {
	e.t.Helper()
	e.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// diagnostics reads the next publishDiagnostics.
func (e *editor) diagnostics() []any {
	e.t.Helper()
	m := e.read()
	require.Equal(e.t, "textDocument/publishDiagnostics", m["method"], "%v", m)
	return m["params"].(map[string]any)["diagnostics"].([]any)
}

func (e *editor) wait() error {
	_ = e.in.Close()
	return <-e.done
}

func pos(line, char int) map[string]any { return map[string]any{"line": line, "character": char} }

func rng(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": map[string]any{"line": float64(l1), "character": float64(c1)}, "end": map[string]any{"line": float64(l2), "character": float64(c2)}}
}

func TestSession(t *testing.T) {
	const uri = "file:///work/demo.nspl"
	// The second line starts with a comment holding characters outside
	// the BMP and a two-byte one: each 😀 is two UTF-16 units and four
	// bytes, é one unit and two bytes, so the error after it is at
	// character 21 in UTF-16, byte 26 of the line.
	broken := "create paced domain prod with period 1s skew 100ms;\n/* STOP é😀😀 */ USE `prod;\n"
	fixed := "create paced domain prod with period 1s skew 100ms;\n/* STOP é😀😀 */ USE prod;\n"
	e := startEditor(t, Options{Help: testHelp, Domains: func(context.Context) ([]string, error) {
		return []string{"remote-one", "prod", "Bad Name$(x)"}, nil
	}})

	init := e.call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{}})
	caps := init["result"].(map[string]any)["capabilities"].(map[string]any)
	require.EqualValues(t, 1, caps["textDocumentSync"].(map[string]any)["change"], "full sync")
	require.Equal(t, true, caps["hoverProvider"])
	e.notify("initialized", map[string]any{})

	e.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "nspl", "version": 1, "text": broken}})
	diags := e.diagnostics()
	require.Len(t, diags, 1)
	d := diags[0].(map[string]any)
	require.Equal(t, rng(1, 21, 1, 27), d["range"], "the unterminated name from its backtick to the line's end, in UTF-16")
	require.Contains(t, d["message"], "unterminated")

	e.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []any{map[string]any{"text": fixed}}})
	require.Empty(t, e.diagnostics(), "fixing the error clears its diagnostic")

	comp := e.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos(1, 21)})
	labels := map[string]float64{}
	for _, it := range comp["result"].(map[string]any)["items"].([]any) {
		item := it.(map[string]any)
		labels[item["label"].(string)] = item["kind"].(float64)
	}
	require.EqualValues(t, completionValue, labels["prod"], "a domain the file creates: %v", labels)
	require.EqualValues(t, completionValue, labels["`remote-one`"], "a domain of the node, quoted as a name with - is: %v", labels)
	for label := range labels {
		require.NotContains(t, label, "$(", "a name the node sends that is no name is dropped")
	}

	comp = e.call("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos(0, 0)})
	labels = map[string]float64{}
	for _, it := range comp["result"].(map[string]any)["items"].([]any) {
		item := it.(map[string]any)
		labels[item["label"].(string)] = item["kind"].(float64)
	}
	require.EqualValues(t, completionKeyword, labels["CREATE"], "%v", labels)
	require.EqualValues(t, completionSnippet, labels["USE prod;"], "a statement from the help: %v", labels)

	want, err := grammar.Format(fixed)
	require.NoError(t, err)
	f := e.call("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{"tabSize": 4, "insertSpaces": true}})
	edits := f["result"].([]any)
	require.Len(t, edits, 1)
	edit := edits[0].(map[string]any)
	require.Equal(t, rng(0, 0, 2, 0), edit["range"], "the whole document")
	require.Equal(t, want, edit["newText"], "what nspl fmt writes")

	h := e.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos(1, 18)})
	hv := h["result"].(map[string]any)
	require.Contains(t, hv["contents"].(map[string]any)["value"], "USE <name>;")
	require.Contains(t, hv["contents"].(map[string]any)["value"], "USE prod;")
	require.NotContains(t, hv["contents"].(map[string]any)["value"], "STOP")
	require.Equal(t, rng(1, 17, 1, 20), hv["range"])
	h = e.call("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos(1, 4)})
	require.Nil(t, h["result"], "a word in a comment is no keyword")

	s := e.call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}})
	syms := s["result"].([]any)
	require.Len(t, syms, 1)
	sym := syms[0].(map[string]any)
	require.Equal(t, "prod", sym["name"])
	require.EqualValues(t, symbolModule, sym["kind"])
	require.Equal(t, rng(0, 20, 0, 24), sym["selectionRange"])
	require.Equal(t, rng(0, 0, 0, 51), sym["range"])

	e.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	require.Empty(t, e.diagnostics())

	r := e.call("shutdown", nil)
	require.Contains(t, r, "result")
	require.Nil(t, r["result"])
	e.notify("exit", nil)
	require.NoError(t, <-e.done)
}

func TestExit(t *testing.T) {
	e := startEditor(t, Options{})
	e.call("initialize", map[string]any{})
	e.notify("exit", nil)
	require.ErrorIs(t, <-e.done, ErrNoShutdown, "exit without shutdown")

	e = startEditor(t, Options{})
	e.call("initialize", map[string]any{})
	require.ErrorIs(t, e.wait(), ErrNoShutdown, "the input ending without shutdown")
}

// rawSession feeds input to a whole session and returns what the server
// wrote, message by message, and Serve's error.
func rawSession(t *testing.T, input string, opts Options) ([]map[string]any, error) {
	t.Helper()
	var out bytes.Buffer
	err := Serve(context.Background(), strings.NewReader(input), &out, opts)
	br := bufio.NewReader(&out)
	var msgs []map[string]any
	for {
		body, rerr := readMessage(br, DefaultMaxMessage)
		if errors.Is(rerr, io.EOF) {
			break
		}
		require.NoError(t, rerr)
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m))
		msgs = append(msgs, m)
	}
	return msgs, err
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

const (
	initMsg     = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	shutdownMsg = `{"jsonrpc":"2.0","id":99,"method":"shutdown"}`
	exitMsg     = `{"jsonrpc":"2.0","method":"exit"}`
)

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		max     int
		code    float64 // the error code of the reply after initialize's
		wantErr error   // nil: the session ends after shutdown and exit
	}{
		{"unknown method", frame(initMsg) + frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/rename","params":{}}`) + frame(shutdownMsg) + frame(exitMsg), 0, codeMethodNotFound, nil},
		{"invalid JSON", frame(initMsg) + frame(`{"jsonrpc":"2.0","id":2,`) + frame(shutdownMsg) + frame(exitMsg), 0, codeParseError, nil},
		{"oversized", frame(initMsg) + frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown","params":"`+strings.Repeat("x", 200)+`"}`) + frame(shutdownMsg) + frame(exitMsg), 100, codeInvalidRequest, nil},
		{"not JSON-RPC 2.0", frame(initMsg) + frame(`{"id":2,"method":"shutdown"}`) + frame(shutdownMsg) + frame(exitMsg), 0, codeInvalidRequest, nil},
		{"bad id", frame(initMsg) + frame(`{"jsonrpc":"2.0","id":{},"method":"shutdown"}`) + frame(shutdownMsg) + frame(exitMsg), 0, codeInvalidRequest, nil},
		{"document not open", frame(initMsg) + frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///x"},"position":{"line":0,"character":0}}}`) + frame(shutdownMsg) + frame(exitMsg), 0, codeInvalidParams, nil},
		{"bad params", frame(initMsg) + frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":[1]}`) + frame(shutdownMsg) + frame(exitMsg), 0, codeInvalidParams, nil},
		{"header without colon", frame(initMsg) + "Content-Length 5\r\n\r\nhello", 0, codeParseError, ErrFraming},
		{"bad Content-Length", frame(initMsg) + "Content-Length: -3\r\n\r\n", 0, codeParseError, ErrFraming},
		{"no Content-Length", frame(initMsg) + "Content-Type: x\r\n\r\n{}", 0, codeParseError, ErrFraming},
		{"body cut short", frame(initMsg) + "Content-Length: 50\r\n\r\n{}", 0, codeParseError, ErrFraming},
		{"header line too long", frame(initMsg) + strings.Repeat("x", 10000), 0, codeParseError, ErrFraming},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msgs, err := rawSession(t, tt.input, Options{MaxMessage: tt.max})
			if tt.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tt.wantErr)
			}
			require.GreaterOrEqual(t, len(msgs), 2, "%v", msgs)
			require.Contains(t, msgs[0], "result", "initialize")
			e, ok := msgs[1]["error"].(map[string]any)
			require.True(t, ok, "an error reply: %v", msgs[1])
			require.Equal(t, tt.code, e["code"], "%v", e)
		})
	}
}

func TestBeforeInitialize(t *testing.T) {
	msgs, err := rawSession(t, frame(`{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}`)+frame(exitMsg), Options{})
	require.ErrorIs(t, err, ErrNoShutdown)
	require.Len(t, msgs, 1)
	require.EqualValues(t, codeServerNotInitialized, msgs[0]["error"].(map[string]any)["code"])
}

func TestPositions(t *testing.T) {
	text := "ab\né😀x\r\nz"
	tests := []struct {
		off  int
		line int
		char int
	}{
		{0, 0, 0}, {2, 0, 2}, {3, 1, 0}, {5, 1, 1}, {9, 1, 3}, {10, 1, 4}, {12, 2, 0}, {13, 2, 1},
	}
	for _, tt := range tests {
		p := positionOf(text, tt.off)
		require.Equal(t, lspPosition{tt.line, tt.char}, p, "offset %d", tt.off)
		require.Equal(t, tt.off, offsetOf(text, p), "position %v", p)
	}
	require.Equal(t, 5, offsetOf(text, lspPosition{1, 2}), "inside a surrogate pair: the character's start")
	require.Equal(t, 11, offsetOf(text, lspPosition{1, 99}), "past the line's end: its end, after its \\r")
	require.Equal(t, len(text), offsetOf(text, lspPosition{9, 0}))
}

func TestFormattingUnparsable(t *testing.T) {
	require.Empty(t, formatting("USE `x;"), "a document that does not parse gets no edits")
	require.Empty(t, formatting("USE x;\n"), "a formatted one neither")
}

func FuzzLSP(f *testing.F) {
	f.Add([]byte(frame(initMsg) + frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"u","text":"USE é;"}}}`) + frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/completion","params":{"textDocument":{"uri":"u"},"position":{"line":0,"character":5}}}`)))
	f.Add([]byte(frame(initMsg) + frame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"u"},"contentChanges":[{"range":{"start":{"line":0,"character":9},"end":{"line":0,"character":0}},"text":"x"}]}}`)))
	f.Add([]byte(frame(initMsg) + frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"u"},"position":{"line":-1,"character":-5}}}`)))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte(frame(initMsg) + frame(shutdownMsg) + frame(exitMsg)))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		_ = Serve(context.Background(), bytes.NewReader(in), &out, Options{Help: testHelp, MaxMessage: 1 << 16})
		// Whatever came in, what went out is framed JSON-RPC.
		br := bufio.NewReader(&out)
		for {
			body, err := readMessage(br, DefaultMaxMessage)
			if errors.Is(err, io.EOF) {
				return
			}
			require.NoError(t, err)
			var m struct {
				JSONRPC string `json:"jsonrpc"`
			}
			require.NoError(t, json.Unmarshal(body, &m), "%s", body)
			require.Equal(t, "2.0", m.JSONRPC, "%s", body)
		}
	})
}

func TestDiagnose(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []diagnostic
	}{
		{"clean", "USE prod;\n", []diagnostic{}},
		{"command lines are the runner's", "USE prod;\n\\sleep 1h\n  \\wait tick 2\nSTOP;\n", []diagnostic{}},
		{"positions stay the document's", "\\sleep 1h\nUSE", []diagnostic{{
			Range: lspRange{Start: lspPosition{1, 3}, End: lspPosition{1, 3}}, Severity: 1, Source: "nspl",
			Message: "expected a domain name, found end of input",
		}}},
		{"the planner's error", "-- ü\nCREATE PACED DOMAIN p WITH PERIOD 0s SKEW 0;", []diagnostic{{
			Range: lspRange{Start: lspPosition{1, 34}, End: lspPosition{1, 36}}, Severity: 1, Source: "nspl",
			Message: "PERIOD must be positive; write a duration above zero such as 1s",
		}}},
		{"the parser's error at the end", "USE", []diagnostic{{
			Range: lspRange{Start: lspPosition{0, 3}, End: lspPosition{0, 3}}, Severity: 1, Source: "nspl",
			Message: "expected a domain name, found end of input",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, diagnose(tt.text))
		})
	}
}

func TestLifecycle(t *testing.T) {
	hover := `{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{}}`
	msgs, err := rawSession(t, frame(initMsg)+frame(initMsg)+frame(shutdownMsg)+frame(hover)+frame(exitMsg), Options{})
	require.NoError(t, err)
	require.Len(t, msgs, 4)
	require.EqualValues(t, codeInvalidRequest, msgs[1]["error"].(map[string]any)["code"], "a second initialize")
	require.Contains(t, msgs[2], "result", "shutdown")
	require.EqualValues(t, 5, msgs[3]["id"])
	require.EqualValues(t, codeInvalidRequest, msgs[3]["error"].(map[string]any)["code"], "a request after shutdown")

	// Notifications are not answered, whatever their method, nor are
	// responses to requests the server never sent.
	msgs, err = rawSession(t, frame(initMsg)+frame(`{"jsonrpc":"2.0","id":7,"result":{}}`)+frame(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`)+frame(`{"jsonrpc":"2.0","method":"textDocument/didSave"}`)+frame(shutdownMsg)+frame(exitMsg), Options{})
	require.NoError(t, err)
	require.Len(t, msgs, 2)
}
