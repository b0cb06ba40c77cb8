package lifecycle

// DomainsChanged appends to dst the names of the domains that applying cmd
// changes, when applying it changes anything (Result.Changed), and returns
// the extended slice: the one domain a create, alter, drop, start, stop,
// transaction or reassignment names, every domain a restore lists, none for
// a node registration or deregistration. No other domain record is touched
// by Apply, so a replica that keeps something derived from each domain (its
// installed clocks, its producers) updates exactly these and nothing else
// after a change, whatever the size of the catalog. For a command that
// changed nothing (a no-op, a refusal) the names mean nothing.
func (c Command) DomainsChanged(dst []string) []string {
	switch cmd := c; cmd.Op {
	case OpCreateDomain:
		return append(dst, cmd.CreateDomain.Name)
	case OpAlterPlacement:
		return append(dst, cmd.AlterPlacement.Domain)
	case OpDropDomain:
		return append(dst, cmd.DropDomain.Name)
	case OpStart:
		return append(dst, cmd.Start.Domain)
	case OpStop:
		return append(dst, cmd.Stop.Domain)
	case OpTransaction:
		return append(dst, cmd.Transaction.Domain)
	case OpReassignAuthority:
		return append(dst, cmd.ReassignAuthority.Domain)
	case OpRestore:
		for _, d := range cmd.Restore.Domains {
			dst = append(dst, d.Name)
		}
	}
	return dst
}
