package lifecycle

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/bits"
	"unicode/utf8"
)

// The committed command formats. The first byte of an encoded command says
// which one it is:
//
//   - formatBinaryV1 (0x01): the compact binary form of a command without
//     a request id. Entries committed before request ids existed are all
//     in this form, and EncodeCommand still writes it for such a command.
//   - formatBinaryV2 (0x02): the same form with the command's request id
//     between the format byte and the op code, as a string. The id is never
//     empty in this form (a command without one has its v1 encoding only).
//   - '{' or JSON white space: the JSON form that earlier builds wrote
//     (json.Marshal of Command with its field tags). DecodeCommand keeps
//     reading it so that logs written by those builds still replay; nothing
//     writes it any more.
//
// Any other first byte is refused as an unknown format.
//
// Binary version 1, after the format byte, is the op code (a byte, see
// opCodes) and then the fields of the op's payload in the order of its Go
// struct declaration:
//
//	string        uvarint byte length, then that many bytes of valid UTF-8
//	uint64        uvarint
//	int64         zig-zag varint
//	float64       8 bytes, IEEE 754 bits, little-endian
//	bool          one byte, 0 or 1
//	Pace, Placement, StartMode
//	              one byte, the enum's numeric value
//	optional      one byte, 0 (absent) or 1 (present, the value follows)
//	list          uvarint element count, then the elements
//	StepOp        one byte: 1 start, 2 stop, 3 alter_placement
//
// Decoding is strict and canonical: a varint longer than its minimal
// encoding, a bool or presence byte other than 0 or 1, an unknown op or step
// code, invalid UTF-8, a length or count beyond the bytes that remain, and
// trailing bytes are all refused, so every valid command has exactly one
// binary encoding and EncodeCommand(DecodeCommand(b)) == b.
const (
	formatBinaryV1 byte = 0x01
	formatBinaryV2 byte = 0x02
)

// opCodes are the binary op codes; they are part of the committed log
// format: never renumber one.
var opCodes = [...]Op{
	1:  OpCreateDomain,
	2:  OpAlterPlacement,
	3:  OpDropDomain,
	4:  OpStart,
	5:  OpStop,
	6:  OpTransaction,
	7:  OpRegisterNode,
	8:  OpDeregisterNode,
	9:  OpReassignAuthority,
	10: OpRestore,
	11: OpCordonNode,
}

// stepCodes are the binary step codes, frozen like opCodes.
var stepCodes = [...]StepOp{
	1: StepStart,
	2: StepStop,
	3: StepAlterPlacement,
}

func opCode(op Op) (byte, bool) {
	for i, o := range opCodes {
		if i > 0 && o == op {
			return byte(i), true
		}
	}
	return 0, false
}

func stepCode(op StepOp) (byte, bool) {
	for i, o := range stepCodes {
		if i > 0 && o == op {
			return byte(i), true
		}
	}
	return 0, false
}

// EncodeCommand returns the binary encoding of a valid command (see the
// format notes above); an invalid command, or one whose names are not valid
// UTF-8, is an ErrInvalidCommand error rather than bytes that every replica
// would refuse. Equal commands give equal bytes.
func EncodeCommand(c Command) ([]byte, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	code, _ := opCode(c.Op) // validate accepted the op
	e := encoder{buf: make([]byte, 0, 64+len(c.RequestID))}
	if c.RequestID == "" {
		e.buf = append(e.buf, formatBinaryV1)
	} else {
		e.buf = append(e.buf, formatBinaryV2)
		e.str(c.RequestID)
	}
	e.byte(code)
	switch c.Op {
	case OpCreateDomain:
		p := c.CreateDomain
		e.str(p.Name)
		e.byte(byte(p.Pace))
		e.uvarint(p.Period)
		e.uvarint(p.Skew)
		e.byte(byte(p.Placement))
		e.bool(p.IfNotExists)
	case OpAlterPlacement:
		e.str(c.AlterPlacement.Domain)
		e.byte(byte(c.AlterPlacement.Placement))
	case OpDropDomain:
		e.str(c.DropDomain.Name)
		e.bool(c.DropDomain.IfExists)
	case OpStart:
		e.str(c.Start.Domain)
		e.resolved(c.Start.Resolved)
	case OpStop:
		e.str(c.Stop.Domain)
	case OpTransaction:
		e.str(c.Transaction.Domain)
		e.uvarint(uint64(len(c.Transaction.Steps)))
		for _, s := range c.Transaction.Steps {
			sc, _ := stepCode(s.Op) // validate accepted the step
			e.byte(sc)
			e.bool(s.Start != nil)
			if s.Start != nil {
				e.resolved(*s.Start)
			}
			e.bool(s.Placement != nil)
			if s.Placement != nil {
				e.byte(byte(*s.Placement))
			}
		}
	case OpRegisterNode:
		p := c.RegisterNode
		e.str(p.Name)
		e.uvarint(p.Incarnation)
		e.str(p.RaftID)
		e.str(p.RaftAddr)
		e.str(p.APIAddr)
	case OpDeregisterNode:
		e.str(c.DeregisterNode.Name)
		e.uvarint(c.DeregisterNode.Incarnation)
	case OpCordonNode:
		e.str(c.CordonNode.Name)
		e.bool(c.CordonNode.Cordoned)
	case OpReassignAuthority:
		p := c.ReassignAuthority
		e.str(p.Domain)
		e.uvarint(p.ExpectedGeneration)
		e.str(p.ExpectedFence.Node)
		e.uvarint(p.ExpectedFence.Incarnation)
		e.uvarint(p.ExpectedFence.Revision)
		e.identity(p.Authority)
	case OpRestore:
		e.uvarint(uint64(len(c.Restore.Domains)))
		for _, d := range c.Restore.Domains {
			e.str(d.Name)
			e.byte(byte(d.Pace))
			e.uvarint(d.Period)
			e.uvarint(d.Skew)
			e.byte(byte(d.Placement))
			e.uvarint(d.Generation)
			e.point(d.LastStart)
			e.bool(d.Running)
			e.bool(d.Resume)
			e.identity(d.Authority)
			e.uvarint(d.AuthorityRevision)
		}
	}
	if e.bad != "" {
		return nil, errInvalid("", "command %s does not encode: name %q is not valid UTF-8", c.Op, e.bad)
	}
	return e.buf, nil
}

// DecodeCommand decodes and validates a command in either committed format
// (binary, or the JSON that earlier builds wrote). Decoding is strict:
// unknown formats, ops, enum values or fields, a payload that does not
// match Op, non-canonical binary and trailing data are errors
// (ErrInvalidCommand). Lengths and counts are checked against the bytes
// that remain before anything is allocated, so the memory a decode
// allocates is bounded by a small multiple of len(b). It never panics.
//
// The strings of a binary-decoded command share one copy of b (b itself is
// not retained).
func DecodeCommand(b []byte) (Command, error) { return decodeCommand(b, nil) }

// CommandDecoder decodes commands exactly as DecodeCommand does, but keeps
// one payload of each op and decodes a binary command's payload into it
// instead of allocating one: the payload pointer of a Command that Decode
// returns (and the authority inside it) stays valid only until the next
// Decode on the same decoder, which overwrites it. Its strings, and the
// lists of a transaction or a restore, are never reused. It is for a loop
// that is done with each command before it decodes the next, such as the
// catalog FSM, which applies each committed entry and retains none of its
// payload (State.Apply copies what it keeps). The zero value is ready to
// use; it is not safe for concurrent use.
type CommandDecoder struct{ p payloads }

// Decode decodes and validates b as DecodeCommand does.
func (dec *CommandDecoder) Decode(b []byte) (Command, error) { return decodeCommand(b, &dec.p) }

// payloads holds one payload of each op, for decodeBinary to reuse.
type payloads struct {
	create     CreateDomain
	alter      AlterPlacement
	drop       DropDomain
	start      Start
	startAuth  Identity
	stop       Stop
	txn        Transaction
	register   RegisterNode
	deregister DeregisterNode
	reassign   ReassignAuthority
	reassAuth  Identity
	restore    Restore
}

// decodeCommand is DecodeCommand, decoding a binary payload into reuse
// when it is not nil.
func decodeCommand(b []byte, reuse *payloads) (Command, error) {
	if len(b) == 0 {
		return Command{}, errInvalid("", "command is empty")
	}
	var c Command
	switch b[0] {
	case formatBinaryV1, formatBinaryV2:
		var err *Error
		if c, err = decodeBinary(b, reuse); err != nil {
			return Command{}, err
		}
	case '{', ' ', '\t', '\n', '\r':
		var err error
		if c, err = decodeLegacyJSON(b); err != nil {
			return Command{}, err
		}
	default:
		return Command{}, errInvalid("", "command format 0x%02x is not known to this build; it may have been written by a newer release, so upgrade this node", b[0])
	}
	if err := c.validate(); err != nil {
		return Command{}, err
	}
	return c, nil
}

// decodeLegacyJSON reads the JSON form of earlier builds.
func decodeLegacyJSON(b []byte) (Command, error) {
	var c Command
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Command{}, errInvalid("", "command does not decode: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Command{}, errInvalid("", "command has trailing data after its JSON object")
	}
	return c, nil
}

type encoder struct {
	buf []byte
	bad string // the first string that is not valid UTF-8
}

func (e *encoder) byte(v byte) { e.buf = append(e.buf, v) }

func (e *encoder) bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

func (e *encoder) varint(v int64) { e.buf = binary.AppendVarint(e.buf, v) }

func (e *encoder) str(s string) {
	if e.bad == "" && !utf8.ValidString(s) {
		e.bad = s
	}
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

func (e *encoder) point(p StartPoint) {
	e.byte(byte(p.Mode))
	e.varint(p.LogicalStart)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(p.Rate))
	e.varint(p.WallStartedAt)
}

func (e *encoder) identity(id *Identity) {
	e.bool(id != nil)
	if id != nil {
		e.str(id.Node)
		e.uvarint(id.Incarnation)
	}
}

func (e *encoder) resolved(r ResolvedStart) {
	e.point(r.Point)
	e.identity(r.Authority)
}

// decoder reads the binary versions. The first failure sticks: later reads
// return zero values, and err reports the first failure with its offset.
type decoder struct {
	b    []byte // the whole command, for offsets
	text string // one copy of b; decoded strings are substrings of it
	off  int
	err  *Error
	// snapshot is set while decoding a binary snapshot: failures are then
	// ErrInvalidSnapshot, not a command's ErrInvalidCommand.
	snapshot bool
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		if d.snapshot {
			d.err = errSnapshot("does not decode: "+format, args...)
			return
		}
		d.err = errInvalid("", "command does not decode: "+format, args...)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail("it ends at byte %d in the middle of a field", d.off)
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

func (d *decoder) bool() bool {
	at := d.off
	switch v := d.byte(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail("byte %d is 0x%02x where 0 or 1 is expected", at, v)
		return false
	}
}

// uvarintLen is the length of the minimal uvarint encoding of v.
func uvarintLen(v uint64) int { return max(1, (bits.Len64(v)+6)/7) }

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("byte %d does not start a valid varint", d.off)
		return 0
	}
	if n != uvarintLen(v) {
		d.fail("the varint at byte %d is not minimally encoded", d.off)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint() // zig-zag: the same bytes as the unsigned form
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 8 {
		d.fail("it ends at byte %d in the middle of a number", d.off)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
	d.off += 8
	return v
}

func (d *decoder) str() string {
	at := d.off
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail("the string at byte %d claims %d bytes but only %d remain", at, n, len(d.b)-d.off)
		return ""
	}
	s := d.text[d.off : d.off+int(n)]
	if !utf8.ValidString(s) {
		d.fail("the string at byte %d is not valid UTF-8", at)
		return ""
	}
	d.off += int(n)
	return s
}

// Minimum encoded sizes of list elements: a step is its code and two
// presence bytes; a restored domain is at least its fixed fields with
// one-byte varints and an empty name.
const (
	minStepSize           = 3
	minRestoredDomainSize = 21
)

// count reads a list length whose elements take at least minSize bytes
// each, refusing a count that the remaining bytes cannot hold before
// anything is allocated: a list never costs more than a few times the
// bytes that carry it.
func (d *decoder) count(minSize int) int {
	at := d.off
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64((len(d.b)-d.off)/minSize) {
		d.fail("the list at byte %d claims %d elements but only %d bytes remain", at, n, len(d.b)-d.off)
		return 0
	}
	return int(n)
}

func (d *decoder) point() StartPoint {
	return StartPoint{Mode: StartMode(d.byte()), LogicalStart: d.varint(), Rate: d.float(), WallStartedAt: d.varint()}
}

// identity reads an optional identity into *into, returning into when it is
// present and nil otherwise, so callers can place it in a larger
// allocation.
func (d *decoder) identity(into *Identity) *Identity {
	if !d.bool() {
		return nil
	}
	into.Node = d.str()
	into.Incarnation = d.uvarint()
	return into
}

// decodeBinary decodes binary version 1 or 2; the format byte is b[0].
// It decodes the payload into reuse when that is not nil, and into a fresh
// allocation otherwise.
func decodeBinary(b []byte, reuse *payloads) (Command, *Error) {
	d := &decoder{b: b, text: string(b), off: 1}
	var requestID string
	if b[0] == formatBinaryV2 {
		if requestID = d.str(); d.err == nil && requestID == "" {
			return Command{}, errInvalid("", "command does not decode: format 0x%02x carries an empty request id; a command without one is written in format 0x%02x", formatBinaryV2, formatBinaryV1)
		}
	}
	at := d.off
	code := d.byte()
	if d.err != nil {
		return Command{}, d.err
	}
	if int(code) >= len(opCodes) || code == 0 {
		return Command{}, errInvalid("", "command does not decode: op code %d at byte %d is unknown", code, at)
	}
	p := reuse // nil: allocate each payload afresh
	c := Command{Op: opCodes[code], RequestID: requestID}
	switch c.Op {
	case OpCreateDomain:
		c.CreateDomain = newPayload(p, func(p *payloads) *CreateDomain { return &p.create })
		*c.CreateDomain = CreateDomain{Name: d.str(), Pace: Pace(d.byte()), Period: d.uvarint(), Skew: d.uvarint(),
			Placement: Placement(d.byte()), IfNotExists: d.bool()}
	case OpAlterPlacement:
		c.AlterPlacement = newPayload(p, func(p *payloads) *AlterPlacement { return &p.alter })
		*c.AlterPlacement = AlterPlacement{Domain: d.str(), Placement: Placement(d.byte())}
	case OpDropDomain:
		c.DropDomain = newPayload(p, func(p *payloads) *DropDomain { return &p.drop })
		*c.DropDomain = DropDomain{Name: d.str(), IfExists: d.bool()}
	case OpStart:
		// A fresh payload and its optional authority share one allocation.
		var st *Start
		var auth *Identity
		if p != nil {
			st, auth = &p.start, &p.startAuth
		} else {
			q := &struct {
				start Start
				auth  Identity
			}{}
			st, auth = &q.start, &q.auth
		}
		*st = Start{Domain: d.str()}
		st.Resolved.Point = d.point()
		st.Resolved.Authority = d.identity(auth)
		c.Start = st
	case OpStop:
		c.Stop = newPayload(p, func(p *payloads) *Stop { return &p.stop })
		*c.Stop = Stop{Domain: d.str()}
	case OpTransaction:
		t := newPayload(p, func(p *payloads) *Transaction { return &p.txn })
		*t = Transaction{Domain: d.str()}
		if n := d.count(minStepSize); n > 0 {
			t.Steps = make([]Step, n)
			for i := range t.Steps {
				t.Steps[i] = d.step()
			}
		}
		c.Transaction = t
	case OpRegisterNode:
		c.RegisterNode = newPayload(p, func(p *payloads) *RegisterNode { return &p.register })
		*c.RegisterNode = RegisterNode{Name: d.str(), Incarnation: d.uvarint(), RaftID: d.str(), RaftAddr: d.str(), APIAddr: d.str()}
	case OpDeregisterNode:
		c.DeregisterNode = newPayload(p, func(p *payloads) *DeregisterNode { return &p.deregister })
		*c.DeregisterNode = DeregisterNode{Name: d.str(), Incarnation: d.uvarint()}
	case OpCordonNode:
		c.CordonNode = &CordonNode{Name: d.str(), Cordoned: d.bool()}
	case OpReassignAuthority:
		var r *ReassignAuthority
		var auth *Identity
		if p != nil {
			r, auth = &p.reassign, &p.reassAuth
		} else {
			q := &struct {
				reassign ReassignAuthority
				auth     Identity
			}{}
			r, auth = &q.reassign, &q.auth
		}
		*r = ReassignAuthority{Domain: d.str()}
		r.ExpectedGeneration = d.uvarint()
		r.ExpectedFence = AuthorityFence{Node: d.str(), Incarnation: d.uvarint(), Revision: d.uvarint()}
		r.Authority = d.identity(auth)
		c.ReassignAuthority = r
	case OpRestore:
		r := newPayload(p, func(p *payloads) *Restore { return &p.restore })
		*r = Restore{}
		if n := d.count(minRestoredDomainSize); n > 0 {
			r.Domains = make([]RestoredDomain, n)
			for i := range r.Domains {
				r.Domains[i] = d.restoredDomain()
			}
		}
		c.Restore = r
	}
	if d.err != nil {
		return Command{}, d.err
	}
	if d.off != len(b) {
		return Command{}, errInvalid("", "command has %d trailing bytes after its %s payload", len(b)-d.off, c.Op)
	}
	return c, nil
}

// newPayload returns p's payload that slot selects when decoding into
// reused payloads (p not nil), and otherwise a new one, so that a fresh
// command's payload is one small allocation of its own op.
func newPayload[T any](p *payloads, slot func(*payloads) *T) *T {
	if p != nil {
		return slot(p)
	}
	return new(T)
}

func (d *decoder) step() Step {
	at := d.off
	code := d.byte()
	if d.err != nil {
		return Step{}
	}
	if int(code) >= len(stepCodes) || code == 0 {
		d.fail("step code %d at byte %d is unknown", code, at)
		return Step{}
	}
	s := Step{Op: stepCodes[code]}
	if d.bool() {
		p := &struct {
			start ResolvedStart
			auth  Identity
		}{}
		p.start.Point = d.point()
		p.start.Authority = d.identity(&p.auth)
		s.Start = &p.start
	}
	if d.bool() {
		p := Placement(d.byte())
		s.Placement = &p
	}
	return s
}

func (d *decoder) restoredDomain() RestoredDomain {
	r := RestoredDomain{Name: d.str(), Pace: Pace(d.byte()), Period: d.uvarint(), Skew: d.uvarint(),
		Placement: Placement(d.byte()), Generation: d.uvarint(), LastStart: d.point(), Running: d.bool(), Resume: d.bool()}
	var auth Identity
	if id := d.identity(&auth); id != nil {
		r.Authority = &auth
	}
	r.AuthorityRevision = d.uvarint()
	return r
}
