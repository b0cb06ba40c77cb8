package planner

import (
	"fmt"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/record"
)

// pace converts the grammar's pacing keyword to the replicated vocabulary.
// The grammar keeps its own enum so that it imports nothing of this module;
// this is the one place the two meet. A value the grammar does not define
// is ErrUnknownStatement, a bug in whoever built the statement.
func pace(p grammar.Pace) (record.Pace, error) {
	switch p {
	case grammar.Unpaced:
		return record.Unpaced, nil
	case grammar.Paced:
		return record.Paced, nil
	default:
		return 0, fmt.Errorf("%w: pace %d", ErrUnknownStatement, uint8(p))
	}
}

// placement converts the grammar's placement keyword to the replicated
// vocabulary. A value the grammar does not define is ErrUnknownStatement.
func placement(p grammar.Placement) (record.Placement, error) {
	switch p {
	case grammar.Neutral:
		return record.Neutral, nil
	case grammar.RequireColocation:
		return record.RequireColocation, nil
	case grammar.PreferColocation:
		return record.PreferColocation, nil
	case grammar.SuggestSeparation:
		return record.SuggestSeparation, nil
	default:
		return 0, fmt.Errorf("%w: placement %d", ErrUnknownStatement, uint8(p))
	}
}

// Request returns the START as the lifecycle resolves it: the one place
// the plan's StartMode becomes the replicated vocabulary's. A plain START
// carries no rate: the lifecycle's resume rule decides it.
func (p Start) Request() record.StartRequest {
	switch p.Mode {
	case StartAtNow:
		return record.StartRequest{Mode: record.StartNow, Rate: p.Rate}
	case StartAtTime:
		return record.StartRequest{Mode: record.StartAt, At: p.At, Rate: p.Rate}
	default:
		return record.StartRequest{Mode: record.StartResume}
	}
}

// Step returns the transaction step a queued plan is, as the lifecycle
// resolves it: START with its request, STOP, and ALTER DOMAIN SET PLACEMENT
// with its placement. Any other plan cannot be a step; it gives a request
// whose Op is the plan's canonical text, which is no step's op, so that
// the node refuses the transaction naming the statement
// (node.ErrNotTransactional) rather than this function deciding alone.
func Step(p Plan) record.StepRequest {
	switch p := p.(type) {
	case Start:
		return record.StepRequest{Op: record.StepStart, Start: p.Request()}
	case Stop:
		return record.StepRequest{Op: record.StepStop}
	case AlterPlacement:
		return record.StepRequest{Op: record.StepAlterPlacement, Placement: p.Placement}
	default:
		return record.StepRequest{Op: record.StepOp(p.String())}
	}
}
