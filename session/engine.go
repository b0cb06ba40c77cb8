package session

import (
	"context"

	"github.com/nspl-dev/nspl/backup"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/lifecycle"
)

// Engine is what a session runs on: the handful of operations of a serving
// node its statements use. *node.Node implements it; session does not
// import node, so a remote client that links session links no raft node.
//
// Writes commit through the catalog and return once the serving node has
// installed the committed revision. Reads answer from the node's installed
// state and never block. Every method is safe for concurrent use.
type Engine interface {
	// Identity is the serving node's name and incarnation.
	Identity() lifecycle.Identity
	// IsLeader reports whether the serving node leads the catalog now.
	IsLeader() bool
	// Installed returns how many revisions the node has installed, the
	// newest one, and a channel closed on the next installation.
	Installed() (count, revision uint64, changed <-chan struct{})
	// WaitInstalled waits until the node has installed the domains
	// committed since it started, or ctx ends.
	WaitInstalled(ctx context.Context) error

	// Domains returns every domain, sorted by name.
	Domains() []lifecycle.Domain
	// RangeDomains calls fn with every domain in name order until fn
	// returns false, copying one domain at a time.
	RangeDomains(fn func(lifecycle.Domain) bool)
	// Domain returns one domain; a missing one is a *lifecycle.Error
	// matching lifecycle.ErrDomainNotFound.
	Domain(name string) (lifecycle.Domain, error)
	// Observe returns an observer of the domain's installed clock.
	Observe(domain string) (*clockrt.Observer, error)

	// The writes take lifecycle requests, not plans: the session turns a
	// plan into its request (planner.Start.Request, planner.Step), so the
	// engine needs no planner.
	CreateDomain(ctx context.Context, c lifecycle.CreateDomain) (lifecycle.Outcome, error)
	DropDomain(ctx context.Context, d lifecycle.DropDomain) (lifecycle.Outcome, error)
	AlterPlacement(ctx context.Context, domain string, placement lifecycle.Placement) (lifecycle.Outcome, error)
	Start(ctx context.Context, domain string, req lifecycle.StartRequest) (lifecycle.Outcome, error)
	Stop(ctx context.Context, domain string) (lifecycle.Outcome, error)
	// CommitTransaction commits steps on domain as one command.
	CommitTransaction(ctx context.Context, domain string, steps []lifecycle.StepRequest) (lifecycle.Outcome, error)
	// PreflightTransaction reports whether steps, committed now on domain
	// as one command, would apply to the node's state, and returns the
	// error CommitTransaction would. It proposes nothing and waits for no
	// commit or installation.
	PreflightTransaction(domain string, steps []lifecycle.StepRequest) error

	// Capture reads one consistent state as an archive.
	Capture(scope backup.CaptureScope) (backup.Archive, error)
	// Restore restores domains from the verified archive a, named name in
	// messages, all or nothing.
	Restore(ctx context.Context, req backup.RestoreRequest, name string, a backup.Archive) (backup.RestorePlan, error)
}
