package grammar

import (
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// nodeOf returns the extent of a run of tokens.
func nodeOf(toks []lexer.Token) Node {
	if len(toks) == 0 {
		return Node{}
	}
	last := toks[len(toks)-1]
	return Node{
		Start: fromLexerPos(toks[0].Pos),
		End:   fromLexerPos(last.Pos).advance(last.Value),
	}
}

// literalAt wraps a literal converter's error with the literal's position.
func literalAt(n Node, err error) *Error {
	kind := ErrSyntax
	if le, ok := err.(*literalError); ok {
		kind = le.kind
	}
	return &Error{Pos: n.Start, Kind: kind, Msg: err.Error()}
}

// build converts the participle tree to the public AST, converting and
// checking every literal.
func build(p *pStatement) (Statement, *Error) {
	n := nodeOf(p.Tokens)
	switch {
	case p.Create != nil:
		return buildCreate(n, p.Create)
	case p.Alter != nil:
		return buildAlter(n, p.Alter)
	case p.Start != nil:
		return buildStart(n, p.Start)
	case p.Describe != nil:
		return buildDescribe(n, p.Describe)
	case p.Backup != nil:
		return buildBackup(n, p.Backup)
	case p.Restore != nil:
		return buildRestore(n, p.Restore)
	case p.Drop != nil:
		return buildDrop(n, p.Drop)
	case p.Show != nil:
		return buildShow(n, p.Show)
	case p.Stop:
		return buildStop(n, "STOP"), nil
	case p.Attach != nil:
		return buildAttach(n, p.Attach)
	case p.Detach != nil:
		return buildDetach(n, p.Detach)
	case p.Use != nil:
		return buildUse(n, p.Use)
	case p.List != nil:
		return buildList(n, p.List)
	case p.Begin:
		return buildBegin(n, "BEGIN"), nil
	case p.Commit:
		return buildCommit(n, "COMMIT"), nil
	case p.Rollback != "":
		return buildRollback(n, p.Rollback), nil
	case p.Cordon != nil:
		return buildMaintenance("CORDON")(n, p.Cordon)
	case p.Uncordon != nil:
		return buildMaintenance("UNCORDON")(n, p.Uncordon)
	case p.Drain != nil:
		return buildMaintenance("DRAIN")(n, p.Drain)
	}
	return nil, &Error{Pos: n.Start, Kind: ErrSyntax, Msg: "expected a statement"}
}

// The build* functions each convert one statement production; n is the
// extent of the whole statement.

// A statement whose AST points at optional parts is allocated together
// with them (createParts and the like), so that building it costs one
// allocation however many clauses it has.

func buildAlter(n Node, p *pAlter) (Statement, *Error) {
	st := &AlterPlacement{Node: n}
	if err := buildPlacement(&p.Placement, &st.Placement); err != nil {
		return nil, err
	}
	return st, nil
}

type describeParts struct {
	st   DescribeDomain
	name Name
}

func buildDescribe(n Node, p *pDescribe) (Statement, *Error) {
	if p.Transaction {
		return &DescribeTransaction{Node: n}, nil
	}
	if p.Backup.Tokens != nil {
		path, err := buildPath(&p.Backup)
		if err != nil {
			return nil, err
		}
		return &DescribeBackup{Node: n, Path: path}, nil
	}
	if p.Name.Tokens == nil {
		return &DescribeDomain{Node: n}, nil
	}
	parts := &describeParts{st: DescribeDomain{Node: n}}
	var err *Error
	if parts.name, err = buildName(&p.Name); err != nil {
		return nil, err
	}
	parts.st.Name = &parts.name
	return &parts.st, nil
}

func buildDrop(n Node, p *pDrop) (Statement, *Error) {
	name, err := buildName(&p.Name)
	if err != nil {
		return nil, err
	}
	return &DropDomain{Node: n, IfExists: p.IfExists, Name: name}, nil
}

func buildShow(n Node, p *pShow) (Statement, *Error) {
	if p.Transactions || p.All {
		return &ShowTransactions{Node: n, All: p.All}, nil
	}
	if p.Like.Tokens == nil {
		return &ShowClusterStatus{Node: n}, nil
	}
	parts := &showParts{st: ShowClusterStatus{Node: n}}
	ln := nodeOf(p.Like.Tokens)
	v, err := ParseLikePattern(unquote(p.Like.Text))
	if err != nil {
		return nil, literalAt(ln, err)
	}
	parts.like = Pattern{Node: ln, Value: v}
	parts.st.Like = &parts.like
	return &parts.st, nil
}

type showParts struct {
	st   ShowClusterStatus
	like Pattern
}

func buildAttach(n Node, _ *pAttach) (Statement, *Error) { return &AttachClock{Node: n}, nil }
func buildDetach(n Node, _ *pDetach) (Statement, *Error) { return &DetachClock{Node: n}, nil }

type listParts struct {
	st   ListDomains
	like Pattern
}

func buildList(n Node, p *pList) (Statement, *Error) {
	if p.Like.Tokens == nil {
		return &ListDomains{Node: n}, nil
	}
	parts := &listParts{st: ListDomains{Node: n}}
	ln := nodeOf(p.Like.Tokens)
	v, err := ParseLikePattern(unquote(p.Like.Text))
	if err != nil {
		return nil, literalAt(ln, err)
	}
	parts.like = Pattern{Node: ln, Value: v}
	parts.st.Like = &parts.like
	return &parts.st, nil
}

// The statements that are their keyword alone are built from the keyword.

func buildStop(n Node, _ string) Statement           { return &Stop{Node: n} }
func buildBegin(n Node, _ string) Statement          { return &Begin{Node: n} }
func buildCommit(n Node, _ string) Statement         { return &Commit{Node: n} }
func buildRollback(n Node, keyword string) Statement { return &Rollback{Node: n, Keyword: keyword} }

// buildMaintenance builds CORDON, UNCORDON or DRAIN (action) NODE <name>.
func buildMaintenance(action string) func(n Node, p *pNode) (Statement, *Error) {
	return func(n Node, p *pNode) (Statement, *Error) {
		nn := nodeOf(p.Name.Tokens)
		v, err := ParseNodeName(p.Name.Text)
		if err != nil {
			return nil, literalAt(nn, err)
		}
		return &NodeMaintenance{Node: n, Action: action, Name: NodeName{Node: nn, Value: v}}, nil
	}
}

func buildUse(n Node, p *pUse) (Statement, *Error) {
	name, err := buildName(&p.Name)
	if err != nil {
		return nil, err
	}
	return &Use{Node: n, Name: name}, nil
}

type createParts struct {
	st           CreateDomain
	period, skew Duration
	placement    PlacementPolicy
}

func buildCreate(n Node, p *pCreate) (Statement, *Error) {
	parts := &createParts{st: CreateDomain{Node: n, IfNotExists: p.IfNotExists}}
	st := &parts.st
	var err *Error
	switch {
	case p.Paced.Name.Tokens != nil:
		st.Pace = Paced
		if st.Name, err = buildName(&p.Paced.Name.pName); err != nil {
			return nil, err
		}
		if err = buildDuration(&p.Paced.Period.pDuration, &parts.period); err != nil {
			return nil, err
		}
		if err = buildDuration(&p.Paced.Skew.pDuration, &parts.skew); err != nil {
			return nil, err
		}
		st.Period, st.Skew = &parts.period, &parts.skew
	case p.Unpaced.Tokens != nil:
		st.Pace = Unpaced
		if st.Name, err = buildName(&p.Unpaced.pName); err != nil {
			return nil, err
		}
	default:
		st.Pace, st.Short = Unpaced, true
		if st.Name, err = buildName(&p.Short.pName); err != nil {
			return nil, err
		}
	}
	if p.Placement.Tokens != nil {
		if err = buildPlacement(&p.Placement, &parts.placement); err != nil {
			return nil, err
		}
		st.Placement = &parts.placement
	}
	return st, nil
}

type startParts struct {
	st   Start
	at   Timestamp
	rate Rate
}

func buildStart(n Node, p *pStart) (Statement, *Error) {
	at := &p.At
	if !at.Now && at.Stamp.Tokens == nil {
		return &Start{Node: n}, nil
	}
	parts := &startParts{st: Start{Node: n, Now: at.Now}}
	st := &parts.st
	if at.Stamp.Tokens != nil {
		tn := nodeOf(at.Stamp.Tokens)
		text := unquote(at.Stamp.Text)
		ns, err := ParseTimestamp(text)
		if err != nil {
			return nil, literalAt(tn, err)
		}
		parts.at = Timestamp{Node: tn, UnixNanos: ns}
		st.At = &parts.at
	}
	if at.Rate.Tokens != nil {
		rn := nodeOf(at.Rate.Tokens)
		v, err := ParseRate(at.Rate.Sign + at.Rate.Text)
		if err != nil {
			return nil, literalAt(rn, err)
		}
		parts.rate = Rate{Node: rn, Value: v}
		st.Rate = &parts.rate
	}
	return st, nil
}

func buildName(p *pName) (Name, *Error) {
	n := nodeOf(p.Tokens)
	if p.Qualified {
		var b strings.Builder
		for _, t := range p.Tokens {
			b.WriteString(t.Value)
		}
		text := b.String()
		return Name{}, literalAt(n, newLiteralError(ErrInvalidName, text, "a domain name cannot contain '.'; domain names are not qualified, use '-' or '_' instead"))
	}
	v, err := ParseName(p.First)
	if err != nil {
		return Name{}, literalAt(n, err)
	}
	return Name{Node: n, Value: v}, nil
}

func buildDuration(p *pDuration, d *Duration) *Error {
	n := nodeOf(p.Tokens)
	ns, err := ParseDuration(p.Text)
	if err != nil {
		return literalAt(n, err)
	}
	*d = Duration{Node: n, Nanos: ns}
	return nil
}

func buildPlacement(p *pPlacement, pp *PlacementPolicy) *Error {
	n := nodeOf(p.Tokens)
	var pol Placement
	switch p.Policy {
	case "NEUTRAL":
		pol = Neutral
	case "REQUIRECOLOCATION":
		pol = RequireColocation
	case "PREFERCOLOCATION":
		pol = PreferColocation
	case "SUGGESTSEPARATION":
		pol = SuggestSeparation
	default:
		return &Error{Pos: n.Start, Kind: ErrSyntax, Msg: "unknown placement policy " + quote(p.Policy)}
	}
	*pp = PlacementPolicy{Node: n, Policy: pol}
	return nil
}

// unquote strips a string token's quotes and undoubles the quote character.
func unquote(raw string) string {
	if len(raw) < 2 {
		return raw
	}
	q := raw[0]
	body := raw[1 : len(raw)-1]
	for i := 0; i+1 < len(body); i++ {
		if body[i] == q && body[i+1] == q {
			b := make([]byte, 0, len(body))
			for j := 0; j < len(body); j++ {
				b = append(b, body[j])
				if body[j] == q && j+1 < len(body) && body[j+1] == q {
					j++
				}
			}
			return string(b)
		}
	}
	return body
}
