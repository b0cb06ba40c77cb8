// Command benchtable reads `go test -bench` output on standard input and
// prints, for every benchmark and every metric it reported, the median
// and range over its runs (-count), in the order first seen. It is the
// table `make bench-ratios` prints; it measures nothing itself.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// row is one metric of one benchmark over its runs.
type row struct {
	bench, unit string
	values      []float64
}

func run(in io.Reader, out io.Writer) error {
	var rows []*row
	index := map[string]*row{}
	pkg := ""
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(p, "github.com/nspl-dev/nspl/")
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := pkg + " " + f[0]
		// f[1] is the iteration count; value and unit pairs follow.
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			key := name + "\x00" + f[i+1]
			r := index[key]
			if r == nil {
				r = &row{bench: name, unit: f[i+1]}
				index[key] = r
				rows = append(rows, r)
			}
			r.values = append(r.values, v)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", "benchmark", "metric", "median", "range", "runs")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows {
		s := slices.Clone(r.values)
		slices.Sort(s)
		fmt.Fprintf(w, "| %s | %s | %s | %s–%s | %d |\n", r.bench, r.unit, num(median(s)), num(s[0]), num(s[len(s)-1]), len(s))
	}
	return w.Flush()
}

// median of sorted s: the middle value, or the mean of the middle two.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
