package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/follow"
	"github.com/nspl-dev/nspl/node"
	"github.com/nspl-dev/nspl/wire"
)

// TestWriteIDAppliesOnce sends one write under one write id on two
// sessions, as a client that lost its connection does: the second is
// answered with the first's outcome and changes nothing, where without the
// id a second CREATE is refused because the domain exists. A write id on a
// statement that is not one write, and a malformed one, are refused before
// anything runs.
func TestWriteIDAppliesOnce(t *testing.T) {
	url, srv := insecureEnv(t, Config{})
	const id = "write-id-0123456789"
	first := openRaw(t, url)
	first.send(wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "CREATE DOMAIN web;", Write: id})
	m := first.read()
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
	rev := srv.cfg.Node.(*node.Node).CatalogRevision()

	second := openRaw(t, url)
	second.send(wire.ClientMessage{Type: wire.TypeExec, ID: 1, Text: "CREATE DOMAIN web;", Write: id})
	m = second.read()
	require.Equal(t, wire.TypeReply, m.Type, m.Error)
	require.Equal(t, "created domain 'web'", m.Result.Message)
	require.Equal(t, rev, srv.cfg.Node.(*node.Node).CatalogRevision(), "the resend applied nothing")

	second.send(wire.ClientMessage{Type: wire.TypeExec, ID: 2, Text: "CREATE DOMAIN web;", Write: "another-write-id-42"})
	m = second.read()
	require.Equal(t, wire.TypeError, m.Type, "a new write id is a new write")
	require.Contains(t, m.Error.Message, "already exists")

	for i, tc := range []struct{ text, write, want string }{
		{"LIST DOMAINS;", "write-id-0123456789-list", "names the one write of a CREATE"},
		{"BEGIN;", "write-id-0123456789-begin", "names the one write of a CREATE"},
		{"CREATE DOMAIN x;", "short", "a write id is 16 to 64 bytes, not 5"},
		{"CREATE DOMAIN x;", "write id with spaces!", "letters, digits, '-' and '_' only; byte 6"},
	} {
		second.send(wire.ClientMessage{Type: wire.TypeExec, ID: uint64(3 + i), Text: tc.text, Write: tc.write})
		m = second.read()
		require.Equal(t, wire.TypeError, m.Type, tc.text)
		require.Contains(t, m.Error.Message, tc.want)
		require.ErrorIs(t, follow.DecodeError(m.Error), wire.ErrProtocol)
	}
	_, err := srv.cfg.Node.Domain("x")
	require.Error(t, err, "a refused write id runs nothing")
}

// TestWriteRequestIDIsTheCallers binds a write id to the caller: the same
// id from two identities names two writes, and no id a node gives its own
// writes (name-incarnation-sequence, no '/') can be named by a client.
func TestWriteRequestIDIsTheCallers(t *testing.T) {
	a := writeRequestID("alice", "write-id-0123456789")
	require.Equal(t, a, writeRequestID("alice", "write-id-0123456789"))
	require.NotEqual(t, a, writeRequestID("bob", "write-id-0123456789"))
	require.NotEqual(t, a, writeRequestID("alice", "write-id-0123456780"))
	require.Contains(t, a, "/")
	require.LessOrEqual(t, len(writeRequestID("x", "0123456789012345678901234567890123456789012345678901234567890123")), 128)
}
