package interconnect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/nspl-dev/nspl/catalog"
	"github.com/nspl-dev/nspl/clockrt"
	"github.com/nspl-dev/nspl/clockrt/timesource"
	"github.com/nspl-dev/nspl/lifecycle"
	"github.com/nspl-dev/nspl/pki"
	"github.com/nspl-dev/nspl/wire"
)

// Backend is what the peer handler serves: the node's runtime, catalog
// membership and commit path.
type Backend interface {
	// AcceptProgress evaluates a report from the authenticated node from
	// (clockrt.Registry.AcceptProgress).
	AcceptProgress(from string, rep clockrt.ProgressReport) (bool, error)
	// Join adds the node's raft server as a voter, forwarding to the leader
	// unless forwarded is set (then only the leader may serve it).
	Join(ctx context.Context, forwarded bool, req JoinRequest) error
	// Propose commits a catalog command, forwarding to the leader unless
	// forwarded is set.
	Propose(ctx context.Context, forwarded bool, cmd lifecycle.Command) (lifecycle.Result, error)
	// Remove removes the named node from the cluster, forwarding to the
	// leader unless forwarded is set.
	Remove(ctx context.Context, forwarded bool, name string) error
	// Status answers the health probe; it must be cheap.
	Status() Status
	// Standing reports the committed membership's standing of the node
	// name (see Standing). It must be cheap: every request asks it.
	Standing(name string) (Standing, error)
	// WaitInstalled waits until the node has installed catalog revision
	// rev or a later one, or until ctx or the backend's own bound ends the
	// wait, and returns its installed revision (older than rev when the
	// wait ended first).
	WaitInstalled(ctx context.Context, rev uint64) (uint64, error)
	// InstalledRevision returns the node's incarnation, the catalog
	// revision it has installed (0 before it installed the committed
	// domains since it started) and a channel closed when that revision
	// next changes. It must be cheap and never block: the installed stream
	// asks it after every installation.
	InstalledRevision() (incarnation, revision uint64, changed <-chan struct{}, err error)
	// Registrable returns nil when the node name, not a member, may
	// register the raft server serverID as itself: the server is in the
	// raft configuration, no other registered node claims it, and it is
	// the node's own.
	Registrable(ctx context.Context, name, serverID string) error
}

// Handler serves /v1/peer/ for a Backend. Mount it on the node's API
// listener under PathPrefix; the listener's TLS config must verify client
// certificates against the cluster CA (pki.Material.ServerConfig), since
// every request is refused unless r.TLS carries a verified node
// certificate. Each route then authorizes the certificate's node against
// the committed membership (see Standing and the rules beside it) before
// the Backend sees the request.
type Handler struct {
	backend Backend
	metrics *Metrics
	logger  *slog.Logger
	mux     *http.ServeMux

	src       timesource.Source
	heartbeat time.Duration

	waitsMu sync.Mutex
	waits   map[string]int // caller → installed waits in flight
	streams map[string]int // caller → installed streams open
}

// MaxInstalledWaitsPerCaller caps the installed waits one node may hold open
// on another at once: each write of its statements holds one per peer until
// the peer installs, so a handful covers concurrent statements, and a
// member cannot tie up the receiver's handlers without bound.
const MaxInstalledWaitsPerCaller = 32

// NewHandler returns the peer handler. metrics may be nil; logger nil means
// slog.Default().
func NewHandler(b Backend, metrics *Metrics, logger *slog.Logger) *Handler {
	if metrics == nil {
		metrics = &Metrics{}
	}
	if logger == nil {
		logger = slog.Default()
	}
	h := &Handler{backend: b, metrics: metrics, logger: logger, mux: http.NewServeMux(),
		src: timesource.System(), heartbeat: DefaultStreamHeartbeat, waits: make(map[string]int), streams: make(map[string]int)}
	h.mux.HandleFunc("POST "+PathProgress, h.progress)
	h.mux.HandleFunc("POST "+PathJoin, h.join)
	h.mux.HandleFunc("POST "+PathPropose, h.propose)
	h.mux.HandleFunc("GET "+PathStatus, h.status)
	h.mux.HandleFunc("POST "+PathRemove, h.remove)
	h.mux.HandleFunc("POST "+PathInstalled, h.installed)
	h.mux.HandleFunc("GET "+PathInstalledStream, h.installedStream)
	return h
}

// WithStreamClock makes the installed stream's heartbeat run on src every
// heartbeat (DefaultStreamHeartbeat when 0) instead of the system clock
// every DefaultStreamHeartbeat, and returns h. Call it before serving.
func (h *Handler) WithStreamClock(src timesource.Source, heartbeat time.Duration) *Handler {
	h.src = src
	if heartbeat > 0 {
		h.heartbeat = heartbeat
	}
	return h
}

// ServeHTTP authenticates the calling node and routes the request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.TLS == nil {
		h.forbid(w, r, "", fmt.Errorf("%w: the request did not arrive over TLS", ErrForbidden))
		return
	}
	name, err := pki.PeerName(*r.TLS)
	if err != nil {
		h.forbid(w, r, "", fmt.Errorf("%w: %v", ErrForbidden, err))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerKey{}, name)))
}

type peerKey struct{}

func peerOf(r *http.Request) string { s, _ := r.Context().Value(peerKey{}).(string); return s }

// forbid answers a refused caller with err (ErrForbidden), counts and logs
// the refusal.
func (h *Handler) forbid(w http.ResponseWriter, r *http.Request, caller string, err error) {
	h.refused(r, caller, err)
	writeError(w, http.StatusForbidden, err)
}

// countBackendRefusal counts and logs a refusal the Backend itself decided
// (ErrForbidden that no other node answered with).
func (h *Handler) countBackendRefusal(r *http.Request, caller string, err error) {
	var re *wire.RemoteError
	if errors.Is(err, ErrForbidden) && !errors.As(err, &re) {
		h.refused(r, caller, err)
	}
}

// refused counts and logs one refused request.
func (h *Handler) refused(r *http.Request, caller string, err error) {
	h.metrics.Forbidden.Add(1)
	h.logger.Warn("peer request refused", "path", r.URL.Path, "caller", caller, "remote", r.RemoteAddr, "err", err)
}

// standing reads the caller's standing; false when it could not be read
// (the reply has been written).
func (h *Handler) standing(w http.ResponseWriter, caller string) (Standing, bool) {
	st, err := h.backend.Standing(caller)
	if err != nil {
		writeError(w, statusOf(err), err)
		return Standing{}, false
	}
	return st, true
}

// member authorizes a route open to members only; false when refused (the
// reply has been written).
func (h *Handler) member(w http.ResponseWriter, r *http.Request) bool {
	caller := peerOf(r)
	st, ok := h.standing(w, caller)
	if !ok {
		return false
	}
	if err := authorizeMember(caller, st, r.URL.Path); err != nil {
		h.forbid(w, r, caller, err)
		return false
	}
	return true
}

// progress serves PathProgress. Caller: a member, and the report must
// match the committed fence, which names the caller as the authority.
func (h *Handler) progress(w http.ResponseWriter, r *http.Request) {
	if !h.member(w, r) {
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("%w: %v", ErrBadRequest, err))
		return
	}
	p, err := DecodeProgress(b)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	from := peerOf(r)
	newer, err := h.backend.AcceptProgress(from, p.Report())
	st := h.backend.Status()
	reply := ProgressReply{Outcome: OutcomeAccepted, Incarnation: st.Incarnation, AdvertisedRevision: st.AdvertisedRevision}
	switch {
	case errors.Is(err, clockrt.ErrImplausibleProgress):
		// The authority's own certificate, but a report it could not
		// have produced honestly; the backend logs these once per window.
		reply.Outcome, reply.Reason = OutcomeRefused, err.Error()
		h.metrics.ProgressImplausible.Add(1)
	case err != nil:
		reply.Outcome, reply.Reason = OutcomeRefused, err.Error()
		h.metrics.ProgressRefused.Add(1)
		h.logger.Debug("progress refused", "from", from, "domain", p.Domain, "tick", p.Tick, "err", err)
	case !newer:
		reply.Outcome = OutcomeIgnored
		h.metrics.ProgressIgnored.Add(1)
	default:
		h.metrics.ProgressAccepted.Add(1)
	}
	writeJSON(w, http.StatusOK, reply)
}

// join serves PathJoin. Caller: the joining node itself, or a current
// voter forwarding a join whose caller it checked was the joining node.
// The forwarding header counts only from a voter.
func (h *Handler) join(w http.ResponseWriter, r *http.Request) {
	var req JoinRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	forwarded := r.Header.Get(forwardedHeader) != ""
	caller := peerOf(r)
	var st Standing
	if forwarded {
		var ok bool
		if st, ok = h.standing(w, caller); !ok {
			return
		}
	}
	if err := authorizeJoin(caller, st, forwarded, req); err != nil {
		h.forbid(w, r, caller, err)
		return
	}
	if err := h.backend.Join(r.Context(), forwarded, req); err != nil {
		h.countBackendRefusal(r, caller, err)
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// remove serves PathRemove. Caller: a member.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request) {
	if !h.member(w, r) {
		return
	}
	var req RemoveRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	if err := h.backend.Remove(r.Context(), r.Header.Get(forwardedHeader) != "", req.Name); err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, struct{}{})
}

// propose serves PathPropose. Caller: a member; a node that is not yet a
// member only for its own registration (authorizePropose).
func (h *Handler) propose(w http.ResponseWriter, r *http.Request) {
	caller := peerOf(r)
	st, err := h.backend.Standing(caller)
	if err != nil {
		writeJSON(w, statusOf(err), ProposeReply{Error: remoteErrorOf(err)})
		return
	}
	var req ProposeRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, ProposeReply{Error: remoteErrorOf(err)})
		return
	}
	cmd, err := lifecycle.DecodeCommand(req.Command)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, ProposeReply{Error: remoteErrorOf(err)})
		return
	}
	registrable := func(name, serverID string) error { return h.backend.Registrable(r.Context(), name, serverID) }
	if err := authorizePropose(caller, st, cmd, registrable); err != nil {
		h.refused(r, caller, err)
		writeJSON(w, http.StatusForbidden, ProposeReply{Error: remoteErrorOf(err)})
		return
	}
	res, err := h.backend.Propose(r.Context(), r.Header.Get(forwardedHeader) != "", cmd)
	if err != nil {
		if r.Context().Err() != nil && wire.CodeOf(err) == "" {
			// The request was cancelled on this side, the process
			// stopping, before the command reached raft (once it has, the
			// catalog says the outcome is unknown): to the forwarder this
			// is a leader that is going away, which it retries through the
			// next one, not a failure of the statement.
			err = fmt.Errorf("%w: the node is stopping (%w)", catalog.ErrShutdown, err)
		}
		writeJSON(w, statusOf(err), ProposeReply{Error: remoteErrorOf(err)})
		return
	}
	writeJSON(w, http.StatusOK, ProposeReply{Result: &res})
}

// installed serves PathInstalled. Caller: a member, with at most
// MaxInstalledWaitsPerCaller waits in flight.
func (h *Handler) installed(w http.ResponseWriter, r *http.Request) {
	if !h.member(w, r) {
		return
	}
	var req InstalledRequest
	if err := decodeStrict(r.Body, &req); err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	caller := peerOf(r)
	if !h.acquire(h.waits, caller, MaxInstalledWaitsPerCaller) {
		h.refused(r, caller, ErrBusy)
		writeError(w, http.StatusTooManyRequests, fmt.Errorf("%w: node %q already holds %d installed waits on this node", ErrBusy, caller, MaxInstalledWaitsPerCaller))
		return
	}
	defer h.release(h.waits, caller)
	rev, err := h.backend.WaitInstalled(r.Context(), req.Revision)
	if err != nil && rev == 0 {
		writeError(w, statusOf(err), err)
		return
	}
	writeJSON(w, http.StatusOK, InstalledReply{Installed: rev >= req.Revision, AdvertisedRevision: rev})
}

// acquire takes one of caller's limit slots in held (h.waits or
// h.streams); false when it holds them all.
func (h *Handler) acquire(held map[string]int, caller string, limit int) bool {
	h.waitsMu.Lock()
	defer h.waitsMu.Unlock()
	if held[caller] >= limit {
		return false
	}
	held[caller]++
	return true
}

func (h *Handler) release(held map[string]int, caller string) {
	h.waitsMu.Lock()
	defer h.waitsMu.Unlock()
	if held[caller]--; held[caller] <= 0 {
		delete(held, caller)
	}
}

// status serves PathStatus. Caller: a member.
func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	if !h.member(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, h.backend.Status())
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrBadRequest), errors.Is(err, lifecycle.ErrInvalidCommand), errors.Is(err, lifecycle.ErrUnknownNode):
		return http.StatusBadRequest
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, catalog.ErrNotLeader), errors.Is(err, catalog.ErrLeadershipUnconfirmed),
		errors.Is(err, catalog.ErrShutdown), errors.Is(err, catalog.ErrTimeout):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, ErrorReply{Error: remoteErrorOf(err)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"reply does not encode"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
