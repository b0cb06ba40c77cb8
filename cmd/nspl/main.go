package main

import (
	"context"
	"fmt"
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
	if err != nil && !reported(err) {
		fmt.Fprintf(os.Stderr, "nspl: %s\n", termSafe(err.Error())) // it may quote a server
		if ExitCode(err) == ExitUsage {
			fmt.Fprintln(os.Stderr, helpHint(err))
		}
	}
	os.Exit(ExitCode(err))
}
