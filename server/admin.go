package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/wire"
)

// adminBodyLimit caps a leave or remove request body.
const adminBodyLimit = 4 << 10

func (s *Server) serveLeave(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeAdmin(w, http.StatusMethodNotAllowed, wire.AdminReply{Error: "use POST"})
		return
	}
	if s.cfg.Cluster == nil {
		writeAdmin(w, http.StatusConflict, wire.AdminReply{Error: "this node is not a cluster member; there is nothing to leave"})
		return
	}
	if err := s.cfg.Cluster.Leave(r.Context()); err != nil {
		writeAdmin(w, http.StatusConflict, wire.AdminReply{Error: err.Error()})
		return
	}
	writeAdmin(w, http.StatusOK, wire.AdminReply{Message: "node '" + s.cfg.Node.Name() + "' left the cluster"})
	_ = http.NewResponseController(w).Flush()
	if l, ok := s.cfg.Cluster.(interface{ Left() }); ok {
		l.Left() // the process that served the node may now stop
	}
}

func (s *Server) serveRemove(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeAdmin(w, http.StatusMethodNotAllowed, wire.AdminReply{Error: "use POST"})
		return
	}
	var req wire.RemoveRequest
	b, err := s.readAdminBody(w, r)
	if err != nil {
		writeAdmin(w, http.StatusRequestTimeout, wire.AdminReply{Error: err.Error()})
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeAdmin(w, http.StatusBadRequest, wire.AdminReply{Error: "body must be {\"node\":\"NAME\"} or {\"node\":\"NAME\",\"force\":true}: " + err.Error()})
		return
	}
	if err := pki.ValidName(req.Node); err != nil {
		writeAdmin(w, http.StatusBadRequest, wire.AdminReply{Error: err.Error()})
		return
	}
	if s.cfg.Cluster == nil {
		writeAdmin(w, http.StatusConflict, wire.AdminReply{Error: "this node is not a cluster member; there is no node to remove"})
		return
	}
	if err := s.cfg.Cluster.Remove(r.Context(), req.Node, req.Force); err != nil {
		writeAdmin(w, http.StatusConflict, wire.AdminReply{Error: err.Error()})
		return
	}
	writeAdmin(w, http.StatusOK, wire.AdminReply{Message: "removed node '" + req.Node + "' from the cluster"})
}

// readAdminBody reads a cluster request's body of at most adminBodyLimit
// bytes, which must arrive whole within Limits.MessageTimeout, like a
// session message: a client that trickles it loses the request instead of
// holding a stream open.
func (s *Server) readAdminBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rc := http.NewResponseController(w)
	timer := s.cfg.TimeSource.NewTimer(s.cfg.Limits.MessageTimeout)
	defer timer.Stop()
	done, expired := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned: ends when the read ends or the timer fires
		defer wg.Done()
		select {
		case <-timer.C():
			close(expired)
			// A deadline in the past fails the blocked read at once.
			_ = rc.SetReadDeadline(time.Unix(1, 0))
		case <-done:
		}
	}()
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, adminBodyLimit))
	close(done)
	wg.Wait()
	select {
	case <-expired:
		return nil, fmt.Errorf("%w: the request body did not arrive within %v; send it whole", ErrMessageTimeout, s.cfg.Limits.MessageTimeout)
	default:
	}
	if err != nil {
		return nil, fmt.Errorf("read the request body (at most %d bytes): %w", adminBodyLimit, err)
	}
	return b, nil
}

func writeAdmin(w http.ResponseWriter, code int, rep wire.AdminReply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(rep)
}
