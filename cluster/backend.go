package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/interconnect"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/node"
)

// backend serves the peer handler from the member.
type backend struct{ m *Member }

var _ interconnect.Backend = backend{}

func (b backend) AcceptProgress(from string, rep clockrt.ProgressReport) (bool, error) {
	n, err := b.m.opened()
	if err != nil {
		return false, err
	}
	return n.AcceptProgress(from, rep)
}

func (b backend) Status() interconnect.Status {
	n, err := b.m.opened()
	if err != nil {
		return interconnect.Status{Node: b.m.cfg.Node}
	}
	return interconnect.Status{
		Node:               b.m.cfg.Node,
		Incarnation:        n.Identity().Incarnation,
		AdvertisedRevision: n.AdvertisedRevision(),
		CatalogRevision:    n.CatalogRevision(),
		Leader:             n.IsLeader(),
		Healthy:            b.m.ctx.Err() == nil,
	}
}

// InstalledRevision feeds the installed stream: this incarnation and the
// catalog revision the node has installed.
func (b backend) InstalledRevision() (uint64, uint64, <-chan struct{}, error) {
	n, err := b.m.opened()
	if err != nil {
		return 0, 0, nil, err
	}
	_, rev, changed := n.Installed()
	return n.Identity().Incarnation, rev, changed, nil
}

// Standing reads the caller's standing from the committed node registry
// and the raft configuration (see interconnect.Standing).
func (b backend) Standing(name string) (interconnect.Standing, error) {
	n, err := b.m.opened()
	if err != nil {
		return interconnect.Standing{}, err
	}
	nd, ok := n.CatalogState().Node(name)
	if !ok || nd.RaftID == "" {
		return interconnect.Standing{}, nil
	}
	servers, err := n.Servers()
	if err != nil {
		return interconnect.Standing{}, err
	}
	for _, s := range servers {
		if s.ServerID == nd.RaftID {
			return interconnect.Standing{Member: true, Voter: s.Voter}, nil
		}
	}
	return interconnect.Standing{}, nil
}

// Registrable allows a node that joined (or rejoined with a new data
// directory) to register its raft server: the server must be in the
// configuration, claimed by no other registered node, and answer at its
// configured raft address with the certificate of the node registering
// it, so no other node can register a server whose id it has seen.
func (b backend) Registrable(ctx context.Context, name, serverID string) error {
	n, err := b.m.opened()
	if err != nil {
		return err
	}
	if err := unclaimed(n, name, serverID); err != nil {
		return err
	}
	servers, err := n.Servers()
	if err != nil {
		return err
	}
	for _, s := range servers {
		if s.ServerID == serverID {
			return b.m.proveRaftServer(ctx, name, s.RaftAddr)
		}
	}
	return fmt.Errorf("raft server %q is not in the cluster's configuration; join the cluster first", serverID)
}

// proveRaftServer completes a TLS handshake with the raft listener at
// addr and refuses unless it presents the certificate of node name: the
// raft server a node joins or registers must be its own.
func (m *Member) proveRaftServer(ctx context.Context, name, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, raftProofTimeout)
	defer cancel()
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: raftProofTimeout}, Config: m.cfg.Material.ClientConfig("", name)}
	var c net.Conn
	var err error
	if m.cfg.Dial == nil {
		c, err = d.DialContext(ctx, "tcp", addr)
	} else if c, err = m.cfg.Dial(ctx, "tcp", addr); err == nil {
		cfg := d.Config.Clone()
		if host, _, herr := net.SplitHostPort(addr); herr == nil && cfg.ServerName == "" {
			cfg.ServerName = host // as tls.Dialer does
		}
		tc := tls.Client(c, cfg)
		if err = tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
		}
		c = tc
	}
	if err != nil {
		return fmt.Errorf("%w: the raft server at %s does not answer as node %q (%v); give the node's own raft address", interconnect.ErrForbidden, addr, name, err)
	}
	return c.Close()
}

// unclaimed refuses a raft server id that another registered node holds,
// so no node can take over another's vote or address.
func unclaimed(n *node.Node, name, serverID string) error {
	if nd, ok := catalog.NodeByServerID(n.CatalogState(), serverID); ok && nd.Name != name {
		return fmt.Errorf("%w: raft server %q belongs to node %q", interconnect.ErrForbidden, serverID, nd.Name)
	}
	return nil
}

// Join runs a join the handler authorized: req.Name is the node that
// asked, checked here or by the voter that forwarded it.
func (b backend) Join(ctx context.Context, forwarded bool, req interconnect.JoinRequest) error {
	n, err := b.m.opened()
	if err != nil {
		return err
	}
	if err := unclaimed(n, req.Name, req.ServerID); err != nil {
		return err
	}
	if n.IsLeader() {
		if err := b.m.proveRaftServer(ctx, req.Name, req.RaftAddr); err != nil {
			return err
		}
		// A node whose data directory was replaced comes back under its
		// name with a new raft server: the old server goes first, so one
		// name never holds two votes.
		if old, ok := n.CatalogState().Node(req.Name); ok && old.RaftID != "" && old.RaftID != req.ServerID {
			if err := n.RemoveServer(ctx, old.RaftID); err != nil {
				return err
			}
		}
		return n.AddVoter(ctx, req.ServerID, req.RaftAddr)
	}
	leader, err := b.m.leaderAPI(n, forwarded)
	if err != nil {
		return err
	}
	return b.m.client.Join(ctx, leader.APIAddr, true, req)
}

func (b backend) Propose(ctx context.Context, forwarded bool, cmd lifecycle.Command) (lifecycle.Result, error) {
	n, err := b.m.opened()
	if err != nil {
		return lifecycle.Result{}, err
	}
	res, err := n.Propose(ctx, cmd)
	if err == nil || forwarded || !errors.Is(err, catalog.ErrNotLeader) {
		return res, err
	}
	leader, err := b.m.leaderAPI(n, false)
	if err != nil {
		return lifecycle.Result{}, err
	}
	return b.m.client.Propose(ctx, leader.APIAddr, true, cmd)
}

func (b backend) Remove(ctx context.Context, forwarded bool, name string) error {
	return b.m.remove(ctx, forwarded, name)
}

// opened returns the member's node, ErrNotReady while it is starting.
func (m *Member) opened() (*node.Node, error) {
	select {
	case <-m.ready:
		return m.node, nil
	default:
		return nil, ErrNotReady
	}
}

// leaderAPI returns the leader to forward to, refusing when this request
// was already forwarded once (it reached a node that is not the leader: the
// sender's view is stale, and forwarding again could loop).
func (m *Member) leaderAPI(n *node.Node, forwarded bool) (catalog.Leader, error) {
	leader, ok := n.Leader()
	if forwarded || !ok || leader.APIAddr == "" || leader.ServerID == n.ServerID() {
		return catalog.Leader{}, &catalog.NotLeaderError{Leader: leader.ServerID, LeaderAddress: leader.RaftAddr}
	}
	return leader, nil
}

// join is the catalog's Join hook: ask each Config.Join address in turn.
func (m *Member) join(ctx context.Context, serverID, raftAddr string) error {
	req := interconnect.JoinRequest{Name: m.cfg.Node, ServerID: serverID, RaftAddr: raftAddr}
	var errs []error
	for _, addr := range m.cfg.Join {
		err := m.client.Join(ctx, addr, false, req)
		if err == nil {
			m.logger.Info("joined the cluster", "through", addr)
			return nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return ErrNoJoinAddress
	}
	return errors.Join(errs...)
}

// forward is the node's and its catalog's Forward hook: one attempt to
// commit through leader, a statement's write on a follower or this
// incarnation's registration. The node's commit path (and the catalog's
// loop) retries it through elections (under the command's request id), so
// it does not wait here. A leader that answers that it is shutting down is,
// to the forwarder, a node that stopped leading: nothing was proposed.
func (m *Member) forward(ctx context.Context, leader catalog.Leader, cmd lifecycle.Command) (lifecycle.Result, error) {
	res, err := m.client.Propose(ctx, leader.APIAddr, true, cmd)
	if errors.Is(err, catalog.ErrShutdown) && !errors.Is(err, catalog.ErrOutcomeUnknown) {
		return res, fmt.Errorf("%w: the leader %s is shutting down (%v)", catalog.ErrNotLeader, leader.Name, err)
	}
	return res, err
}

// waitCtx waits d on the member's clock; false when ctx or the member ends
// first.
func (m *Member) waitCtx(ctx context.Context, d time.Duration) bool {
	return timesource.Sleep(ctx, m.src, d, m.ctx.Done())
}

// Remove removes the named node from the cluster: the leader deregisters
// its incarnation (so it is no authority candidate) and removes its raft
// server; the leader's reconciliation then moves its clock authorities.
// On a follower the request goes to the leader. A node that is not
// registered is ErrUnknownNode.
func (m *Member) Remove(ctx context.Context, name string) error {
	return m.remove(ctx, false, name)
}

// remove removes the named node, retrying (forwardRetry apart, for at
// most removeRetryFor or until ctx ends) while no leader is known, the
// leader is unconfirmed or unreachable, or leadership moved mid-way. A
// request forwarded by another member is tried once: its sender retries.
func (m *Member) remove(ctx context.Context, forwarded bool, name string) error {
	if forwarded {
		return m.removeOnce(ctx, true, name)
	}
	start := m.src.Monotonic()
	var unknown error // an attempt that may have removed the node
	for {
		err := m.removeOnce(ctx, false, name)
		if errors.Is(err, ErrUnknownNode) && unknown != nil {
			return fmt.Errorf("node %q is no longer registered, and an earlier attempt to remove it may have been cut short (%w); check SHOW CLUSTER STATUS", name, unknown)
		}
		if errors.Is(err, catalog.ErrOutcomeUnknown) || errors.Is(err, interconnect.ErrUnreachable) {
			unknown = err // the leader may have acted before the answer was lost
		}
		retry := errors.Is(err, catalog.ErrNotLeader) || errors.Is(err, catalog.ErrLeadershipUnconfirmed) ||
			errors.Is(err, catalog.ErrOutcomeUnknown) || errors.Is(err, catalog.ErrTimeout) || errors.Is(err, interconnect.ErrUnreachable)
		if !retry || ctx.Err() != nil || m.src.Monotonic()-start > removeRetryFor || !m.waitCtx(ctx, forwardRetry) {
			return err
		}
		m.logger.Debug("remove did not complete; retrying", "node", name, "err", err)
	}
}

func (m *Member) removeOnce(ctx context.Context, forwarded bool, name string) error {
	n, err := m.opened()
	if err != nil {
		return err
	}
	if !n.IsLeader() {
		leader, err := m.leaderAPI(n, forwarded)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, peerCallTimeout)
		defer cancel()
		return m.client.Remove(cctx, leader.APIAddr, true, name)
	}
	s := n.CatalogState()
	nd, ok := s.Node(name)
	if !ok {
		return fmt.Errorf("%w: %q is not a member of this cluster; run SHOW CLUSTER STATUS to see the members", ErrUnknownNode, name)
	}
	if err := m.checkRemoval(n, s, nd); err != nil {
		return err
	}
	res, err := n.Propose(ctx, lifecycle.Command{Op: lifecycle.OpDeregisterNode,
		DeregisterNode: &lifecycle.DeregisterNode{Name: nd.Name, Incarnation: nd.Incarnation}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		return fmt.Errorf("deregister node %q: %w", name, err)
	}
	if err := n.RemoveServer(ctx, nd.RaftID); err != nil {
		return fmt.Errorf("remove raft server of node %q: %w", name, err)
	}
	m.avail.Forget(name)
	m.logger.Info("node removed from the cluster", "node", name, "incarnation", nd.Incarnation)
	return nil
}

// RemoveNode is Remove as an operator asks for it: a node this member finds
// live is refused (ErrNodeLive), changing nothing, unless force is set. A
// running node should leave (Leave, nspl leave on it), which stops it; one
// removed while it runs keeps serving its last state, refusing writes,
// until it is stopped.
func (m *Member) RemoveNode(ctx context.Context, name string, force bool) error {
	if !force {
		n, err := m.opened()
		if err != nil {
			return err
		}
		if nd, ok := n.CatalogState().Node(name); ok && (name == m.cfg.Node || m.avail.Live(nd.NodeIncarnation())) {
			return fmt.Errorf("%w: node %q is live; nothing was changed: run nspl leave against it to take it out and stop it, or pass --force to remove it anyway (it then serves its last state and refuses writes until it is stopped)", ErrNodeLive, name)
		}
	}
	return m.Remove(ctx, name)
}

// Leave removes this member from the cluster (through the leader when it
// is not the leader itself) and closes it.
func (m *Member) Leave(ctx context.Context) error {
	if err := m.Remove(ctx, m.cfg.Node); err != nil {
		return err
	}
	return m.Close()
}

// checkRemoval refuses, before anything changes, a removal of nd that
// would leave the cluster without a voter, or with fewer live voters than
// a quorum of the voters that remain: the remaining members could then
// commit nothing, not even the removal's own deregistration and
// configuration change, and the node would be left half removed. It runs
// on the leader, which is live itself.
func (m *Member) checkRemoval(n *node.Node, s *lifecycle.State, nd lifecycle.RegisteredNode) error {
	servers, err := n.Servers()
	if err != nil {
		return fmt.Errorf("read the raft configuration before removing node %q: %w", nd.Name, err)
	}
	byRaftID := make(map[string]lifecycle.RegisteredNode)
	for _, r := range s.Nodes() {
		byRaftID[r.RaftID] = r
	}
	voter := false
	remaining, live := 0, 0
	for _, sv := range servers {
		if !sv.Voter {
			continue
		}
		if sv.ServerID == nd.RaftID {
			voter = true
			continue
		}
		remaining++
		if sv.ServerID == n.ServerID() {
			live++ // the leader
		} else if r, ok := byRaftID[sv.ServerID]; ok && m.avail.Live(r.NodeIncarnation()) {
			live++
		}
	}
	switch {
	case !voter:
		return nil
	case remaining == 0:
		return fmt.Errorf("%w: node %q is the cluster's only voter, so removing it would leave no voter to commit anything; nothing was changed: to retire the cluster stop the node (SIGTERM) and keep or delete its data directory, or join another node first and then remove this one", ErrRemovalRefused, nd.Name)
	case live < remaining/2+1:
		return fmt.Errorf("%w: removing node %q would leave %d voters of which %d are live, fewer than the %d a quorum of them needs; nothing was changed: bring the other voters back (SHOW CLUSTER STATUS lists them) or remove the ones that are gone first", ErrRemovalRefused, nd.Name, remaining, live, remaining/2+1)
	}
	return nil
}
