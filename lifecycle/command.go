package lifecycle

import "fmt"

// Op names a catalog command. Op strings are part of the committed log
// format: never rename one.
type Op string

// The catalog commands.
const (
	OpCreateDomain      Op = "create_domain"
	OpAlterPlacement    Op = "alter_placement"
	OpDropDomain        Op = "drop_domain"
	OpStart             Op = "start"
	OpStop              Op = "stop"
	OpTransaction       Op = "transaction"
	OpRegisterNode      Op = "register_node"
	OpDeregisterNode    Op = "deregister_node"
	OpReassignAuthority Op = "reassign_authority"
	OpRestore           Op = "restore"
	OpCordonNode        Op = "cordon_node"
)

// Command is one replicated catalog change: a tagged union whose Op selects
// the one non-nil payload. A command carries resolved values only (the
// sampled UTC anchor, the chosen authority, the resolved start), so every
// replica applies it identically.
type Command struct {
	Op Op `json:"op"`
	// RequestID, when not empty, names this proposal: the proposer picks
	// it before proposing (it is never derived on a replica), keeps it
	// across every retry of the same write, and the catalog applies a
	// command whose RequestID it applied recently only once, answering the
	// retry with the first result. It is at most MaxRequestIDLen bytes of
	// UTF-8. Entries committed before request ids existed carry none.
	RequestID         string             `json:"request_id,omitempty"`
	CreateDomain      *CreateDomain      `json:"create_domain,omitempty"`
	AlterPlacement    *AlterPlacement    `json:"alter_placement,omitempty"`
	DropDomain        *DropDomain        `json:"drop_domain,omitempty"`
	Start             *Start             `json:"start,omitempty"`
	Stop              *Stop              `json:"stop,omitempty"`
	Transaction       *Transaction       `json:"transaction,omitempty"`
	RegisterNode      *RegisterNode      `json:"register_node,omitempty"`
	DeregisterNode    *DeregisterNode    `json:"deregister_node,omitempty"`
	ReassignAuthority *ReassignAuthority `json:"reassign_authority,omitempty"`
	Restore           *Restore           `json:"restore,omitempty"`
	CordonNode        *CordonNode        `json:"cordon_node,omitempty"`
}

// MaxRequestIDLen bounds Command.RequestID, so the catalog's window of
// remembered requests stays small.
const MaxRequestIDLen = 128

// CreateDomain creates a stopped domain. A paced domain needs Period > 0; an
// unpaced domain takes neither Period nor Skew. With IfNotExists, an existing
// name is a quiet no-op (the existing definition is kept, even if it
// differs).
type CreateDomain struct {
	Name        string    `json:"name"`
	Pace        Pace      `json:"pace"`
	Period      uint64    `json:"period_ns"`
	Skew        uint64    `json:"skew_ns"`
	Placement   Placement `json:"placement"`
	IfNotExists bool      `json:"if_not_exists,omitempty"`
}

// AlterPlacement sets a domain's placement default. Setting the current
// value is a no-op.
type AlterPlacement struct {
	Domain    string    `json:"domain"`
	Placement Placement `json:"placement"`
}

// DropDomain removes a stopped domain. With IfExists, a missing name is a
// quiet no-op.
type DropDomain struct {
	Name     string `json:"name"`
	IfExists bool   `json:"if_exists,omitempty"`
}

// ResolvedStart is a START after resolution by ResolveStart: the concrete
// start point (sampled anchor, logical origin, rate) and, for a paced domain
// only, the initial authority.
type ResolvedStart struct {
	Point     StartPoint `json:"point"`
	Authority *Identity  `json:"authority,omitempty"`
}

// Start establishes the next generation of a stopped domain.
type Start struct {
	Domain   string        `json:"domain"`
	Resolved ResolvedStart `json:"resolved"`
}

// Stop ends the running generation of a domain.
type Stop struct {
	Domain string `json:"domain"`
}

// Step is one frozen lifecycle step of a transaction: Start is set exactly
// for StepStart, Placement exactly for StepAlterPlacement.
type Step struct {
	Op        StepOp         `json:"op"`
	Start     *ResolvedStart `json:"start,omitempty"`
	Placement *Placement     `json:"placement,omitempty"`
}

// Transaction is a BEGIN … COMMIT bound to one existing domain: its steps,
// resolved when the commit was admitted, apply in order and all-or-nothing.
// The whole transaction is one catalog revision.
type Transaction struct {
	Domain string `json:"domain"`
	Steps  []Step `json:"steps"`
}

// RegisterNode records a node incarnation in the registry, replacing any
// previous incarnation of the same name. Re-registering the current
// incarnation with the same addresses is a no-op, so retries are safe.
type RegisterNode struct {
	Name        string `json:"name"`
	Incarnation uint64 `json:"incarnation"`
	RaftID      string `json:"raft_id"`
	RaftAddr    string `json:"raft_addr"`
	APIAddr     string `json:"api_addr"`
}

// DeregisterNode removes a node from the registry, only if its registered
// incarnation is still Incarnation (a compare-and-set, so a late retry
// cannot remove a newer incarnation). It does not touch authority fences:
// the leader's reconciliation moves them.
type DeregisterNode struct {
	Name        string `json:"name"`
	Incarnation uint64 `json:"incarnation"`
}

// CordonNode sets (Cordoned) or clears the maintenance mark of a registered
// node. Setting the mark the node already has is a no-op, so retries are
// safe; an unregistered name is refused as an unknown node.
type CordonNode struct {
	Name     string `json:"name"`
	Cordoned bool   `json:"cordoned"`
}

// ReassignAuthority is the compare-and-set reassignment of a paced domain's
// clock authority. It applies only if the domain still has
// ExpectedGeneration, is still paced and running, and still has exactly
// ExpectedFence; then the fence becomes Authority (nil revokes: unassigned)
// at ExpectedFence.Revision+1. Naming the identity the fence already holds
// is a no-op.
type ReassignAuthority struct {
	Domain             string         `json:"domain"`
	ExpectedGeneration uint64         `json:"expected_generation"`
	ExpectedFence      AuthorityFence `json:"expected_fence"`
	Authority          *Identity      `json:"authority,omitempty"`
}

// Validate checks the shape of c: a known Op, exactly the matching payload,
// non-empty names, in-range enums, positive finite rates, non-zero
// incarnations. Catalog rules (existence, status, periods) are Apply's.
func (c Command) Validate() error {
	if err := c.validate(); err != nil {
		return err
	}
	return nil
}

func (c Command) validate() *Error {
	if len(c.RequestID) > MaxRequestIDLen {
		return errInvalid("", "command %q request id is %d bytes; at most %d are allowed", c.Op, len(c.RequestID), MaxRequestIDLen)
	}
	payloads := 0
	for _, set := range []bool{
		c.CreateDomain != nil, c.AlterPlacement != nil, c.DropDomain != nil,
		c.Start != nil, c.Stop != nil, c.Transaction != nil,
		c.RegisterNode != nil, c.DeregisterNode != nil, c.ReassignAuthority != nil,
		c.Restore != nil, c.CordonNode != nil,
	} {
		if set {
			payloads++
		}
	}
	if payloads != 1 {
		return errInvalid("", "command %q carries %d payloads; exactly one is required", c.Op, payloads)
	}
	missing := func() *Error {
		return errInvalid("", "command %q does not carry its %q payload", c.Op, c.Op)
	}
	switch c.Op {
	case OpCreateDomain:
		if c.CreateDomain == nil {
			return missing()
		}
		p := c.CreateDomain
		if err := checkName("domain", p.Name); err != nil {
			return err
		}
		if p.Pace > Paced || p.Placement > SuggestSeparation {
			return errInvalid(p.Name, "domain '%s': pace or placement out of range", p.Name)
		}
	case OpAlterPlacement:
		if c.AlterPlacement == nil {
			return missing()
		}
		if err := checkName("domain", c.AlterPlacement.Domain); err != nil {
			return err
		}
		if c.AlterPlacement.Placement > SuggestSeparation {
			return errInvalid(c.AlterPlacement.Domain, "domain '%s': placement out of range", c.AlterPlacement.Domain)
		}
	case OpDropDomain:
		if c.DropDomain == nil {
			return missing()
		}
		return checkName("domain", c.DropDomain.Name)
	case OpStart:
		if c.Start == nil {
			return missing()
		}
		if err := checkName("domain", c.Start.Domain); err != nil {
			return err
		}
		return c.Start.Resolved.validate(c.Start.Domain)
	case OpStop:
		if c.Stop == nil {
			return missing()
		}
		return checkName("domain", c.Stop.Domain)
	case OpTransaction:
		if c.Transaction == nil {
			return missing()
		}
		return c.Transaction.validate()
	case OpRegisterNode:
		if c.RegisterNode == nil {
			return missing()
		}
		if err := checkName("node", c.RegisterNode.Name); err != nil {
			return err
		}
		if c.RegisterNode.Incarnation == 0 {
			return errInvalid("", "node '%s': incarnation 0 is reserved for unassigned; generate a fresh non-zero incarnation", c.RegisterNode.Name)
		}
	case OpDeregisterNode:
		if c.DeregisterNode == nil {
			return missing()
		}
		if err := checkName("node", c.DeregisterNode.Name); err != nil {
			return err
		}
		if c.DeregisterNode.Incarnation == 0 {
			return errInvalid("", "node '%s': incarnation 0 is never registered", c.DeregisterNode.Name)
		}
	case OpCordonNode:
		if c.CordonNode == nil {
			return missing()
		}
		if err := checkName("node", c.CordonNode.Name); err != nil {
			return err
		}
	case OpReassignAuthority:
		if c.ReassignAuthority == nil {
			return missing()
		}
		r := c.ReassignAuthority
		if err := checkName("domain", r.Domain); err != nil {
			return err
		}
		if r.ExpectedFence.Assigned() != (r.ExpectedFence.Incarnation != 0) {
			return errInvalid(r.Domain, "domain '%s': expected fence %s names only one of node and incarnation", r.Domain, r.ExpectedFence)
		}
		if r.Authority != nil {
			return checkIdentity(r.Domain, *r.Authority)
		}
	case OpRestore:
		if c.Restore == nil {
			return missing()
		}
		return c.Restore.validate()
	default:
		return errInvalid("", "unknown command op %q", c.Op)
	}
	return nil
}

func (r ResolvedStart) validate(domain string) *Error {
	if err := validatePoint(r.Point, domain); err != nil {
		return err
	}
	if r.Authority != nil {
		return checkIdentity(domain, *r.Authority)
	}
	return nil
}

func (t Transaction) validate() *Error {
	if err := checkName("domain", t.Domain); err != nil {
		return err
	}
	for i, s := range t.Steps {
		var err *Error
		switch s.Op {
		case StepStart:
			if s.Start == nil || s.Placement != nil {
				err = errInvalid(t.Domain, "START step carries the wrong payload")
			} else {
				err = s.Start.validate(t.Domain)
			}
		case StepStop:
			if s.Start != nil || s.Placement != nil {
				err = errInvalid(t.Domain, "STOP step carries a payload")
			}
		case StepAlterPlacement:
			if s.Placement == nil || s.Start != nil {
				err = errInvalid(t.Domain, "ALTER step carries the wrong payload")
			} else if *s.Placement > SuggestSeparation {
				err = errInvalid(t.Domain, "ALTER step placement out of range")
			}
		default:
			err = errInvalid(t.Domain, "unknown step op %q", s.Op)
		}
		if err != nil {
			return inStep(err, i, s.Op)
		}
	}
	return nil
}

func checkName(kind, name string) *Error {
	if name == "" {
		return errInvalid("", "%s name is empty", kind)
	}
	return nil
}

func checkIdentity(domain string, id Identity) *Error {
	if id.Node == "" || id.Incarnation == 0 {
		return errInvalid(domain, "domain '%s': authority %s needs a node name and a non-zero incarnation", domain, id)
	}
	return nil
}

// inStep marks err as the failure of the zero-based step i.
func inStep(err *Error, i int, op StepOp) *Error {
	e := *err
	e.Step = i + 1
	e.Message = fmt.Sprintf("transaction step %d (%s): %s", i+1, op, err.Message)
	return &e
}
