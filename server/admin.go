package server

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/nspl-dev/nspl/pki"
)

// adminBodyLimit caps a leave or remove request body.
const adminBodyLimit = 4 << 10

// RemoveRequest is the body of a POST to RemovePath.
type RemoveRequest struct {
	Node string `json:"node"`
}

// AdminReply is the body of a leave or remove answer.
type AdminReply struct {
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (s *Server) serveLeave(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeAdmin(w, http.StatusMethodNotAllowed, AdminReply{Error: "use POST"})
		return
	}
	if s.cfg.Cluster == nil {
		writeAdmin(w, http.StatusConflict, AdminReply{Error: "this node is not a cluster member; there is nothing to leave"})
		return
	}
	if err := s.cfg.Cluster.Leave(r.Context()); err != nil {
		writeAdmin(w, http.StatusConflict, AdminReply{Error: err.Error()})
		return
	}
	writeAdmin(w, http.StatusOK, AdminReply{Message: "node '" + s.cfg.Node.Name() + "' left the cluster"})
	_ = http.NewResponseController(w).Flush()
	if l, ok := s.cfg.Cluster.(interface{ Left() }); ok {
		l.Left() // the process that served the node may now stop
	}
}

func (s *Server) serveRemove(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeAdmin(w, http.StatusMethodNotAllowed, AdminReply{Error: "use POST"})
		return
	}
	var req RemoveRequest
	body := http.MaxBytesReader(w, r.Body, adminBodyLimit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeAdmin(w, http.StatusBadRequest, AdminReply{Error: "body must be {\"node\":\"NAME\"}: " + err.Error()})
		return
	}
	_, _ = io.Copy(io.Discard, body)
	if err := pki.ValidName(req.Node); err != nil {
		writeAdmin(w, http.StatusBadRequest, AdminReply{Error: err.Error()})
		return
	}
	if s.cfg.Cluster == nil {
		writeAdmin(w, http.StatusConflict, AdminReply{Error: "this node is not a cluster member; there is no node to remove"})
		return
	}
	if err := s.cfg.Cluster.Remove(r.Context(), req.Node); err != nil {
		writeAdmin(w, http.StatusConflict, AdminReply{Error: err.Error()})
		return
	}
	writeAdmin(w, http.StatusOK, AdminReply{Message: "removed node '" + req.Node + "' from the cluster"})
}

func writeAdmin(w http.ResponseWriter, code int, rep AdminReply) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(rep)
}
