package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	err := Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if err != nil && !reported(err) {
		fmt.Fprintf(os.Stderr, "nspl: %v\n", err)
		if ExitCode(err) == ExitUsage {
			fmt.Fprintln(os.Stderr, "Run 'nspl --help' for usage.")
		}
	}
	os.Exit(ExitCode(err))
}
