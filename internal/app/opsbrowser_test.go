package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/paygate/paygate/internal/ops"
)

// opsBrowser is headless Chromium driving a test server's pages, with every host but the server
// unreachable. It notes every request to another host, and every exception, console error and
// Content-Security-Policy violation in the page, which finish reports.
type opsBrowser struct {
	t   *testing.T
	ctx context.Context

	mu                  sync.Mutex
	elsewhere, problems []string
}

// newOpsBrowser starts Chromium at 1280x800 for env's server; it stops with the test.
func newOpsBrowser(t *testing.T, chromium string, env *testEnv) *opsBrowser {
	t.Helper()
	server, err := url.Parse(env.url)
	if err != nil {
		t.Fatal(err)
	}
	// axe-core is installed before the browser's time starts to run.
	if _, err := exec.LookPath("npm"); err == nil {
		npmCI(t, axeDir)
	}
	// Every step is bounded: the whole test gives up after 3 minutes, and the browser with it.
	ctx, cancel := context.WithTimeout(loopbackChromium(t, chromium), 3*time.Minute)
	t.Cleanup(cancel)
	b := &opsBrowser{t: t, ctx: ctx}
	// The page's times are read in UTC whatever the machine's zone, and a file the page offers is
	// not saved anywhere.
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "UTC"}); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny}); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	otherHost := func(raw string) bool {
		u, err := url.Parse(raw)
		return err != nil || (u.Scheme != "data" && u.Scheme != "blob" && u.Host != server.Host)
	}
	err = chromedp.Listen(ctx, func(event any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := event.(type) {
		case *network.EventRequestWillBeSent:
			if otherHost(e.Request.URL) {
				b.elsewhere = append(b.elsewhere, e.Request.URL)
			}
		case *network.EventWebSocketCreated:
			if otherHost(e.URL) {
				b.elsewhere = append(b.elsewhere, e.URL)
			}
		case *runtime.EventExceptionThrown:
			details := e.ExceptionDetails
			if details.Exception != nil {
				b.problems = append(b.problems, fmt.Sprintf("exception at %s:%d: %s", details.URL, details.LineNumber, details.Exception.Description))
			} else {
				b.problems = append(b.problems, fmt.Sprintf("exception at %s:%d: %s", details.URL, details.LineNumber, details.Text))
			}
		case *cdplog.EventEntryAdded:
			// Content-Security-Policy violations, failed loads and failed WebSockets are logged
			// as errors.
			if e.Entry.Level == cdplog.EntryLevelError {
				b.problems = append(b.problems, fmt.Sprintf("%s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, arg := range e.Args {
					if len(arg.Value) > 0 {
						args = append(args, string(arg.Value))
					} else {
						args = append(args, arg.Description)
					}
				}
				b.problems = append(b.problems, "console.error: "+strings.Join(args, " "))
			}
		}
	})
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	// Every violation of the page's Content-Security-Policy is reported as a console error too.
	// The listener is the browser's, added by the debugger: the policy does not apply to it.
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `document.addEventListener('securitypolicyviolation', (e) =>
			console.error('Content-Security-Policy violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI));`,
	}); err != nil {
		t.Fatal(err)
	}
	return b
}

// signIn opens the operations page of the server at base and signs in with email and the tests'
// password, as platform staff (the merchant picker shows).
func (b *opsBrowser) signIn(base, email string) {
	b.t.Helper()
	if err := b.within(chromedp.Navigate(base+ops.Path), chromedp.WaitVisible(chromedp.CSS("#email")),
		chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), testPassword+kb.Enter),
		chromedp.WaitVisible(chromedp.CSS("#merchant-form"))); err != nil {
		b.fail("signing in", err)
	}
}

// within runs steps, giving up after a minute: a step that fails leaves time to report.
func (b *opsBrowser) within(steps ...chromedp.Action[chromedp.Void]) error {
	stepCtx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	return chromedp.Do(stepCtx, steps...)
}

// screenshot saves the page as it is now, under name, in the test's artifact directory (go test
// -artifacts keeps it) and in $PAYGATE_TEST_ARTIFACTS.
func (b *opsBrowser) screenshot(name string) {
	b.t.Helper()
	shot, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	dirs := []string{b.t.ArtifactDir()}
	if dir := os.Getenv("PAYGATE_TEST_ARTIFACTS"); dir != "" {
		dirs = append(dirs, dir)
	}
	// The test's name tells apart the screenshots of each database in one directory.
	name = strings.ReplaceAll(b.t.Name(), "/", "-") + "-" + name
	for _, dir := range dirs {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.t.Errorf("screenshot %s: %v", path, err)
		} else if err := os.WriteFile(path, shot, 0o644); err != nil {
			b.t.Errorf("screenshot %s: %v", path, err)
		} else {
			b.t.Logf("screenshot: %s", path)
		}
	}
}

// view keeps the page as it is now, a view named name: its screenshot, and axe-core's check.
func (b *opsBrowser) view(name string) {
	b.t.Helper()
	b.screenshot(name + ".png")
	b.checkAccessibility(name)
}

// pageState is what a failure reports of the page: its live state and what it says.
func (b *opsBrowser) pageState() string {
	state, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById('live-state').dataset.live + ': ' +
		document.body.innerText.slice(0, 600)`))
	return state
}

// tabUntil presses Tab until reached answers true of the focused element, at most 40 times.
func (b *opsBrowser) tabUntil(what, reached string) error {
	for range 40 {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](reached))
		if err != nil || ok {
			return err
		}
		if err := chromedp.Do(b.ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			return err
		}
	}
	return fmt.Errorf("40 presses of Tab did not reach %s", what)
}

// click clicks selector in the page as it is found, within a minute: a row drawn again whenever
// news of it arrives is clicked as it is, not by a node found a moment before.
func (b *opsBrowser) click(selector string) error {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		clicked, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
			const button = document.querySelector(%q);
			if (button) { button.click(); }
			return !!button;
		})()`, selector)))
		if err != nil || clicked {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s to click", selector)
		}
	}
}

// poll waits up to 30 seconds for expression to answer something other than false.
func (b *opsBrowser) poll(expression string) (string, error) {
	return chromedp.Run(b.ctx, chromedp.Poll[string](expression, chromedp.WithPollingTimeout(30*time.Second)))
}

// fail ends the test at step, with a screenshot and what the page says.
func (b *opsBrowser) fail(step string, err error) {
	b.t.Helper()
	b.screenshot("ops-failed.png")
	state := b.pageState() // before taking the lock, which the browser's events wait for
	b.mu.Lock()
	defer b.mu.Unlock()
	b.t.Fatalf("%s: %v\nthe page: %s\nproblems in the page: %v", step, err, state, b.problems)
}

// finish fails the test for any request to another host and any problem in the page.
func (b *opsBrowser) finish() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.elsewhere) > 0 {
		b.t.Errorf("the page asked other hosts than the server: %v", b.elsewhere)
	}
	if len(b.problems) > 0 {
		b.t.Errorf("problems in the page: %s", strings.Join(b.problems, "\n"))
	}
}

// axeDir pins axe-core's version.
var axeDir = filepath.Join("testdata", "axe")

// axeSource is axe-core's script, read once.
var axeSource = sync.OnceValues(func() (string, error) {
	source, err := os.ReadFile(filepath.Join(axeDir, "node_modules", "axe-core", "axe.min.js"))
	return string(source), err
})

// checkAccessibility runs axe-core over the page as it is now, the view named view, and fails the
// test for each serious or critical violation; the lesser ones are logged. Without npm to install
// axe-core the check is skipped, unless PAYGATE_TEST_REQUIRE_BROWSER=1 (as in CI).
func (b *opsBrowser) checkAccessibility(view string) {
	b.t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		if os.Getenv("PAYGATE_TEST_REQUIRE_BROWSER") == "1" {
			b.t.Fatal("npm is needed to install axe-core, and PAYGATE_TEST_REQUIRE_BROWSER=1")
		}
		b.t.Logf("no npm to install axe-core: %s is not checked for accessibility", view)
		return
	}
	npmCI(b.t, axeDir)
	source, err := axeSource()
	if err != nil {
		b.t.Fatal(err)
	}
	// The debugger's evaluation is not the page's script: the page's policy does not apply to it.
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`typeof window.axe === 'object' || (() => { `+source+`; return true; })()`)); err != nil {
		b.fail("loading axe-core", err)
	}
	found, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`axe.run(document, {resultTypes: ['violations']}).then((result) =>
		JSON.stringify(result.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
			nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}))))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.fail("running axe-core", err)
	}
	var violations []struct {
		ID, Impact, Help string
		Nodes            []string
	}
	if err := json.Unmarshal([]byte(found), &violations); err != nil {
		b.t.Fatalf("axe-core's answer: %v: %.500s", err, found)
	}
	for _, v := range violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			b.t.Errorf("%s: axe-core finds a %s violation, %s (%s), at %v", view, v.Impact, v.ID, v.Help, v.Nodes)
		} else {
			b.t.Logf("%s: axe-core finds a %s violation, %s (%s), at %v", view, v.Impact, v.ID, v.Help, v.Nodes)
		}
	}
}

// focusedRow is the id of the row of the table with tbodyID that holds the keyboard focus.
func focusedRow(tbodyID string) chromedp.Action[string] {
	return chromedp.Evaluate[string](fmt.Sprintf(`(() => {
		const row = document.activeElement && document.activeElement.closest('#%s tr[data-id]');
		return row ? row.dataset.id : '';
	})()`, tbodyID))
}
