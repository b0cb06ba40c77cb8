package record

import (
	"encoding"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestErrorCodesUnwrapToTheirSentinel holds the one promise an *Error makes
// across an encoding boundary: its Code alone selects the sentinel, so a
// refusal rebuilt from JSON matches errors.Is exactly as the original did,
// and matches no other sentinel.
func TestErrorCodesUnwrapToTheirSentinel(t *testing.T) {
	all := []error{ErrDomainExists, ErrDomainNotFound, ErrDomainRunning, ErrAlreadyRunning, ErrAlreadyStopped,
		ErrNoLiveVoter, ErrAuthorityConflict, ErrUnknownNode, ErrInvalidPeriod, ErrInvalidCommand, ErrInvalidSnapshot}
	for _, tc := range []struct {
		code Code
		want error
	}{
		{CodeDomainExists, ErrDomainExists},
		{CodeDomainNotFound, ErrDomainNotFound},
		{CodeDomainRunning, ErrDomainRunning},
		{CodeAlreadyRunning, ErrAlreadyRunning},
		{CodeAlreadyStopped, ErrAlreadyStopped},
		{CodeNoLiveVoter, ErrNoLiveVoter},
		{CodeAuthorityConflict, ErrAuthorityConflict},
		{CodeUnknownNode, ErrUnknownNode},
		{CodeInvalidPeriod, ErrInvalidPeriod},
		{CodeInvalidCommand, ErrInvalidCommand},
		{CodeInvalidSnapshot, ErrInvalidSnapshot},
		{"unheard_of", nil},
	} {
		t.Run(string(tc.code), func(t *testing.T) {
			b, err := json.Marshal(&Error{Code: tc.code, Domain: "prod", Step: 2, Message: "refused"})
			require.NoError(t, err)
			back := &Error{}
			require.NoError(t, json.Unmarshal(b, back))
			require.Equal(t, &Error{Code: tc.code, Domain: "prod", Step: 2, Message: "refused"}, back)
			require.Equal(t, "refused", back.Error())
			require.Equal(t, back, AsError(fmtWrap(back)), "AsError finds a wrapped *Error")
			for _, s := range all {
				require.Equalf(t, s == tc.want, errors.Is(back, s), "errors.Is(%s, %v)", tc.code, s)
			}
		})
	}
	require.Nil(t, AsError(errors.New("plain")))
	require.Nil(t, AsError(nil))
}

type wrapped struct{ err error }

func (w wrapped) Error() string { return "wrapped: " + w.err.Error() }
func (w wrapped) Unwrap() error { return w.err }

func fmtWrap(err error) error { return wrapped{err} }

// textValue is one of the package's enumerations seen through its text
// methods.
type textValue interface {
	MarshalText() ([]byte, error)
	UnmarshalText([]byte) error
}

// decoders returns a fresh zero value of every enumeration.
func decoders() map[string]func() textValue {
	return map[string]func() textValue{
		"pace":       func() textValue { return new(Pace) },
		"placement":  func() textValue { return new(Placement) },
		"status":     func() textValue { return new(Status) },
		"start mode": func() textValue { return new(StartMode) },
	}
}

// TestEnumTextBounds checks each enumeration at its last value and just
// past it: the last one encodes, the next is refused rather than written
// as a number a later reader could misread.
func TestEnumTextBounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		last, past encoding.TextMarshaler
		lastText   string
	}{
		{"pace", Paced, Pace(Paced + 1), "PACED"},
		{"placement", SuggestSeparation, Placement(SuggestSeparation + 1), "SUGGEST SEPARATION"},
		{"status", Running, Status(Running + 1), "running"},
		{"start mode", StartAt, StartMode(StartAt + 1), "at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.last.MarshalText()
			require.NoError(t, err)
			require.Equal(t, tc.lastText, string(b))
			_, err = tc.past.MarshalText()
			require.Error(t, err)
		})
	}
}

// FuzzEnumText decodes arbitrary text into every enumeration: decoding
// never panics, and text that decodes is exactly the spelling its value
// encodes to, so no second spelling is ever accepted.
func FuzzEnumText(f *testing.F) {
	for _, s := range []string{"PACED", "UNPACED", "NEUTRAL", "REQUIRE COLOCATION", "PREFER COLOCATION",
		"SUGGEST SEPARATION", "stopped", "running", "resume", "now", "at", "paced", "Running", "", "PACED "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for name, fresh := range decoders() {
			v := fresh()
			if err := v.UnmarshalText([]byte(text)); err != nil {
				continue
			}
			b, err := v.MarshalText()
			require.NoErrorf(t, err, "%s decoded %q to a value it cannot encode", name, text)
			require.Equalf(t, text, string(b), "%s accepted a second spelling", name)
		}
	})
}
