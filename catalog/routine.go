package catalog

import (
	"context"
	"log/slog"
	"strings"
)

// routineRaft are the messages raft logs on every election of a healthy
// node, single-node catalogs included: one warning ("heartbeat timeout
// reached", which a single voter hits on every open) and the state changes
// around it. They are routine for an embedded catalog, where nobody else
// could have been elected.
var routineRaft = map[string]bool{
	"heartbeat timeout reached, starting election": true,
	// A lone voter whose vote takes longer than the election timeout (a
	// saturated machine persisting its term) simply votes again.
	"Election timeout reached, restarting election": true,
	"initial configuration":                         true,
	"entering follower state":                       true,
	"entering candidate state":                      true,
	"pre-vote successful, starting election":        true,
	"election won":                                  true,
	"entering leader state":                         true,
}

// RoutineRaftAtDebug returns a handler that passes every record to h, except
// that raft's routine election lines (the raft loggers' "heartbeat timeout
// reached, starting election" warning and the follower, candidate and leader
// transitions around it) are demoted to slog.LevelDebug, so a handler at
// Warn sees none of them on open. Raft's other warnings and errors, and
// every record not from raft, keep their level.
//
// It recognises raft's records by the "logger" attribute this package's
// raft loggers carry ("raft", "raft-net"), so it must wrap the handler of
// the Logger given to Config, not one derived from it.
func RoutineRaftAtDebug(h slog.Handler) slog.Handler { return routineHandler{inner: h} }

type routineHandler struct {
	inner slog.Handler
	raft  bool // the records come from a raft logger
}

func (h routineHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h routineHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.raft && r.Level > slog.LevelDebug && r.Level < slog.LevelError && routineRaft[r.Message] {
		if !h.inner.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.inner.Handle(ctx, r)
}

func (h routineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	raft := h.raft
	for _, a := range attrs {
		if a.Key == "logger" && strings.HasPrefix(a.Value.String(), "raft") {
			raft = true
		}
	}
	return routineHandler{inner: h.inner.WithAttrs(attrs), raft: raft}
}

func (h routineHandler) WithGroup(name string) slog.Handler {
	return routineHandler{inner: h.inner.WithGroup(name), raft: h.raft}
}
