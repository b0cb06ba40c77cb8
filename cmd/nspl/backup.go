package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
)

// archiveCommand is nspl backup or nspl restore: one BACKUP or RESTORE
// statement, run after any -f/-c setup and reported like a statement (a
// JSON object with --format json).
type archiveCommand struct {
	name string // "backup" or "restore"
	plan planner.Plan
}

// subcommand reports whether a subcommand (clock, backup, restore) runs
// instead of the shell or a piped script.
func (o options) subcommand() bool { return o.clock || o.archive != nil }

// parseBackupArgs parses the flags of nspl backup:
//
//	nspl [flags] backup [--domain NAME] --to PATH
//
// Without --domain the whole catalog is backed up (BACKUP CLUSTER).
func parseBackupArgs(o options, args []string) (options, error) {
	fs := flag.NewFlagSet("nspl backup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addSubcommandFlags(fs, &o)
	var domain, to string
	fs.StringVar(&domain, "domain", "", "back up only the domain `NAME` (default: every domain)")
	fs.StringVar(&to, "to", "", "write the archive to `PATH` (~/ is the home directory)")
	if err := parseSubcommand(fs, "backup", args); err != nil {
		return o, err
	}
	path, err := archivePath("backup", "--to", to)
	if err != nil {
		return o, err
	}
	p := planner.Backup{Cluster: domain == "", Path: path}
	if domain != "" {
		if p.Domain, err = grammar.ParseName(domain); err != nil {
			return o, usageErrorf("backup: --domain: %v", err)
		}
	}
	o.archive = &archiveCommand{name: "backup", plan: p}
	return o, nil
}

// addSubcommandFlags registers the common flags on a subcommand's flag
// set. Registering resets the scalar flags to their defaults, so the values
// given before the subcommand's name (nspl --data-dir DIR backup …) are put
// back; the subcommand's own flags may still override them.
func addSubcommandFlags(fs *flag.FlagSet, o *options) {
	saved := *o
	addCommonFlags(fs, o)
	o.continueOnError, o.echo, o.format, o.dataDir, o.verbose = saved.continueOnError, saved.echo, saved.format, saved.dataDir, saved.verbose
	o.output, o.singleTransaction = saved.output, saved.singleTransaction
	o.virtualTime, o.virtualStart = saved.virtualTime, saved.virtualStart
}

// parseSubcommand parses a subcommand's flags and refuses extra arguments.
func parseSubcommand(fs *flag.FlagSet, name string, args []string) error {
	if err := fs.Parse(args); err != nil {
		return flagParseError(fs, name, err)
	}
	if extra := fs.Args(); len(extra) > 0 {
		return usageErrorf("%s: unexpected argument %q", name, extra[0])
	}
	return nil
}

// archivePath checks a --to or --from value the way the statement checks its
// path literal.
func archivePath(cmd, flagName, v string) (string, error) {
	if v == "" {
		return "", usageErrorf("%s: %s PATH is required, for example %s ~/prod.nsplbak", cmd, flagName, flagName)
	}
	p, err := grammar.ParsePath(v)
	if err != nil {
		return "", usageErrorf("%s: %s: %v", cmd, flagName, err)
	}
	return p, nil
}

// runArchive runs the subcommand's statement on the session, printing its
// reply, or its diagnostic, like a one-statement script.
func (m *Main) runArchive(ctx context.Context, r *runner, cmd *archiveCommand) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer m.setInterruptHandler(cancel)()
	out, err := r.runText(runCtx, "nspl "+cmd.name, cmd.plan.String(), false)
	switch {
	case err != nil:
		return err
	case out.interrupted:
		return &RunError{Kind: ErrStatementFailed, Err: ErrInterrupted}
	case out.failed > 0:
		return &RunError{Kind: ErrStatementFailed, Err: errors.New(cmd.name + " failed"), Reported: true}
	}
	return nil
}
