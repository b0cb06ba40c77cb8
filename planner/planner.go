package planner

import (
	"fmt"
	"reflect"

	"github.com/nspl-dev/nspl/grammar"
)

// PlanStatement turns one parsed statement into its plan. The only error it adds is
// a zero PERIOD (ErrNonPositivePeriod), returned as a *grammar.Error at the
// PERIOD literal so every stage reports positions alike.
func PlanStatement(stmt grammar.Statement) (Plan, error) {
	if stmt == nil || reflect.ValueOf(stmt).IsNil() {
		return nil, fmt.Errorf("%w: nil statement", ErrUnknownStatement)
	}
	at := Located{Position: stmt.Pos()}
	switch s := stmt.(type) {
	case *grammar.CreateDomain:
		pc, err := pace(s.Pace)
		if err != nil {
			return nil, err
		}
		p := CreateDomain{Located: at, Name: s.Name.Value, Pace: pc, IfNotExists: s.IfNotExists}
		if s.Period != nil {
			if s.Period.Nanos == 0 {
				return nil, &grammar.Error{Pos: s.Period.Start, Kind: ErrNonPositivePeriod,
					Msg: "PERIOD must be positive; write a duration above zero such as 1s"}
			}
			p.Period = s.Period.Nanos
		}
		if s.Skew != nil {
			p.Skew = s.Skew.Nanos
		}
		if s.Placement != nil {
			if p.Placement, err = placement(s.Placement.Policy); err != nil {
				return nil, err
			}
		}
		return p, nil
	case *grammar.AlterPlacement:
		pl, err := placement(s.Placement.Policy)
		if err != nil {
			return nil, err
		}
		return AlterPlacement{Located: at, Placement: pl}, nil
	case *grammar.Start:
		p := Start{Located: at, Mode: StartResume, Rate: DefaultRate}
		switch {
		case s.Now:
			p.Mode = StartAtNow
		case s.At != nil:
			p.Mode, p.At = StartAtTime, s.At.UnixNanos
		}
		if s.Rate != nil {
			p.Rate = s.Rate.Value
		}
		return p, nil
	case *grammar.Stop:
		return Stop{Located: at}, nil
	case *grammar.AttachClock:
		return Attach{Located: at}, nil
	case *grammar.DetachClock:
		return Detach{Located: at}, nil
	case *grammar.Use:
		return Use{Located: at, Name: s.Name.Value}, nil
	case *grammar.ListDomains:
		p := ListDomains{Located: at}
		if s.Like != nil {
			p.Like = s.Like.Value
		}
		return p, nil
	case *grammar.DescribeDomain:
		p := DescribeDomain{Located: at}
		if s.Name != nil {
			p.Name = s.Name.Value
		}
		return p, nil
	case *grammar.DropDomain:
		return DropDomain{Located: at, Name: s.Name.Value, IfExists: s.IfExists}, nil
	case *grammar.Begin:
		return Begin{Located: at}, nil
	case *grammar.Commit:
		return Commit{Located: at}, nil
	case *grammar.Rollback:
		return Rollback{Located: at}, nil
	case *grammar.ShowClusterStatus:
		p := ShowClusterStatus{Located: at}
		if s.Like != nil {
			p.Like = s.Like.Value
		}
		return p, nil
	case *grammar.ShowTransactions:
		return ShowTransactions{Located: at, All: s.All}, nil
	case *grammar.DescribeTransaction:
		return DescribeTransaction{Located: at}, nil
	case *grammar.Backup:
		p := Backup{Located: at, Cluster: s.Cluster, Path: s.Path.Value}
		if s.Name != nil {
			p.Domain = s.Name.Value
		}
		return p, nil
	case *grammar.Restore:
		p := Restore{Located: at, Cluster: s.Cluster, Path: s.Path.Value, Resume: s.Resume, DryRun: s.DryRun}
		if s.Name != nil {
			p.Domain = s.Name.Value
		}
		if s.As != nil {
			p.As = s.As.Value
		}
		return p, nil
	case *grammar.DescribeBackup:
		return DescribeBackup{Located: at, Path: s.Path.Value}, nil
	case *grammar.NodeMaintenance:
		return NodeMaintenance{Located: at, Action: MaintenanceAction(s.Action), Node: s.Name.Value}, nil
	}
	return nil, fmt.Errorf("%w: %T", ErrUnknownStatement, stmt)
}

// PlanScript parses and plans every statement of src. It stops at the first
// error, a *grammar.Error with its position, and returns the plans before it
// too.
func PlanScript(src string) ([]Plan, error) {
	stmts, err := grammar.Parse(src)
	plans := make([]Plan, 0, len(stmts))
	for _, st := range stmts {
		p, perr := PlanStatement(st)
		if perr != nil {
			return plans, perr
		}
		plans = append(plans, p)
	}
	return plans, err
}
