package testserve

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestH2CServesUntilTheTestEnds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var url string
	t.Run("served", func(t *testing.T) {
		url = H2C(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, r.Proto)
		}))
		var p http.Protocols
		p.SetUnencryptedHTTP2(true)
		hc := &http.Client{Transport: &http.Transport{Protocols: &p}}
		defer hc.CloseIdleConnections()
		resp, err := hc.Get(url)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, "HTTP/2.0", string(b))
	})
	_, err := http.Get(url)
	require.Error(t, err, "the server stopped with its test")
}
