package session

import (
	"fmt"

	"github.com/nspl-dev/nspl/lifecycle"
)

// completionWarnings are the warnings of a write whose completion boundary
// ended before every live node installed its revision.
func completionWarnings(out lifecycle.Outcome) []string {
	return unconfirmedWarnings(out.Revision, out.Unconfirmed)
}

// unconfirmedWarnings names each live node that had not installed the
// committed revision rev when the statement returned.
func unconfirmedWarnings(rev uint64, nodes []string) []string {
	if len(nodes) == 0 {
		return nil
	}
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = fmt.Sprintf("the change is committed at revision %d, but node '%s' had not installed it when the statement returned (it stopped answering, or the statement's deadline passed first); a statement through '%s' may see the previous state until it does (SHOW CLUSTER STATUS shows each node's revision)", rev, n, n)
	}
	return out
}
