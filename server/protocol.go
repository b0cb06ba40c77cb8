package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/runtime"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// ProtocolVersion is the version of the session protocol this package
// speaks. It is part of the path (SessionPath) and of the welcome message.
const ProtocolVersion = 1

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
	TypeFrame   = "frame"   // a clock frame (state, tick or end)
	TypeNames   = "names"   // the reply to TypeDomains
)

// Sentinel errors of the protocol, wire's own: both ends refuse with them.
var (
	ErrMessageTooLarge = wire.ErrMessageTooLarge
	ErrProtocol        = wire.ErrProtocol
	ErrRequestOrder    = wire.ErrRequestOrder
	ErrSessionIdle     = wire.ErrSessionIdle
	ErrMessageTimeout  = wire.ErrMessageTimeout
	ErrArchiveRequired = wire.ErrArchiveRequired
	ErrArchiveBusy     = wire.ErrArchiveBusy
)

// ClientMessage is one line a client sends.
type ClientMessage struct {
	Type string `json:"type"`
	// ID numbers the request; replies carry it back. IDs increase.
	ID uint64 `json:"id"`
	// Text is the statement of an exec request: exactly one statement.
	Text string `json:"text,omitempty"`
	// Archive is set on the exec of BACKUP, RESTORE and DESCRIBE BACKUP:
	// the client reads or writes the archive file itself.
	Archive *WireArchive `json:"archive,omitempty"`
	// Data is an archive message's piece, at most ArchivePieceBytes.
	Data []byte `json:"data,omitempty"`
}

// WireArchive describes an archive that travels with a request or reply.
// Name is the file as the client resolved it, for messages only: the
// server never opens it. Bytes is the archive's length: on a RESTORE or
// DESCRIBE BACKUP exec, of the pieces sent before it; on a BACKUP reply,
// of the pieces the server sent before the reply.
type WireArchive struct {
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
	// ID is the request a reply, error or names message answers.
	ID     uint64          `json:"id,omitempty"`
	Result *WireResult     `json:"result,omitempty"`
	Error  *WireError      `json:"error,omitempty"`
	State  *WireState      `json:"state,omitempty"`
	Frame  json.RawMessage `json:"frame,omitempty"`
	Names  []string        `json:"names,omitempty"`
	// Archive is set on the reply of a BACKUP: the archive's name and
	// length. Data is an archive message's piece.
	Archive *WireArchive `json:"archive,omitempty"`
	Data    []byte       `json:"data,omitempty"`
}

// WireState is the session state after a request: the active domain and the
// open transaction, so a remote shell draws the same prompt.
type WireState struct {
	Active    string `json:"active,omitempty"`
	InTx      bool   `json:"in_tx,omitempty"`
	TxDomain  string `json:"tx_domain,omitempty"`
	TxPending int    `json:"tx_pending,omitempty"`
}

// WireResult is a session.Result.
type WireResult struct {
	Statement  string          `json:"statement"`
	Message    string          `json:"message"`
	Domain     string          `json:"domain,omitempty"`
	Set        *WireSet        `json:"set,omitempty"`
	Clock      json.RawMessage `json:"clock,omitempty"`
	Attachment uint64          `json:"attachment,omitempty"`
}

// WireSet is a typed result set: values are JSON numbers in their exact
// integer or shortest round-trip float form, strings, or null.
type WireSet struct {
	Columns []WireColumn        `json:"columns"`
	Rows    [][]json.RawMessage `json:"rows"`
}

// WireColumn is one typed column.
type WireColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// WireError is a statement's failure: its position in the request's text, a
// stable code that selects the sentinel a client unwraps to, and the
// operator-facing message. Lifecycle carries a *lifecycle.Error whole.
type WireError struct {
	Line      int              `json:"line"`
	Column    int              `json:"column"`
	Offset    int              `json:"offset"`
	Code      string           `json:"code"`
	Message   string           `json:"message"`
	Lifecycle *lifecycle.Error `json:"lifecycle,omitempty"`
}

// EncodeError turns a statement's failure into its wire form.
func EncodeError(err error) *WireError {
	w := &WireError{Line: 1, Column: 1, Code: "error", Message: err.Error()}
	var ge *grammar.Error
	if errors.As(err, &ge) {
		w.Line, w.Column, w.Offset, w.Message = ge.Pos.Line, ge.Pos.Column, ge.Pos.Offset, ge.Msg
	}
	if le := lifecycle.AsError(err); le != nil {
		w.Code, w.Lifecycle = "lifecycle", le
		return w
	}
	if code := wire.CodeOf(err); code != "" {
		w.Code = code
		return w
	}
	if isContextError(err) {
		w.Code = "canceled"
	}
	return w
}

// DecodeError turns a wire error back into the *grammar.Error a local session
// would have returned: same position, message and, for a known code, a Kind
// that unwraps to the same sentinel.
func DecodeError(w *WireError) *grammar.Error {
	var kind error
	if w.Lifecycle != nil {
		le := *w.Lifecycle
		kind = &le
	} else {
		kind = &wire.RemoteError{Code: w.Code, Message: w.Message}
	}
	return &grammar.Error{Pos: grammar.Position{Offset: w.Offset, Line: w.Line, Column: w.Column}, Msg: w.Message, Kind: kind}
}

// EncodeResult turns a session.Result into its wire form.
func EncodeResult(r session.Result) *WireResult {
	w := &WireResult{Statement: r.Statement, Message: r.Message, Domain: r.Domain, Attachment: r.Attachment}
	if r.Clock != nil {
		w.Clock = wire.AppendObserved(nil, *r.Clock)
	}
	if r.Set != nil {
		w.Set = EncodeSet(r.Set)
	}
	return w
}

// DecodeResult turns a wire result back into a session.Result.
func DecodeResult(w *WireResult) (session.Result, error) {
	r := session.Result{Statement: w.Statement, Message: w.Message, Domain: w.Domain, Attachment: w.Attachment}
	if len(w.Clock) > 0 {
		o, err := DecodeObserved(w.Clock)
		if err != nil {
			return session.Result{}, err
		}
		r.Clock = &o
	}
	if w.Set != nil {
		set, err := DecodeSet(w.Set)
		if err != nil {
			return session.Result{}, err
		}
		r.Set = set
	}
	return r, nil
}

// EncodeSet turns a result set into its wire form.
func EncodeSet(s *session.ResultSet) *WireSet {
	w := &WireSet{Columns: make([]WireColumn, len(s.Columns)), Rows: make([][]json.RawMessage, len(s.Rows))}
	for i, c := range s.Columns {
		w.Columns[i] = WireColumn{Name: c.Name, Type: c.Type.String()}
	}
	for r, row := range s.Rows {
		out := make([]json.RawMessage, len(row))
		for i, v := range row {
			out[i] = encodeValue(v)
		}
		w.Rows[r] = out
	}
	return w
}

func encodeValue(v session.Value) json.RawMessage {
	switch v.Kind() {
	case session.KindText:
		b, _ := json.Marshal(v.Text()) // a string always marshals
		return b
	case session.KindUint, session.KindDuration:
		return strconv.AppendUint(nil, v.Uint(), 10)
	case session.KindTimestamp:
		return strconv.AppendInt(nil, v.Int(), 10)
	case session.KindRate:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return json.RawMessage("null")
		}
		return strconv.AppendFloat(nil, f, 'g', -1, 64)
	default:
		return json.RawMessage("null")
	}
}

var valueKinds = map[string]session.ValueKind{
	"null": session.KindNull, "text": session.KindText, "uint": session.KindUint,
	"duration": session.KindDuration, "timestamp": session.KindTimestamp, "rate": session.KindRate,
}

// DecodeSet turns a wire result set back into a typed session.ResultSet. A
// row of the wrong width or a value that does not fit its column's type is
// ErrProtocol.
func DecodeSet(w *WireSet) (*session.ResultSet, error) {
	s := &session.ResultSet{Columns: make([]session.Column, len(w.Columns)), Rows: make([][]session.Value, len(w.Rows))}
	for i, c := range w.Columns {
		k, ok := valueKinds[c.Type]
		if !ok {
			return nil, fmt.Errorf("%w: column %q has unknown type %q", ErrProtocol, c.Name, c.Type)
		}
		s.Columns[i] = session.Column{Name: c.Name, Type: k}
	}
	for r, row := range w.Rows {
		if len(row) != len(s.Columns) {
			return nil, fmt.Errorf("%w: row %d has %d values for %d columns", ErrProtocol, r+1, len(row), len(s.Columns))
		}
		out := make([]session.Value, len(row))
		for i, raw := range row {
			v, err := decodeValue(s.Columns[i].Type, raw)
			if err != nil {
				return nil, fmt.Errorf("%w: row %d column %q: %v", ErrProtocol, r+1, s.Columns[i].Name, err)
			}
			out[i] = v
		}
		s.Rows[r] = out
	}
	return s, nil
}

func decodeValue(k session.ValueKind, raw json.RawMessage) (session.Value, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return session.Null(), nil
	}
	switch k {
	case session.KindText:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return session.Value{}, err
		}
		return session.Text(s), nil
	case session.KindUint, session.KindDuration:
		u, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return session.Value{}, err
		}
		if k == session.KindUint {
			return session.Uint(u), nil
		}
		return session.Duration(u), nil
	case session.KindTimestamp:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return session.Value{}, err
		}
		return session.Timestamp(n), nil
	case session.KindRate:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return session.Value{}, fmt.Errorf("rate %s is not a positive finite number", raw)
		}
		return session.Rate(f), nil
	}
	return session.Value{}, fmt.Errorf("value %s in a null column", raw)
}

// wireObserved is the JSON of wire.AppendObserved.
type wireObserved struct {
	Generation    uint64   `json:"generation"`
	State         string   `json:"state"`
	Period        uint64   `json:"period_ns"`
	Skew          uint64   `json:"skew_ns"`
	LogicalStart  int64    `json:"logical_start_ns"`
	WallStartedAt int64    `json:"wall_started_at_ns"`
	Rate          *float64 `json:"time_rate"`
}

var observedStates = map[string]clock.ObservedState{
	clock.Stopped.String(): clock.Stopped, clock.Uninstalled.String(): clock.Uninstalled,
	clock.Unpaced.String(): clock.Unpaced, clock.Paced.String(): clock.Paced,
}

// DecodeObserved decodes the JSON wire.AppendObserved writes.
func DecodeObserved(b []byte) (clock.Observed, error) {
	var w wireObserved
	if err := strictUnmarshal(b, &w); err != nil {
		return clock.Observed{}, err
	}
	st, ok := observedStates[w.State]
	if !ok {
		return clock.Observed{}, fmt.Errorf("%w: unknown clock state %q", ErrProtocol, w.State)
	}
	o := clock.Observed{Generation: w.Generation, State: st}
	if st == clock.Paced {
		if w.Rate == nil || !(*w.Rate > 0) || math.IsInf(*w.Rate, 0) || w.Period == 0 {
			return clock.Observed{}, fmt.Errorf("%w: paced clock without a positive period and rate", ErrProtocol)
		}
		o.Period, o.Skew, o.LogicalStart, o.WallStartedAt, o.Rate = w.Period, w.Skew, w.LogicalStart, w.WallStartedAt, *w.Rate
	}
	return o, nil
}

// wireFrame is the JSON of session.Frame.AppendJSON.
type wireFrame struct {
	Domain       string          `json:"domain"`
	Attachment   uint64          `json:"attachment"`
	Kind         string          `json:"kind"`
	Clock        json.RawMessage `json:"clock"`
	Generation   uint64          `json:"generation"`
	Tick         uint64          `json:"tick"`
	Boundary     int64           `json:"boundary_ns"`
	AuthorityUTC int64           `json:"authority_utc_ns"`
	Reading      int64           `json:"reading_ns"`
	Reason       string          `json:"reason"`
}

// DecodeFrame decodes the JSON session.Frame.AppendJSON writes.
func DecodeFrame(b []byte) (session.Frame, error) {
	var w wireFrame
	if err := strictUnmarshal(b, &w); err != nil {
		return session.Frame{}, err
	}
	if w.Domain == "" {
		return session.Frame{}, fmt.Errorf("%w: frame without a domain", ErrProtocol)
	}
	f := session.Frame{Domain: w.Domain, Attachment: w.Attachment}
	switch w.Kind {
	case session.FrameState.String():
		o, err := DecodeObserved(w.Clock)
		if err != nil {
			return session.Frame{}, err
		}
		f.Kind, f.Clock = session.FrameState, o
	case session.FrameTick.String():
		if w.Tick == 0 {
			return session.Frame{}, fmt.Errorf("%w: tick frame with tick id 0", ErrProtocol)
		}
		f.Kind = session.FrameTick
		f.Tick = runtime.Tick{Generation: w.Generation, ID: w.Tick, Boundary: w.Boundary, AuthorityUTC: w.AuthorityUTC}
		f.Reading = w.Reading
	case session.FrameEnd.String():
		switch w.Reason {
		case session.DomainRemoved.String():
			f.Reason = session.DomainRemoved
		case session.NodeShutdown.String():
			f.Reason = session.NodeShutdown
		default:
			return session.Frame{}, fmt.Errorf("%w: unknown end reason %q", ErrProtocol, w.Reason)
		}
		f.Kind = session.FrameEnd
	default:
		return session.Frame{}, fmt.Errorf("%w: unknown frame kind %q", ErrProtocol, w.Kind)
	}
	return f, nil
}

// strictUnmarshal decodes one JSON object, refusing unknown fields and
// trailing data. Decoder.More alone would let a closing ']' or '}' after
// the object through, so anything but the end of input is refused.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrProtocol, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: trailing data after the object", ErrProtocol)
	}
	return nil
}

// DecodeClientMessage decodes one client message line: a JSON object of a
// known type with no unknown fields and nothing after it. A failure is
// ErrProtocol saying what is wrong. It does not check the order of ids,
// which is the stream's business.
func DecodeClientMessage(line []byte) (ClientMessage, error) {
	var m ClientMessage
	if err := strictUnmarshal(line, &m); err != nil {
		return ClientMessage{}, err
	}
	switch m.Type {
	case TypeExec, TypeCancel, TypeDomains, TypePing, TypeArchive:
		return m, nil
	}
	return ClientMessage{}, fmt.Errorf("%w: unknown message type %q; this server speaks exec, cancel, domains, ping and archive", ErrProtocol, m.Type)
}
