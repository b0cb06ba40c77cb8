package nspl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/nspl-dev/nspl"
	"github.com/nspl-dev/nspl/client"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/internal/testlog"
)

// The files an operator loads: a Grafana dashboard and Prometheus alert
// rules over the series a node exports.
const (
	grafanaDashboard = "docs/grafana/nspl.json"
	prometheusRules  = "docs/prometheus/nspl-rules.yml"
)

// dashboardPanels are the panels the dashboard promises, by title.
var dashboardPanels = []string{"Leader", "Quorum", "Tick lag per domain", "Commit latency", "Statements/s", "Refused requests/s", "Authority unassigned"}

// ruleAlerts are the alerts the rules promise.
var ruleAlerts = []string{"NsplNoLeader", "NsplQuorumLost", "NsplTickLag", "NsplAuthorityUnassigned", "NsplSessionsRefused"}

// TestDashboardsReferenceLiveSeries holds the dashboard and the alert
// rules to what a node exports: both files parse, they have the panels and
// alerts they promise, and every series an expression names is a family of
// a live cluster member's /metrics (a histogram's _bucket, _sum and _count
// series by their family), scraped once the member serves a session and
// ticks a paced domain.
func TestDashboardsReferenceLiveSeries(t *testing.T) {
	dash := readDashboard(t)
	rules := readRules(t)
	require.Subset(t, dash.titles, dashboardPanels, "the dashboard's panels")
	require.Subset(t, rules.alerts, ruleAlerts, "the alert rules")

	fams := liveFamilies(t)
	for _, f := range []struct {
		file  string
		exprs []string
	}{{grafanaDashboard, dash.exprs}, {prometheusRules, rules.exprs}} {
		require.NotEmpty(t, f.exprs, f.file)
		for _, expr := range f.exprs {
			names := seriesNames(expr)
			require.NotEmptyf(t, names, "%s: %q names no series", f.file, expr)
			for _, name := range names {
				require.Truef(t, seriesExported(fams, name), "%s: %q names %s, which a node does not export", f.file, expr, name)
			}
		}
	}
}

// TestSeriesNames: the metric names of PromQL expressions, label values,
// label names, functions and keywords aside.
func TestSeriesNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`max(nspl_leader) < 1 or absent(nspl_leader)`, []string{"nspl_leader"}},
		{`histogram_quantile(0.99, sum by (le) (rate(nspl_commit_latency_seconds_bucket[5m])))`, []string{"nspl_commit_latency_seconds_bucket"}},
		{`max by (domain) (nspl_domain_tick_lag_seconds{domain=~"$domain", instance!="nspl_fake"})`, []string{"nspl_domain_tick_lag_seconds"}},
		{`nspl_a > 2 * nspl_b + 5`, []string{"nspl_a", "nspl_b"}},
		{`label_values(nspl_domain_tick_lag_seconds, domain)`, []string{"nspl_domain_tick_lag_seconds"}},
		{`rate(raft_apply[1m]) + go_goroutines + process_open_fds`, []string{"raft_apply", "go_goroutines", "process_open_fds"}},
		{`sum by (instance) (up)`, nil},
	} {
		require.Equal(t, tc.want, seriesNames(tc.expr), tc.expr)
	}
}

// TestSeriesExported: a name is exported as a family of its own, or as a
// histogram's _bucket, _sum or _count, or a summary's _sum or _count;
// the suffix of any other family's name is no series of it.
func TestSeriesExported(t *testing.T) {
	fams := map[string]*dto.MetricFamily{
		"nspl_latency_seconds": {Type: dto.MetricType_HISTOGRAM.Enum()},
		"nspl_rpc_seconds":     {Type: dto.MetricType_SUMMARY.Enum()},
		"nspl_sessions":        {Type: dto.MetricType_GAUGE.Enum()},
		"nspl_events_total":    {Type: dto.MetricType_COUNTER.Enum()},
	}
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"nspl_latency_seconds_bucket", true},
		{"nspl_latency_seconds_sum", true},
		{"nspl_latency_seconds_count", true},
		{"nspl_latency_seconds", true},
		{"nspl_rpc_seconds_count", true},
		{"nspl_rpc_seconds_bucket", false},
		{"nspl_sessions", true},
		{"nspl_sessions_count", false},
		{"nspl_events_total", true},
		{"nspl_events", false},
		{"nspl_missing", false},
		{"nspl_missing_bucket", false},
	} {
		require.Equal(t, tc.want, seriesExported(fams, tc.name), tc.name)
	}
}

// seriesPrefixes are the prefixes of the series a node exports: its own,
// raft's and the Go and process collectors'.
var seriesName = regexp.MustCompile(`\b(?:nspl|raft|go|process)_[a-zA-Z0-9_:]*`)

// quotedOrMatchers matches PromQL's string literals and label matchers,
// whose values are no series.
var quotedOrMatchers = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\{[^}]*\}`)

// seriesNames returns the metric names expr names, in order, once each.
func seriesNames(expr string) []string {
	var names []string
	for _, n := range seriesName.FindAllString(quotedOrMatchers.ReplaceAllString(expr, " "), -1) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// seriesExported reports whether name is a series of the families.
func seriesExported(fams map[string]*dto.MetricFamily, name string) bool {
	if _, ok := fams[name]; ok {
		return true
	}
	for _, s := range []struct {
		suffix string
		types  []dto.MetricType
	}{
		{"_bucket", []dto.MetricType{dto.MetricType_HISTOGRAM}},
		{"_sum", []dto.MetricType{dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY}},
		{"_count", []dto.MetricType{dto.MetricType_HISTOGRAM, dto.MetricType_SUMMARY}},
	} {
		base, ok := strings.CutSuffix(name, s.suffix)
		if f := fams[base]; ok && f != nil && slices.Contains(s.types, f.GetType()) {
			return true
		}
	}
	return false
}

type dashboard struct{ titles, exprs []string }

// readDashboard parses the Grafana dashboard: its panel titles and every
// query it holds (panel targets and template variables).
func readDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(grafanaDashboard))
	require.NoError(t, err)
	var doc struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type       string `json:"type"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(b, &doc), "%s is JSON", grafanaDashboard)
	require.NotEmpty(t, doc.Title)
	var d dashboard
	for _, p := range doc.Panels {
		d.titles = append(d.titles, p.Title)
		require.NotEmptyf(t, p.Targets, "panel %q has queries", p.Title)
		for _, tg := range p.Targets {
			require.NotEmptyf(t, tg.Expr, "panel %q has an empty query", p.Title)
			d.exprs = append(d.exprs, tg.Expr)
		}
	}
	for _, v := range doc.Templating.List {
		if v.Type == "query" {
			d.exprs = append(d.exprs, v.Definition)
		}
	}
	return d
}

type ruleFile struct{ alerts, exprs []string }

// readRules parses the Prometheus rule file strictly: a field Prometheus
// does not know is an error.
func readRules(t *testing.T) ruleFile {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(prometheusRules))
	require.NoError(t, err)
	var doc struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Record      string            `yaml:"record"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&doc), "%s is a Prometheus rule file", prometheusRules)
	require.NotEmpty(t, doc.Groups)
	var r ruleFile
	for _, g := range doc.Groups {
		require.NotEmpty(t, g.Name)
		for _, rule := range g.Rules {
			require.NotEmptyf(t, rule.Alert, "every rule is an alert: %+v", rule)
			require.NotEmptyf(t, rule.Expr, "alert %s has an expression", rule.Alert)
			if rule.For != "" {
				_, err := model.ParseDuration(rule.For)
				require.NoErrorf(t, err, "alert %s: for", rule.Alert)
			}
			require.NotEmptyf(t, rule.Labels["severity"], "alert %s has a severity", rule.Alert)
			require.NotEmptyf(t, rule.Annotations["summary"], "alert %s has a summary", rule.Alert)
			r.alerts = append(r.alerts, rule.Alert)
			r.exprs = append(r.exprs, rule.Expr)
		}
	}
	return r
}

// liveFamilies starts a cluster member, serves its session API and its
// metrics listener as nspl serve does, runs statements through a remote
// session (one of them failing) until a paced domain has ticked, and
// returns the families of the metrics listener's /metrics.
func liveFamilies(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	logger := new(testlog.Buffer).Logger(slog.LevelWarn)
	tc := testcluster.New(t, testcluster.Options{Logger: logger})
	t.Cleanup(func() { require.NoError(t, tc.Close()) })
	m := tc.Start("n1", true)
	c, err := client.Dial(ctx, client.Config{URLs: []string{tc.ServeSessions(m)}, TLS: tc.ClientTLS("ops"), Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	_, err = c.ExecText(ctx, "CREATE PACED DOMAIN prod WITH PERIOD 100ms SKEW 0s; USE prod; START AT NOW;")
	require.NoError(t, err)
	_, err = c.ExecText(ctx, "USE nope;")
	require.ErrorIs(t, err, nspl.ErrNotFound)
	url := tc.ServeMetrics(m) + "/metrics"

	var fams map[string]*dto.MetricFamily
	tc.Eventually(30*time.Second, "the member reports the paced domain's tick lag", func() bool {
		fams = scrape(t, ctx, url)
		_, ok := fams["nspl_domain_tick_lag_seconds"]
		return ok
	})
	return fams
}

// scrape reads url's Prometheus text exposition into its families.
func scrape(t *testing.T, ctx context.Context, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	require.NoError(t, err)
	return fams
}
