package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	var body struct {
		Success bool           `json:"success"`
		Error   map[string]any `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Success {
		t.Fatalf("not an error envelope: %s", w.Body.String())
	}
	return body.Error
}

func TestRequestIDIsKeptWhenSaneAndMadeOtherwise(t *testing.T) {
	var seen string
	h := WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = RequestID(r.Context()) }))
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Request-Id", "abc-123")
	if w := serve(h, r); seen != "abc-123" || w.Header().Get("X-Request-Id") != "abc-123" {
		t.Errorf("kept id = %q", seen)
	}
	r.Header.Set("X-Request-Id", "bad id\nwith: injection")
	if w := serve(h, r); !strings.HasPrefix(seen, "req_") || w.Header().Get("X-Request-Id") != seen {
		t.Errorf("replaced id = %q", seen)
	}
}

func TestRecoverAnswers500AndLogs(t *testing.T) {
	var logs bytes.Buffer
	h := WithRequestID(Recover(slog.New(slog.NewJSONHandler(&logs, nil)))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	})))
	w := serve(h, httptest.NewRequest("GET", "/", nil))
	if w.Code != http.StatusInternalServerError || errorOf(t, w)["code"] != "internal_error" {
		t.Errorf("panic answered %d %s", w.Code, w.Body.String())
	}
	if strings.Contains(w.Body.String(), "boom") || !strings.Contains(logs.String(), "boom") {
		t.Errorf("panic detail leaked or not logged: body %s", w.Body.String())
	}
}

func TestLimitBody(t *testing.T) {
	var got []byte
	h := LimitBody(10, func(w http.ResponseWriter, r *http.Request, err error) { WriteError(w, r, err, nil) })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
	if w := serve(h, httptest.NewRequest("POST", "/", strings.NewReader("0123456789"))); w.Code != http.StatusOK || string(got) != "0123456789" {
		t.Errorf("10 bytes: %d %q", w.Code, got)
	}
	for _, r := range []*http.Request{
		httptest.NewRequest("POST", "/", strings.NewReader("0123456789x")),
		func() *http.Request { // no Content-Length: the limit is found while reading
			r := httptest.NewRequest("POST", "/", io.MultiReader(strings.NewReader("0123456789x")))
			r.ContentLength = -1
			return r
		}(),
	} {
		w := serve(h, r)
		if w.Code != http.StatusRequestEntityTooLarge || errorOf(t, w)["code"] != "payload_too_large" {
			t.Errorf("11 bytes: %d %s", w.Code, w.Body.String())
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	h := SecurityHeaders(true)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	w := serve(h, httptest.NewRequest("GET", "/api/v1/payments", nil))
	wantHeaders(t, w.Header(), map[string]string{
		"X-Content-Type-Options":    "nosniff",
		"Content-Security-Policy":   "default-src 'none'; frame-ancestors 'none'",
		"Cache-Control":             "no-store",
		"Strict-Transport-Security": "max-age=63072000; includeSubDomains",
	})
	// A page's headers are the page's: an API answer is not a document.
	for _, header := range []string{"X-Frame-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy"} {
		if got := w.Header().Get(header); got != "" {
			t.Errorf("an API answer carries %s: %q", header, got)
		}
	}
}

func TestDocumentHeaders(t *testing.T) {
	page := SecurityHeaders(false)(Document(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	})))
	w := serve(page, httptest.NewRequest("GET", "/", nil))
	wantHeaders(t, w.Header(), map[string]string{
		"X-Frame-Options":            "DENY",
		"Referrer-Policy":            "no-referrer",
		"Cross-Origin-Opener-Policy": "same-origin",
		"X-Content-Type-Options":     "nosniff",
		"Content-Security-Policy":    "default-src 'self'", // the page's own
	})
}

// wantHeaders checks that each header has the one value wanted.
func wantHeaders(t *testing.T, h http.Header, want map[string]string) {
	t.Helper()
	for header, value := range want {
		if got := h.Values(header); len(got) != 1 || got[0] != value {
			t.Errorf("%s = %q, want %q alone", header, got, value)
		}
	}
}

// Every response starts from the same values: a handler that changes one of its headers changes
// it for itself alone.
func TestSecurityHeadersAreEachResponsesOwn(t *testing.T) {
	first := true
	h := SecurityHeaders(true)(Document(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first {
			first = false
			w.Header().Add("Cache-Control", "private")
			w.Header().Set("X-Frame-Options", "SAMEORIGIN")
			w.Header().Del("Referrer-Policy")
			w.Header().Del("X-Content-Type-Options")
		}
	})))
	changed := serve(h, httptest.NewRequest("GET", "/", nil))
	if got := changed.Header().Values("Cache-Control"); len(got) != 2 || got[1] != "private" {
		t.Fatalf("the handler's Cache-Control: %q", got)
	}
	next := serve(h, httptest.NewRequest("GET", "/", nil))
	for header, want := range map[string]string{"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff"} {
		if got := next.Header().Values(header); len(got) != 1 || got[0] != want {
			t.Errorf("the next response's %s = %q, want %q alone", header, got, want)
		}
	}
	if got := SecurityHeaders(false)(http.NotFoundHandler()); serve(got, httptest.NewRequest("GET", "/", nil)).Header().Get("Strict-Transport-Security") != "" {
		t.Error("Strict-Transport-Security outside production")
	}
}

func TestNewRequestIDsAreWellFormedAndDistinct(t *testing.T) {
	form := regexp.MustCompile(`^req_[0-9a-f]{24}$`)
	seen := map[string]bool{}
	for range 10000 {
		id := newRequestID()
		if !form.MatchString(id) || seen[id] {
			t.Fatalf("id %q: well formed %v, seen before %v", id, form.MatchString(id), seen[id])
		}
		seen[id] = true
	}
}

// The access line carries what it always did, in slog's shape, with the time the request ended.
func TestAccessLogLine(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	var observed []string
	h := WithRequestID(AccessLog(logger, func(route, method string, status int, took time.Duration) {
		observed = append(observed, fmt.Sprint(route, " ", method, " ", status))
	})(Routed(func() *http.ServeMux {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
		return mux
	}())))
	before := time.Now()
	r := httptest.NewRequest("GET", "/things/42?secret=1", nil)
	r.Header.Set("X-Request-Id", "req-abc")
	serve(h, r)
	var line map[string]any
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("access line %q: %v", logs.String(), err)
	}
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(line["time"]))
	if err != nil || at.Before(before.Truncate(time.Millisecond)) || at.After(time.Now()) {
		t.Errorf("time %v (%v), want between %v and now", line["time"], err, before)
	}
	want := map[string]any{"level": "INFO", "msg": "request", "request_id": "req-abc", "method": "GET", "path": "/things/42",
		"route": "GET /things/{id}", "status": 418.0}
	for key, value := range want {
		if line[key] != value {
			t.Errorf("%s = %v, want %v", key, line[key], value)
		}
	}
	if d, ok := line["duration"].(float64); !ok || d < 0 || len(line) != len(want)+2 {
		t.Errorf("duration %v, or keys beyond these: %v", line["duration"], line)
	}
	if strings.Contains(logs.String(), "secret") {
		t.Errorf("the query string was logged: %s", logs.String())
	}
	if len(observed) != 1 || observed[0] != "/things/{id} GET 418" {
		t.Errorf("observed %q", observed)
	}

	logs.Reset()
	quiet := WithRequestID(AccessLog(slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))(http.NotFoundHandler()))
	serve(quiet, httptest.NewRequest("GET", "/", nil))
	if logs.Len() != 0 {
		t.Errorf("an access line above the logger's level: %s", logs.String())
	}
}

func TestRefuseControlBytes(t *testing.T) {
	passed := 0
	h := RefuseControlBytes(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed++ }))
	for _, target := range []string{"/api/v1/payments/pay_1", "/api/v1/payments?limit=20&status=succeeded", "/caf%C3%A9?q=%C3%A9t%C3%A9"} {
		if w := serve(h, httptest.NewRequest("GET", target, nil)); w.Code != http.StatusOK {
			t.Errorf("%s answered %d", target, w.Code)
		}
	}
	for _, target := range []string{"/api/v1/payments/pay_%00", "/api/v1/payments/%FF", "/p?limit=%0A", "/p?li%01mit=2", "/p?a=1&a=%7F", "/p?a=%C3"} {
		if w := serve(h, httptest.NewRequest("GET", target, nil)); w.Code != http.StatusBadRequest || errorOf(t, w)["code"] != "invalid_request" {
			t.Errorf("%s answered %d %s", target, w.Code, w.Body.String())
		}
	}
	if passed != 3 {
		t.Errorf("%d requests reached the handler, want 3", passed)
	}
}

func TestForkNamesItsRoute(t *testing.T) {
	var at, elsewhere []string
	var logs bytes.Buffer
	h := WithRequestID(AccessLog(slog.New(slog.NewJSONHandler(&logs, nil)))(Fork("/query",
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { at = append(at, valuesOf(r.Context()).route) }),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere = append(elsewhere, r.URL.Path) }))))
	for _, path := range []string{"/query", "/query/", "/", "/api/v1/payments", "/query?x=1", "/qu%65ry", "/query%2F"} {
		serve(h, httptest.NewRequest("POST", path, nil))
	}
	if fmt.Sprint(at) != "[/query /query /query]" || fmt.Sprint(elsewhere) != "[/query/ / /api/v1/payments /query/]" {
		t.Errorf("at %q, elsewhere %q", at, elsewhere)
	}
	// A request elsewhere that no inner mux named (refused before one, say) is "/"'s, as a mux's.
	if routes := fmt.Sprint(loggedRoutes(t, logs.String())); routes != "[/query / / / /query /query /]" {
		t.Errorf("routes logged %s", routes)
	}
	// An unclean path is redirected to the clean one, named by the route it would have taken.
	for path, want := range map[string]string{"//query": "/query", "/x/../query": "/query", "/api//payments/": "/"} {
		logs.Reset()
		w := serve(h, httptest.NewRequest("GET", path, nil))
		var line struct{ Route string }
		json.Unmarshal(logs.Bytes(), &line)
		if w.Code/100 != 3 || w.Header().Get("Location") != cleanPath(path) || line.Route != want {
			t.Errorf("%s answered %d to %q, route %q; want a redirect to %s, route %q", path, w.Code, w.Header().Get("Location"), line.Route, cleanPath(path), want)
		}
	}
	if len(at) != 3 || len(elsewhere) != 4 {
		t.Errorf("a redirected request reached a handler: at %q, elsewhere %q", at, elsewhere)
	}
	for p, want := range map[string]string{"": "/", "/": "/", "/a/": "/a/", "/a//b/": "/a/b/", "a": "/a", "/a/./b/../c": "/a/c"} {
		if got := cleanPath(p); got != want {
			t.Errorf("cleanPath(%q) = %q, want %q", p, got, want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { cleanPath("/api/v1/payments/") }); allocs != 0 {
		t.Errorf("a clean path allocated %v times", allocs)
	}
}

// loggedRoutes is the route of each access line in logs, in order.
func loggedRoutes(t *testing.T, logs string) []string {
	t.Helper()
	var routes []string
	for line := range strings.Lines(logs) {
		var access struct{ Msg, Route string }
		if err := json.Unmarshal([]byte(line), &access); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if access.Msg == "request" {
			routes = append(routes, access.Route)
		}
	}
	return routes
}

// A request that failed for the database's absence (a failover) answers 503 with Retry-After,
// to be sent again shortly; one that failed otherwise stays a server error, its cause unshown.
func TestWriteErrorAnswersTheDatabasesAbsenceWith503(t *testing.T) {
	// A port where nothing listens, as a dead primary's is.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	_, err = pgx.Connect(context.Background(), "postgres://postgres@"+closed.Addr().String()+"/paygate?sslmode=disable&connect_timeout=2")
	refused := fmt.Errorf("recording the payment: %w", err)
	w := httptest.NewRecorder()
	WriteError(w, httptest.NewRequest("POST", "/", nil), refused, nil)
	if got := errorOf(t, w)["code"]; w.Code != http.StatusServiceUnavailable || got != "service_unavailable" || w.Header().Get("Retry-After") != "2" {
		t.Errorf("the database's absence answered %d %v, Retry-After %q", w.Code, got, w.Header().Get("Retry-After"))
	}
	if strings.Contains(w.Body.String(), "refused") {
		t.Errorf("the cause leaked: %s", w.Body.String())
	}
	w = httptest.NewRecorder()
	WriteError(w, httptest.NewRequest("POST", "/", nil), fmt.Errorf("a bug"), nil)
	if w.Code != http.StatusInternalServerError || w.Header().Get("Retry-After") != "" {
		t.Errorf("a bug answered %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
}
