package history

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
)

// Report is what Check found in one history.
type Report struct {
	// Ops is the number of operations recorded; Unknowns those whose
	// outcome their client could not tell.
	Ops, Unknowns int
	// Linearizable is false when Porcupine found no linearization of the
	// writes and the linearizable reads; Undecided when it ran out of
	// time before deciding (neither an anomaly nor a proof).
	Linearizable, Undecided bool
	// Local lists the violations of the local level's model (CheckLocal).
	Local []string
	// Visualization is the HTML file a failing history was written to,
	// empty when it passed.
	Visualization string
}

// Anomalies is the number of promises the history broke: one for a
// history with no linearization, plus each local-level violation.
func (r Report) Anomalies() int {
	n := len(r.Local)
	if !r.Linearizable && !r.Undecided {
		n++
	}
	return n
}

// Check checks ops: the writes and the reads at the linearizable level
// with Porcupine against Model within timeout, the reads at the local
// level with CheckLocal. A read that did not complete OK says nothing and
// is left out. When the history fails, its visualisation is written to
// dir/name.html (Report.Visualization).
func Check(ops []Op, timeout time.Duration, dir, name string) (Report, error) {
	rep := Report{Ops: len(ops)}
	var end int64
	for _, op := range ops {
		end = max(end, op.Return, op.Call)
	}
	var lin []porcupine.Operation
	for _, op := range ops {
		if op.Output.Outcome == Unknown {
			rep.Unknowns++
		}
		if (op.Input.Kind == Read || op.Input.Kind == List) && (op.Output.Outcome != OK || op.Input.Level != Linearizable) {
			continue
		}
		ret := op.Return
		if op.Output.Outcome == Unknown {
			ret = end + 1
		}
		lin = append(lin, porcupine.Operation{ClientId: op.Client, Input: op.Input, Output: op.Output, Call: op.Call, Return: ret})
	}
	res, info := porcupine.CheckOperationsVerbose(Model, lin, timeout)
	rep.Linearizable = res == porcupine.Ok
	rep.Undecided = res == porcupine.Unknown
	rep.Local = CheckLocal(ops)
	if rep.Anomalies() == 0 {
		return rep, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rep, fmt.Errorf("history: write the visualisation: %w", err)
	}
	rep.Visualization = filepath.Join(dir, name+".html")
	if err := porcupine.VisualizePath(Model, info, rep.Visualization); err != nil {
		return rep, fmt.Errorf("history: write the visualisation: %w", err)
	}
	return rep, nil
}

// CheckLocal checks what a read at the local level promises: it answers
// from the serving node's installed catalog, which may lag the leader,
// but
//
//   - one revision is one state: every OK read (at any level) that saw a
//     domain at one catalog revision saw the same state;
//   - monotonic reads per client: a client's reads of a domain never see
//     an older revision than its earlier reads of it;
//   - read your writes: after a client's own acknowledged write of a
//     domain, its next read of the domain sees a newer revision than any
//     it read before the write (an ALTER to the placement that revision
//     held changes nothing and is not counted).
//
// Revisions are only known for a domain that exists and a Read names them;
// a read of an absent domain and a List are checked by none of these
// rules. It returns one line
// per violation.
func CheckLocal(ops []Op) []string {
	var out []string
	type key struct {
		domain string
		rev    uint64
	}
	seen := make(map[key]Op)
	byClient := make(map[int][]Op)
	for _, op := range ops {
		byClient[op.Client] = append(byClient[op.Client], op)
		if op.Input.Kind != Read || op.Output.Outcome != OK || !op.Output.Saw.Exists {
			continue
		}
		k := key{op.Input.Domain, op.Output.Revision}
		if prev, ok := seen[k]; ok && prev.Output.Saw != op.Output.Saw {
			out = append(out, fmt.Sprintf("domain %s revision %d read as %s by client %d and as %s by client %d",
				k.domain, k.rev, prev.Output.Saw, prev.Client, op.Output.Saw, op.Client))
			continue
		}
		seen[k] = op
	}
	clients := make([]int, 0, len(byClient))
	for c := range byClient {
		clients = append(clients, c)
	}
	sort.Ints(clients)
	for _, c := range clients {
		cops := byClient[c]
		sort.SliceStable(cops, func(i, j int) bool { return cops[i].Call < cops[j].Call })
		last := make(map[string]uint64) // newest revision read
		saw := make(map[string]Domain)  // what it held
		wrote := make(map[string]bool)  // an OK write since that read
		for _, op := range cops {
			d := op.Input.Domain
			if op.Input.Kind == List {
				continue
			}
			if op.Input.Kind != Read {
				// An ALTER to the placement the domain already had
				// changes nothing and commits no new revision, nor
				// does a transaction of such ALTERs alone.
				noop := saw[d].Exists && unchanging(op.Input, saw[d].Placement)
				if op.Output.Outcome == OK && !noop {
					wrote[d] = true
				}
				continue
			}
			if op.Output.Outcome != OK || !op.Output.Saw.Exists {
				continue
			}
			rev, prev := op.Output.Revision, last[d]
			switch {
			case rev < prev:
				out = append(out, fmt.Sprintf("client %d read domain %s at revision %d after reading revision %d (reads went back)", c, d, rev, prev))
			case wrote[d] && prev > 0 && rev <= prev:
				out = append(out, fmt.Sprintf("client %d read domain %s at revision %d after its own acknowledged write following revision %d (its write is missing)", c, d, rev, prev))
			}
			if rev >= prev {
				last[d], saw[d] = rev, op.Output.Saw
			}
			wrote[d] = false
		}
	}
	return out
}

// unchanging reports whether in, an OK write, commits no new revision of
// a domain whose placement is placement: an ALTER to it, or a transaction
// whose every step is one.
func unchanging(in Input, placement string) bool {
	switch in.Kind {
	case Alter:
		return in.Placement == placement
	case Txn:
		for _, s := range in.Steps {
			if s.Kind != Alter || s.Placement != placement {
				return false
			}
		}
		return true
	}
	return false
}
