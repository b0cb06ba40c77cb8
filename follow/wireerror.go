package follow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/record"
	"github.com/nspl-dev/nspl/wire"
)

// EncodeError turns a statement's failure into its wire form. It lives
// here, not in wire, because a statement's failure is a *grammar.Error
// around a cause that may be a *record.Error carried whole.
func EncodeError(err error) *wire.Error {
	w := &wire.Error{Line: 1, Column: 1, Code: "error", Message: err.Error()}
	var ge *grammar.Error
	if errors.As(err, &ge) {
		w.Line, w.Column, w.Offset, w.Message = ge.Pos.Line, ge.Pos.Column, ge.Pos.Offset, ge.Msg
	}
	if le := record.AsError(err); le != nil {
		w.Code = "lifecycle"
		w.Lifecycle, _ = json.Marshal(le) // a struct of strings and an int always marshals
		return w
	}
	if code := wire.CodeOf(err); code != "" {
		w.Code = code
		return w
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		w.Code = wire.CodeOf(wire.ErrCanceled)
	}
	return w
}

// DecodeError turns a wire error back into the *grammar.Error a local session
// would have returned: same position, message and, for a known code, a Kind
// that unwraps to the same sentinel. A lifecycle payload that does not
// decode leaves a Kind that unwraps to wire.ErrProtocol.
func DecodeError(w *wire.Error) *grammar.Error {
	var kind error
	if raw := bytes.TrimSpace(w.Lifecycle); len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		le := &record.Error{}
		if err := json.Unmarshal(raw, le); err != nil {
			kind = fmt.Errorf("%w: lifecycle error does not decode: %v", wire.ErrProtocol, err)
		} else {
			kind = le
		}
	} else {
		kind = &wire.RemoteError{Code: w.Code, Message: w.Message}
	}
	return &grammar.Error{Pos: grammar.Position{Offset: w.Offset, Line: w.Line, Column: w.Column}, Msg: w.Message, Kind: kind}
}
