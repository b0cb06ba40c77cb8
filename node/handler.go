package node

import (
	"context"
	"fmt"

	"github.com/nspl-dev/nspl/lifecycle"
)

// Outcome is the result of one control-plane command that committed, as
// lifecycle defines it so that a session names it without importing node.
type Outcome = lifecycle.Outcome

// Domains returns every domain of the catalog, sorted by name: what LIST
// DOMAINS shows.
func (n *Node) Domains() []lifecycle.Domain { return n.catalog.State().Domains() }

// RangeDomains calls fn with every domain of the committed catalog in name
// order until fn returns false, one copy at a time.
func (n *Node) RangeDomains(fn func(lifecycle.Domain) bool) { n.catalog.State().RangeSorted(fn) }

// Domain returns the named domain's record: what DESCRIBE DOMAIN shows,
// including its generation, start point, mapping and current authority.
// A missing domain is a *lifecycle.Error matching lifecycle.ErrDomainNotFound.
func (n *Node) Domain(name string) (lifecycle.Domain, error) {
	d, ok := n.catalog.State().Domain(name)
	if !ok {
		return lifecycle.Domain{}, errNotFound(name)
	}
	return d, nil
}

// errNotFound is lifecycle's refusal for a missing domain, with the same
// code, so callers match it with errors.Is(err, lifecycle.ErrDomainNotFound).
func errNotFound(name string) error {
	return &lifecycle.Error{Code: lifecycle.CodeDomainNotFound, Domain: name,
		Message: fmt.Sprintf("domain '%s' does not exist; run LIST DOMAINS to see the catalog or CREATE DOMAIN %s first", name, name)}
}

// CreateDomain creates the domain c describes, stopped.
func (n *Node) CreateDomain(ctx context.Context, c lifecycle.CreateDomain) (Outcome, error) {
	if s := n.catalog.State(); s.Len() >= n.cfg.MaxDomains {
		if _, exists := s.Domain(c.Name); !exists {
			return Outcome{}, n.domainLimit(c.Name, s.Len(), 1)
		}
	}
	return n.propose(ctx, c.Name, lifecycle.Command{Op: lifecycle.OpCreateDomain, CreateDomain: &c})
}

// AlterPlacement sets the domain's placement default.
func (n *Node) AlterPlacement(ctx context.Context, domain string, placement lifecycle.Placement) (Outcome, error) {
	return n.propose(ctx, domain, lifecycle.Command{Op: lifecycle.OpAlterPlacement, AlterPlacement: &lifecycle.AlterPlacement{
		Domain: domain, Placement: placement,
	}})
}

// DropDomain drops the stopped domain d names. Like Stop it returns after
// the domain's producer, if one still runs, has exited (complete).
func (n *Node) DropDomain(ctx context.Context, d lifecycle.DropDomain) (Outcome, error) {
	return n.propose(ctx, d.Name, lifecycle.Command{Op: lifecycle.OpDropDomain, DropDomain: &d})
}

// Start establishes the domain's next generation from req, the START as
// written (planner.Start.Request gives it for a plan). It reads the domain,
// samples UTC once from the time source for the physical anchor, resolves
// the start (AT NOW becomes that instant, AT a timestamp keeps it, a plain
// START resumes from the readable domain time or the sampled UTC at rate 1),
// selects a paced domain's initial authority from the live voters, and
// proposes one Start command. It returns once this node has installed the
// committed generation, so this node's producer, when it is the authority,
// has been asked to start.
func (n *Node) Start(ctx context.Context, domain string, req lifecycle.StartRequest) (Outcome, error) {
	var resolved lifecycle.ResolvedStart
	first, sent, err := n.checkedLocally(ctx, func() error {
		s := n.catalog.State()
		d, ok := s.Domain(domain)
		if !ok {
			return errNotFound(domain)
		}
		utc := n.src.Now()
		available, voters, err := n.candidates(s)
		if err != nil {
			return err
		}
		resolved, err = lifecycle.ResolveStart(d, req, utc, n.readable(d, utc), available, voters)
		return err
	})
	if err != nil {
		return Outcome{}, err
	}
	if sent {
		return n.outcome(ctx, domain, first)
	}
	return n.propose(ctx, domain, lifecycle.Command{Op: lifecycle.OpStart, Start: &lifecycle.Start{
		Domain: domain, Resolved: resolved,
	}})
}

// Stop ends the domain's running generation. It returns once the
// generation's producer has exited and its peer delivery ended on this
// node and, in a cluster, on every other live node (complete), so no tick
// of the generation is produced after it returns.
func (n *Node) Stop(ctx context.Context, domain string) (Outcome, error) {
	return n.propose(ctx, domain, lifecycle.Command{Op: lifecycle.OpStop, Stop: &lifecycle.Stop{Domain: domain}})
}

// CommitTransaction commits a transaction's queued steps (START, STOP and
// ALTER DOMAIN SET PLACEMENT requests, in order; planner.Step gives one for
// a queued plan) against domain as one catalog command: resolved together
// at one sampled UTC instant, applied all-or-nothing. A step of any other
// Op is ErrNotTransactional; a refused step is a *lifecycle.Error whose
// Step names it. An empty transaction commits nothing.
func (n *Node) CommitTransaction(ctx context.Context, domain string, steps []lifecycle.StepRequest) (Outcome, error) {
	var s *lifecycle.State
	var tx lifecycle.Transaction
	first, sent, err := n.checkedLocally(ctx, func() (err error) {
		s, tx, err = n.resolveTransaction(domain, steps)
		return err
	})
	if err != nil {
		return Outcome{}, err
	}
	if sent {
		return n.outcome(ctx, domain, first)
	}
	if len(tx.Steps) == 0 {
		d, _ := s.Domain(domain)
		return Outcome{Revision: s.Revision(), Domain: d}, nil
	}
	return n.propose(ctx, domain, lifecycle.Command{Op: lifecycle.OpTransaction, Transaction: &tx})
}

// checkedLocally runs check, a write's resolution against this node's own
// installed state before anything is proposed, and returns its error. A
// domain rule it refuses by (the domain does not exist, already runs, …)
// is returned only once it holds on state confirmed current through the
// leader (ConfirmRead): a member that lags, still catching up after a
// restart or a cut, would otherwise refuse a write by a state the cluster
// has left, which no linearizable history explains. The check runs again
// after the confirmation and its verdict stands, whichever it is; a
// confirmation that fails leaves the first refusal. An embedded node is its
// own leader: its state is current and check runs once.
//
// A refusal is not the answer to a write sent again under the request id
// of an attempt that committed (a remote client resending after a lost
// connection; lifecycle.WithRequestID): the state may have moved on since
// (the domain dropped after its START committed), and the writer is owed
// the first attempt's result. When the catalog's request window holds the
// id, checkedLocally returns that result with sent set instead.
func (n *Node) checkedLocally(ctx context.Context, check func() error) (first lifecycle.Result, sent bool, err error) {
	err = check()
	if err == nil || lifecycle.AsError(err) == nil {
		return lifecycle.Result{}, false, err
	}
	if n.lease != nil && n.lease.lease > 0 {
		if cerr := n.ConfirmRead(ctx); cerr == nil {
			if err = check(); err == nil {
				return lifecycle.Result{}, false, nil
			}
		}
	}
	if res, ok := n.catalog.Remembered(lifecycle.RequestIDFrom(ctx)); ok {
		return res, true, nil
	}
	return lifecycle.Result{}, false, err
}

// propose commits cmd, waits for its completion boundary (complete) and
// returns the domain's record after it. A command without a request id
// takes the one ctx carries (lifecycle.WithRequestID), if any: a remote
// client that lost its connection sends the statement again under the
// same id, and the catalog answers a proposal under an id it already
// applied with the first result, a refusal included, without applying it
// again (the statement is resolved again on the way, against the state
// after the first attempt, and only the first attempt's resolution is
// applied).
func (n *Node) propose(ctx context.Context, domain string, cmd lifecycle.Command) (Outcome, error) {
	if cmd.RequestID == "" {
		cmd.RequestID = lifecycle.RequestIDFrom(ctx)
	}
	res, err := n.commit(ctx, cmd)
	if err != nil {
		return Outcome{}, err
	}
	return n.outcome(ctx, domain, res)
}

// outcome is the Outcome of res, a committed command's result, once this
// node has reached its completion boundary.
func (n *Node) outcome(ctx context.Context, domain string, res lifecycle.Result) (Outcome, error) {
	if err := res.Err(); err != nil {
		return Outcome{}, err
	}
	unconfirmed, err := n.complete(ctx, res.Revision)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Revision: res.Revision, Changed: res.Changed, Unconfirmed: unconfirmed}
	out.Domain, _ = n.catalog.State().Domain(domain)
	return out, nil
}

// complete is a committed write's completion boundary: it returns once
// this node has installed revision rev and, in a cluster, every other live
// node has too (Config.AwaitPeers), naming the live nodes that had not when
// the wait ended. A node counts a revision installed only once every
// producer it retires there has exited (Installed), so a STOP or DROP
// completes after the stopped generation's producers are gone everywhere
// it waited for. The wait is bounded by ctx or, for a ctx without a
// deadline, Config.WriteTimeout from here. Only this node's own
// installation is an error: the change is committed either way.
func (n *Node) complete(ctx context.Context, rev uint64) ([]string, error) {
	if err := n.WaitInstalledRevision(ctx, rev); err != nil {
		return nil, fmt.Errorf("committed at revision %d, but waiting for its local installation ended: %w", rev, err)
	}
	if n.cfg.AwaitPeers == nil {
		return nil, nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var stop func()
		ctx, stop = n.writeDeadline(ctx, n.cfg.WriteTimeout)
		defer stop()
	}
	return n.cfg.AwaitPeers(ctx, rev), nil
}

// candidates returns the authority candidates START may choose from:
// cordoned nodes are left out while an uncordoned candidate remains.
func (n *Node) candidates(s *lifecycle.State) ([]lifecycle.NodeIncarnation, []string, error) {
	ids, err := n.catalog.Voters()
	if err != nil {
		return nil, nil, err
	}
	var available []lifecycle.NodeIncarnation
	if n.cfg.Available != nil {
		available = n.cfg.Available(s)
	} else {
		available = s.Incarnations()
	}
	voters := s.VoterNames(ids)
	return s.PreferUncordoned(available, voters), voters, nil
}

// readable returns the domain time a plain START (or a transaction's
// resume) continues from: this node's watermarked read of the running
// generation when it has one, else the lifecycle's projection at utc, and
// nil for a stopped domain.
func (n *Node) readable(d lifecycle.Domain, utc int64) *int64 {
	if !d.Running() {
		return nil
	}
	if h, err := n.registry.Bind(d.Name); err == nil && h.Generation() == d.Generation {
		if snap, err := h.Snapshot(); err == nil {
			return &snap.Time
		}
	}
	t, err := lifecycle.Readable(d, utc)
	if err != nil {
		return nil
	}
	return t
}

// DefaultMaxDomains is Config.MaxDomains's default: a million domains, about
// 640 MB of heap on each node when they are all stopped and some 7 GB when
// all run paced (README's scale table), well past the 100,000 the scale
// table measures flat.
const DefaultMaxDomains = 1_000_000

// domainLimit is the refusal of adding more domains to a catalog that
// holds have, at the node's limit.
func (n *Node) domainLimit(domain string, have, more int) error {
	return &lifecycle.Error{Code: lifecycle.CodeDomainLimit, Domain: domain, Message: fmt.Sprintf(
		"the catalog holds %d domains and this node's limit is %d, so %d more cannot be added; nothing was changed: DROP DOMAIN the ones no longer needed, or raise the limit (nspl serve --max-domains, nspl.Options.MaxDomains)",
		have, n.cfg.MaxDomains, more)}
}
