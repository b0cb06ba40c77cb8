package follow

import (
	"github.com/nspl-dev/nspl/wire"
)

// Sentinel errors of attachments, as a session refuses them and a reader
// of its replies tells them apart. They are declared here, below session,
// because the remote client acts on them (a DETACH refused as not attached
// may still end a pending restoration) without linking a server-side
// session; session.ErrAlreadyAttached and session.ErrNotAttached are these
// values.
var (
	// ErrAlreadyAttached: ATTACH DOMAIN CLOCK for a domain the session
	// already follows.
	ErrAlreadyAttached = wire.NewSentinel("already_attached", "session already follows the domain clock")
	// ErrNotAttached: DETACH DOMAIN CLOCK for a domain the session does not
	// follow.
	ErrNotAttached = wire.NewSentinel("not_attached", "session does not follow the domain clock")
)

// Sentinels returns the package's coded sentinels, for the module's one
// code table.
func Sentinels() []error { return []error{ErrAlreadyAttached, ErrNotAttached} }

// Attachments is the attach bookkeeping of a reader of frames: the
// attachment of each domain it still holds. An attach reply records one
// (Attached), a detach reply releases it (Released), and a frame of any
// other attachment, one already released or replaced, is not the reader's
// (Admits). The zero value holds nothing. It is not safe for concurrent
// use: its owner serialises it with the replies and frames it orders.
type Attachments struct {
	live map[string]uint64
}

// Attached records that domain is held as attachment id, replacing an
// earlier attachment of it.
func (a *Attachments) Attached(domain string, id uint64) {
	if a.live == nil {
		a.live = make(map[string]uint64)
	}
	a.live[domain] = id
}

// Released forgets the attachment of domain.
func (a *Attachments) Released(domain string) { delete(a.live, domain) }

// Admits reports whether f is a frame of a held attachment. An end frame it
// admits releases that attachment, so nothing more of it is admitted.
func (a *Attachments) Admits(f wire.Frame) bool {
	id, ok := a.live[f.Domain]
	if !ok || id != f.Attachment {
		return false
	}
	if f.Kind == wire.FrameEnd {
		delete(a.live, f.Domain)
	}
	return true
}
