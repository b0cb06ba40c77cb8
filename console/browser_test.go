package console_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nspl-dev/nspl/console"
	"github.com/nspl-dev/nspl/internal/testbrowser"
	"github.com/nspl-dev/nspl/internal/testcluster"
	"github.com/stretchr/testify/require"
)

// wait bounds each step's wait for the page: a bound on a broken page, not
// a measure of speed.
const wait = 60 * time.Second

const testToken = "console-test-token"

// byID is a JavaScript expression for the text of the element with id.
func byID(id string) string {
	return "(document.getElementById(" + strconv.Quote(id) + ")||{}).textContent"
}

// buttons is a JavaScript expression for the lifecycle buttons' state:
// "start:primary:enabled stop:secondary:disabled drop:enabled".
const buttons = "['start','stop'].map(n => (b => n + ':' + (b.classList.contains('secondary') ? 'secondary' : 'primary') + ':' + (b.disabled ? 'disabled' : 'enabled'))(document.getElementById('btn-' + n))).join(' ') + ' drop:' + (document.getElementById('btn-drop').disabled ? 'disabled' : 'enabled')"

// webLink is a JavaScript expression for the domain list's link to web.
const webLink = "document.querySelector('#domains a[data-domain=\"web\"]')"

// tickID reads the clock panel's last tick id, 0 before the first.
func tickID(t *testing.T, b *testbrowser.Browser) uint64 {
	t.Helper()
	s := strings.TrimPrefix(b.Eval(byID("clock-tick")), "#")
	if s == "—" || s == "" {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, "the clock panel's tick reads %q", s)
	return n
}

// runStatement types text into the statement box and runs it.
func runStatement(b *testbrowser.Browser, text string) {
	b.Do(wait,
		chromedp.SetValue(chromedp.CSS("#repl-text"), text),
		chromedp.Click(chromedp.CSS("#repl-run")),
	)
}

// logHas is a condition: the statement box's log contains s.
func logHas(s string) string {
	return byID("log") + ".includes(" + strconv.Quote(s) + ")"
}

// TestConsoleInABrowser drives the console in headless Chromium against a
// three-node cluster: log in with the token, create and start a paced
// domain from the statement box, follow its clock PACED with its tick
// advancing, STOP it, lose the serving node and see the page go OFFLINE
// and come back with the clock once the node is back, and drop the domain
// to see its clock ENDED. It writes a screenshot of each page.
func TestConsoleInABrowser(t *testing.T) {
	b := testbrowser.New(t)
	c := testcluster.New(t, testcluster.Options{Durable: true})
	members := c.StartThree()
	serving := members[1]
	api := c.ServeAPI(serving, testcluster.APIOptions{Token: testToken, Console: true})

	// A page needs a login: a deep link is sent to the login form, which
	// returns to it once logged in.
	b.Do(wait, chromedp.Navigate(api.URL+"/console/?domain=web"))
	b.Until(wait, "the login form", "document.getElementById('token')")
	b.Screenshot(t, "login")
	b.Do(wait,
		chromedp.SetValue(chromedp.CSS("#token"), "not-the-token"),
		chromedp.Submit(chromedp.CSS("#login")),
	)
	b.Until(wait, "the wrong token refused", byID("login-error")+".includes('not this node')")
	b.Do(wait,
		chromedp.SetValue(chromedp.CSS("#token"), testToken),
		chromedp.Submit(chromedp.CSS("#login")),
	)
	b.Until(wait, "the console online", byID("conn")+" === 'ONLINE'")
	require.Equal(t, "/console/?domain=web", b.Eval("location.pathname + location.search"), "the deep link is lost at login")
	require.Equal(t, "web", b.Eval("document.body.dataset.domain"))
	require.Equal(t, "Signed in with the node's token", b.Eval("document.querySelector('.who').textContent"))
	// web does not exist yet: the page says so in its own words.
	b.Until(wait, "the domain not in the catalog", byID("describe")+".includes('not in the catalog')")
	require.NotContains(t, b.Eval(byID("describe")), "LIST DOMAINS")
	require.Equal(t, "nspl>", b.Eval(byID("prompt")))

	// Create and start a paced domain from the statement box.
	runStatement(b, "CREATE PACED DOMAIN web WITH PERIOD 100ms SKEW 10ms;")
	b.Until(wait, "the create reply", logHas("created domain 'web'"))
	b.Until(wait, "the domain in the list", webLink)
	// The list is kept while the domains it shows are the same, however
	// often views arrive (each change of the cluster status sends one): the
	// link clicked is still the page's once the watch opened for the
	// selection sent its first views, with web's description, and only the
	// row's selection mark moved. A list rebuilt under the pointer loses
	// the click.
	b.Eval(webLink + ".dataset.clicked = 'yes'")
	b.Do(wait, chromedp.Click(chromedp.CSS(`#domains a[data-domain="web"]`)))
	b.Until(wait, "the clock panel STOPPED", byID("clock-state")+" === 'STOPPED'")
	b.Until(wait, "web's description", "document.querySelector('#describe dl')")
	require.Equal(t, "yes selected", b.Eval("(a => a.dataset.clicked + ' ' + a.closest('tr').className)("+webLink+")"),
		"the clicked link was rebuilt, or its row not marked selected")
	// Stopped: START is the primary button, STOP disabled.
	b.Until(wait, "START primary on a stopped domain", buttons+" === 'start:primary:enabled stop:secondary:disabled drop:enabled'")
	runStatement(b, "USE web; START AT NOW TIME RATE 2;")
	b.Until(wait, "the start reply", logHas("started domain 'web'"))
	b.Until(wait, "the clock panel PACED", byID("clock-state")+" === 'PACED'")
	b.Until(wait, "the shell's prompt", byID("prompt")+" === 'nspl[web]>'")
	// Running: STOP is the primary button, START (and DROP) disabled.
	b.Until(wait, "STOP primary on a running domain", buttons+" === 'start:secondary:disabled stop:primary:enabled drop:disabled'")
	// A button's refusal is said in the console's words beside the
	// buttons, with no caret under a statement the operator never typed.
	b.Eval("(b => { b.disabled = false; b.click(); })(document.getElementById('btn-start'))")
	b.Until(wait, "the refusal of START", byID("action-msg")+" === 'Domain web is already running. Stop it first to start a new generation.'")
	require.Equal(t, "0", b.Eval("document.querySelectorAll('#log .err').length"), "a button's refusal went to the statement box")
	// Frames in the statement box read as the shell prints them.
	runStatement(b, "ATTACH DOMAIN CLOCK;")
	b.Until(wait, "a frame as the shell prints it", logHas("[clock web] tick "))
	require.Regexp(t, `\[clock web\] tick \d+ at 20\S+Z \(generation 1\)`, b.Eval(byID("log")))
	runStatement(b, "DETACH DOMAIN CLOCK;")
	b.Until(wait, "the detach reply", logHas("detached"))
	b.Until(wait, "a first tick", byID("clock-tick")+".startsWith('#')")
	first := tickID(t, b)
	b.Until(wait, "the tick id advancing", "Number("+byID("clock-tick")+".slice(1)) > "+strconv.FormatUint(first, 10))
	require.Equal(t, "2 · 100ms · 10ms", b.Eval(byID("clock-params")))
	b.Until(wait, "the projected logical now", byID("clock-now")+".startsWith('20')")
	b.Until(wait, "the description", byID("describe")+".includes('mapping_time_rate')")
	// The description fits its panel at 1280×800: nothing is cut on the
	// right, and what does not fit scrolls within the description.
	require.Equal(t, "true", b.Eval("(d => d.scrollWidth <= d.clientWidth)(document.getElementById('describe'))"), "the description is clipped")
	require.Equal(t, "true", b.Eval("(p => p.scrollHeight <= p.clientHeight + 1)(document.getElementById('detail'))"), "the detail panel overflows")
	b.Screenshot(t, "domains")

	// Detach and attach again from the panel.
	b.Do(wait, chromedp.Click(chromedp.CSS("#clock-toggle")))
	b.Until(wait, "the clock DETACHED", byID("clock-state")+" === 'DETACHED'")
	b.Do(wait, chromedp.Click(chromedp.CSS("#clock-toggle")))
	b.Until(wait, "the clock PACED once attached again", byID("clock-state")+" === 'PACED'")

	// A syntax error is shown with its caret.
	runStatement(b, "LIST DOMAINS;\nSTAR;")
	b.Until(wait, "the positioned error", logHas("2:1: error:"))
	require.Contains(t, b.Eval("document.querySelector('#log .err pre').textContent"), "STAR;\n^")

	// A submission past the statement cap stops there, and the log says
	// which statement stopped it and why.
	runStatement(b, strings.Repeat("SHOW TRANSACTIONS;", console.MaxSubmissionStatements+1))
	b.Until(wait, "the cut submission", logHas(fmt.Sprintf("1:%d: error: statement %d (line 1, column %d) and those after it did not run",
		1+18*console.MaxSubmissionStatements, console.MaxSubmissionStatements+1, 1+18*console.MaxSubmissionStatements)))

	// STOP from its button: the buttons follow.
	b.Do(wait, chromedp.Click(chromedp.CSS("#btn-stop")))
	b.Until(wait, "the clock panel STOPPED", byID("clock-state")+" === 'STOPPED'")
	b.Until(wait, "START primary once stopped", buttons+" === 'start:primary:enabled stop:secondary:disabled drop:enabled'")
	b.Until(wait, "the stop reply", byID("action-msg")+" === \"stopped domain 'web'\"")
	b.Do(wait, chromedp.Click(chromedp.CSS("#btn-start")))
	b.Until(wait, "the clock panel PACED again", byID("clock-state")+" === 'PACED'")

	// The serving node dies: the page goes OFFLINE and its clock is
	// interrupted; once the node is back on its address, the page
	// reconnects and attaches again.
	api.Close()
	c.Kill(serving.Node().Name())
	b.Until(wait, "the page OFFLINE", byID("conn")+" === 'OFFLINE'")
	b.Until(wait, "the clock INTERRUPTED", byID("clock-state")+" === 'INTERRUPTED'")
	b.Screenshot(t, "offline")
	back := c.Start(serving.Node().Name(), false)
	c.ServeAPI(back, testcluster.APIOptions{Addr: api.Addr, Token: testToken, Console: true})
	b.Until(wait, "the page ONLINE again", byID("conn")+" === 'ONLINE'")
	b.Until(wait, "the clock PACED again", byID("clock-state")+" === 'PACED'")
	b.Until(wait, "a tick after the restart", byID("clock-tick")+".startsWith('#')")
	again := tickID(t, b)
	b.Until(wait, "the tick id advancing after the restart", "Number("+byID("clock-tick")+".slice(1)) > "+strconv.FormatUint(again, 10))

	// An unpaced domain's clock reads UTC; a missing domain is refused.
	runStatement(b, "CREATE DOMAIN utc; USE utc; START;")
	b.Until(wait, "the unpaced start", logHas("started domain 'utc'"))
	b.Do(wait, chromedp.Navigate(api.URL+"/console/?domain=utc"))
	b.Until(wait, "the clock UNPACED", byID("clock-state")+" === 'UNPACED'")
	b.Until(wait, "the unpaced clock's reading", byID("clock-now")+".startsWith('20')")
	b.Do(wait, chromedp.Navigate(api.URL+"/console/?domain=nowhere"))
	b.Until(wait, "the clock REFUSED", byID("clock-state")+" === 'REFUSED'")
	require.Contains(t, b.Eval(byID("clock-msg")), "nowhere")

	// The cluster page: the nodes and the domains in tables of their own,
	// the leader and availability at a glance, short ids with the whole on
	// hover, no NULL; and the serving node's live charts.
	b.Do(wait, chromedp.Navigate(api.URL+"/console/cluster"))
	b.Until(wait, "the node table", byID("cluster-nodes")+".includes('n3')")
	b.Until(wait, "the domain table", byID("cluster-domains")+".includes('web')")
	b.Until(wait, "the page ONLINE", byID("conn")+" === 'ONLINE'")
	require.NotContains(t, b.Eval(byID("cluster-nodes")), "web", "a domain in the node table")
	require.NotContains(t, b.Eval(byID("cluster-domains")), "n1 ", "a node in the domain table")
	require.NotContains(t, b.Eval("document.body.innerText.toUpperCase()"), "NULL")
	require.Equal(t, "3 of 3", b.Eval(byID("sum-available")))
	require.Regexp(t, `^n[123]$`, b.Eval(byID("sum-leader")))
	require.Equal(t, "1", b.Eval("document.querySelectorAll('#cluster-nodes .badge.role').length"), "one leader badge")
	inc := b.Eval("(td => td.textContent + ' ' + td.title)(document.querySelector('#cluster-nodes td[title]'))")
	require.Regexp(t, `^\d{6}… \d{10,20}$`, inc, "a short incarnation with the whole on hover")
	b.Until(wait, "the statements chart drawn with data", "Number(document.getElementById('chart-statements').dataset.points) >= 2")
	b.Until(wait, "web's tick lag drawn", "Number((document.querySelector('#chart-ticklag path[data-series=\"web\"]')||{dataset:{}}).dataset.points) >= 2")
	// Commits in the catalog: STOP and START the unpaced domain from the
	// page's own endpoint, which the latency chart then draws.
	b.Eval(`(async () => { for (const action of ["stop", "start", "stop", "start"]) {
		await fetch("/console/api/domain", {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": document.body.dataset.csrf},
			body: JSON.stringify({domain: "utc", action})}); await new Promise(r => setTimeout(r, 600)); } })()`)
	b.Until(wait, "the commit latency chart drawn with data", "Number(document.getElementById('chart-commit').dataset.points) >= 1")
	b.Screenshot(t, "cluster")

	// STOP, then DROP, confirmed by a second click: the clock ENDED.
	b.Do(wait, chromedp.Navigate(api.URL+"/console/?domain=web"))
	b.Until(wait, "the clock PACED", byID("clock-state")+" === 'PACED'")
	b.Do(wait, chromedp.Click(chromedp.CSS("#btn-stop")))
	b.Until(wait, "the clock panel STOPPED", byID("clock-state")+" === 'STOPPED'")
	b.Do(wait, chromedp.Click(chromedp.CSS("#btn-drop")))
	b.Until(wait, "the drop asking to confirm", byID("btn-drop")+" === 'Confirm DROP'")
	b.Do(wait, chromedp.Click(chromedp.CSS("#btn-drop")))
	b.Until(wait, "the clock ENDED", byID("clock-state")+" === 'ENDED'")
	b.Until(wait, "the domain gone from the list", "!document.querySelector('#domains a[data-domain=\"web\"]')")
	b.Until(wait, "the console's words for a dropped domain", byID("describe")+".includes('Back to the domains')")
	require.NotContains(t, b.Eval(byID("describe")), "LIST DOMAINS")
	require.Equal(t, "start:secondary:disabled stop:secondary:disabled drop:disabled", b.Eval(buttons))
	b.Screenshot(t, "ended")

	// Log out: the login form again, and the console refuses the page.
	b.Do(wait, chromedp.Click(chromedp.CSS(".logout button")))
	b.Until(wait, "the login form after logout", "document.getElementById('token')")
	b.Do(wait, chromedp.Navigate(api.URL+"/console/"))
	b.Until(wait, "the login form for a logged-out browser", "document.getElementById('token')")
}
