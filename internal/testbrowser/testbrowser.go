// Package testbrowser drives a headless Chromium from a test, for the
// console's browser tests: it finds the browser, starts it with a fresh
// profile and the flags a closed network needs, and waits on conditions
// the page states in JavaScript.
//
// A machine without Chromium skips these tests, unless the environment
// variable RequireEnv is set (CI sets it), where a missing browser fails
// the test instead: a browser test that CI skipped would prove nothing.
//
// It is for tests only and must never be imported by production code.
package testbrowser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// RequireEnv names the environment variable that makes a missing browser
// a failure rather than a skip.
const RequireEnv = "NSPL_REQUIRE_BROWSER"

// BrowserEnv names the environment variable that gives the browser's
// executable; without it the usual names are looked up on PATH.
const BrowserEnv = "NSPL_CHROMIUM"

// ShotsEnv names the environment variable of a folder where Screenshot
// also writes its images (make screenshots sets it); they are always
// written to the test's artifact folder.
const ShotsEnv = "NSPL_SCREENSHOT_DIR"

// Width and Height are the browser window's size.
const (
	Width  = 1280
	Height = 800
)

// find returns the browser's executable.
func find() (string, error) {
	if p := os.Getenv(BrowserEnv); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium found on PATH (install the distribution's chromium package, or set %s)", BrowserEnv)
}

// Browser is one headless browser with one tab, closed when the test ends.
type Browser struct {
	t   testing.TB
	ctx context.Context
}

// New starts a browser for t, or skips t when there is none and RequireEnv
// is not set.
func New(t testing.TB) *Browser {
	t.Helper()
	path, err := find()
	if err != nil {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("testbrowser: %v; %s is set, so browser tests may not skip", err, RequireEnv)
		}
		t.Skipf("testbrowser: %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox, // CI runs as root, where Chromium's sandbox refuses to start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(Width, Height),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		// The test cluster's certificates come from a CA made for the
		// test, which the browser's profile does not trust.
		chromedp.Flag("ignore-certificate-errors", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(Width, Height)); err != nil {
		t.Fatalf("testbrowser: start %s: %v", path, err)
	}
	return &Browser{t: t, ctx: ctx}
}

// Do runs actions, failing the test if one fails within timeout.
func (b *Browser) Do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("testbrowser: %v\npage text:\n%s", err, b.text())
	}
}

// Until waits until the JavaScript expression cond is true in the page,
// failing the test with what (and the page's text) after timeout. The
// bound is for a broken page, not a measure of speed.
func (b *Browser) Until(timeout time.Duration, what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		// A poll does not survive a navigation: it is asked again in the
		// new page until the bound passes.
		ctx, cancel := context.WithDeadline(b.ctx, deadline)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+cond+")", chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(0)))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			b.t.Fatalf("testbrowser: waited %s for %s: %v\npage text:\n%s", timeout, what, err, b.text())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Eval returns the value of the JavaScript expression as a string.
func (b *Browser) Eval(expression string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string]("String("+expression+")"))
	if err != nil {
		b.t.Fatalf("testbrowser: evaluate %s: %v", expression, err)
	}
	return s
}

// text returns the page's visible text, for failure messages.
func (b *Browser) text() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	return s
}

// Screenshot writes the visible page as name.png to the test's artifact
// folder, and to ShotsEnv's folder when it is set.
func (b *Browser) Screenshot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("testbrowser: screenshot %s: %v", name, err)
	}
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv(ShotsEnv); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatalf("testbrowser: %v", err)
		}
		if err := os.WriteFile(filepath.Join(d, name+".png"), png, 0o644); err != nil {
			t.Fatalf("testbrowser: %v", err)
		}
	}
}
