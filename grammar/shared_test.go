package grammar

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// everyForm is a script with every statement form, mixed case, comments
// and each literal kind.
const everyForm = `-- every form
CREATE PACED DOMAIN production WITH PERIOD 1s SKEW 100ms PLACEMENT REQUIRE COLOCATION;
CREATE IF NOT EXISTS UNPACED DOMAIN archive PLACEMENT SUGGEST SEPARATION;
create domain scratch; CREATE DOMAIN ` + "`eu-west~1`" + ` PLACEMENT NEUTRAL;
USE production; ALTER DOMAIN SET PLACEMENT PREFER COLOCATION;
/* fixed instant */ START AT '2026-01-01T00:00:00Z' TIME RATE 60;
START AT NOW TIME RATE -1.5; START AT NOW TIME RATE +inf; START AT NOW; START;
ATTACH DOMAIN CLOCK; DETACH DOMAIN CLOCK; STOP; LIST DOMAINS;
DESCRIBE DOMAIN; DESCRIBE DOMAIN archive; DESCRIBE BACKUP '~/p.nsplbak';
BEGIN; COMMIT; REVERT; ROLLBACK; SHOW CLUSTER STATUS; SHOW TRANSACTIONS;
BACKUP CLUSTER TO '/b/all'; BACKUP DOMAIN TO 'd'; BACKUP DOMAIN prod TO 'a''b';
RESTORE CLUSTER FROM '/b/all' RESUME DRY RUN; RESTORE DOMAIN prod AS ` + "`to`" + ` FROM 'p';
DROP DOMAIN scratch; DROP DOMAIN IF EXISTS scratch
`

// requireSharedMatchesReference parses every complete statement of src
// both from the script's shared lexer with the production its keyword
// selects and, as the reference, on its own with the whole grammar. Where
// the reference parses, the shared path must parse too and give the same
// statement, positions included; where the reference fails, so must it.
// It returns how many statements parsed.
func requireSharedMatchesReference(t *testing.T, src string) int {
	t.Helper()
	peek, sc := lexScript(src)
	parsed := 0
	for _, ext := range sc.stmts {
		toks := sc.toks[ext.start:ext.end]
		want, wantErr := parseTokens(toks, ext.term)
		got, gotErr := parseShared(peek, ext.start, toks)
		if wantErr != nil {
			require.Error(t, gotErr, "%q", src[toks[0].Pos.Offset:])
			continue
		}
		require.NoError(t, gotErr, "%q", src[toks[0].Pos.Offset:])
		require.Equal(t, want, got)
		parsed++
	}
	return parsed
}

// TestSharedParseMatchesReference holds that every statement form parses
// on the fast path, not only through Parse's fallback to the reference,
// and to the same statement.
func TestSharedParseMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		n    int
	}{
		{"every form", everyForm, 29}, // two rates are refused by their literal check
		{"after an error", "STOP; START AT; USE prod; CREATE DOMAIN a.b; LIST DOMAINS", 3},
		{"trailing tokens", "STOP STOP; LIST DOMAINS DOMAINS; BEGIN", 1},
		{"no statement keyword", "prod; 1s; 'x'; STOP", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.n, requireSharedMatchesReference(t, tc.src))
		})
	}
}

// FuzzSharedParseMatchesReference checks the same on arbitrary input.
func FuzzSharedParseMatchesReference(f *testing.F) {
	f.Add(everyForm)
	for _, tc := range errorCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		requireSharedMatchesReference(t, src)
	})
}
