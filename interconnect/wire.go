package interconnect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/wire"
)

// Paths under the peer API.
const (
	PathPrefix    = "/v1/peer/"
	PathProgress  = "/v1/peer/progress"
	PathJoin      = "/v1/peer/join"
	PathPropose   = "/v1/peer/propose"
	PathStatus    = "/v1/peer/status"
	PathRemove    = "/v1/peer/remove"
	PathInstalled = "/v1/peer/installed"
	// PathInstalledStream is the installed stream (installed.go).
	PathInstalledStream = "/v1/peer/installed/stream"
)

// MaxBodyBytes caps every request and response body of the interconnect.
const MaxBodyBytes = 64 << 10

// ProgressType is the type tag of a progress request.
const ProgressType = "domain_clock_progress"

// forwardedHeader marks a request a member forwarded to the leader on
// behalf of another node; the leader does not forward it again.
const forwardedHeader = "Nspl-Forwarded"

// Progress is the domain_clock_progress request: one tick with the fence it
// was produced under. The reporting node is not in the body: the receiver
// takes it from the verified peer certificate.
//
// The last report of a producer whose clock arithmetic failed also carries
// Failure, the failure's typed report, for the report's domain and
// generation; its tick is then the newest the producer emitted, and Tick is
// 0 when it emitted none. The receiver authorizes it like any report: only
// the installed authority of that generation can report its failure.
type Progress struct {
	Type         string                   `json:"type"`
	Domain       string                   `json:"domain"`
	Generation   uint64                   `json:"generation"`
	Authority    lifecycle.AuthorityFence `json:"authority"`
	Tick         uint64                   `json:"tick"`
	Boundary     int64                    `json:"boundary"`
	AuthorityUTC int64                    `json:"authority_utc"`
	Period       uint64                   `json:"period"`
	Failure      *ProgressFailure         `json:"failure,omitempty"`
}

// ProgressFailure is a failure report as it travels between nodes; the
// domain and generation are the report's.
type ProgressFailure struct {
	Op      string `json:"op"`
	Code    string `json:"code"`
	Cause   string `json:"cause"`
	Message string `json:"message"`
}

// ProgressOf returns the wire form of a report.
func ProgressOf(rep clockrt.ProgressReport) Progress {
	p := Progress{Type: ProgressType, Domain: rep.Domain, Generation: rep.Generation, Authority: rep.Authority,
		Tick: rep.ID, Boundary: rep.Boundary, AuthorityUTC: rep.AuthorityUTC, Period: rep.Period}
	if f := rep.Failure; f != nil {
		p.Failure = &ProgressFailure{Op: f.Op, Code: f.Code, Cause: f.Cause, Message: f.Message}
	}
	return p
}

// Report returns the runtime report p carries.
func (p Progress) Report() clockrt.ProgressReport {
	rep := clockrt.ProgressReport{Domain: p.Domain, Generation: p.Generation, Authority: p.Authority,
		ID: p.Tick, Boundary: p.Boundary, AuthorityUTC: p.AuthorityUTC, Period: p.Period}
	if f := p.Failure; f != nil {
		rep.Failure = &clockrt.ClockFailure{Domain: p.Domain, Generation: p.Generation,
			Op: f.Op, Code: f.Code, Cause: f.Cause, Message: f.Message}
	}
	return rep
}

// Outcomes of a progress evaluation.
const (
	OutcomeAccepted = "accepted" // published as the newest tick
	OutcomeIgnored  = "ignored"  // current but not newer
	OutcomeRefused  = "refused"  // does not match the receiver's fence
)

// ProgressReply says how the receiver evaluated a report against its
// current fence; it never means that the report established time.
type ProgressReply struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// Incarnation and AdvertisedRevision are the receiver's, so the
	// authority learns its advertisement with every reply.
	Incarnation        uint64 `json:"incarnation"`
	AdvertisedRevision uint64 `json:"advertised_revision"`
}

// JoinRequest asks the leader to add a node's raft server as a voter.
type JoinRequest struct {
	Name     string `json:"name"`
	ServerID string `json:"server_id"`
	RaftAddr string `json:"raft_addr"`
}

// RemoveRequest asks the leader to remove a node from the cluster: its
// registration and its raft server.
type RemoveRequest struct {
	Name string `json:"name"`
}

// ProposeRequest carries one catalog command in lifecycle's committed
// encoding (lifecycle.EncodeCommand), base64 in JSON.
type ProposeRequest struct {
	Command []byte `json:"command"`
}

// ProposeReply is the committed command's result, or the error.
type ProposeReply struct {
	Result *lifecycle.Result `json:"result,omitempty"`
	Error  *wire.RemoteError `json:"error,omitempty"`
}

// ErrorReply is the body of every failed request other than propose.
type ErrorReply struct {
	Error *wire.RemoteError `json:"error"`
}

// InstalledRequest asks the receiver to answer once it has installed the
// catalog revision Revision: a statement's completion boundary, waited for
// by the node that served it.
type InstalledRequest struct {
	Revision uint64 `json:"revision"`
}

// InstalledReply is the receiver's installed revision when it answered:
// at least the requested one when Installed, older when its own bound
// (MaxInstalledWait) ended the wait first.
type InstalledReply struct {
	Installed          bool   `json:"installed"`
	AdvertisedRevision uint64 `json:"advertised_revision"`
}

// Status is a node's answer to the health probe.
type Status struct {
	Node               string `json:"node"`
	Incarnation        uint64 `json:"incarnation"`
	AdvertisedRevision uint64 `json:"advertised_revision"`
	CatalogRevision    uint64 `json:"catalog_revision"`
	Leader             bool   `json:"leader"`
	Healthy            bool   `json:"healthy"`
}

// decodeStrict decodes exactly one JSON value of v's type from r, reading
// at most MaxBodyBytes, refusing unknown fields and trailing data.
func decodeStrict(r io.Reader, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, MaxBodyBytes+1))
	if err != nil {
		return fmt.Errorf("%w: read body: %v", ErrBadRequest, err)
	}
	if len(b) > MaxBodyBytes {
		return fmt.Errorf("%w: body is larger than %d bytes", ErrBadRequest, MaxBodyBytes)
	}
	return decodeBytes(b, v)
}

func decodeBytes(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the JSON value", ErrBadRequest)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the JSON value", ErrBadRequest)
	}
	return nil
}

// DecodeProgress decodes and checks one progress request body.
func DecodeProgress(b []byte) (Progress, error) {
	var p Progress
	if len(b) > MaxBodyBytes {
		return p, fmt.Errorf("%w: body is larger than %d bytes", ErrBadRequest, MaxBodyBytes)
	}
	if err := decodeBytes(b, &p); err != nil {
		return Progress{}, err
	}
	if p.Type != ProgressType {
		return Progress{}, fmt.Errorf("%w: type %q is not %q", ErrBadRequest, p.Type, ProgressType)
	}
	if p.Domain == "" {
		return Progress{}, fmt.Errorf("%w: the report names no domain", ErrBadRequest)
	}
	if p.Failure != nil && p.Failure.Message == "" {
		return Progress{}, fmt.Errorf("%w: the clock failure carries no report", ErrBadRequest)
	}
	return p, nil
}
