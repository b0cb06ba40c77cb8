package server

import (
	"net/http"
	"strings"

	"github.com/nspl-dev/nspl/wire"
)

// whenOpened answers every route but the peer interconnect 503 until the
// node has opened (Config.Opened is closed), so a process can serve its
// API listener from the first moment of a start that may wait long for a
// quorum: peers reach the member's own handler, which answers for itself
// while it starts, and a client is told to retry instead of reaching a node
// whose catalog is not open. With Config.Opened nil the node is open
// already and h is returned as it is.
func (s *Server) whenOpened(h http.Handler) http.Handler {
	opened := s.cfg.Opened
	if opened == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-opened:
		default:
			if !strings.HasPrefix(r.URL.Path, wire.PeerPrefix) {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "node "+s.cfg.Node.Name()+" is still starting (joining its cluster, or waiting for a quorum); retry shortly", http.StatusServiceUnavailable)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
