package console_test

import (
	"encoding/json"
	"testing"

	"github.com/nspl-dev/nspl/server"
	"github.com/stretchr/testify/require"
)

// views is a watch stream's views event.
type views struct {
	Domains *struct {
		Columns []struct{ Name, Label string } `json:"columns"`
		Rows    *[][]viewCell                  `json:"rows"`
	} `json:"domains"`
	Domain      string `json:"domain"`
	DescribeErr string `json:"describe_error"`
	Gone        bool   `json:"gone"`
	Revision    string `json:"revision"`
}

// viewCell is one cell of a view table.
type viewCell struct {
	Text  string `json:"text"`
	Title string `json:"title"`
	Class string `json:"class"`
	Badge string `json:"badge"`
}

func decodeViews(t *testing.T, data string) views {
	t.Helper()
	var v views
	require.NoError(t, json.Unmarshal([]byte(data), &v))
	return v
}

func listed(v views, name string) bool {
	if v.Domains == nil {
		return false
	}
	if v.Domains.Rows == nil {
		return false
	}
	for _, r := range *v.Domains.Rows {
		if r[0].Text == name {
			return true
		}
	}
	return false
}

// TestWatchFollowsTheCatalog: the watch stream sends the views again after
// each installation: a created domain appears, a dropped one goes, and the
// selected domain's description says it is gone.
func TestWatchFollowsTheCatalog(t *testing.T) {
	e := newEnv(t, server.Config{})
	c := e.browser()
	csrf := e.csrf(c) // an open listener admits everyone
	repl := e.open(c, "/console/api/repl")
	key := repl.hello().Key
	w := e.open(c, "/console/api/watch?domain=web")
	w.hello()
	require.False(t, listed(decodeViews(t, w.next("views").data), "web"))

	e.exec(c, csrf, key, "CREATE PACED DOMAIN web WITH PERIOD 100ms SKEW 10ms; USE web; START AT NOW;")
	w.until("views", func(d string) bool { v := decodeViews(t, d); return listed(v, "web") && v.DescribeErr == "" })
	e.exec(c, csrf, key, "STOP; DROP DOMAIN web;")
	v := decodeViews(t, w.until("views", func(d string) bool { return !listed(decodeViews(t, d), "web") }).data)
	require.Contains(t, v.DescribeErr, "web")
	require.True(t, v.Gone, "a dropped domain is gone, which the page says in its own words")
	require.NotContains(t, v.DescribeErr, "LIST DOMAINS", "no shell advice on a web page")
	require.NotNil(t, v.Domains.Rows, "an empty list is [], which the page reads, never null")
}
