package lifecycle

import (
	"fmt"
	"testing"
)

// catalogOf returns a state with n paced running domains spread over three
// registered nodes.
func catalogOf(b *testing.B, n int) *State {
	s := NewState()
	nodes := []Identity{nodeA, nodeB, {Node: "node-c", Incarnation: 33}}
	for _, id := range nodes {
		mustApply(b, s, register(id))
	}
	avail := s.Incarnations()
	voters := []string{"node-a", "node-b", "node-c"}
	for i := range n {
		name := fmt.Sprintf("domain-%05d", i)
		mustApply(b, s, createPaced(name))
		d, _ := s.Domain(name)
		r, err := ResolveStart(d, StartRequest{Mode: StartNow, Rate: 60}, utc0, nil, avail, voters)
		if err != nil {
			b.Fatal(err)
		}
		mustApply(b, s, startCmd(name, r.Point, r.Authority))
	}
	return s
}

func BenchmarkApplyStartStop(b *testing.B) {
	s := catalogOf(b, 100)
	start := startCmd("domain-00042", point(StartNow, utc0, utc0, 60), &nodeA)
	stop := stopCmd("domain-00042")
	b.ReportAllocs()
	for b.Loop() {
		if r := s.Apply(stop); r.Failure != nil {
			b.Fatal(r.Failure)
		}
		if r := s.Apply(start); r.Failure != nil {
			b.Fatal(r.Failure)
		}
	}
}

func BenchmarkDecodeApply(b *testing.B) {
	s := catalogOf(b, 100)
	enc := func(c Command) []byte {
		raw, err := EncodeCommand(c)
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	stop, start := enc(stopCmd("domain-00042")), enc(startCmd("domain-00042", point(StartNow, utc0, utc0, 60), &nodeA))
	b.ReportAllocs()
	for b.Loop() {
		for _, raw := range [][]byte{stop, start} {
			c, err := DecodeCommand(raw)
			if err != nil {
				b.Fatal(err)
			}
			if r := s.Apply(c); r.Failure != nil {
				b.Fatal(r.Failure)
			}
		}
	}
}

func BenchmarkEncodeCommand(b *testing.B) {
	c := startCmd("prod", point(StartAt, 0, utc0, 60), &nodeA)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeCommand(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSelectAuthority(b *testing.B) {
	var avail []NodeIncarnation
	var voters []string
	for i := range 7 {
		name := fmt.Sprintf("node-%d", i)
		avail = append(avail, NodeIncarnation{Node: name, Incarnation: uint64(i + 1), Registered: uint64(i + 1)})
		voters = append(voters, name)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := SelectAuthority("production", avail, voters); !ok {
			b.Fatal("no authority")
		}
	}
}

func BenchmarkReconcile1000(b *testing.B) {
	s := catalogOf(b, 1000)
	avail := s.Incarnations()[1:] // node-a lost
	voters := []string{"node-a", "node-b", "node-c"}
	b.ReportAllocs()
	for b.Loop() {
		if len(Reconcile(s, avail, voters)) == 0 {
			b.Fatal("nothing to reconcile")
		}
	}
}

// cloneSink keeps each clone alive so the benchmark measures its allocation.
var cloneSink *State

func BenchmarkClone1000(b *testing.B) {
	s := catalogOf(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		cloneSink = s.Clone()
	}
}

func BenchmarkSnapshot1000(b *testing.B) {
	s := catalogOf(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		raw, err := s.MarshalSnapshot()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := RestoreSnapshot(raw); err != nil {
			b.Fatal(err)
		}
	}
}
