// Package history records what concurrent clients of the catalog asked and
// were answered (each operation's invocation, completion and outcome) and
// checks the record: operations and reads at the linearizable level with
// Porcupine against a sequential model of the catalog, partitioned per
// domain; reads at the local level against the weaker model that level
// promises (see CheckLocal). A history that fails is written as Porcupine's
// HTML visualisation. CheckClock holds the frames clients received from
// attachments to a domain's clock to what they promise.
//
// It is for tests only and must never be imported by production code. It
// timestamps operations on one time source's monotonic clock, which only
// orders operations recorded in one process.
package history

import (
	"fmt"
	"sync"

	"github.com/nspl-dev/nspl/clockrt/timesource"
)

// Kind is what an operation does.
type Kind uint8

// Operation kinds.
const (
	Create Kind = iota + 1
	Start
	Stop
	Alter
	Drop
	Read
	// List is a read that sees whether the domain exists, its status and
	// its generation, but neither its placement nor its revision (LIST
	// DOMAINS).
	List
	// Txn is BEGIN, its Steps (START, STOP and ALTER DOMAIN SET
	// PLACEMENT) and COMMIT on one domain: one operation that applies
	// every step or none.
	Txn
)

func (k Kind) String() string {
	switch k {
	case Create:
		return "CREATE"
	case Start:
		return "START"
	case Stop:
		return "STOP"
	case Alter:
		return "ALTER"
	case Drop:
		return "DROP"
	case Read:
		return "READ"
	case List:
		return "LIST"
	case Txn:
		return "TXN"
	default:
		return fmt.Sprintf("Kind(%d)", uint8(k))
	}
}

// Level is the read consistency a Read or List operation was issued at.
type Level uint8

// Read levels.
const (
	Linearizable Level = iota
	Local
)

// Input is one operation as issued: its kind, the domain it names, for
// Alter the placement it sets, and for Txn the steps it commits.
type Input struct {
	Kind      Kind
	Domain    string
	Placement string
	Level     Level  // of a Read or List
	Steps     []Step // of a Txn, in order
}

// Step is one lifecycle step of a Txn: Start, Stop, or Alter with the
// placement it sets.
type Step struct {
	Kind      Kind
	Placement string
}

func (s Step) String() string {
	if s.Kind == Alter {
		return "ALTER " + s.Placement
	}
	return s.Kind.String()
}

// Outcome is how an operation completed, as its client learnt it.
type Outcome uint8

// Outcomes. Unknown is an operation whose effect its client cannot tell
// (a deadline, a lost connection): it may have taken effect at any time
// after its invocation, or never.
const (
	OK Outcome = iota + 1
	Failed
	Unknown
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Failed:
		return "fail"
	case Unknown:
		return "unknown"
	default:
		return fmt.Sprintf("Outcome(%d)", uint8(o))
	}
}

// Refusal is the domain rule a Failed write broke, as the catalog names it.
type Refusal string

// Refusals the model predicts.
const (
	RefusedExists         Refusal = "exists"
	RefusedNotFound       Refusal = "not found"
	RefusedRunning        Refusal = "running"
	RefusedAlreadyRunning Refusal = "already running"
	RefusedAlreadyStopped Refusal = "already stopped"
)

// Domain is the part of a domain's state the model tracks. The zero value
// is a domain that does not exist.
type Domain struct {
	Exists    bool
	Running   bool
	Gen       uint64
	Placement string
}

func (d Domain) String() string {
	if !d.Exists {
		return "absent"
	}
	st := "stopped"
	if d.Running {
		st = "running"
	}
	return fmt.Sprintf("%s gen %d %s", st, d.Gen, d.Placement)
}

// Output is an operation's completion: its outcome, the refusal of a
// Failed write (for a Txn, with the one-based step the refusal names, 0
// when it names none), and what a Read saw (with the catalog revision of
// the domain's last change, 0 when absent).
type Output struct {
	Outcome  Outcome
	Refusal  Refusal
	Step     int
	Saw      Domain
	Revision uint64
}

// Op is one recorded operation. Client is the recording client's index;
// Call and Return are nanoseconds on the recorder's monotonic clock
// (Return is meaningless while Output.Outcome is Unknown).
type Op struct {
	Client int
	Input  Input
	Output Output
	Call   int64
	Return int64
}

// Recorder collects the operations of concurrent clients. It is safe for
// concurrent use.
type Recorder struct {
	clock timesource.Source
	mu    sync.Mutex
	ops   []Op
}

// NewRecorder returns an empty recorder timestamping on clock's monotonic
// readings.
func NewRecorder(clock timesource.Source) *Recorder { return &Recorder{clock: clock} }

func (r *Recorder) now() int64 { return int64(r.clock.Monotonic()) }

// Invoke records that client issues in now and returns the function that
// records its completion; call it exactly once.
func (r *Recorder) Invoke(client int, in Input) func(Output) {
	call := r.now()
	return func(out Output) {
		ret := r.now()
		r.mu.Lock()
		r.ops = append(r.ops, Op{Client: client, Input: in, Output: out, Call: call, Return: ret})
		r.mu.Unlock()
	}
}

// Add records an operation whose times the caller measured itself (a test
// planting an acknowledgement before the write it acknowledges).
func (r *Recorder) Add(op Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// Now returns the recorder's clock, in the unit of Op.Call.
func (r *Recorder) Now() int64 { return r.now() }

// Ops returns the operations completed so far, in completion order.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}
