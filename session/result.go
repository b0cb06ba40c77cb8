package session

import "github.com/nspl-dev/nspl/wire"

// The result and frame vocabulary is wire's; session names it for the code
// that runs statements, so the embedded and remote paths share one type.
type (
	Result    = wire.Result
	ResultSet = wire.ResultSet
	Column    = wire.Column
	ValueKind = wire.ValueKind
	Value     = wire.Value
	Frame     = wire.Frame
	FrameKind = wire.FrameKind
	EndReason = wire.EndReason
)

// Value kinds, frame kinds and end reasons, as wire defines them.
const (
	KindNull      = wire.KindNull
	KindText      = wire.KindText
	KindUint      = wire.KindUint
	KindDuration  = wire.KindDuration
	KindTimestamp = wire.KindTimestamp
	KindRate      = wire.KindRate

	FrameState = wire.FrameState
	FrameTick  = wire.FrameTick
	FrameEnd   = wire.FrameEnd

	ReasonNone    = wire.ReasonNone
	DomainRemoved = wire.DomainRemoved
	NodeShutdown  = wire.NodeShutdown
)

// Value constructors, as wire defines them.
var (
	Null      = wire.Null
	Text      = wire.Text
	Uint      = wire.Uint
	Duration  = wire.Duration
	Timestamp = wire.Timestamp
	Rate      = wire.Rate
)
