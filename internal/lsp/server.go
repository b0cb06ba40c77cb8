// Package lsp is nspl lsp: a Language Server for .nspl files over a byte
// stream (an editor's pipe to the process's stdin and stdout), speaking
// JSON-RPC 2.0 in LSP's Content-Length framing.
//
// It offers diagnostics from the parser and planner, completion from the
// shell's completer, formatting with nspl fmt's formatter, hover with the
// shell's help, and the domains a file creates as document symbols.
// Documents are synchronised whole (TextDocumentSyncKind.Full).
package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxMessage is the largest message body Serve reads when
// Options.MaxMessage is 0: 16 MiB. A longer one is skipped and answered
// with an error.
const DefaultMaxMessage = 16 << 20

// maxHeaderLine bounds one header line; a longer one is malformed framing.
const maxHeaderLine = 4096

// Errors Serve returns.
var (
	// ErrFraming reports input that is not LSP framing (a header line
	// without ':', a missing or bad Content-Length, a body cut short): the
	// message boundaries are lost, so the server answers with a parse error
	// and stops.
	ErrFraming = errors.New("lsp: malformed message framing; the client must send Content-Length headers")
	// ErrNoShutdown reports an exit notification, or the end of the input,
	// without a shutdown request before it; nspl lsp then exits 1, as the
	// specification asks.
	ErrNoShutdown = errors.New("lsp: the client exited without a shutdown request")
)

// JSON-RPC and LSP error codes.
const (
	codeParseError           = -32700
	codeInvalidRequest       = -32600
	codeMethodNotFound       = -32601
	codeInvalidParams        = -32602
	codeServerNotInitialized = -32002
)

// Options configure a server.
type Options struct {
	// Help is the shell's help text; hover on a keyword quotes its
	// statement entries.
	Help string
	// Domains lists the domain names of a running node for completion; nil
	// offers only the names the document defines. It is called with a
	// context bounded by DomainsTimeout.
	Domains func(ctx context.Context) ([]string, error)
	// DomainsTimeout bounds one Domains call; 0 is 2s.
	DomainsTimeout time.Duration
	// MaxMessage is the largest message body read; 0 is DefaultMaxMessage.
	MaxMessage int
	// Log receives one line per problem the client should not see as an
	// answer (a Domains failure); nil discards them.
	Log io.Writer
}

// server is one session's state. It handles one message at a time.
type server struct {
	opts        Options
	out         io.Writer
	docs        map[string]string // URI to text
	initialized bool
	shutdown    bool
}

// message is any JSON-RPC message the client sends.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
	// Result and Error make it a response, which the server never asked
	// for: it is ignored.
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

type responseError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
	Error   *responseError  `json:"error,omitempty"`
}

// errorResponse is a response carrying an error and no result.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *responseError  `json:"error"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// rpcError is an error a handler returns to answer with.
type rpcError struct {
	code int
	msg  string
}

func (e *rpcError) Error() string { return e.msg }

// Serve runs a session reading messages from r and writing to w until the
// exit notification, the end of r, or ctx's end. It returns nil after
// shutdown and exit, ErrNoShutdown for an exit (or the end of r) without
// shutdown, an error wrapping ErrFraming when the input stops being LSP
// framing, and a write error when w fails.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opts Options) error {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.DomainsTimeout <= 0 {
		opts.DomainsTimeout = 2 * time.Second
	}
	s := &server{opts: opts, out: w, docs: map[string]string{}}
	br := bufio.NewReaderSize(r, maxHeaderLine+2)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		body, err := readMessage(br, opts.MaxMessage)
		switch {
		case errors.Is(err, io.EOF):
			if s.shutdown {
				return nil
			}
			return ErrNoShutdown
		case errors.Is(err, errTooLarge):
			if werr := s.write(errorResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &responseError{Code: codeInvalidRequest, Message: err.Error()}}); werr != nil {
				return werr
			}
			continue
		case err != nil:
			_ = s.write(errorResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &responseError{Code: codeParseError, Message: err.Error()}})
			return err
		}
		exit, err := s.handle(ctx, body)
		if err != nil {
			return err
		}
		if exit {
			if s.shutdown {
				return nil
			}
			return ErrNoShutdown
		}
	}
}

var errTooLarge = errors.New("lsp: message too large")

// readMessage reads one framed message body. A body longer than max is
// read and dropped, and errTooLarge returned, so the next message is still
// found. io.EOF means the input ended cleanly between messages.
func readMessage(br *bufio.Reader, max int) ([]byte, error) {
	length := -1
	first := true
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: a header line longer than %d bytes", ErrFraming, maxHeaderLine)
		}
		if err != nil {
			if errors.Is(err, io.EOF) && first && len(line) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("%w: the input ended inside a header", ErrFraming)
		}
		first = false
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			break
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("%w: header line %q has no ':'", ErrFraming, truncate(text))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: bad Content-Length %q", ErrFraming, truncate(strings.TrimSpace(value)))
			}
			if n > int64(^uint(0)>>1) {
				n = int64(^uint(0) >> 1)
			}
			length = int(n)
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: no Content-Length header", ErrFraming)
	}
	if length > max {
		if _, err := io.CopyN(io.Discard, br, int64(length)); err != nil {
			return nil, fmt.Errorf("%w: the input ended inside a body", ErrFraming)
		}
		return nil, fmt.Errorf("%w: %d bytes, over the limit of %d; the message was skipped", errTooLarge, length, max)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("%w: the input ended inside a body", ErrFraming)
	}
	return body, nil
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// write frames v and writes it.
func (s *server) write(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // help text holds <name>
	if err := enc.Encode(v); err != nil {
		return err
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if _, err := fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n%s", len(b), b); err != nil {
		return fmt.Errorf("lsp: write: %w", err)
	}
	return nil
}

// handle handles one message body and reports whether it was exit. Only a
// write failure is returned as an error; everything wrong with the message
// is answered.
func (s *server) handle(ctx context.Context, body []byte) (exit bool, err error) {
	var msg message
	if err := json.Unmarshal(body, &msg); err != nil {
		return false, s.write(errorResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &responseError{Code: codeParseError, Message: "invalid JSON: " + err.Error()}})
	}
	if msg.Method == "" && (len(msg.Result) > 0 || len(msg.Error) > 0) {
		return false, nil
	}
	isRequest := len(msg.ID) > 0 && string(msg.ID) != "null"
	if isRequest && !validID(msg.ID) {
		return false, s.write(errorResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &responseError{Code: codeInvalidRequest, Message: "a request id is a number or a string"}})
	}
	if msg.JSONRPC != "2.0" || msg.Method == "" {
		if !isRequest {
			if len(msg.ID) > 0 || msg.Method == "" {
				return false, nil // a response to nothing we asked, or junk: ignored
			}
		}
		id := msg.ID
		if !isRequest {
			id = json.RawMessage("null")
		}
		return false, s.write(errorResponse{JSONRPC: "2.0", ID: id, Error: &responseError{Code: codeInvalidRequest, Message: `a request has "jsonrpc": "2.0" and a method`}})
	}
	if !isRequest {
		return s.notify(msg), nil
	}
	result, herr := s.request(ctx, msg)
	if herr != nil {
		var re *rpcError
		if !errors.As(herr, &re) {
			re = &rpcError{code: codeInvalidParams, msg: herr.Error()}
		}
		return false, s.write(errorResponse{JSONRPC: "2.0", ID: msg.ID, Error: &responseError{Code: re.code, Message: re.msg}})
	}
	return false, s.write(response{JSONRPC: "2.0", ID: msg.ID, Result: result})
}

// validID reports whether id is a JSON number or string.
func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case float64, string:
		return true
	}
	return false
}

// notify handles a notification; it reports whether it was exit.
func (s *server) notify(msg message) bool {
	if msg.Method == "exit" {
		return true
	}
	if !s.initialized || s.shutdown {
		return false // dropped, as the specification says
	}
	switch msg.Method {
	case "textDocument/didOpen":
		var p struct {
			TextDocument struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"textDocument"`
		}
		if json.Unmarshal(msg.Params, &p) == nil && p.TextDocument.URI != "" {
			s.docs[p.TextDocument.URI] = p.TextDocument.Text
			s.publish(p.TextDocument.URI)
		}
	case "textDocument/didChange":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
			ContentChanges []struct {
				Range *lspRange `json:"range"`
				Text  string    `json:"text"`
			} `json:"contentChanges"`
		}
		if json.Unmarshal(msg.Params, &p) != nil {
			return false
		}
		text, ok := s.docs[p.TextDocument.URI]
		if !ok {
			return false
		}
		for _, c := range p.ContentChanges {
			if c.Range == nil {
				text = c.Text
				continue
			}
			// Full sync is what the server asks for; a client that sends
			// ranges anyway is still followed.
			start, end := offsetOf(text, c.Range.Start), offsetOf(text, c.Range.End)
			if end < start {
				start, end = end, start
			}
			text = text[:start] + c.Text + text[end:]
		}
		s.docs[p.TextDocument.URI] = text
		s.publish(p.TextDocument.URI)
	case "textDocument/didClose":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
		}
		if json.Unmarshal(msg.Params, &p) == nil {
			if _, ok := s.docs[p.TextDocument.URI]; ok {
				delete(s.docs, p.TextDocument.URI)
				_ = s.write(notification{JSONRPC: "2.0", Method: "textDocument/publishDiagnostics", Params: publishParams{URI: p.TextDocument.URI, Diagnostics: []diagnostic{}}})
			}
		}
	}
	return false
}

// publish sends the diagnostics of the document at uri.
func (s *server) publish(uri string) {
	_ = s.write(notification{JSONRPC: "2.0", Method: "textDocument/publishDiagnostics", Params: publishParams{URI: uri, Diagnostics: diagnose(s.docs[uri])}})
}

// request handles a request and returns its result.
func (s *server) request(ctx context.Context, msg message) (any, error) {
	if msg.Method == "initialize" {
		if s.initialized {
			return nil, &rpcError{code: codeInvalidRequest, msg: "initialize was already received"}
		}
		s.initialized = true
		return initializeResult(), nil
	}
	if !s.initialized {
		return nil, &rpcError{code: codeServerNotInitialized, msg: "the server is not initialized; send initialize first"}
	}
	if s.shutdown {
		return nil, &rpcError{code: codeInvalidRequest, msg: "the server is shut down; send exit"}
	}
	switch msg.Method {
	case "shutdown":
		s.shutdown = true
		return nil, nil
	case "textDocument/completion":
		return s.withDoc(msg.Params, func(text string, pos lspPosition) (any, error) {
			return s.completion(ctx, text, pos), nil
		})
	case "textDocument/hover":
		return s.withDoc(msg.Params, func(text string, pos lspPosition) (any, error) {
			return hover(s.opts.Help, text, pos), nil
		})
	case "textDocument/formatting":
		return s.withDoc(msg.Params, func(text string, _ lspPosition) (any, error) {
			return formatting(text), nil
		})
	case "textDocument/documentSymbol":
		return s.withDoc(msg.Params, func(text string, _ lspPosition) (any, error) {
			return documentSymbols(text), nil
		})
	}
	return nil, &rpcError{code: codeMethodNotFound, msg: fmt.Sprintf("method %q is not supported", truncate(msg.Method))}
}

// withDoc decodes the textDocument and position of params and calls f with
// the open document's text.
func (s *server) withDoc(params json.RawMessage, f func(text string, pos lspPosition) (any, error)) (any, error) {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Position lspPosition `json:"position"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{code: codeInvalidParams, msg: "bad params: " + err.Error()}
	}
	text, ok := s.docs[p.TextDocument.URI]
	if !ok {
		return nil, &rpcError{code: codeInvalidParams, msg: fmt.Sprintf("document %q is not open; send didOpen first", truncate(p.TextDocument.URI))}
	}
	return f(text, p.Position)
}

func initializeResult() any {
	return map[string]any{
		"capabilities": map[string]any{
			"positionEncoding": "utf-16",
			"textDocumentSync": map[string]any{
				"openClose": true,
				"change":    1, // Full: every change sends the whole text
			},
			"completionProvider":         map[string]any{"triggerCharacters": []string{" ", "`"}},
			"hoverProvider":              true,
			"documentFormattingProvider": true,
			"documentSymbolProvider":     true,
		},
		"serverInfo": map[string]any{"name": "nspl lsp"},
	}
}
