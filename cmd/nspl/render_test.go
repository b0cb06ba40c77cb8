package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/wire"
)

func TestRenderCSV(t *testing.T) {
	cols := []wire.Column{{Name: "name", Type: wire.KindText}, {Name: "n", Type: wire.KindUint}}
	tests := []struct {
		name  string
		res   wire.Result
		quiet bool
		want  string
	}{
		{name: "a result set without its message", res: wire.Result{Message: "1 row", Set: &wire.ResultSet{Columns: cols, Rows: [][]wire.Value{{wire.Text("prod"), wire.Uint(3)}}}},
			want: "name,n\nprod,3\n"},
		{name: "quoted fields", res: wire.Result{Set: &wire.ResultSet{Columns: cols, Rows: [][]wire.Value{
			{wire.Text("a,b"), wire.Uint(1)}, {wire.Text(`say "hi"`), wire.Uint(2)}, {wire.Text("two\nlines"), wire.Uint(3)}}}},
			want: "name,n\n\"a,b\",1\n\"say \"\"hi\"\"\",2\n\"two\nlines\",3\n"},
		{name: "null is empty", res: wire.Result{Set: &wire.ResultSet{Columns: cols, Rows: [][]wire.Value{{wire.Null(), wire.Null()}}}},
			want: "name,n\n,\n"},
		{name: "message only", res: wire.Result{Message: "created domain 'a'"}, want: "created domain 'a'\n"},
		{name: "quiet drops the message", res: wire.Result{Message: "created domain 'a'"}, quiet: true, want: ""},
		{name: "quiet keeps warnings", res: wire.Result{Message: "m", Warnings: []string{"w"}}, quiet: true, want: "warning: w\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			require.NoError(t, renderReply(&b, formatCSV, tt.quiet, tt.res))
			require.Equal(t, tt.want, b.String())
		})
	}
}
