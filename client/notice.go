package client

import (
	"fmt"
	"time"
)

// NoticeKind says what a Notice reports.
type NoticeKind uint8

// Notice kinds.
const (
	// Interrupted: the session ended; every followed clock keeps its latest
	// state and is attached again on the next session.
	Interrupted NoticeKind = iota + 1
	// Reconnected: a new session is open on Node.
	Reconnected
	// Restored: a followed clock was attached again; its state frame
	// follows.
	Restored
	// RestoreRefused: the new session refused to attach a followed clock
	// again; it is retried after Retry.
	RestoreRefused
	// TransactionLost: the session that held an open transaction ended,
	// and the new session could not take it up (another node, or the
	// server's resume timeout passed): it was reverted.
	TransactionLost
	// TransactionResumed: the session that held an open transaction
	// ended, and the new session on Node took it up with its queued steps.
	TransactionResumed
)

// Notice reports what the client did on its own: interruptions, reconnects,
// restorations and refusals.
type Notice struct {
	Kind   NoticeKind
	Domain string
	Node   string
	Err    error
	Retry  time.Duration
}

// String renders the notice as one line.
func (n Notice) String() string {
	switch n.Kind {
	case Interrupted:
		return fmt.Sprintf("connection lost (%v); reconnecting", n.Err)
	case Reconnected:
		return "reconnected to node '" + n.Node + "'"
	case Restored:
		return "clock of domain '" + n.Domain + "' attached again"
	case RestoreRefused:
		return fmt.Sprintf("attaching the clock of domain '%s' again was refused (%v); retrying in %s", n.Domain, n.Err, n.Retry)
	case TransactionLost:
		return "the open transaction on domain '" + n.Domain + "' was discarded with the lost session"
	case TransactionResumed:
		return "the open transaction on domain '" + n.Domain + "' was taken up again on node '" + n.Node + "'"
	}
	return "notice"
}

func (c *Client) notify(n Notice) {
	if c.cfg.Notify != nil {
		c.cfg.Notify(n)
	}
	c.logger.Debug("client notice", "notice", n.String())
}
