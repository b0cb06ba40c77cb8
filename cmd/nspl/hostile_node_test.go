package main

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nspl-dev/nspl/wire"
)

// hostileNames are the domain names the hostile node sends: shell payloads
// that would run a command if a completion script let the shell expand
// them, terminal escapes, forms that are not a stored name, and two valid
// names.
var hostileNames = []string{
	"$(touch pwned-dollar)",
	"`touch pwned-backtick`",
	"pr;touch pwned-semicolon",
	"pr$(touch pwned-prefixed)",
	"pr && touch pwned-and",
	"p*",
	"pr\x1b]0;pwned\x07",
	"pr\nforged",
	"PROD",
	"`prod`",
	"",
	"prod",
	"prod-1",
}

// hostileText is what the hostile node puts in every text it answers with:
// a window title change, a bell, a screen clear and a forged line.
const hostileText = "n1\x1b]0;pwned\x07\x1b[2J\nnspl: forged line"

// cmdHostileNode starts a node that speaks the session protocol and lies
// in every text it sends, for as long as the script runs, and sets
// $HOSTILE to its URL:
//
//	hostilenode
//
// It names itself hostileText in its welcome, answers the names request
// with hostileNames, answers a statement holding "fail" with an error whose
// message is hostileText, and every other statement with a reply whose
// message, warning, column name and cell are hostileText, and whose state
// makes hostileText the active domain.
func cmdHostileNode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: hostilenode")
	}
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: http.HandlerFunc(serveHostileSession), Protocols: &protocols}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = hs.Serve(ln)
	}()
	ts.Defer(func() {
		_ = hs.Close()
		wg.Wait()
	})
	ts.Setenv("HOSTILE", "http://"+ln.Addr().String())
}

func serveHostileSession(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != wire.SessionPath {
		http.Error(w, hostileText, http.StatusUnauthorized)
		return
	}
	fl, _ := w.(http.Flusher)
	send := func(m wire.ServerMessage) bool {
		b, err := json.Marshal(m)
		if err != nil {
			return false
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	if !send(wire.ServerMessage{Type: wire.TypeWelcome, Version: wire.ProtocolVersion, Node: hostileText}) {
		return
	}
	lr := wire.NewLineReader(r.Body, wire.ClientMessageLimit)
	for {
		line, err := lr.Next()
		if err != nil {
			return
		}
		var m wire.ClientMessage
		if json.Unmarshal(line, &m) != nil {
			return
		}
		var reply wire.ServerMessage
		switch {
		case m.Type == wire.TypeDomains:
			reply = wire.ServerMessage{Type: wire.TypeNames, ID: m.ID, Names: hostileNames}
		case m.Type != wire.TypeExec:
			continue
		case strings.Contains(strings.ToLower(m.Text), "fail"):
			reply = wire.ServerMessage{Type: wire.TypeError, ID: m.ID,
				Error: &wire.Error{Line: 1, Column: 1, Code: "error", Message: hostileText}}
		default:
			cell, _ := json.Marshal(hostileText)
			reply = wire.ServerMessage{Type: wire.TypeReply, ID: m.ID,
				Result: &wire.EncodedResult{Statement: m.Text, Message: hostileText, Warnings: []string{hostileText},
					Set: &wire.EncodedSet{Columns: []wire.EncodedColumn{{Name: hostileText, Type: "text"}}, Rows: [][]json.RawMessage{{cell}}}},
				State: &wire.SessionState{Active: hostileText}}
		}
		if !send(reply) {
			return
		}
	}
}
