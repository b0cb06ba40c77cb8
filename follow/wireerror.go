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

// EncodeError turns a statement's failure into its wire form: its
// position, the code of its sentinel (wire.CodeOf; a lifecycle refusal's
// own code, such as domain_not_found), and its message. A lifecycle
// refusal also travels whole, as the JSON of its *record.Error, so a
// receiver rebuilds its domain and step. It lives here, not in wire,
// because a statement's failure is a *StatementError around a cause that
// may be a *record.Error.
func EncodeError(err error) *wire.Error {
	w := &wire.Error{Line: 1, Column: 1, Code: "error", Message: err.Error()}
	var se *StatementError
	var ge *grammar.Error
	switch {
	case errors.As(err, &se):
		w.Line, w.Column, w.Offset, w.Message = se.Pos.Line, se.Pos.Column, se.Pos.Offset, se.Msg
	case errors.As(err, &ge):
		w.Line, w.Column, w.Offset, w.Message = ge.Pos.Line, ge.Pos.Column, ge.Pos.Offset, ge.Msg
	}
	if le := record.AsError(err); le != nil {
		if le.Code != "" {
			w.Code = string(le.Code)
		}
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

// DecodeError turns a wire error back into the *StatementError a local
// session would have returned: same position, message and a Kind that
// matches the same sentinel with errors.Is: the *record.Error a lifecycle
// payload carries, else a *wire.RemoteError of the code. The payload
// decides, whatever the code, so the form older servers sent (every
// lifecycle refusal under the one code "lifecycle", the refusal's own code
// inside the payload) still decodes to the same refusal. A payload that
// does not decode leaves a Kind that matches wire.ErrProtocol.
func DecodeError(w *wire.Error) *StatementError {
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
	return &StatementError{Pos: grammar.Position{Offset: w.Offset, Line: w.Line, Column: w.Column}, Msg: w.Message, Kind: kind}
}
