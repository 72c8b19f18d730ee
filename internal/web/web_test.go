package web

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
	for header, want := range map[string]string{
		"X-Content-Type-Options":    "nosniff",
		"X-Frame-Options":           "DENY",
		"Content-Security-Policy":   "default-src 'none'; frame-ancestors 'none'",
		"Cache-Control":             "no-store",
		"Strict-Transport-Security": "max-age=63072000; includeSubDomains",
	} {
		if got := w.Header().Get(header); got != want {
			t.Errorf("%s = %q, want %q", header, got, want)
		}
	}
}

// Every response starts from the same values: a handler that changes one of its headers changes
// it for itself alone.
func TestSecurityHeadersAreEachResponsesOwn(t *testing.T) {
	first := true
	h := SecurityHeaders(true)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first {
			first = false
			w.Header().Add("Cache-Control", "private")
			w.Header().Set("X-Frame-Options", "SAMEORIGIN")
			w.Header().Del("Referrer-Policy")
		}
	}))
	changed := serve(h, httptest.NewRequest("GET", "/", nil))
	if got := changed.Header().Values("Cache-Control"); len(got) != 2 || got[1] != "private" {
		t.Fatalf("the handler's Cache-Control: %q", got)
	}
	next := serve(h, httptest.NewRequest("GET", "/", nil))
	for header, want := range map[string]string{"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"} {
		if got := next.Header().Values(header); len(got) != 1 || got[0] != want {
			t.Errorf("the next response's %s = %q, want %q alone", header, got, want)
		}
	}
	if got := SecurityHeaders(false)(http.NotFoundHandler()); serve(got, httptest.NewRequest("GET", "/", nil)).Header().Get("Strict-Transport-Security") != "" {
		t.Error("Strict-Transport-Security outside production")
	}
}
