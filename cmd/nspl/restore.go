package main

import (
	"flag"
	"io"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
)

// parseRestoreArgs parses the flags of nspl restore:
//
//	nspl [flags] restore --from PATH [--domain NAME [--as NEW]] [--resume] [--dry-run]
//
// Without --domain every domain of the archive is restored (RESTORE
// CLUSTER).
func parseRestoreArgs(o options, args []string) (options, error) {
	fs := flag.NewFlagSet("nspl restore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addSubcommandFlags(fs, &o)
	var from, domain, as string
	p := planner.Restore{}
	fs.StringVar(&from, "from", "", "read the archive at `PATH` (~/ is the home directory)")
	fs.StringVar(&domain, "domain", "", "restore only the domain `NAME` (default: every domain of the archive)")
	fs.StringVar(&as, "as", "", "restore --domain under the free name `NEW`")
	fs.BoolVar(&p.Resume, "resume", false, "keep the archived generation, start point and mapping running")
	fs.BoolVar(&p.DryRun, "dry-run", false, "verify and report the plan; change nothing")
	if err := parseSubcommand(fs, "restore", args); err != nil {
		return o, err
	}
	path, err := archivePath("restore", "--from", from)
	if err != nil {
		return o, err
	}
	p.Path = path
	p.Cluster = domain == ""
	if as != "" && p.Cluster {
		return o, usageErrorf("restore: --as needs --domain NAME; a whole archive restores under its own names")
	}
	if domain != "" {
		if p.Domain, err = grammar.ParseName(domain); err != nil {
			return o, usageErrorf("restore: --domain: %v", err)
		}
	}
	if as != "" {
		if p.As, err = grammar.ParseName(as); err != nil {
			return o, usageErrorf("restore: --as: %v", err)
		}
	}
	o.archive = &archiveCommand{name: "restore", plan: p}
	return o, nil
}
