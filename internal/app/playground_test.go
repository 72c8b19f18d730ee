package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/playground"
	"github.com/paygate/paygate/internal/vendored"
)

// TestPlaygroundFilesMatchTheirSums: every vendored file is listed in SHA256SUMS with its sum, and
// every file listed is there, so a hand edit or a partial refresh cannot ship.
func TestPlaygroundFilesMatchTheirSums(t *testing.T) {
	t.Parallel()
	if _, err := playground.New(); err != nil {
		t.Fatal(err)
	}
	vendoredFilesMatchTheirSums(t, newTestEnv(t, databasetest.SQLite(t)), playground.Prefix, playground.VendorSums,
		"graphiql.min.js", "graphiql.min.css", "react.production.min.js", "react-dom.production.min.js",
		"LICENSE.graphiql", "LICENSE.react", "LICENSE.react-dom")
}

// vendoredFilesMatchTheirSums checks the files vendored under prefix: SHA256SUMS, as sums reads
// it, lists each of want, each file it lists is served, and it is not served itself. That each
// file matches its sum the page's handler checks as it loads, which env has done.
func vendoredFilesMatchTheirSums(t *testing.T, env *testEnv, prefix string, sums func() (map[string]string, error), want ...string) {
	t.Helper()
	listed, err := sums()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range want {
		if listed[name] == "" {
			t.Errorf("SHA256SUMS does not list %s", name)
		}
	}
	for name := range listed {
		if r := env.request(http.MethodGet, prefix+"vendor/"+name, "", nil); r.status != http.StatusOK {
			t.Errorf("%s listed in SHA256SUMS is not served: %d", name, r.status)
		}
	}
	if r := env.request(http.MethodGet, prefix+"vendor/"+vendored.SumsFile, "", nil); r.status != http.StatusNotFound {
		t.Errorf("GET %svendor/%s = %d, want 404", prefix, vendored.SumsFile, r.status)
	}
}

// TestPlaygroundIsOnlyInDevelopment: a production server serves neither the page nor its files.
func TestPlaygroundIsOnlyInDevelopment(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t), "PAYGATE_ENV=production", "PAYGATE_CARD_FINGERPRINT_KEY="+testFingerprintKey)
	for _, path := range []string{"/", playground.Prefix + "playground.js", playground.Prefix + "vendor/graphiql.min.js"} {
		if r := env.request(http.MethodGet, path, "", nil); r.status != http.StatusNotFound {
			t.Errorf("production GET %s = %d", path, r.status)
		}
	}
	dev := newTestEnv(t, databasetest.SQLite(t))
	r := dev.request(http.MethodGet, playground.Prefix+"vendor/graphiql.min.js", "", nil)
	etag := r.header.Get("ETag")
	if r.status != http.StatusOK || etag == "" || r.header.Get("Content-Security-Policy") != playground.ContentSecurityPolicy ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("GET graphiql.min.js = %d %v", r.status, r.header)
	}
	if again := dev.request(http.MethodGet, playground.Prefix+"vendor/graphiql.min.js", "", nil, "If-None-Match", etag); again.status != http.StatusNotModified {
		t.Errorf("revalidation = %d, want 304", again.status)
	}
	for _, hidden := range []string{"index.html", "vendor/SHA256SUMS", "../playground.go", "nothing.js"} {
		if r := dev.request(http.MethodGet, playground.Prefix+hidden, "", nil); r.status != http.StatusNotFound {
			t.Errorf("GET %s%s = %d, want 404", playground.Prefix, hidden, r.status)
		}
	}
}

// browserPath is Debian's Chromium, for the tests that load pages in a real browser. Where it
// cannot be installed they skip, unless PAYGATE_TEST_REQUIRE_BROWSER=1 (as in CI) says a skip
// would hide a failure.
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("PAYGATE_TEST_REQUIRE_BROWSER") == "1" {
		t.Fatal("no Chromium found, and PAYGATE_TEST_REQUIRE_BROWSER=1: install Debian's chromium package")
	}
	t.Skip("no Chromium found: install Debian's chromium package (apt-get install chromium) to run the browser tests")
	return ""
}

// TestPlaygroundWorksOffline loads GraphiQL in headless Chromium with every host but the test
// server unreachable, runs a query without a credential and then with one pasted into the page,
// and reads both answers from the result pane: the page needs nothing from the internet, sends
// the credential as a bearer token, and breaks none of its Content-Security-Policy.
func TestPlaygroundWorksOffline(t *testing.T) {
	t.Parallel()
	chromium := browserPath(t)
	env := newTestEnv(t, databasetest.SQLite(t))
	viewer := env.tokenFor("viewer")
	paymentID := env.succeededPayment(env.tokenFor("operator"), "12.34", "USD", "stripe")
	server, err := url.Parse(env.url)
	if err != nil {
		t.Fatal(err)
	}

	browser := loopbackChromium(t, chromium)
	// Every step is bounded: the whole test gives up after 90 s, and the browser with it.
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()

	var mu sync.Mutex
	var elsewhere, problems []string
	err = chromedp.Listen(ctx, func(event any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := event.(type) {
		case *network.EventRequestWillBeSent:
			if u, err := url.Parse(e.Request.URL); err == nil && u.Scheme != "data" && u.Host != server.Host {
				elsewhere = append(elsewhere, e.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			details := e.ExceptionDetails
			if details.Exception != nil {
				problems = append(problems, fmt.Sprintf("exception at %s:%d: %s", details.URL, details.LineNumber, details.Exception.Description))
			} else {
				problems = append(problems, fmt.Sprintf("exception at %s:%d: %s", details.URL, details.LineNumber, details.Text))
			}
		case *cdplog.EventEntryAdded:
			// Content-Security-Policy violations and failed loads are logged as errors.
			if e.Entry.Level == cdplog.EntryLevelError {
				problems = append(problems, fmt.Sprintf("%s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				problems = append(problems, fmt.Sprintf("console.error: %v", e.Args))
			}
		}
	})
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}

	// resultHolding waits until GraphiQL's result pane holds want, and answers what it holds.
	resultHolding := func(want string) chromedp.Action[string] {
		return chromedp.Poll[string](fmt.Sprintf(`(() => {
			const editor = document.querySelector('.result-window .CodeMirror');
			const text = editor && editor.CodeMirror.getValue();
			return text && text.includes(%q) ? text : false;
		})()`, want), chromedp.WithPollingTimeout(30*time.Second))
	}
	execute := chromedp.Click(chromedp.CSS(".graphiql-execute-button"))
	err = chromedp.Do(ctx,
		chromedp.Navigate(env.url+"/"),
		chromedp.WaitVisible(chromedp.CSS(".graphiql-execute-button")),
		execute, // no credential yet: payments are refused
	)
	var anonymous, authorized string
	if err == nil {
		anonymous, err = chromedp.Run(ctx, resultHolding("unauthenticated"))
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#token"), viewer), execute)
	}
	if err == nil {
		authorized, err = chromedp.Run(ctx, resultHolding(paymentID))
	}
	t.Logf("without a credential the page showed: %.300s", anonymous)
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		t.Fatalf("the playground: %v\nproblems in the page: %v", err, problems)
	}
	if !strings.Contains(authorized, `"12.34"`) || strings.Contains(authorized, "unauthenticated") {
		t.Errorf("the answer with the token = %s", authorized)
	}
	if len(elsewhere) > 0 {
		t.Errorf("the page asked other hosts than the server: %v", elsewhere)
	}
	if len(problems) > 0 {
		t.Errorf("problems in the page: %s", strings.Join(problems, "\n"))
	}
}
