package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{
			name: "median and range of each metric, odd and even run counts",
			in: `goos: linux
pkg: github.com/nspl-dev/nspl/planner
BenchmarkParsePlanRatio-2   	   10000	    114323 ns/op	       868.5 goparser-ns/statement	         5.574 ratio
BenchmarkParsePlanRatio-2   	    8275	    131070 ns/op	      1084 goparser-ns/statement	         5.040 ratio
BenchmarkParsePlanRatio-2   	   12085	     95889 ns/op	       820.4 goparser-ns/statement	         4.836 ratio
pkg: github.com/nspl-dev/nspl/catalog
BenchmarkThroughputRatio/mem-2	 100	 7 catalog/bare
BenchmarkThroughputRatio/mem-2	 100	 9 catalog/bare
PASS
`,
			want: `| benchmark | metric | median | range | runs |
|---|---|---|---|---|
| planner BenchmarkParsePlanRatio-2 | ns/op | 1.143e+05 | 9.589e+04–1.311e+05 | 3 |
| planner BenchmarkParsePlanRatio-2 | goparser-ns/statement | 868.5 | 820.4–1084 | 3 |
| planner BenchmarkParsePlanRatio-2 | ratio | 5.04 | 4.836–5.574 | 3 |
| catalog BenchmarkThroughputRatio/mem-2 | catalog/bare | 8 | 7–9 | 2 |
`,
		},
		{name: "no benchmarks", in: "PASS\nok\n", want: "| benchmark | metric | median | range | runs |\n|---|---|---|---|---|\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			require.NoError(t, run(strings.NewReader(tc.in), &out))
			require.Equal(t, tc.want, out.String())
		})
	}
}
