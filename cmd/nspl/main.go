// Command nspl is the NSPL domain-clock shell and script runner.
//
// main hands the arguments and the process's I/O to Run, prints an error Run
// has not already reported, and turns it into the exit code (see ExitCode
// and --help). Flag parsing and everything else live in Run and the files
// beside it, one per subcommand or concern: flags.go, script.go, shell.go,
// clock.go.
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
