package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/nspl-dev/nspl/lifecycle"
)

// memberCallTimeout bounds one Join or Forward call of the loop.
const memberCallTimeout = 2 * time.Second

// memberWork is a cluster member's work while it is not the leader: join
// the cluster while the raft configuration does not name this server, then
// register this incarnation through the leader. It reports whether nothing
// is left to do.
func (n *Replica) memberWork(ctx context.Context) bool {
	if n.markRegistered() {
		return true
	}
	cc := n.cfg.Cluster
	if cc == nil {
		return true
	}
	member, err := n.isMember()
	if err != nil {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, memberCallTimeout)
	defer cancel()
	if !member {
		if cc.Join == nil {
			return true // wait for an operator to add this server
		}
		if err := cc.Join(cctx, n.id, string(n.address)); err != nil {
			n.logger.Warn("catalog: join did not succeed; retrying", "err", err)
		}
		return false
	}
	if cc.Forward == nil {
		return true
	}
	leader, ok := n.Leader()
	if !ok || leader.APIAddr == "" {
		return false // an election is in progress, or its registration is not here yet
	}
	res, err := cc.Forward(cctx, leader, n.registration())
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		n.logger.Warn("catalog: registration through the leader did not commit; retrying", "err", err)
		return false
	}
	// The registration committed; it is registered once applied here,
	// which the next change (or retry) observes.
	return n.markRegistered()
}

// markRegistered closes registered once the applied state holds this
// incarnation, and reports whether it does.
func (n *Replica) markRegistered() bool {
	select {
	case <-n.registered:
		return true
	default:
	}
	if nd, ok := n.State().Node(n.cfg.NodeName); ok && nd.Incarnation == n.incarnation {
		n.registerOnce.Do(func() { close(n.registered) })
		return true
	}
	return false
}

// registration is the command that registers this incarnation.
func (n *Replica) registration() lifecycle.Command {
	return lifecycle.Command{Op: lifecycle.OpRegisterNode, RegisterNode: &lifecycle.RegisterNode{
		Name:        n.cfg.NodeName,
		Incarnation: n.incarnation,
		RaftID:      n.id,
		RaftAddr:    string(n.address),
		APIAddr:     n.cfg.APIAddress,
	}}
}

func (n *Replica) isMember() (bool, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return false, n.translate(err, false)
	}
	for _, s := range f.Configuration().Servers {
		if s.ID == raft.ServerID(n.id) {
			return true, nil
		}
	}
	return false, nil
}

// RaftAddress returns the raft address this node advertises.
func (n *Replica) RaftAddress() string { return string(n.address) }

// NodeByServerID returns the registered node whose raft server ID is id.
func NodeByServerID(s *lifecycle.State, id string) (lifecycle.RegisteredNode, bool) {
	for _, nd := range s.Nodes() {
		if nd.RaftID == id {
			return nd, true
		}
	}
	return lifecycle.RegisteredNode{}, false
}

// Server is one server of the raft configuration.
type Server struct {
	ServerID string
	RaftAddr string
	Voter    bool
}

// Servers returns the latest raft configuration this node knows.
func (n *Replica) Servers() ([]Server, error) {
	f := n.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, n.translate(err, false)
	}
	var out []Server
	for _, s := range f.Configuration().Servers {
		out = append(out, Server{ServerID: string(s.ID), RaftAddr: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	return out, nil
}

// AddVoter adds the server to the cluster as a voter, or updates its
// address; adding a voter that is already one at that address is a no-op.
// Only the leader with confirmed leadership may call it (ErrNotLeader,
// ErrLeadershipUnconfirmed otherwise). ctx bounds the wait; the change may
// still commit after a cancellation (ErrOutcomeUnknown).
func (n *Replica) AddVoter(ctx context.Context, serverID, raftAddr string) error {
	if serverID == "" || raftAddr == "" {
		return fmt.Errorf("%w: AddVoter needs a server id and a raft address, got %q and %q", ErrConfig, serverID, raftAddr)
	}
	servers, err := n.Servers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		if s.ServerID == serverID && s.RaftAddr == raftAddr && s.Voter {
			return nil
		}
	}
	return n.changeConfiguration(ctx, func(timeout time.Duration) raft.IndexFuture {
		return n.raft.AddVoter(raft.ServerID(serverID), raft.ServerAddress(raftAddr), 0, timeout)
	})
}

// RemoveServer removes the server from the cluster; removing one that is
// not a member is a no-op. The same leadership rules as AddVoter apply.
// A leader that removes itself steps down once the change commits.
func (n *Replica) RemoveServer(ctx context.Context, serverID string) error {
	servers, err := n.Servers()
	if err != nil {
		return err
	}
	found := false
	for _, s := range servers {
		found = found || s.ServerID == serverID
	}
	if !found {
		return nil
	}
	return n.changeConfiguration(ctx, func(timeout time.Duration) raft.IndexFuture {
		return n.raft.RemoveServer(raft.ServerID(serverID), 0, timeout)
	})
}

// changeConfiguration runs one raft membership change on the confirmed
// leader and waits for it, like apply.
func (n *Replica) changeConfiguration(ctx context.Context, start func(time.Duration) raft.IndexFuture) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n.isClosed() {
		return ErrShutdown
	}
	if n.raft.State() != raft.Leader {
		return n.translate(raft.ErrNotLeader, false)
	}
	if n.confirmedTerm.Load() != n.raft.CurrentTerm() {
		return ErrLeadershipUnconfirmed
	}
	timeout, err := raftTimeout(ctx)
	if err != nil {
		return err
	}
	_, err = n.await(ctx, func() raft.Future { return start(timeout) })
	n.reconcileSoon() // answered or not, the topology may have changed
	return err
}

// observerBuffer is how many raft observations wait for the callback; raft
// drops observations when it is full rather than block.
const observerBuffer = 64

// startObserver registers a non-blocking raft observer and a goroutine,
// owned by n.loop, that hands each observation to the callback promptly.
func (n *Replica) startObserver(ctx context.Context) {
	ch := make(chan raft.Observation, observerBuffer)
	n.observer = raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.LeaderObservation, raft.PeerObservation:
			return true
		}
		return false
	})
	n.raft.RegisterObserver(n.observer)
	cb := n.cfg.Cluster.OnObservation
	n.loop.Add(1)
	go func() {
		defer n.loop.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case o := <-ch:
				var obs Observation
				switch d := o.Data.(type) {
				case raft.FailedHeartbeatObservation:
					obs = Observation{Kind: HeartbeatFailed, ServerID: string(d.PeerID)}
				case raft.ResumedHeartbeatObservation:
					obs = Observation{Kind: HeartbeatResumed, ServerID: string(d.PeerID)}
				case raft.LeaderObservation:
					obs = Observation{Kind: LeaderChanged, ServerID: string(d.LeaderID)}
				case raft.PeerObservation:
					obs = Observation{Kind: PeerChanged, ServerID: string(d.Peer.ID), Removed: d.Removed}
				default:
					continue
				}
				if nd, ok := NodeByServerID(n.State(), obs.ServerID); ok {
					obs.Node = nd.Name
				}
				if obs.Kind == LeaderChanged || obs.Kind == PeerChanged {
					n.reconcileSoon()
				}
				cb(obs)
			}
		}
	}()
}

// ObservationKind names what raft observed.
type ObservationKind int

// Observation kinds.
const (
	// HeartbeatFailed: the leader's heartbeat to ServerID failed.
	HeartbeatFailed ObservationKind = iota + 1
	// HeartbeatResumed: the leader's heartbeats to ServerID succeed again.
	HeartbeatResumed
	// LeaderChanged: the leader is now ServerID (empty: none known).
	LeaderChanged
	// PeerChanged: ServerID was added to or removed from the
	// configuration (Removed says which).
	PeerChanged
)

// Observation is one raft observation, translated so callers never see
// raft types. ServerID is a raft server ID; Node is the name of the
// registered node whose server it is (NodeByServerID in the state applied
// when the observation was handed over), empty when none is.
type Observation struct {
	Kind     ObservationKind
	ServerID string
	Node     string
	Removed  bool
}
