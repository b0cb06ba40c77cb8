package interconnect

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// The installed stream: a member subscribes to another member's installed
// catalog revision once, and the other member pushes every revision it
// installs over one long-lived HTTP/2 response, so a statement's completion
// boundary waits on what it has already been told instead of asking each
// peer per statement (see InstalledWatch).
const (
	// InstalledType is the type tag of an installed stream update.
	InstalledType = "installed_revision"
	// MaxInstalledUpdateBytes caps one update line of the installed
	// stream, its newline included.
	MaxInstalledUpdateBytes = 256
	// MaxInstalledStreamsPerCaller caps the installed streams one node may
	// hold open on another at once: it needs one, and one more covers a
	// reconnect that overlaps a stream the receiver has not yet seen end.
	MaxInstalledStreamsPerCaller = 2
	// DefaultStreamHeartbeat is how long the installed stream stays quiet
	// at most: with no installation meanwhile, the receiver sends its
	// installed revision again, and checks again that the subscriber is a
	// member.
	DefaultStreamHeartbeat = time.Second
)

// InstalledUpdate is one line of the installed stream: the sending node's
// incarnation and the catalog revision it has installed (0 until it has
// installed the committed domains since it started). The sending node is
// not in the line: the subscriber knows whom it asked, and the TLS
// connection proves it.
type InstalledUpdate struct {
	Type        string `json:"type"`
	Incarnation uint64 `json:"incarnation"`
	Revision    uint64 `json:"revision"`
}

// DecodeInstalledUpdate decodes and checks one update line (without its
// newline).
func DecodeInstalledUpdate(b []byte) (InstalledUpdate, error) {
	var u InstalledUpdate
	if len(b) >= MaxInstalledUpdateBytes {
		return u, fmt.Errorf("%w: installed update is larger than %d bytes", ErrBadRequest, MaxInstalledUpdateBytes)
	}
	if err := decodeBytes(b, &u); err != nil {
		return InstalledUpdate{}, err
	}
	if u.Type != InstalledType {
		return InstalledUpdate{}, fmt.Errorf("%w: type %q is not %q", ErrBadRequest, u.Type, InstalledType)
	}
	if u.Incarnation == 0 {
		return InstalledUpdate{}, fmt.Errorf("%w: the installed update names no incarnation", ErrBadRequest)
	}
	return u, nil
}

// installedStream serves PathInstalledStream. Caller: a member, holding
// at most MaxInstalledStreamsPerCaller streams; the membership is checked
// again at every heartbeat, and the stream ends when the caller is no
// longer a member. The handler never queues: after each write it reads the
// newest installed revision, so a slow subscriber receives fewer, newer
// updates and never holds up an installation.
func (h *Handler) installedStream(w http.ResponseWriter, r *http.Request) {
	if !h.member(w, r) {
		return
	}
	caller := peerOf(r)
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, errors.New("the peer listener cannot stream; serve it over HTTP/2"))
		return
	}
	if !h.acquire(h.streams, caller, MaxInstalledStreamsPerCaller) {
		h.refused(r, caller, ErrBusy)
		writeError(w, http.StatusTooManyRequests, fmt.Errorf("%w: node %q already holds %d installed streams on this node", ErrBusy, caller, MaxInstalledStreamsPerCaller))
		return
	}
	defer h.release(h.streams, caller)
	inc, rev, changed, err := h.backend.InstalledRevision()
	if err != nil {
		writeError(w, statusOf(err), err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	t := h.src.NewTimer(h.heartbeat)
	defer t.Stop()
	line := make([]byte, 0, MaxInstalledUpdateBytes)
	for {
		t.Reset(h.heartbeat) // before the write: a reader that got it sees the heartbeat armed
		line = appendInstalledUpdate(line[:0], inc, rev)
		if _, err := w.Write(line); err != nil {
			return
		}
		fl.Flush()
		sent := rev
		for again := false; !again; {
			select {
			case <-r.Context().Done():
				return
			case <-changed:
			case <-t.C():
				st, err := h.backend.Standing(caller)
				if err == nil {
					err = authorizeMember(caller, st, PathInstalledStream)
				}
				if err != nil {
					h.logger.Info("installed stream ended", "caller", caller, "err", err)
					return
				}
				again = true // the heartbeat sends the same revision again
			}
			if inc, rev, changed, err = h.backend.InstalledRevision(); err != nil {
				return
			}
			again = again || rev != sent
		}
	}
}

// appendInstalledUpdate appends the update line of (inc, rev) to b.
func appendInstalledUpdate(b []byte, inc, rev uint64) []byte {
	v, _ := json.Marshal(InstalledUpdate{Type: InstalledType, Incarnation: inc, Revision: rev})
	return append(append(b, v...), '\n')
}

// InstalledStream is an open installed stream from one peer. Next and
// Close are used by one goroutine.
type InstalledStream struct {
	body io.ReadCloser
	rd   *bufio.Reader
}

// InstalledStream subscribes to the installed revision of the node at
// addr. The stream lasts until ctx ends, Close, or the peer or the
// connection ends it.
func (c *Client) InstalledStream(ctx context.Context, addr string) (*InstalledStream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+PathInstalledStream, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrUnreachable, addr, err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnreachable, addr, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: read reply: %v", ErrUnreachable, addr, err)
		}
		return nil, replyError(addr, resp.Status, b)
	}
	return &InstalledStream{body: resp.Body, rd: bufio.NewReaderSize(resp.Body, MaxInstalledUpdateBytes)}, nil
}

// Next returns the next update; an error ends the stream.
func (s *InstalledStream) Next() (InstalledUpdate, error) {
	line, err := s.rd.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return InstalledUpdate{}, fmt.Errorf("%w: installed update is larger than %d bytes", ErrBadRequest, MaxInstalledUpdateBytes)
	case err != nil:
		return InstalledUpdate{}, fmt.Errorf("%w: installed stream: %v", ErrUnreachable, err)
	}
	return DecodeInstalledUpdate(line[:len(line)-1])
}

// Close ends the stream.
func (s *InstalledStream) Close() error { return s.body.Close() }
