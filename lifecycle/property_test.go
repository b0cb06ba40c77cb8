package lifecycle

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomCommand draws a command over a small name space so that existence,
// status and fence collisions are frequent. Half the reassignments use the
// current fence (they usually succeed), half a random one.
func randomCommand(rng *rand.Rand, s *State) Command {
	domains := []string{"d0", "d1", "d2", "d3"}
	nodes := []Identity{{Node: "n0", Incarnation: 1}, {Node: "n0", Incarnation: 2}, {Node: "n1", Incarnation: 1}, {Node: "n2", Incarnation: 7}}
	dom := domains[rng.IntN(len(domains))]
	id := nodes[rng.IntN(len(nodes))]
	pt := point(StartMode(rng.IntN(3)), rng.Int64(), rng.Int64(), float64(rng.IntN(100)+1)/4)
	switch rng.IntN(9) {
	case 0:
		c := createPaced(dom)
		if rng.IntN(2) == 0 {
			c = createUnpaced(dom)
		}
		c.CreateDomain.IfNotExists = rng.IntN(2) == 0
		return c
	case 1:
		return alterCmd(dom, Placement(rng.IntN(4)))
	case 2:
		return dropCmd(dom, rng.IntN(2) == 0)
	case 3:
		d, _ := s.Domain(dom)
		var auth *Identity
		if d.Pace == Paced {
			auth = &id
		}
		return startCmd(dom, pt, auth)
	case 4:
		return stopCmd(dom)
	case 5:
		steps := []Step{{Op: StepStop}, {Op: StepStart, Start: &ResolvedStart{Point: pt, Authority: &id}}, {Op: StepAlterPlacement, Placement: ptr(Placement(rng.IntN(4)))}}
		rng.Shuffle(len(steps), func(i, j int) { steps[i], steps[j] = steps[j], steps[i] })
		return Command{Op: OpTransaction, Transaction: &Transaction{Domain: dom, Steps: steps[:rng.IntN(4)]}}
	case 6:
		return register(id)
	case 7:
		return Command{Op: OpDeregisterNode, DeregisterNode: &DeregisterNode{Name: id.Node, Incarnation: id.Incarnation}}
	default:
		d, _ := s.Domain(dom)
		fence, gen := d.Authority, d.Generation
		if rng.IntN(2) == 0 {
			fence.Revision += uint64(rng.IntN(3))
			gen += uint64(rng.IntN(2))
		}
		var to *Identity
		if rng.IntN(3) > 0 {
			to = &id
		}
		return reassignCmd(dom, gen, fence, to)
	}
}

// TestRandomSequences applies long random command sequences and checks, after
// every command: the invariants of every domain, the revision rule (one per
// change, none otherwise), that a refusal or no-op leaves the state intact,
// determinism against a replica fed the encoded bytes, and that snapshots
// restore to equal states. Generations and fence revisions never decrease,
// and every reassignment that changed the state advanced its domain's fence
// revision by one and left the generation and mapping as they were.
func TestRandomSequences(t *testing.T) {
	changedOps := map[Op]int{}
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			leader, replica := NewState(), NewState()
			type marks struct{ gen, fence uint64 }
			high := map[string]marks{}
			for i := range 400 {
				cmd := randomCommand(rng, leader)
				raw, err := EncodeCommand(cmd)
				require.NoError(t, err)
				before := leader.Clone()
				r := leader.Apply(cmd)
				dec, err := DecodeCommand(raw)
				require.NoError(t, err)
				require.Equal(t, r, replica.Apply(dec), "step %d: replicas agree", i)
				requireSameState(t, leader, replica)
				if r.Changed {
					changedOps[cmd.Op]++
					require.Equal(t, before.Revision()+1, leader.Revision())
					if cmd.Op == OpReassignAuthority {
						// A reassignment or revocation moves the fence by
						// exactly one revision and nothing else.
						was, _ := before.Domain(cmd.ReassignAuthority.Domain)
						now, _ := leader.Domain(cmd.ReassignAuthority.Domain)
						require.Equal(t, was.Authority.Revision+1, now.Authority.Revision, "step %d: fence revision", i)
						require.Equal(t, was.Generation, now.Generation, "step %d: generation", i)
						require.Equal(t, was.Mapping, now.Mapping, "step %d: mapping", i)
					}
				} else {
					requireSameState(t, before, leader, "step %d: %s refused or no-op changed state", i, cmd.Op)
				}
				for _, d := range leader.Domains() {
					require.NoError(t, validateDomain(d))
					require.LessOrEqual(t, d.Revision, leader.Revision())
					m := high[d.Name]
					require.GreaterOrEqual(t, d.Generation, m.gen)
					require.GreaterOrEqual(t, d.Authority.Revision, m.fence)
					high[d.Name] = marks{d.Generation, d.Authority.Revision}
				}
				for name := range high {
					if _, ok := leader.Domain(name); !ok {
						delete(high, name) // dropped: a new domain starts over
					}
				}
			}
			b, err := leader.MarshalSnapshot()
			require.NoError(t, err)
			restored, err := RestoreSnapshot(b)
			require.NoError(t, err)
			requireSameState(t, leader, restored)
		})
	}
	// The generator reaches every transition, not only refusals.
	for _, op := range []Op{OpCreateDomain, OpAlterPlacement, OpDropDomain, OpStart, OpStop, OpTransaction, OpRegisterNode, OpDeregisterNode, OpReassignAuthority} {
		require.Greater(t, changedOps[op], 10, "op %s changed the state %d times", op, changedOps[op])
	}
}
