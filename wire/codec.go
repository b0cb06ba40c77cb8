package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/nspl-dev/nspl/clock"
)

// EncodeResult turns a Result into its wire form.
func EncodeResult(r Result) *EncodedResult {
	w := &EncodedResult{Statement: r.Statement, Message: r.Message, Domain: r.Domain, Attachment: r.Attachment, Warnings: r.Warnings}
	if r.Clock != nil {
		w.Clock = AppendObserved(nil, *r.Clock)
	}
	if r.Set != nil {
		w.Set = EncodeSet(r.Set)
	}
	return w
}

// DecodeResult turns a wire result back into a Result.
func DecodeResult(w *EncodedResult) (Result, error) {
	r := Result{Statement: w.Statement, Message: w.Message, Domain: w.Domain, Attachment: w.Attachment, Warnings: w.Warnings}
	if len(w.Clock) > 0 {
		o, err := DecodeObserved(w.Clock)
		if err != nil {
			return Result{}, err
		}
		r.Clock = &o
	}
	if w.Set != nil {
		set, err := DecodeSet(w.Set)
		if err != nil {
			return Result{}, err
		}
		r.Set = set
	}
	return r, nil
}

// EncodeSet turns a result set into its wire form.
func EncodeSet(s *ResultSet) *EncodedSet {
	w := &EncodedSet{Columns: make([]EncodedColumn, len(s.Columns)), Rows: make([][]json.RawMessage, len(s.Rows))}
	for i, c := range s.Columns {
		w.Columns[i] = EncodedColumn{Name: c.Name, Type: c.Type.String()}
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

func encodeValue(v Value) json.RawMessage {
	switch v.Kind() {
	case KindText:
		return AppendString(make([]byte, 0, len(v.Text())+2), v.Text())
	case KindUint, KindDuration:
		return strconv.AppendUint(nil, v.Uint(), 10)
	case KindTimestamp:
		return strconv.AppendInt(nil, v.Int(), 10)
	case KindRate:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return json.RawMessage("null")
		}
		return strconv.AppendFloat(nil, f, 'g', -1, 64)
	default:
		return json.RawMessage("null")
	}
}

var valueKinds = map[string]ValueKind{
	"null": KindNull, "text": KindText, "uint": KindUint,
	"duration": KindDuration, "timestamp": KindTimestamp, "rate": KindRate,
}

// DecodeSet turns a wire result set back into a typed ResultSet. A
// row of the wrong width or a value that does not fit its column's type is
// ErrProtocol.
func DecodeSet(w *EncodedSet) (*ResultSet, error) {
	s := &ResultSet{Columns: make([]Column, len(w.Columns)), Rows: make([][]Value, len(w.Rows))}
	for i, c := range w.Columns {
		k, ok := valueKinds[c.Type]
		if !ok {
			return nil, fmt.Errorf("%w: column %q has unknown type %q", ErrProtocol, c.Name, c.Type)
		}
		s.Columns[i] = Column{Name: c.Name, Type: k}
	}
	for r, row := range w.Rows {
		if len(row) != len(s.Columns) {
			return nil, fmt.Errorf("%w: row %d has %d values for %d columns", ErrProtocol, r+1, len(row), len(s.Columns))
		}
		out := make([]Value, len(row))
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

func decodeValue(k ValueKind, raw json.RawMessage) (Value, error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return Null(), nil
	}
	switch k {
	case KindText:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return Value{}, err
		}
		return Text(s), nil
	case KindUint, KindDuration:
		u, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil {
			return Value{}, err
		}
		if k == KindUint {
			return Uint(u), nil
		}
		return Duration(u), nil
	case KindTimestamp:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return Value{}, err
		}
		return Timestamp(n), nil
	case KindRate:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return Value{}, fmt.Errorf("rate %s is not a positive finite number", raw)
		}
		return Rate(f), nil
	}
	return Value{}, fmt.Errorf("value %s in a null column", raw)
}

// wireObserved is the JSON of AppendObserved.
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

// DecodeObserved decodes the JSON AppendObserved writes.
func DecodeObserved(b []byte) (clock.Observed, error) {
	var w wireObserved
	if err := UnmarshalStrict(b, &w); err != nil {
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

// wireFrame is the JSON of Frame.AppendJSON.
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
	Op           string          `json:"op"`
	Code         string          `json:"code"`
	Cause        string          `json:"cause"`
	Message      string          `json:"message"`
}

// DecodeFrame decodes the JSON Frame.AppendJSON writes.
func DecodeFrame(b []byte) (Frame, error) {
	var w wireFrame
	if err := UnmarshalStrict(b, &w); err != nil {
		return Frame{}, err
	}
	if w.Domain == "" {
		return Frame{}, fmt.Errorf("%w: frame without a domain", ErrProtocol)
	}
	f := Frame{Domain: w.Domain, Attachment: w.Attachment}
	switch w.Kind {
	case FrameState.String():
		o, err := DecodeObserved(w.Clock)
		if err != nil {
			return Frame{}, err
		}
		f.Kind, f.Clock = FrameState, o
	case FrameTick.String():
		if w.Tick == 0 {
			return Frame{}, fmt.Errorf("%w: tick frame with tick id 0", ErrProtocol)
		}
		f.Kind = FrameTick
		f.Tick = Tick{Generation: w.Generation, ID: w.Tick, Boundary: w.Boundary, AuthorityUTC: w.AuthorityUTC}
		f.Reading = w.Reading
	case FrameEnd.String():
		switch w.Reason {
		case DomainRemoved.String():
			f.Reason = DomainRemoved
		case NodeShutdown.String():
			f.Reason = NodeShutdown
		default:
			return Frame{}, fmt.Errorf("%w: unknown end reason %q", ErrProtocol, w.Reason)
		}
		f.Kind = FrameEnd
	case FrameError.String():
		if w.Message == "" {
			return Frame{}, fmt.Errorf("%w: error frame without a message", ErrProtocol)
		}
		f.Kind = FrameError
		f.Failure = ClockFailure{Domain: w.Domain, Generation: w.Generation, Op: w.Op, Code: w.Code, Cause: w.Cause, Message: w.Message}
	case FrameInterrupted.String():
		if w.Message == "" {
			return Frame{}, fmt.Errorf("%w: interrupted frame without a message", ErrProtocol)
		}
		f.Kind = FrameInterrupted
		f.Failure = ClockFailure{Domain: w.Domain, Generation: w.Generation, Op: w.Op, Code: w.Code, Cause: w.Cause, Message: w.Message}
	default:
		return Frame{}, fmt.Errorf("%w: unknown frame kind %q", ErrProtocol, w.Kind)
	}
	return f, nil
}

// UnmarshalStrict decodes one JSON object, refusing unknown fields and
// trailing data. Decoder.More alone would let a closing ']' or '}' after
// the object through, so anything but the end of input is refused.
func UnmarshalStrict(b []byte, v any) error {
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
	if err := UnmarshalStrict(line, &m); err != nil {
		return ClientMessage{}, err
	}
	switch m.Type {
	case TypeExec, TypeCancel, TypeDomains, TypePing, TypeArchive, TypeClose:
		return m, nil
	}
	return ClientMessage{}, fmt.Errorf("%w: unknown message type %q; this server speaks exec, cancel, domains, ping, archive and close", ErrProtocol, m.Type)
}
