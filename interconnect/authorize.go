package interconnect

import (
	"errors"
	"fmt"

	"github.com/nspl-dev/nspl/lifecycle"
)

// Standing is what the committed membership says of one node name, as the
// handler's Backend reads it.
//
// The catalog's node registry is the committed anchor: a node registers
// only after the raft configuration entry that added its server (the
// registration follows it in the log, so it commits only if that entry
// did), and Remove deregisters a node before its server leaves the
// configuration. A name is therefore a member while it is registered and
// its registered raft server is in the configuration, which no uncommitted
// configuration change can grant.
type Standing struct {
	// Member: the name is registered in the committed catalog and its
	// registered raft server is in the raft configuration.
	Member bool
	// Voter: a Member whose raft server votes.
	Voter bool
}

// The routes' rules, checked by the handler before the Backend sees a
// request. caller is always the name of the verified node certificate
// (pki.PeerName); the forwarding header (forwardedHeader) is never trusted
// on its own.
//
//	progress  a member; the report must also match the committed fence,
//	          whose authority is the caller (Backend.AcceptProgress)
//	join      the joining node itself (JoinRequest.Name is the caller), or,
//	          forwarded, a current voter that checked exactly that; the
//	          leader also requires the joiner's raft address to present
//	          the joiner's certificate and its server id to be nobody
//	          else's (Backend.Join)
//	propose   a member; a RegisterNode names the caller, and a node that is
//	          not (or no longer) a member may propose only its own
//	          registration of a raft server in the configuration that no
//	          other node claims and that presents its certificate
//	          (Backend.Registrable)
//	remove    a member
//	status    a member
//	installed a member, holding at most MaxInstalledWaitsPerCaller waits
//	installed/stream
//	          a member, holding at most MaxInstalledStreamsPerCaller
//	          streams, and still a member at every heartbeat
//
// Every refusal is ErrForbidden, counted in Metrics.Forbidden and logged.

// authorizeJoin checks a join request from caller.
func authorizeJoin(caller string, st Standing, forwarded bool, req JoinRequest) error {
	switch {
	case forwarded && !st.Voter:
		return fmt.Errorf("%w: node %q forwarded a join of %q but is not a voter of this cluster", ErrForbidden, caller, req.Name)
	case !forwarded && req.Name != caller:
		return fmt.Errorf("%w: node %q cannot join as %q; a node joins as the name in its certificate", ErrForbidden, caller, req.Name)
	}
	return nil
}

// authorizeMember checks that caller is a member for route.
func authorizeMember(caller string, st Standing, route string) error {
	if !st.Member {
		return fmt.Errorf("%w: node %q is not a member of this cluster and may not call %s; join it first", ErrForbidden, caller, route)
	}
	return nil
}

// authorizePropose checks a command proposed by caller; registrable is
// consulted only for a non-member's own registration.
func authorizePropose(caller string, st Standing, cmd lifecycle.Command, registrable func(name, serverID string) error) error {
	if cmd.Op == lifecycle.OpRegisterNode {
		reg := cmd.RegisterNode
		if reg == nil || reg.Name != caller {
			name := ""
			if reg != nil {
				name = reg.Name
			}
			return fmt.Errorf("%w: node %q cannot register node %q; a node registers only itself", ErrForbidden, caller, name)
		}
		if !st.Member {
			if err := registrable(caller, reg.RaftID); err != nil {
				if errors.Is(err, ErrForbidden) {
					return err
				}
				return fmt.Errorf("%w: node %q cannot register raft server %q: %w", ErrForbidden, caller, reg.RaftID, err)
			}
		}
		return nil
	}
	return authorizeMember(caller, st, PathPropose)
}
