package grammar

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpecNoPauseOrResumeStatement holds that the language has no PAUSE or
// RESUME statement: the pause used while altering a model is internal, and
// RESUME is only a RESTORE option.
func TestSpecNoPauseOrResumeStatement(t *testing.T) {
	for _, src := range []string{"PAUSE;", "RESUME;", "PAUSE DOMAIN prod;", "RESUME DOMAIN prod;", "ALTER DOMAIN PAUSE;"} {
		t.Run(src, func(t *testing.T) {
			_, err := Parse(src)
			require.ErrorIs(t, err, ErrSyntax)
			var e *Error
			require.ErrorAs(t, err, &e)
		})
	}
	_, err := Parse("RESTORE CLUSTER FROM 'a.nsplbak' RESUME;")
	require.NoError(t, err, "RESUME as a RESTORE option")
}
