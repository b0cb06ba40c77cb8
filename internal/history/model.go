package history

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	"github.com/anishathalye/porcupine"
)

// apply is the catalog's sequential rule for one operation on one domain:
// the state after in, or the refusal that leaves d unchanged.
func apply(d Domain, in Input) (Domain, Refusal) {
	next, why, _ := applyStep(d, in)
	return next, why
}

// applyStep is apply that also names, for a refused Txn, the one-based
// step refused (0 when the domain is absent: the commit names no step).
// A Txn applies its steps in order to one copy of the domain and keeps
// the copy only when none is refused: all or nothing, as the catalog
// commits a transaction.
func applyStep(d Domain, in Input) (Domain, Refusal, int) {
	if in.Kind == Txn {
		if !d.Exists {
			return d, RefusedNotFound, 0
		}
		next := d
		for i, s := range in.Steps {
			var why Refusal
			if next, why = applyOne(next, Input{Kind: s.Kind, Domain: in.Domain, Placement: s.Placement}); why != "" {
				return d, why, i + 1
			}
		}
		return next, "", 0
	}
	next, why := applyOne(d, in)
	return next, why, 0
}

// applyOne is apply of an operation other than a Txn.
func applyOne(d Domain, in Input) (Domain, Refusal) {
	switch in.Kind {
	case Create:
		if d.Exists {
			return d, RefusedExists
		}
		return Domain{Exists: true, Placement: "NEUTRAL"}, ""
	case Read, List:
		return d, ""
	}
	if !d.Exists {
		return d, RefusedNotFound
	}
	switch in.Kind {
	case Start:
		if d.Running {
			return d, RefusedAlreadyRunning
		}
		d.Running, d.Gen = true, d.Gen+1
	case Stop:
		if !d.Running {
			return d, RefusedAlreadyStopped
		}
		d.Running = false
	case Alter:
		d.Placement = in.Placement
	case Drop:
		if d.Running {
			return d, RefusedRunning
		}
		return Domain{}, ""
	}
	return d, ""
}

// step is the model's Step: an OK operation must be one the rule allows
// (a Read must see the state), a Failed one must be refused for the reason
// the rule gives, and an Unknown one takes effect if the rule allows it
// (its return is put after every other operation, so the checker may also
// order it last, which is the same as never).
func step(state, input, output interface{}) (bool, interface{}) {
	d, in, out := state.(Domain), input.(Input), output.(Output)
	next, refusal, at := applyStep(d, in)
	switch out.Outcome {
	case OK:
		if refusal != "" || (in.Kind == Read && out.Saw != d) || (in.Kind == List && !listed(out.Saw, d)) {
			return false, d
		}
		return true, next
	case Failed:
		return refusal == out.Refusal && refusal != "" && (out.Step == 0 || out.Step == at), d
	case Unknown:
		return true, next
	}
	return false, d
}

// listed reports whether a List that saw saw is what d lists as.
func listed(saw, d Domain) bool {
	return saw.Exists == d.Exists && saw.Running == d.Running && saw.Gen == d.Gen
}

// Model is the catalog as Porcupine checks it: each domain a register of
// Domain, the history partitioned per domain.
var Model = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		by := make(map[string][]porcupine.Operation)
		var names []string
		for _, op := range ops {
			name := op.Input.(Input).Domain
			if _, ok := by[name]; !ok {
				names = append(names, name)
			}
			by[name] = append(by[name], op)
		}
		sort.Strings(names)
		out := make([][]porcupine.Operation, 0, len(names))
		for _, n := range names {
			out = append(out, by[n])
		}
		return out
	},
	Init: func() interface{} { return Domain{} },
	Step: step,
	Hash: func(state interface{}) uint64 {
		h := fnv.New64a()
		_, _ = fmt.Fprint(h, state.(Domain))
		return h.Sum64()
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(Input), output.(Output)
		s := in.Kind.String() + " " + in.Domain
		if in.Kind == Alter {
			s += " " + in.Placement
		}
		if in.Kind == Txn {
			steps := make([]string, len(in.Steps))
			for i, st := range in.Steps {
				steps[i] = st.String()
			}
			s += " [" + strings.Join(steps, "; ") + "]"
		}
		switch {
		case out.Outcome == Failed && out.Step > 0:
			return fmt.Sprintf("%s → fail at step %d: %s", s, out.Step, out.Refusal)
		case out.Outcome == Failed:
			return s + " → fail: " + string(out.Refusal)
		case out.Outcome == OK && in.Kind == List:
			return fmt.Sprintf("%s → %s", s, out.Saw)
		case out.Outcome == OK && in.Kind == Read:
			return fmt.Sprintf("%s → %s (rev %d)", s, out.Saw, out.Revision)
		}
		return s + " → " + out.Outcome.String()
	},
	DescribeState: func(state interface{}) string { return state.(Domain).String() },
}
