package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/nspl-dev/nspl/grammar"
	"github.com/nspl-dev/nspl/planner"
	"github.com/nspl-dev/nspl/record"
	"github.com/nspl-dev/nspl/wire"
)

// The domain page's lifecycle buttons (START, STOP, DROP) run their
// statements in a session of their own, not in the statement box: the
// operator typed none of them, so a refusal is answered in the console's
// own words, with no line, column or caret under a statement they never
// saw, and the statement box's active domain stays the operator's.

// Domain actions a button asks for.
const (
	actionStart = "start"
	actionStop  = "stop"
	actionDrop  = "drop"
)

// actionRequest is a button's POST to api/domain.
type actionRequest struct {
	Domain string `json:"domain"`
	Action string `json:"action"`
}

// actionAnswer is api/domain's answer: the node's reply, or the refusal in
// the console's words with its code.
type actionAnswer struct {
	Message string `json:"message,omitempty"`
	Error   string `json:"error,omitempty"`
	Code    string `json:"code,omitempty"`
}

// actionPlans is the statements of action on domain: USE and START (a
// plain START;, which resumes), USE and STOP, or DROP DOMAIN. They are
// built as plans, not text, so any name the catalog holds is acted on.
func actionPlans(action, domain string) ([]planner.Plan, bool) {
	switch action {
	case actionStart:
		return []planner.Plan{planner.Use{Name: domain}, planner.Start{Mode: planner.StartResume, Rate: planner.DefaultRate}}, true
	case actionStop:
		return []planner.Plan{planner.Use{Name: domain}, planner.Stop{}}, true
	case actionDrop:
		return []planner.Plan{planner.DropDomain{Name: domain}}, true
	}
	return nil, false
}

// serveDomainAction runs one button's action on one domain and answers
// 200 with the node's reply, or 409 with the refusal in the console's
// words (actionWords).
func (c *Console) serveDomainAction(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxDomainParam+256)
	var req actionRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, actionAnswer{Error: `the body must be one JSON object {"domain":…,"action":"start"|"stop"|"drop"}`})
		return
	}
	if req.Domain == "" || len(req.Domain) > maxDomainParam {
		writeJSON(w, http.StatusBadRequest, actionAnswer{Error: fmt.Sprintf("name the domain, at most %d bytes", maxDomainParam)})
		return
	}
	plans, ok := actionPlans(req.Action, req.Domain)
	if !ok {
		writeJSON(w, http.StatusBadRequest, actionAnswer{Error: `the action is one of "start", "stop" and "drop"`})
		return
	}
	var err error
	sess := c.newSession(caller(r).identity)
	defer sess.Close()
	var res wire.Result
	for _, pl := range plans {
		c.statements.Add(1)
		if res, err = sess.Exec(r.Context(), pl); err != nil {
			writeJSON(w, http.StatusConflict, actionAnswer{Error: actionWords(req.Action, req.Domain, err), Code: wire.CodeOf(err)})
			return
		}
	}
	writeJSON(w, http.StatusOK, actionAnswer{Message: res.Message})
}

// actionWords says why action on domain was refused, as the console puts
// it: the refusals a button meets are said plainly, any other refusal by
// its message alone (errorText: no position, as the console wrote the
// statement).
func actionWords(action, domain string, err error) string {
	name := grammar.FormatName(domain)
	switch {
	case errors.Is(err, record.ErrDomainNotFound):
		return "Domain " + name + " is not in the catalog any more: it was dropped. Pick a domain from the list."
	case errors.Is(err, record.ErrAlreadyRunning):
		return "Domain " + name + " is already running. Stop it first to start a new generation."
	case errors.Is(err, record.ErrAlreadyStopped):
		return "Domain " + name + " is already stopped."
	case errors.Is(err, record.ErrDomainRunning):
		return "Domain " + name + " is running: stop it before dropping it."
	case errors.Is(err, record.ErrNoLiveVoter):
		return "No voting node is available to run the clock of " + name + ". Start it again once a voting node is back."
	}
	verb := map[string]string{actionStart: "start", actionStop: "stop", actionDrop: "drop"}[action]
	return "Could not " + verb + " " + name + ": " + errorText(err)
}

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
