// Command nspl is the NSPL domain-clock shell and script runner, and the
// command that serves, joins and operates a cluster node.
//
// main hands the arguments and the process's I/O to Run, prints an error Run
// has not already reported, and turns it into the exit code (see ExitCode
// and --help). Flag parsing and everything else live in Run and the files
// beside it, one per subcommand or concern: run.go and flags.go (the
// invocation and its flags), script.go and diagnostic.go (scripts and their
// positioned errors), shell.go, shellmeta.go, editor.go and complete.go (the
// interactive shell and its backslash commands), render.go and frames.go
// (results as tables, plain text, CSV or JSON; clock events as lines),
// clock.go, backup.go, restore.go, serve.go, cert.go and fmt.go (the
// subcommands), connect.go (the session statements run on: an embedded
// nspl.Session, or a remote node through package client, both behind one
// interface), profile.go (connection settings from the environment and
// the config file's profiles), usage.go (each command's help, nspl help,
// did-you-mean), version.go, suggest.go and completion.go (--suggest on the
// shell's completer, and the bash, zsh and fish scripts built on it),
// help.go and exit.go.
//
// A statement's text is cut once (grammar.Split): the shell cuts what was
// typed into the statements ready to run and the rest that waits, and hands
// that one split to the history and to the runner, which runs -f and -c
// scripts the same way. The command parses no statement it runs: each
// statement's source text goes to the session, which parses it (a remote
// one sends it to the server, which does), and the runner tells a LIST
// DOMAINS, whose rows it prints as they stream, by its keywords. A
// diagnostic's position is the session's, located in the script by the
// statement's span. The one exception is JSON output of streamed rows,
// whose object starts with the statement's canonical text before the reply
// that carries it: it parses that statement once more for it.
//
// The command owns only the operator's surface: arguments, terminal and
// script text in, rendered replies and exit codes out. It never decides a
// statement's meaning or outcome (package session does, on a node or through
// the client), never reads the wall clock except through a timesource.Source
// (the one it hands the node, or the one that dates a certificate), and only
// main calls os.Exit. nspl serve wires nothing itself: serve.go turns its
// flags into a serve.Config, the composition root that also starts the
// test cluster's members, and keeps only the signals, the printed
// addresses and the drain timeout.
package main
