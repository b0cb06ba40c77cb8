package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/wire"
)

// run dispatches one request's plan. handedOff reports that the request
// lane's token now belongs to an attach still waiting for the node's
// installation.
func (s *Session) run(ctx context.Context, c *call, emit RowSink) (r wire.Result, handedOff bool, err error) {
	switch p := c.req.Plan.(type) {
	case planner.CreateDomain:
		r, err = s.createDomain(ctx, p)
	case planner.DropDomain:
		r, err = s.dropDomain(ctx, p)
	case planner.AlterPlacement:
		r, err = s.alterPlacement(ctx, p)
	case planner.Start:
		r, err = s.start(ctx, p)
	case planner.Stop:
		r, err = s.stop(ctx, p)
	case planner.Use:
		r, err = s.use(p)
	case planner.ListDomains:
		if err = s.confirmRead(ctx); err == nil {
			if r, err = s.listDomains(ctx, p, emit); err == nil {
				r = s.warnIfStale(r)
			}
		}
	case planner.DescribeDomain:
		if err = s.confirmRead(ctx); err == nil {
			if r, err = s.describeDomain(p); err == nil {
				r = s.warnIfStale(r)
			}
		}
	case planner.Begin:
		r, err = s.begin()
	case planner.Commit:
		r, err = s.commit(ctx)
	case planner.Rollback:
		r, err = s.rollback()
	case planner.Attach:
		if err = s.confirmRead(ctx); err != nil {
			return r, false, err
		}
		if r, handedOff, err = s.attach(ctx, c); err == nil {
			r = s.warnIfStale(r)
		}
		return r, handedOff, err
	case planner.Detach:
		r, err = s.detach(c)
	case planner.Backup:
		r, err = s.backup(ctx, p)
	case planner.Restore:
		r, err = s.restore(ctx, p)
	case planner.DescribeBackup:
		r, err = s.describeBackup(ctx, p)
	case planner.ShowClusterStatus:
		if err = s.confirmRead(ctx); err == nil {
			if r, err = s.showClusterStatus(ctx, p); err == nil {
				r = s.warnIfStale(r)
			}
		}
	case planner.ShowTransactions:
		if p.All {
			r = s.showAllTransactions()
		} else {
			r = s.showTransactions()
		}
	case planner.DescribeTransaction:
		r, err = s.describeTransaction()
	case planner.NodeMaintenance:
		r, err = s.maintain(ctx, p)
	default:
		err = fmt.Errorf("%w: %T", planner.ErrUnknownStatement, c.req.Plan)
	}
	return r, false, err
}

// refuseInTransaction returns a *TransactionError when a transaction is open.
func (s *Session) refuseInTransaction(statement string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx != nil {
		return &TransactionError{Err: ErrInTransaction, Statement: statement, Domain: s.tx.domain}
	}
	return nil
}

// activeDomain returns the active domain or ErrNoActiveDomain.
func (s *Session) activeDomain() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active == "" {
		return "", ErrNoActiveDomain
	}
	return s.active, nil
}

// queue adds a lifecycle step to the open transaction and reports true, or
// reports false when no transaction is open. A step that would take the
// transaction past the session's step or byte limit is refused with a
// *TransactionLimitError before anything else. Otherwise the step is queued
// only if the transaction's steps with it would apply to the domain's state
// now (the node's preflight, the same transitions COMMIT applies); a step
// that would not is refused with the error COMMIT would give, which names
// it by its step number. Either way a refused step leaves the transaction
// open with the steps before it.
//
// The preflight runs without s.mu, so InTransaction never waits on the
// node: requests run one at a time, and only the running one changes s.tx.
func (s *Session) queue(p planner.Plan) (wire.Result, bool, error) {
	s.mu.Lock()
	tx := s.tx
	var steps []planner.Plan
	if tx != nil {
		if err := s.admitLocked(tx, p); err != nil {
			s.mu.Unlock()
			return wire.Result{}, true, err
		}
		steps = append(slices.Clip(tx.steps), p)
	}
	s.mu.Unlock()
	if tx == nil {
		return wire.Result{}, false, nil
	}
	if err := s.node.PreflightTransaction(tx.domain, stepRequests(steps)); err != nil {
		return wire.Result{}, true, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx.steps = steps
	tx.bytes += len(p.String())
	return wire.Result{
		Domain:  tx.domain,
		Message: fmt.Sprintf("queued %s (%d pending)", strings.TrimSuffix(p.String(), ";"), len(tx.steps)),
	}, true, nil
}

func errDomainNotFound(name string) error {
	return &lifecycle.Error{Code: lifecycle.CodeDomainNotFound, Domain: name, Message: fmt.Sprintf(
		"domain '%s' does not exist; run LIST DOMAINS to see the catalog or CREATE DOMAIN %s first", name, name)}
}

func (s *Session) createDomain(ctx context.Context, p planner.CreateDomain) (wire.Result, error) {
	if err := s.refuseInTransaction("CREATE DOMAIN"); err != nil {
		return wire.Result{}, err
	}
	res, err := s.node.CreateDomain(ctx, lifecycle.CreateDomain{
		Name: p.Name, Pace: p.Pace, Period: p.Period, Skew: p.Skew, Placement: p.Placement, IfNotExists: p.IfNotExists,
	})
	if err != nil {
		return wire.Result{}, err
	}
	msg := fmt.Sprintf("created domain '%s'", p.Name)
	if !res.Changed {
		msg = fmt.Sprintf("domain '%s' already exists; nothing created", p.Name)
	}
	return wire.Result{Domain: p.Name, Message: msg, Warnings: completionWarnings(res)}, nil
}

func (s *Session) dropDomain(ctx context.Context, p planner.DropDomain) (wire.Result, error) {
	if err := s.refuseInTransaction("DROP DOMAIN"); err != nil {
		return wire.Result{}, err
	}
	res, err := s.node.DropDomain(ctx, lifecycle.DropDomain{Name: p.Name, IfExists: p.IfExists})
	if err != nil {
		return wire.Result{}, err
	}
	msg := fmt.Sprintf("dropped domain '%s'", p.Name)
	if !res.Changed {
		msg = fmt.Sprintf("domain '%s' does not exist; nothing dropped", p.Name)
	}
	// A dropped domain is no longer active: statements that need one say
	// so instead of naming a domain that is gone.
	s.mu.Lock()
	if s.active == p.Name {
		s.active = ""
	}
	s.mu.Unlock()
	return wire.Result{Domain: p.Name, Message: msg, Warnings: completionWarnings(res)}, nil
}

func (s *Session) alterPlacement(ctx context.Context, p planner.AlterPlacement) (wire.Result, error) {
	if r, ok, err := s.queue(p); ok {
		return r, err
	}
	domain, err := s.activeDomain()
	if err != nil {
		return wire.Result{}, err
	}
	res, err := s.node.AlterPlacement(ctx, domain, p.Placement)
	if err != nil {
		return wire.Result{}, err
	}
	msg := fmt.Sprintf("set placement of domain '%s' to %s", domain, p.Placement)
	if !res.Changed {
		msg = fmt.Sprintf("placement of domain '%s' is already %s", domain, p.Placement)
	}
	return wire.Result{Domain: domain, Message: msg, Warnings: completionWarnings(res)}, nil
}

func (s *Session) start(ctx context.Context, p planner.Start) (wire.Result, error) {
	if r, ok, err := s.queue(p); ok {
		return r, err
	}
	domain, err := s.activeDomain()
	if err != nil {
		return wire.Result{}, err
	}
	res, err := s.node.Start(ctx, domain, p.Request())
	if err != nil {
		return wire.Result{}, err
	}
	return wire.Result{Domain: domain, Message: fmt.Sprintf("started domain '%s'", domain), Warnings: completionWarnings(res)}, nil
}

func (s *Session) stop(ctx context.Context, p planner.Stop) (wire.Result, error) {
	if r, ok, err := s.queue(p); ok {
		return r, err
	}
	domain, err := s.activeDomain()
	if err != nil {
		return wire.Result{}, err
	}
	res, err := s.node.Stop(ctx, domain)
	if err != nil {
		return wire.Result{}, err
	}
	return wire.Result{Domain: domain, Message: fmt.Sprintf("stopped domain '%s'", domain), Warnings: completionWarnings(res)}, nil
}

func (s *Session) use(p planner.Use) (wire.Result, error) {
	if err := s.refuseInTransaction("USE"); err != nil {
		return wire.Result{}, err
	}
	if _, err := s.node.Domain(p.Name); err != nil {
		return wire.Result{}, err
	}
	s.mu.Lock()
	s.active = p.Name
	s.mu.Unlock()
	return wire.Result{Domain: p.Name, Message: fmt.Sprintf("using domain '%s'", p.Name)}, nil
}

func (s *Session) begin() (wire.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx != nil {
		return wire.Result{}, &TransactionError{Err: ErrNestedTransaction, Statement: "BEGIN", Domain: s.tx.domain}
	}
	if s.active == "" {
		return wire.Result{}, ErrNoActiveDomain
	}
	if _, err := s.node.Domain(s.active); err != nil {
		return wire.Result{}, err
	}
	s.tx = &transaction{domain: s.active, began: s.src.Monotonic()}
	return wire.Result{Domain: s.active, Message: fmt.Sprintf("began transaction on domain '%s'", s.active)}, nil
}

// commit applies the queued steps as one catalog command. The transaction
// ends whatever the outcome: a refused commit applied nothing, and a commit
// whose outcome is unknown must not be sent twice.
func (s *Session) commit(ctx context.Context) (wire.Result, error) {
	s.mu.Lock()
	tx := s.tx
	s.tx = nil
	s.mu.Unlock()
	if tx == nil {
		return wire.Result{}, &NoTransactionError{Statement: "COMMIT"}
	}
	if len(tx.steps) == 0 {
		return wire.Result{Domain: tx.domain, Message: fmt.Sprintf("committed empty transaction on domain '%s'", tx.domain)}, nil
	}
	res, err := s.node.CommitTransaction(ctx, tx.domain, stepRequests(tx.steps))
	if err != nil {
		return wire.Result{}, err
	}
	return wire.Result{Domain: tx.domain, Message: fmt.Sprintf("committed transaction on domain '%s' (%s)",
		tx.domain, plural(len(tx.steps), "step")), Warnings: completionWarnings(res)}, nil
}

func (s *Session) rollback() (wire.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		return wire.Result{}, &NoTransactionError{Statement: "REVERT"}
	}
	tx := s.tx
	s.tx = nil
	return wire.Result{Domain: tx.domain, Message: fmt.Sprintf("reverted transaction on domain '%s' (%s discarded)",
		tx.domain, plural(len(tx.steps), "step"))}, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Columns of LIST DOMAINS.
var listColumns = []wire.Column{
	{Name: "name", Type: wire.KindText},
	{Name: "pace", Type: wire.KindText},
	{Name: "status", Type: wire.KindText},
	{Name: "generation", Type: wire.KindUint},
}

// ListChunkRows is the most rows one chunk of a streamed LIST DOMAINS
// carries (ExecRows): the rows a statement holds at once, whatever the
// number of domains.
const ListChunkRows = 256

// listDomains lists every domain, or those whose name matches p.Like. With
// emit set it hands the rows to emit in chunks of at most ListChunkRows, in
// name order, and the result's set has the columns and no rows; without it
// the result's set holds every row. An error emit returns ends the listing
// and is the statement's.
func (s *Session) listDomains(ctx context.Context, p planner.ListDomains, emit RowSink) (wire.Result, error) {
	set := &wire.ResultSet{Columns: listColumns}
	var chunk [][]wire.Value
	n := 0
	var err error
	flush := func() bool {
		if len(chunk) == 0 {
			return true
		}
		if err = ctx.Err(); err == nil {
			err = emit(&wire.ResultSet{Columns: listColumns, Rows: chunk})
		}
		chunk = make([][]wire.Value, 0, ListChunkRows)
		return err == nil
	}
	s.node.RangeDomains(func(d lifecycle.Domain) bool {
		if p.Like != "" && !grammar.MatchLike(p.Like, d.Name) {
			return true
		}
		n++
		row := []wire.Value{wire.Text(d.Name), wire.Text(d.Pace.String()), wire.Text(d.Status.String()), wire.Uint(d.Generation)}
		if emit == nil {
			set.Rows = append(set.Rows, row)
			return true
		}
		chunk = append(chunk, row)
		return len(chunk) < ListChunkRows || flush()
	})
	if err == nil && emit != nil {
		flush()
	}
	if err != nil {
		return wire.Result{}, err
	}
	if set.Rows == nil {
		set.Rows = [][]wire.Value{}
	}
	msg := plural(n, "domain")
	if p.Like != "" {
		msg += " like " + grammar.FormatLikePattern(p.Like)
	}
	return wire.Result{Message: msg, Set: set}, nil
}

// domainColumns are the columns every per-domain record result shares
// (DESCRIBE DOMAIN and DESCRIBE BACKUP). The start columns describe the
// latest START (null before the first); the mapping columns the active
// paced mapping (null unless the domain is paced and running).
var domainColumns = []wire.Column{
	{Name: "name", Type: wire.KindText},
	{Name: "pace", Type: wire.KindText},
	{Name: "period", Type: wire.KindDuration},
	{Name: "skew", Type: wire.KindDuration},
	{Name: "placement", Type: wire.KindText},
	{Name: "status", Type: wire.KindText},
	{Name: "generation", Type: wire.KindUint},
	{Name: "start_mode", Type: wire.KindText},
	{Name: "start_point", Type: wire.KindTimestamp},
	{Name: "start_wall", Type: wire.KindTimestamp},
	{Name: "start_rate", Type: wire.KindRate},
	{Name: "mapping_logical_start", Type: wire.KindTimestamp},
	{Name: "mapping_wall_started_at", Type: wire.KindTimestamp},
	{Name: "mapping_time_rate", Type: wire.KindRate},
}

// domainRow returns a row of width columns whose first len(domainColumns)
// values describe d; the rest are null for the caller to fill.
func domainRow(d lifecycle.Domain, width int) []wire.Value {
	row := make([]wire.Value, width)
	row[0], row[1], row[4], row[5], row[6] = wire.Text(d.Name), wire.Text(d.Pace.String()), wire.Text(d.Placement.String()), wire.Text(d.Status.String()), wire.Uint(d.Generation)
	if d.Pace == lifecycle.Paced {
		row[2], row[3] = wire.Duration(d.Period), wire.Duration(d.Skew)
	}
	if d.Generation > 0 {
		row[7] = wire.Text(d.LastStart.Mode.String())
		row[8] = wire.Timestamp(d.LastStart.LogicalStart)
		row[9] = wire.Timestamp(d.LastStart.WallStartedAt)
		row[10] = wire.Rate(d.LastStart.Rate)
	}
	if m := d.Mapping; m != nil {
		row[11], row[12], row[13] = wire.Timestamp(m.LogicalStart), wire.Timestamp(m.WallStartedAt), wire.Rate(m.Rate)
	}
	return row
}

// Columns of DESCRIBE DOMAIN: the domain record, then the clock authority
// fence of a paced domain, the catalog revision of its last change and the
// full typed report of its clock's failure at the authority (null unless
// the running generation failed; it holds until the next generation).
var describeColumns = append(slices.Clip(domainColumns),
	wire.Column{Name: "authority", Type: wire.KindText},
	wire.Column{Name: "revision", Type: wire.KindUint},
	wire.Column{Name: "clock_failure", Type: wire.KindText},
)

func (s *Session) describeDomain(p planner.DescribeDomain) (wire.Result, error) {
	if err := s.refuseInTransaction("DESCRIBE DOMAIN"); err != nil {
		return wire.Result{}, err
	}
	name := p.Name
	if name == "" {
		var err error
		if name, err = s.activeDomain(); err != nil {
			return wire.Result{}, err
		}
	}
	d, err := s.node.Domain(name)
	if err != nil {
		return wire.Result{}, err
	}
	failure := s.clockFailure(d)
	msg := fmt.Sprintf("domain '%s'", name)
	if failure != nil {
		msg += "; its clock failed: " + failure.Message
	}
	return wire.Result{Domain: name, Message: msg,
		Set: &wire.ResultSet{Columns: describeColumns, Rows: [][]wire.Value{describeRow(d, failure)}}}, nil
}

// clockFailure returns the failure the serving node holds for the running
// generation of d, nil when none (or the node has not installed d).
func (s *Session) clockFailure(d lifecycle.Domain) *wire.ClockFailure {
	if d.Pace != lifecycle.Paced || !d.Running() {
		return nil
	}
	obs, err := s.node.Observe(d.Name)
	if err != nil {
		return nil
	}
	if f := obs.Read().Failure; f != nil && f.Generation == d.Generation {
		return f
	}
	return nil
}

func describeRow(d lifecycle.Domain, failure *wire.ClockFailure) []wire.Value {
	row := domainRow(d, len(describeColumns))
	if d.Pace == lifecycle.Paced {
		row[len(domainColumns)] = wire.Text(d.Authority.String())
	}
	row[len(domainColumns)+1] = wire.Uint(d.Revision)
	if failure != nil {
		row[len(domainColumns)+2] = wire.Text(failure.Message)
	}
	return row
}
