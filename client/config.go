package client

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"time"

	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/wire"
)

// Backoff of a refused restoration and of reconnecting: one second, doubling
// with each refusal up to thirty seconds.
const (
	InitialBackoff = time.Second
	MaxBackoff     = 30 * time.Second
)

// Defaults of Config.
const (
	// DefaultRequestTimeout bounds a restoration request; one left
	// unanswered longer ends the session, and the next one attaches again.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultCancelGrace bounds the wait for the answer to a cancelled
	// request before the client stops waiting for it.
	DefaultCancelGrace = 5 * time.Second
	// DefaultWriteRetry bounds how long a write whose connection was lost
	// is sent again, under its write id, through reconnects.
	DefaultWriteRetry = 15 * time.Second
	// AbandonCancelled is the CancelGrace that waits for no answer.
	AbandonCancelled time.Duration = -1
)

// Config configures a Client.
type Config struct {
	// URLs are the nodes to connect to, tried in order: https://HOST:PORT,
	// or http://127.0.0.1:PORT for a node serving plain HTTP on loopback.
	URLs []string
	// TLS trusts the cluster CA and, for certificate authentication,
	// presents a client certificate. Nil uses the system roots.
	TLS *tls.Config
	// Token is sent as a bearer token when not empty.
	Token string
	// Transport overrides the HTTP/2 transport built from TLS (tests).
	Transport http.RoundTripper
	// ReadConsistency is what every session's reads promise (see
	// wire.ReadConsistency); empty means the server's default, local.
	ReadConsistency wire.ReadConsistency
	// TimeSource arms backoff and timeout timers; nil means the system's.
	TimeSource timesource.Source
	// Notify receives notices on the client's goroutines; it must not
	// block. Nil drops them.
	Notify func(Notice)
	// RequestTimeout bounds a restoration request; zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// CancelGrace bounds the wait for a cancelled request's answer; zero
	// means DefaultCancelGrace. A negative CancelGrace (AbandonCancelled)
	// waits for none: a cancelled request returns ctx's error at once, its
	// cancel is sent to the server in the background, and its answer, if
	// one comes, is dropped. An interactive shell uses it so Ctrl-C gives
	// the prompt back even when the node does not answer.
	CancelGrace time.Duration
	// WriteRetry bounds, from its first attempt, how long a write
	// (CREATE, ALTER, DROP, START or STOP outside a transaction) whose
	// connection was lost is sent again through reconnects under the
	// same write id, which the cluster applies once; zero means
	// DefaultWriteRetry, and the statement's context may end it sooner.
	// A negative value sends every write once.
	WriteRetry time.Duration
	// Logger receives debug logs; nil means slog.Default().
	Logger *slog.Logger
	// OverwriteArchives lets a BACKUP replace an existing file at its path
	// that is not an nspl archive; without it such a file is refused
	// (backup.ErrNotArchive) and left as it was. A missing file, an empty
	// one or an older archive is always replaced.
	OverwriteArchives bool
}
