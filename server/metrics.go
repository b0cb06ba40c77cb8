package server

import (
	"bufio"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// MetricFamily is one Prometheus metric family: a name, its help text, its
// type ("counter", "gauge" or "summary") and its samples.
type MetricFamily struct {
	Name    string
	Help    string
	Type    string
	Samples []Sample
}

// Sample is one sample of a family. Suffix is appended to the family name
// ("_sum", "_count" for a summary); Labels are written in order.
type Sample struct {
	Suffix string
	Labels []Label
	Value  float64
}

// Label is one label pair.
type Label struct {
	Name  string
	Value string
}

// WriteMetrics writes families in the Prometheus text exposition format
// (version 0.0.4), sorted by name.
func WriteMetrics(w io.Writer, families []MetricFamily) error {
	fams := append([]MetricFamily(nil), families...)
	sort.SliceStable(fams, func(i, j int) bool { return fams[i].Name < fams[j].Name })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		bw.WriteString("# HELP " + f.Name + " " + escapeHelp(f.Help) + "\n")
		bw.WriteString("# TYPE " + f.Name + " " + f.Type + "\n")
		for _, s := range f.Samples {
			bw.WriteString(f.Name + s.Suffix)
			if len(s.Labels) > 0 {
				bw.WriteByte('{')
				for i, l := range s.Labels {
					if i > 0 {
						bw.WriteByte(',')
					}
					bw.WriteString(l.Name + `="` + escapeLabel(l.Value) + `"`)
				}
				bw.WriteByte('}')
			}
			bw.WriteByte(' ')
			bw.WriteString(formatValue(s.Value))
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// serverMetrics are the server's own families: sessions and attachments.
func (s *Server) serverMetrics() []MetricFamily {
	return []MetricFamily{
		{Name: "nspl_sessions", Help: "Client sessions open on this node.", Type: "gauge",
			Samples: []Sample{{Value: float64(s.Sessions())}}},
		{Name: "nspl_sessions_opened_total", Help: "Client sessions opened on this node.", Type: "counter",
			Samples: []Sample{{Value: float64(s.sessionsTotal.Load())}}},
		{Name: "nspl_clock_attachments", Help: "Domain clock attachments the open sessions hold.", Type: "gauge",
			Samples: []Sample{{Value: float64(s.Attachments())}}},
	}
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	fams := append(s.serverMetrics(), s.limitMetrics()...)
	if s.cfg.Metrics != nil {
		fams = append(fams, s.cfg.Metrics()...)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_ = WriteMetrics(w, fams)
}
