package server

import (
	"bytes"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteMetrics(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteMetrics(&b, []MetricFamily{
		{Name: "z_total", Help: "Z.", Type: "counter", Samples: []Sample{{Labels: []Label{{"peer", `n"2\`}}, Value: 3}}},
		{Name: "a_seconds", Help: "Latency\nof commits.", Type: "summary", Samples: []Sample{
			{Labels: []Label{{"quantile", "0.5"}}, Value: 0.002}, {Suffix: "_sum", Value: 1.5}, {Suffix: "_count", Value: 7},
			{Labels: []Label{{"quantile", "0.99"}}, Value: math.NaN()},
		}},
	}))
	require.Equal(t, `# HELP a_seconds Latency\nof commits.
# TYPE a_seconds summary
a_seconds{quantile="0.5"} 0.002
a_seconds_sum 1.5
a_seconds_count 7
a_seconds{quantile="0.99"} NaN
# HELP z_total Z.
# TYPE z_total counter
z_total{peer="n\"2\\"} 3
`, b.String())
}
