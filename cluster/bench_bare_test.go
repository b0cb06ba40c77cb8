//go:build nspl_bench

package cluster_test

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/nspl-dev/nspl/lifecycle"
)

// bareRaft3 is the anchor of BenchmarkCommitLatency3Node: three bare
// hashicorp/raft servers in one process, over the same kind of transport
// a cluster member's catalog uses (raft's NetworkTransport on loopback TCP
// with mutual TLS, node certificates of the cluster's CA, a pool of three
// connections per peer), raft's in-memory stores as testcluster's members
// have, and the members' raft timing. Its FSM only counts entries. A
// commit is raft.Apply on the leader until its future answers: committed
// by a quorum and applied on the leader.
type bareRaft3 struct {
	rafts  []*raft.Raft
	trans  []*raft.NetworkTransport
	layers []*bareStream
	leader *raft.Raft
	data   []byte
}

func newBareRaft3(b *testing.B, h *testcluster.Cluster) *bareRaft3 {
	b.Helper()
	s := &bareRaft3{}
	b.Cleanup(s.close)
	var servers []raft.Server
	for i := range 3 {
		name := fmt.Sprintf("bare%d", i+1)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		mat := h.Material(name)
		layer := &bareStream{ln: tls.NewListener(ln, mat.PeerServerConfig()), client: mat.ClientConfig("", ""), conns: map[net.Conn]struct{}{}}
		s.layers = append(s.layers, layer)
		s.trans = append(s.trans, raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: layer, MaxPool: 3, Timeout: catalog.DefaultTransportTimeout, Logger: hclog.NewNullLogger(),
		}))
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(name), Address: raft.ServerAddress(ln.Addr().String())})
	}
	for i, trans := range s.trans {
		rc := raft.DefaultConfig()
		rc.LocalID = servers[i].ID
		rc.HeartbeatTimeout = catalog.DefaultHeartbeatTimeout
		rc.ElectionTimeout = catalog.DefaultElectionTimeout
		rc.LeaderLeaseTimeout = catalog.DefaultLeaderLeaseTimeout
		rc.CommitTimeout = catalog.DefaultCommitTimeout
		rc.MaxAppendEntries = 64 // the catalog's
		rc.SnapshotInterval = catalog.DefaultSnapshotInterval
		rc.BatchApplyCh = true
		rc.NoLegacyTelemetry = true
		rc.Logger = hclog.NewNullLogger()
		store := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		if err := raft.BootstrapCluster(rc, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			b.Fatal(err)
		}
		r, err := raft.NewRaft(rc, &countingFSM{}, store, store, snaps, trans)
		if err != nil {
			b.Fatal(err)
		}
		s.rafts = append(s.rafts, r)
	}
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for s.leader == nil {
		select {
		case ok := <-s.rafts[0].LeaderCh():
			s.pick(ok, 0)
		case ok := <-s.rafts[1].LeaderCh():
			s.pick(ok, 1)
		case ok := <-s.rafts[2].LeaderCh():
			s.pick(ok, 2)
		case <-timeout.C:
			b.Fatal("the bare raft cluster elected no leader")
		}
	}
	if err := s.leader.Barrier(0).Error(); err != nil {
		b.Fatal(err)
	}
	data, err := lifecycle.EncodeCommand(lifecycle.Command{Op: lifecycle.OpCreateDomain, RequestID: "bench-0123456789abcdef-1",
		CreateDomain: &lifecycle.CreateDomain{Name: "bench-leader", Pace: lifecycle.Unpaced}})
	if err != nil {
		b.Fatal(err)
	}
	s.data = data
	return s
}

func (s *bareRaft3) pick(leader bool, i int) {
	if leader {
		s.leader = s.rafts[i]
	}
}

// commit commits one entry of the size of a lifecycle command.
func (s *bareRaft3) commit() error { return s.leader.Apply(s.data, 0).Error() }

func (s *bareRaft3) close() {
	for _, r := range s.rafts {
		_ = r.Shutdown().Error()
	}
	for _, t := range s.trans {
		_ = t.Close()
	}
	for _, l := range s.layers {
		l.closeConns()
	}
	s.rafts, s.trans, s.layers = nil, nil, nil
}

// countingFSM is the anchor's state machine.
type countingFSM struct{ applied uint64 }

func (f *countingFSM) Apply(*raft.Log) any                 { f.applied++; return nil }
func (f *countingFSM) Snapshot() (raft.FSMSnapshot, error) { return bareSnapshot{}, nil }
func (f *countingFSM) Restore(rc io.ReadCloser) error      { return rc.Close() }
func (bareSnapshot) Persist(sink raft.SnapshotSink) error  { return sink.Close() }
func (bareSnapshot) Release()                              {}

type bareSnapshot struct{}

// bareStream is raft's stream layer over mutual TLS, like the catalog's:
// it closes every connection it made or accepted on closeConns, which
// raft's NetworkTransport does not (it closes only the listener).
type bareStream struct {
	ln     net.Listener
	client *tls.Config

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func (l *bareStream) track(c net.Conn) net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conns[c] = struct{}{}
	return c
}

func (l *bareStream) Accept() (net.Conn, error) {
	c, err := l.ln.Accept()
	if err != nil {
		return nil, err
	}
	return l.track(c), nil
}

func (l *bareStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(address), l.client)
	if err != nil {
		return nil, err
	}
	return l.track(c), nil
}

func (l *bareStream) Close() error   { return l.ln.Close() }
func (l *bareStream) Addr() net.Addr { return l.ln.Addr() }

func (l *bareStream) closeConns() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		_ = c.Close()
	}
	clear(l.conns)
}
