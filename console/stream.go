package console

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/session"
	"github.com/nspl-dev/nspl/wire"
)

// eventStream writes Server-Sent Events. Its methods are serialised by mu;
// after a failed write it writes nothing more.
type eventStream struct {
	mu  sync.Mutex
	w   io.Writer
	rc  *http.ResponseController
	err error
}

// openStream answers r with an event stream.
func openStream(w http.ResponseWriter) *eventStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	es := &eventStream{w: w, rc: http.NewResponseController(w)}
	es.comment("nspl console")
	return es
}

// send writes one event whose data is v as JSON, and flushes it.
func (es *eventStream) send(event string, v any) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.sendLocked(event, v)
}

func (es *eventStream) sendLocked(event string, v any) error {
	if es.err != nil {
		return es.err
	}
	b, err := json.Marshal(v)
	if err != nil {
		es.err = err
		return err
	}
	return es.sendRawLocked(event, b)
}

// sendRaw writes one event whose data is b, one line of JSON, and flushes
// it.
func (es *eventStream) sendRaw(event string, b []byte) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.sendRawLocked(event, b)
}

func (es *eventStream) sendRawLocked(event string, b []byte) error {
	if es.err != nil {
		return es.err
	}
	// JSON has no raw newline, so the data is one line.
	msg := make([]byte, 0, len(event)+len(b)+16)
	msg = append(msg, "event: "...)
	msg = append(msg, event...)
	msg = append(msg, "\ndata: "...)
	msg = append(msg, b...)
	msg = append(msg, "\n\n"...)
	if _, err := es.w.Write(msg); err != nil {
		es.err = err
		return err
	}
	if err := es.rc.Flush(); err != nil {
		es.err = err
	}
	return es.err
}

// errStreamEnded is the error of a write to a stream whose request ended.
var errStreamEnded = errors.New("the event stream has ended")

// shut makes every later write fail: once the stream's handler returns,
// its ResponseWriter may not be used, and a statement submitted to a
// statement box may still be sending to it.
func (es *eventStream) shut() {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.err == nil {
		es.err = errStreamEnded
	}
}

// comment writes an SSE comment line, the heartbeat browsers ignore.
func (es *eventStream) comment(text string) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.err != nil {
		return es.err
	}
	if _, err := io.WriteString(es.w, ": "+text+"\n\n"); err != nil {
		es.err = err
		return err
	}
	if err := es.rc.Flush(); err != nil {
		es.err = err
	}
	return es.err
}

// hello is the first event of every stream.
type hello struct {
	Node     string `json:"node"`
	UTC      string `json:"utc_ns"`
	Identity string `json:"identity"`
	Key      string `json:"key,omitempty"`
}

// liveSession is one admitted console session with its event stream: its
// heartbeat runs until close.
type liveSession struct {
	ctx    context.Context // ends with the stream
	cancel context.CancelFunc
	sess   *session.Session
	es     *eventStream
	close  func()
}

// begin admits one console session for r through the host, opens its
// event stream and its session and starts its heartbeat; the caller sends
// the hello once it is ready to be used. When it returns ok, the caller must
// call close once done; close ends the heartbeat and the session and
// releases the admission.
func (c *Console) begin(w http.ResponseWriter, r *http.Request) (*liveSession, bool) {
	p := caller(r)
	ctx, release, ok := c.cfg.Host.Begin(w, r, p.identity)
	if !ok {
		return nil, false
	}
	ctx, cancel := context.WithCancel(ctx)
	ls := &liveSession{ctx: ctx, cancel: cancel, sess: c.newSession(p.identity), es: openStream(w)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owned: ends with ctx, which close cancels
		defer wg.Done()
		c.keepAlive(ctx, cancel, p, ls.es)
	}()
	ls.close = func() {
		cancel()
		ls.es.shut()
		wg.Wait()
		_ = ls.sess.Close()
		release()
	}
	return ls, true
}

// maxDomainParam bounds the ?domain= a page or stream names.
const maxDomainParam = 1024

// domainParam returns r's ?domain=, answering 400 and ok false when it is
// too long, or missing and required.
func domainParam(w http.ResponseWriter, r *http.Request, required bool) (string, bool) {
	domain := r.URL.Query().Get("domain")
	if len(domain) > maxDomainParam || required && domain == "" {
		http.Error(w, fmt.Sprintf("name the domain as ?domain=NAME, at most %d bytes", maxDomainParam), http.StatusBadRequest)
		return "", false
	}
	return domain, true
}

// likeParam reads the watch's filter, ?like=PATTERN, a LIKE pattern of the
// domain names the domain list and the cluster status show ("" when
// absent: every domain). A pattern LIST DOMAINS LIKE would refuse is
// refused with its message.
func likeParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	text := r.URL.Query().Get("like")
	if text == "" {
		return "", true
	}
	like, err := grammar.ParseLikePattern(text)
	if err != nil {
		http.Error(w, "filter the domains as ?like=PATTERN: "+err.Error(), http.StatusBadRequest)
		return "", false
	}
	return like, true
}

// open is begin followed by the hello of a stream without a key.
func (c *Console) open(w http.ResponseWriter, r *http.Request) (*liveSession, bool) {
	ls, ok := c.begin(w, r)
	if !ok {
		return nil, false
	}
	if ls.hello(c, r, "") != nil {
		ls.close()
		return nil, false
	}
	return ls, true
}

// hello sends the stream's first event.
func (ls *liveSession) hello(c *Console, r *http.Request, key string) error {
	return ls.es.send("hello", c.hello(caller(r), key))
}

// keepAlive writes a heartbeat every HeartbeatInterval and ends the stream
// (cancel) once the caller's login has ended or a write fails. It returns
// when ctx ends.
func (c *Console) keepAlive(ctx context.Context, cancel context.CancelFunc, p principal, es *eventStream) {
	t := c.cfg.TimeSource.NewTimer(HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if !c.stillLoggedIn(p) {
			_ = es.send("logout", struct{}{})
			cancel()
			return
		}
		if err := es.send("utc", struct {
			UTC string `json:"utc_ns"`
		}{strconv.FormatInt(c.now(), 10)}); err != nil {
			cancel()
			return
		}
		t.Reset(HeartbeatInterval)
	}
}

// stillLoggedIn reports whether p's login has neither expired nor been
// logged out.
func (c *Console) stillLoggedIn(p principal) bool {
	if !p.cookie {
		return true
	}
	if c.now() >= p.expires {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.logouts.refused(p.login[len("login "):], p.expires-int64(c.cfg.LoginLifetime))
}

func (c *Console) hello(p principal, key string) hello {
	return hello{Node: c.cfg.Node, UTC: strconv.FormatInt(c.now(), 10), Identity: p.identity, Key: key}
}

// views is what a watch stream sends: the domain list, the selected
// domain's description and the cluster status.
type views struct {
	Domains     *viewTable `json:"domains"`
	More        int        `json:"more,omitempty"`
	Domain      string     `json:"domain,omitempty"`
	Describe    *table     `json:"describe,omitempty"`
	DescribeErr string     `json:"describe_error,omitempty"`
	// Gone reports that the selected domain is not in the catalog (it was
	// dropped, or never was): the page says so in its own words.
	Gone       bool         `json:"gone,omitempty"`
	Cluster    *clusterView `json:"cluster,omitempty"`
	ClusterErr string       `json:"cluster_error,omitempty"`
	Revision   string       `json:"revision"`
	ListErr    string       `json:"list_error,omitempty"`

	installCount uint64
}

// readViews reads every view on sess. The domain list and the selected
// domain change only with an installation: when prev was read at the same
// installation, they are taken from it and only the cluster status is
// read again.
func (c *Console) readViews(ctx context.Context, sess *session.Session, domain, like string, prev *views) views {
	count, rev, _ := c.cfg.Engine.Installed()
	v := views{Domain: domain, Revision: strconv.FormatUint(rev, 10), installCount: count}
	if prev != nil && prev.installCount == count && prev.Domain == domain {
		v.Domains, v.More, v.ListErr, v.Describe, v.DescribeErr, v.Gone = prev.Domains, prev.More, prev.ListErr, prev.Describe, prev.DescribeErr, prev.Gone
	} else {
		list, more, err := domainList(ctx, sess, like)
		if err != nil {
			v.ListErr = errorText(err)
		}
		v.Domains, v.More = listView(list), more
		if domain != "" {
			v.Describe, v.DescribeErr, v.Gone = describe(ctx, sess, domain)
		}
	}
	cluster, clusterErr := clusterStatus(ctx, sess, like)
	v.Cluster, v.ClusterErr = newClusterView(cluster), clusterErr
	return v
}

// serveWatch streams the views: at once, after every installation and
// every RefreshInterval, each time something in them changed.
func (c *Console) serveWatch(w http.ResponseWriter, r *http.Request) {
	domain, ok := domainParam(w, r, false)
	if !ok {
		return
	}
	like, ok := likeParam(w, r)
	if !ok {
		return
	}
	ls, ok := c.open(w, r)
	if !ok {
		return
	}
	defer ls.close()
	ctx, sess, es := ls.ctx, ls.sess, ls.es
	t := c.cfg.TimeSource.NewTimer(RefreshInterval)
	defer t.Stop()
	var last []byte
	var prev *views
	for {
		_, _, changed := c.cfg.Engine.Installed()
		v := c.readViews(ctx, sess, domain, like, prev)
		if ctx.Err() != nil {
			return
		}
		prev = &v
		if b, _ := json.Marshal(v); string(b) != string(last) {
			if es.send("views", v) != nil {
				return
			}
			last = b
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
			if !t.Stop() {
				select {
				case <-t.C():
				default:
				}
			}
		case <-t.C():
		}
		t.Reset(RefreshInterval)
	}
}

// serveClock attaches to one domain's clock in a session of its own and
// streams what the session delivers: the attach reply as "attached" (or
// "refused"), then every frame as "frame", until the attachment ends, the
// stream closes or the login ends.
func (c *Console) serveClock(w http.ResponseWriter, r *http.Request) {
	domain, ok := domainParam(w, r, true)
	if !ok {
		return
	}
	ls, ok := c.open(w, r)
	if !ok {
		return
	}
	defer ls.close()
	ctx, sess, es := ls.ctx, ls.sess, ls.es
	// The session's stream: the two replies, then the attachment's frames,
	// the only ones of this session.
	var res wire.Result
	var err error
	for id, p := range []planner.Plan{planner.Use{Name: domain}, planner.Attach{}} {
		if err = sess.Submit(ctx, session.Request{ID: uint64(id + 1), Plan: p}); err != nil {
			break
		}
		var ev session.Event
		if ev, err = sess.Next(ctx); err == nil {
			res, err = ev.Result, ev.Err
		}
		if err != nil {
			break
		}
	}
	if err == nil && res.Clock == nil {
		err = errors.New("the node's attach reply carried no clock")
	}
	if err != nil {
		if ctx.Err() == nil {
			_ = es.send("refused", struct {
				Message string `json:"message"`
			}{errorText(err)})
		}
		return
	}
	attached := struct {
		Domain     string   `json:"domain"`
		Attachment uint64   `json:"attachment"`
		Clock      observed `json:"clock"`
		Message    string   `json:"message"`
	}{res.Domain, res.Attachment, newObserved(*res.Clock), res.Message}
	if es.send("attached", attached) != nil {
		return
	}
	for {
		ev, err := sess.Next(ctx)
		if err != nil {
			return
		}
		f := ev.Frame
		if es.send("frame", newFrameView(f)) != nil || f.Kind == wire.FrameEnd {
			return
		}
	}
}

// repl is one statement box's session: its event stream carries the
// outcome of every statement run in it, and its frames, in the session's
// order, which its loop forwards (serveRepl).
type repl struct {
	key    string
	login  string
	ctx    context.Context // ends with the stream
	sess   *session.Session
	es     *eventStream
	cancel context.CancelFunc
	runMu  sync.Mutex // one submission at a time
}

// serveRepl opens a statement box's session and streams it; the page runs
// statements in it by POSTing them to api/exec with the key of the hello.
func (c *Console) serveRepl(w http.ResponseWriter, r *http.Request) {
	p := caller(r)
	if !c.reserveRepl(p.login) {
		http.Error(w, fmt.Sprintf("this login already holds %d statement sessions; close a console tab", MaxReplSessions), http.StatusTooManyRequests)
		return
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	key := base64.RawURLEncoding.EncodeToString(raw[:])
	ls, ok := c.begin(w, r)
	if !ok {
		c.releaseRepl(p.login)
		return
	}
	defer ls.close()
	defer c.releaseRepl(p.login) // before the listener's share is given back
	rp := &repl{key: key, login: p.login, ctx: ls.ctx, sess: ls.sess, es: ls.es, cancel: ls.cancel}
	c.mu.Lock()
	c.repls[rp.key] = rp
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.repls, rp.key)
		c.mu.Unlock()
	}()
	if ls.hello(c, r, key) != nil {
		return
	}
	rp.forward()
}

// forward sends the session's stream on the statement box's event stream,
// in its order: each frame, and each submitted statement's outcome
// (answerReply), until the stream or a write ends.
func (rp *repl) forward() {
	for {
		ev, err := rp.sess.Next(rp.ctx)
		if err != nil {
			return
		}
		switch ev.Kind {
		case session.EventFrame:
			err = rp.es.send("frame", newFrameView(ev.Frame))
		case session.EventReply:
			if sub, ok := ev.Tag.(*submission); ok {
				err = rp.answerReply(sub, ev)
			}
		}
		if err != nil {
			return
		}
	}
}

// reserveRepl takes one of login's MaxReplSessions statement sessions,
// counted and checked under one lock before the session is admitted, so
// that concurrent opens cannot all pass the check; false when login holds
// them all. releaseRepl gives the reservation back.
func (c *Console) reserveRepl(login string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[login] >= MaxReplSessions {
		return false
	}
	c.held[login]++
	return true
}

// releaseRepl returns a reservation of reserveRepl, forgetting a login that
// holds none so the table is bounded by the logins that hold sessions.
func (c *Console) releaseRepl(login string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[login] <= 1 {
		delete(c.held, login)
		return
	}
	c.held[login]--
}

// endRepls ends every statement-box session of login.
func (c *Console) endRepls(login string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rp := range c.repls {
		if rp.login == login {
			rp.cancel()
		}
	}
}
