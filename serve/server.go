package serve

import (
	"context"
	"fmt"

	"github.com/nspl-dev/nspl/cluster"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/server"
	"github.com/nspl-dev/nspl/wire"
)

// pkiServerOptions is the API listener's TLS policy: a client certificate
// is verified when given but not required at the handshake, since every
// request is authenticated on its own (a certificate or a bearer token),
// peers by their node certificates, and /healthz is open.
var pkiServerOptions = pki.ServerOptions{AllowNoClientCert: true}

// checkServerConfig refuses a server configuration that sets what the
// process wires itself.
func checkServerConfig(sc server.Config) error {
	if sc.Node != nil || sc.TLS != nil || sc.Insecure || sc.Peer != nil || sc.Cluster != nil || sc.Opened != nil {
		return fmt.Errorf("%w: the server's Node, TLS, Insecure, Peer, Cluster and Opened are the process's own; leave them zero", ErrConfig)
	}
	return nil
}

// memberView is a cluster member as its API server sees it
// (server.Cluster).
type memberView struct {
	m    *cluster.Member
	left func() // nil: nothing to stop once the member has left
}

// Status renders the member's view for SHOW CLUSTER STATUS.
func (v memberView) Status(context.Context) (wire.ClusterStatus, error) {
	return v.m.Status().Wire(), nil
}

// Leave removes this member from the cluster.
func (v memberView) Leave(ctx context.Context) error { return v.m.Leave(ctx) }

// Left runs Config.Left once the leave reply was sent.
func (v memberView) Left() {
	if v.left != nil {
		v.left()
	}
}

// Remove removes the named node, a live one only with force.
func (v memberView) Remove(ctx context.Context, name string, force bool) error {
	return v.m.RemoveNode(ctx, name, force)
}
