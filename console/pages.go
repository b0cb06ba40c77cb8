package console

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// page is what every page template reads.
type page struct {
	Title    string
	Node     string
	Identity string
	SignedIn string // how the caller is signed in, in plain words
	CSRF     string
	Logout   bool   // the caller logged in with a cookie and may log out
	Nav      string // "domains" or "cluster"
	Domain   string // the selected domain, "" for none
	Status   string // the selected domain's status (DESCRIBE's status), "" when unknown
	Views    views
	Error    string // the login page's message
	HasToken bool   // the login page offers the token form
	Next     string // the page the login form returns to (loginTarget)
}

// render writes the template name with p, or a plain 500 if it fails, so a
// half-written page never reaches the browser.
func (c *Console) render(w http.ResponseWriter, status int, name string, p page) {
	var b bytes.Buffer
	if err := c.pages.ExecuteTemplate(&b, name, p); err != nil {
		c.logger.Error("console: render page", "page", name, "err", err)
		http.Error(w, "the console could not render this page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

func (c *Console) serveLoginPage(w http.ResponseWriter, r *http.Request) {
	next := loginTarget(r.URL.Query().Get("next"))
	if _, err := c.authenticate(r); err == nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	c.renderLogin(w, r, http.StatusOK, "")
}

// renderLogin writes the login form with msg, returning to the page the
// request names (its next, form or query, checked by loginTarget).
func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	c.render(w, status, "login.html", page{Title: "Log in", Node: c.cfg.Node, Error: msg, HasToken: c.cfg.Token != "",
		Next: loginTarget(next)})
}

// pageFor is the page frame of an authorized request, with the views read
// once so the page shows them before its scripts run.
func (c *Console) pageFor(r *http.Request, nav, domain string) page {
	p := caller(r)
	sess := c.newSession(p.identity)
	defer sess.Close()
	return page{Node: c.cfg.Node, Identity: p.identity, SignedIn: p.signedIn(), CSRF: c.csrf(p), Logout: p.cookie, Nav: nav, Domain: domain,
		Views: c.readViews(r.Context(), sess, domain, "", nil)}
}

// serveMain is the domains page: the domain list, the selected domain
// (?domain=NAME) with its description, clock panel and lifecycle buttons,
// the create form and the statement box.
func (c *Console) serveMain(w http.ResponseWriter, r *http.Request) {
	domain, ok := domainParam(w, r, false)
	if !ok {
		return
	}
	p := c.pageFor(r, "domains", domain)
	p.Title = "Domains"
	p.Status = p.Views.Describe.field("status")
	if p.Views.Gone {
		p.Status = "gone"
	}
	if domain != "" {
		p.Title = domain
	}
	c.render(w, http.StatusOK, "main.html", p)
}

// serveCluster is the cluster page: nodes, leader, availability, revision
// and each paced domain's authority.
func (c *Console) serveCluster(w http.ResponseWriter, r *http.Request) {
	p := c.pageFor(r, "cluster", "")
	p.Title = "Cluster"
	c.render(w, http.StatusOK, "cluster.html", p)
}

// serveWhoami answers the caller's identity and CSRF token: a page whose
// event stream failed asks it to learn whether its login still holds.
func (c *Console) serveWhoami(w http.ResponseWriter, r *http.Request) {
	p := caller(r)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Node     string `json:"node"`
		Identity string `json:"identity"`
		CSRF     string `json:"csrf"`
	}{c.cfg.Node, p.identity, c.csrf(p)})
}
