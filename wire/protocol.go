package wire

import (
	"encoding/json"
	"fmt"
)

// ProtocolVersion is the version of the session protocol this package
// describes. It is part of the path (SessionPath) and of the welcome message.
const ProtocolVersion = 1

// ReadConsistencyHeader names, on the request that opens a session
// (SessionPath), the read consistency the session's reads promise:
// "local" (the default when absent) or "linearizable". It is the client's
// choice of what it waits for, and grants nothing.
const ReadConsistencyHeader = "Nspl-Read-Consistency"

// ResumeHeader names, on the request that opens a session (SessionPath),
// the resume token of an earlier session of the same client (the welcome's
// ServerMessage.Resume) whose connection was lost: the server gives the new
// session that session's open transaction, if it holds one for the same
// identity, and the welcome's State shows it.
const ResumeHeader = "Nspl-Resume"

// Paths the server answers.
const (
	// SessionPath opens one session: a bidirectional NDJSON stream.
	SessionPath = "/v1/session"
	// LeavePath asks the serving node to leave the cluster (POST).
	LeavePath = "/v1/cluster/leave"
	// RemovePath asks the cluster to remove the node named in the body
	// (POST {"node":"NAME"}).
	RemovePath = "/v1/cluster/remove"
	// PeerPrefix is where the node-to-node interconnect is mounted.
	PeerPrefix = "/v1/peer/"
	// HealthPath answers 200 "ok" while the node serves.
	HealthPath = "/healthz"
	// MetricsPath serves the Prometheus text exposition.
	MetricsPath = "/metrics"
)

// Message limits. Every line either side reads is capped; a longer line ends
// the stream with ErrMessageTooLarge.
const (
	// ClientMessageLimit is the largest client message (one statement) a
	// server reads.
	ClientMessageLimit = 1 << 20
	// ServerMessageLimit is the largest server message (a reply with its
	// result set, or a frame) a client reads.
	ServerMessageLimit = 16 << 20
)

// Client message types.
const (
	TypeExec    = "exec"    // run the one statement in Text
	TypeCancel  = "cancel"  // cancel request ID if it is still running
	TypeDomains = "domains" // list domain names (completion), outside the lane
	TypePing    = "ping"    // keep an idle session open; answered by nothing
	// TypeClose ends the session on the client's word: its open
	// transaction is reverted, where a lost connection's is held for the
	// client's next session (ResumeHeader). Nothing is read after it.
	TypeClose = "close"
	// TypeArchive, either way, is one piece of an archive: from a client,
	// of the archive the exec with the same ID uploads; from a server, of
	// the archive the BACKUP with the same ID captured.
	TypeArchive = "archive"
)

// ArchivePieceBytes is the most archive bytes one archive message carries
// (base64 in Data), so that every piece fits ClientMessageLimit. A whole
// archive, the sum of its pieces, is at most backup.MaxArchiveBytes.
const ArchivePieceBytes = 512 << 10

// Server message types.
const (
	TypeWelcome = "welcome" // first message: version and serving node
	TypeReply   = "reply"   // a statement's result
	TypeError   = "error"   // a statement's positioned error
	TypeFrame   = "frame"   // a clock frame (state, tick, error or end)
	TypeNames   = "names"   // the reply to TypeDomains
	// TypeRows is one chunk of a streamed result set (Set, at most
	// RowsChunkLimit rows), sent before the reply with the same ID to a
	// client that asked for rows (ClientMessage.Rows).
	TypeRows = "rows"
)

// RowsChunkLimit is the most rows one TypeRows message carries. A client
// refuses a longer chunk.
const RowsChunkLimit = 256

// Streamed rows, and what each side may assume of the other. Within
// ProtocolVersion 1, a server that streams rows says so in its welcome
// (ServerMessage.Rows). A client asks for a statement's rows as they are
// produced by setting ClientMessage.Rows on its exec, and only when the
// welcome said so: a server before streaming refuses a message with an
// unknown field. A client that does not ask gets the whole result set in
// the reply, as before; a server never sends rows messages to it. When it
// streams, the server sends the rows in TypeRows messages before the reply,
// whose set then has the columns and no rows.

// ClientMessage is one line a client sends.
type ClientMessage struct {
	Type string `json:"type"`
	// ID numbers the request; replies carry it back. IDs increase.
	ID uint64 `json:"id"`
	// Text is the statement of an exec request: exactly one statement.
	Text string `json:"text,omitempty"`
	// Archive is set on the exec of BACKUP, RESTORE and DESCRIBE BACKUP:
	// the client reads or writes the archive file itself.
	Archive *Archive `json:"archive,omitempty"`
	// Data is an archive message's piece, at most ArchivePieceBytes.
	Data []byte `json:"data,omitempty"`
	// Rows, on an exec, asks for the statement's rows as TypeRows
	// messages before the reply; set only after a welcome with Rows.
	Rows bool `json:"rows,omitempty"`
	// Write, on an exec, names the write the statement makes, so the
	// client can send it again after a lost connection and the cluster
	// applies it once (set only after a welcome with WriteIDs, and only on
	// a statement that makes one catalog write: CREATE, ALTER, DROP, START
	// or STOP outside a transaction). The client picks it at random, keeps
	// it across every attempt of the write and never reuses it; the server
	// binds it to the caller's identity (CheckWriteID gives its form).
	Write string `json:"write,omitempty"`
}

// MinWriteIDLen and MaxWriteIDLen bound ClientMessage.Write, whose bytes are letters, digits,
// '-' and '_': 16 to 64 of them.
const (
	MinWriteIDLen = 16
	MaxWriteIDLen = 64
)

// CheckWriteID reports whether id has the form of ClientMessage.Write.
func CheckWriteID(id string) error {
	if len(id) < MinWriteIDLen || len(id) > MaxWriteIDLen {
		return fmt.Errorf("%w: a write id is %d to %d bytes, not %d", ErrProtocol, MinWriteIDLen, MaxWriteIDLen, len(id))
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return fmt.Errorf("%w: a write id holds letters, digits, '-' and '_' only; byte %d is %q", ErrProtocol, i+1, c)
		}
	}
	return nil
}

// Archive describes an archive that travels with a request or reply.
// Name is the file as the client resolved it, for messages only: the
// server never opens it. Bytes is the archive's length: on a RESTORE or
// DESCRIBE BACKUP exec, of the pieces sent before it; on a BACKUP reply,
// of the pieces the server sent before the reply.
type Archive struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// ServerMessage is one line a server sends.
type ServerMessage struct {
	Type string `json:"type"`
	// Version and Node are set in the welcome message.
	Version int    `json:"version,omitempty"`
	Node    string `json:"node,omitempty"`
	// IdleTimeout, in the welcome, is how long (nanoseconds) the server
	// waits for a client message before it closes the session.
	IdleTimeout int64 `json:"idle_timeout_ns,omitempty"`
	// Rows, in the welcome, says the server streams result rows to an
	// exec that asks (ClientMessage.Rows).
	Rows bool `json:"rows,omitempty"`
	// Resume, in the welcome, is the session's resume token: sent in
	// ResumeHeader by the client's next session after a lost connection,
	// it takes up this session's open transaction. Holding it is what
	// entitles a client to the transaction, beside its identity.
	Resume string `json:"resume,omitempty"`
	// WriteIDs, in the welcome, says the server applies an exec's write
	// once under its ClientMessage.Write, however often it is sent.
	WriteIDs bool `json:"write_ids,omitempty"`
	// ID is the request a reply, error or names message answers.
	ID     uint64          `json:"id,omitempty"`
	Result *EncodedResult  `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
	State  *SessionState   `json:"state,omitempty"`
	Frame  json.RawMessage `json:"frame,omitempty"`
	Names  []string        `json:"names,omitempty"`
	// Set is a TypeRows message's chunk: the columns and at most
	// RowsChunkLimit rows.
	Set *EncodedSet `json:"set,omitempty"`
	// Archive is set on the reply of a BACKUP: the archive's name and
	// length. Data is an archive message's piece.
	Archive *Archive `json:"archive,omitempty"`
	Data    []byte   `json:"data,omitempty"`
}

// SessionState is the session state after a request: the active domain and the
// open transaction, so a remote shell draws the same prompt.
type SessionState struct {
	Active    string `json:"active,omitempty"`
	InTx      bool   `json:"in_tx,omitempty"`
	TxDomain  string `json:"tx_domain,omitempty"`
	TxPending int    `json:"tx_pending,omitempty"`
}

// EncodedResult is a Result as it travels.
type EncodedResult struct {
	Statement  string          `json:"statement"`
	Message    string          `json:"message"`
	Domain     string          `json:"domain,omitempty"`
	Set        *EncodedSet     `json:"set,omitempty"`
	Clock      json.RawMessage `json:"clock,omitempty"`
	Attachment uint64          `json:"attachment,omitempty"`
	Warnings   []string        `json:"warnings,omitempty"`
}

// EncodedSet is a typed result set: values are JSON numbers in their exact
// integer or shortest round-trip float form, strings, or null.
type EncodedSet struct {
	Columns []EncodedColumn     `json:"columns"`
	Rows    [][]json.RawMessage `json:"rows"`
}

// EncodedColumn is one typed column.
type EncodedColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Error is a statement's failure: its position in the request's text, the
// stable code of its sentinel, which a client's decoded error matches, and
// the operator-facing message. Lifecycle carries a lifecycle refusal
// (*record.Error) whole, as its JSON, beside its own code; package follow
// encodes and decodes it (wire may not import record). Older servers sent
// every lifecycle refusal under the code "lifecycle"; the payload decides
// on decode, so that form still decodes to the same refusal.
type Error struct {
	Line      int             `json:"line"`
	Column    int             `json:"column"`
	Offset    int             `json:"offset"`
	Code      string          `json:"code"`
	Message   string          `json:"message"`
	Lifecycle json.RawMessage `json:"lifecycle,omitempty"`
}
