package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/session"
)

// filteredViews is what TestWatchFilter reads of a views event.
type filteredViews struct {
	Domains struct {
		Rows [][]viewCell `json:"rows"`
	} `json:"domains"`
	More    int `json:"more"`
	Cluster struct {
		DomainTable struct {
			Rows [][]viewCell `json:"rows"`
		} `json:"domain_table"`
	} `json:"cluster"`
}

// TestWatchFilter holds the console's domain list and cluster status at
// a catalog larger than the list: without a filter the list shows its
// first 500 domains and counts the rest, and ?like=PATTERN narrows both
// the list and the cluster status to the matching names; a pattern at the
// LIKE length limit is taken and one byte over it refused.
func TestWatchFilter(t *testing.T) {
	e := newEnv(t, server.Config{})
	s := session.New(e.node, session.Options{Logger: quietLogger()})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var b strings.Builder
	for i := range 600 {
		fmt.Fprintf(&b, "CREATE DOMAIN db_%03d;", i)
	}
	for i := range 3 {
		fmt.Fprintf(&b, "CREATE PACED DOMAIN web_%d WITH PERIOD 1s SKEW 10ms;", i)
	}
	b.WriteString("CREATE PACED DOMAIN db_paced WITH PERIOD 1s SKEW 10ms;")
	_, err := s.ExecText(ctx, b.String())
	require.NoError(t, err)

	c := e.browser()
	read := func(query string) filteredViews {
		t.Helper()
		w := e.open(c, "/console/api/watch"+query)
		defer w.close()
		w.hello()
		var v filteredViews
		require.NoError(t, json.Unmarshal([]byte(w.next("views").data), &v))
		return v
	}
	domainRows := func(v filteredViews) (names []string) {
		for _, r := range v.Cluster.DomainTable.Rows {
			names = append(names, r[0].Text)
		}
		return names
	}

	all := read("")
	require.Len(t, all.Domains.Rows, 500)
	require.Equal(t, 604-500, all.More)
	require.Equal(t, []string{"db_paced", "web_0", "web_1", "web_2"}, domainRows(all))

	web := read("?like=" + url.QueryEscape("WEB%"))
	require.Len(t, web.Domains.Rows, 3)
	require.Zero(t, web.More)
	for _, r := range web.Domains.Rows {
		require.True(t, strings.HasPrefix(r[0].Text, "web_"), r[0].Text)
	}
	require.Equal(t, []string{"web_0", "web_1", "web_2"}, domainRows(web))

	at := read("?like=" + strings.Repeat("a", grammar.MaxLikeLen))
	require.Empty(t, at.Domains.Rows)
	_, status := e.tryOpen(c, "/console/api/watch?like="+strings.Repeat("a", grammar.MaxLikeLen+1))
	require.Equal(t, http.StatusBadRequest, status)
}
