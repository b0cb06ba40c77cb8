package console

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nspl-dev/nspl/clock"
	"github.com/nspl-dev/nspl/internal/testbrowser"
	"github.com/nspl-dev/nspl/internal/testserve"
	"github.com/nspl-dev/nspl/node"
	"github.com/stretchr/testify/require"
)

// openHost admits every console session with the request's context.
type openHost struct{}

func (openHost) Begin(_ http.ResponseWriter, r *http.Request, _ string) (context.Context, func(), bool) {
	return r.Context(), func() {}, true
}

// TestPageProjectionIsTheNodes: the page's BigInt projection of an
// observed clock, as the console sends it, is the node's clock.Observed
// projection to the nanosecond, for rates across the float64 range,
// instants before and after the anchor, and both ends of the signed
// nanosecond range; and its RFC 3339 rendering is Go's.
func TestPageProjectionIsTheNodes(t *testing.T) {
	b := testbrowser.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := node.Open(ctx, node.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RaftLogLevel: slog.LevelError})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, n.Close()) })
	c, err := New(Config{Engine: n, Host: openHost{}, Key: []byte(strings.Repeat("k", 32)), Open: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hs := &http.Server{Handler: c}
	testserve.Serve(t, ln, hs.Serve, hs.Close)
	b.Do(30*time.Second, chromedp.Navigate("http://"+ln.Addr().String()+"/console/"))
	b.Until(30*time.Second, "the page's arithmetic", "window.nsplConsole")

	type probe struct {
		C   observed `json:"c"`
		Now string   `json:"now"`
	}
	var probes []probe
	var want []string
	rng := rand.New(rand.NewPCG(1, 2))
	rates := []float64{1, 60, 0.3, 1e-9, 1e9, math.SmallestNonzeroFloat64, 1.0000000000000002, 0.9999999999999999, 3.5, 1e300}
	for i := 0; len(probes) < 400; i++ {
		rate := rates[i%len(rates)]
		if i >= len(rates)*4 {
			rate = math.Exp(rng.Float64()*60 - 30)
		}
		o := clock.Observed{Generation: uint64(i + 1), State: clock.Paced, Period: uint64(rng.Int64N(1e10) + 1), Skew: uint64(rng.Int64N(1e9)),
			LogicalStart: rng.Int64N(4e18) - 2e18, WallStartedAt: rng.Int64N(4e18) - 2e18, Rate: rate}
		utc := o.WallStartedAt + rng.Int64N(2e12) - 1e11
		switch i % 7 {
		case 0:
			utc = math.MaxInt64
		case 1:
			utc = math.MinInt64
		case 2:
			utc = o.WallStartedAt
		}
		got, err := o.LogicalAt(utc)
		if err != nil {
			continue // beyond the signed nanosecond range: the node reports a failure, not a reading
		}
		probes = append(probes, probe{C: newObserved(o), Now: strconv.FormatInt(utc, 10)})
		want = append(want, strconv.FormatInt(got, 10))
	}
	unpaced := clock.Observed{Generation: 9, State: clock.Unpaced}
	probes = append(probes, probe{C: newObserved(unpaced), Now: "1796140847677031874"})
	want = append(want, "1796140847677031874")

	in, err := json.Marshal(probes)
	require.NoError(t, err)
	out := b.Eval("JSON.stringify(" + string(in) + ".map(p => window.nsplConsole.projectAt(p.c, BigInt(p.now)).toString()))")
	var got []string
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, want, got)

	for _, ns := range []int64{0, 1, -1, 1796140847677031874, -1796140847677031874, math.MaxInt64, math.MinInt64, 999999999} {
		js := b.Eval("window.nsplConsole.formatNS(BigInt(" + strconv.Quote(strconv.FormatInt(ns, 10)) + "))")
		require.Equal(t, time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000000000Z"), js, "formatNS(%d)", ns)
	}
}
