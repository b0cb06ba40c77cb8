package main

import (
	"flag"
	"io"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
)

// parseNodeArgs parses nspl node ACTION NAME:
//
//	nspl [flags] node cordon|uncordon|drain NAME
//	nspl --connect URL [credentials] node remove [--force] NAME
//
// cordon, uncordon and drain run the statement CORDON, UNCORDON or DRAIN
// NODE NAME on the session (the node at --connect, or the embedded node),
// reported like a statement; remove is nspl remove.
func parseNodeArgs(o options, args []string) (options, error) {
	if len(args) == 0 {
		return o, usageErrorf("node: give an action and a node name: nspl node cordon|uncordon|drain|remove NAME")
	}
	action, args := args[0], args[1:]
	if action == "-h" || action == "-help" || action == "--help" {
		fs := flag.NewFlagSet("nspl node", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return o, flagParseError(fs, "node", fs.Parse([]string{action}))
	}
	var p planner.NodeMaintenance
	switch action {
	case "remove":
		return parseAdminArgs(o, "remove", args)
	case "cordon":
		p.Action = planner.Cordon
	case "uncordon":
		p.Action = planner.Uncordon
	case "drain":
		p.Action = planner.Drain
	default:
		return o, usageErrorf("node: unknown action %q; use cordon, uncordon, drain or remove", action)
	}
	name := "node " + action
	fs := flag.NewFlagSet("nspl "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addSubcommandFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return o, flagParseError(fs, name, err)
	}
	rest := fs.Args()
	if len(rest) != 1 {
		return o, usageErrorf("%s: give exactly one node name", name)
	}
	node, err := grammar.ParseNodeName(rest[0])
	if err != nil {
		return o, usageErrorf("%s: %v", name, err)
	}
	p.Node = node
	o.archive = &archiveCommand{name: name, plan: p}
	return o, nil
}
