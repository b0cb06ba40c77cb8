package complete

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCandidates(t *testing.T) {
	names := func() []string { return []string{"prod", "prod-1", "archive", "Bad$(x)"} }
	tests := []struct {
		prefix  string
		want    []Candidate
		partial string
	}{
		{"cre", []Candidate{{"create", Keyword}}, "cre"},
		{"CRE", []Candidate{{"CREATE", Keyword}}, "CRE"},
		{"USE pr", []Candidate{{"prod", Domain}, {"`prod-1`", Domain}}, "pr"},
		{"USE `PR", []Candidate{{"`prod`", Domain}, {"`prod-1`", Domain}}, "`PR"},
		{"USE ", []Candidate{{"archive", Domain}, {"prod", Domain}, {"`prod-1`", Domain}}, ""},
		{"STOP ", nil, ""},
		{"CREATE DOMAIN ", nil, ""}, // a new name: no existing one is offered
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			got, partial := Candidates(tt.prefix, names)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.partial, partial)
		})
	}
}
