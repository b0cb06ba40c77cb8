package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGTERM, what systemd and Kubernetes send, ends the run as Ctrl-C
	// does: nspl serve shuts down gracefully, a shell or script stops.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	err := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	writeRunError(os.Stderr, err)
	os.Exit(ExitCode(err))
}

// writeRunError prints what nspl prints on stderr when Run returns err: its
// message unless the run reported it already, and for a usage error where
// to find help. nspl test prints it into a script's output too, which is
// then what the command prints.
func writeRunError(w io.Writer, err error) {
	if err == nil || reported(err) {
		return
	}
	fmt.Fprintf(w, "nspl: %s\n", termSafe(err.Error())) // it may quote a server
	if ExitCode(err) == ExitUsage {
		fmt.Fprintln(w, helpHint(err))
	}
}
