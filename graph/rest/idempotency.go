package rest

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/web"
)

// idempotent makes a POST route honour the Idempotency-Key header: the first response is stored
// and replayed with Idempotent-Replayed: true. It runs once the principal is authorised.
func (h *Handlers) idempotent(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("Idempotency-Key")
		principal, ok := auth.PrincipalFrom(r.Context())
		if key == "" || !ok {
			next(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fingerprint := h.idempotency.Fingerprint([]byte("rest"), []byte(r.Method+" "+r.URL.Path), body)
		stored, err := h.idempotency.Begin(r.Context(), principal.Subject, key, fingerprint)
		if err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
		if stored != nil {
			w.Header().Set("Idempotent-Replayed", "true")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(stored.Status)
			w.Write(stored.Body)
			return
		}
		defer func() {
			if v := recover(); v != nil {
				// The handler may have charged the card before it panicked: store the 500 that
				// Recover answers, so that a retry replays it rather than charging again.
				status, body := web.ErrorResponse(r, errors.New("panic"))
				h.finish(r, principal.Subject, key, idempotency.Response{Status: status, Body: body})
				panic(v)
			}
		}()
		rec := &responseCopy{ResponseWriter: w, status: http.StatusOK}
		next(rec, r)
		h.finish(r, principal.Subject, key, idempotency.Response{Status: rec.status, Body: rec.body.Bytes()})
	}
}

// finish stores the response of the request holding key; a failure is logged, as the answer
// has been given.
func (h *Handlers) finish(r *http.Request, principal, key string, resp idempotency.Response) {
	if err := h.idempotency.Finish(r.Context(), principal, key, resp); err != nil {
		web.Logger(r.Context()).ErrorContext(r.Context(), "storing an idempotent response failed",
			"request_id", web.RequestID(r.Context()), "error", err)
	}
}

// responseCopy passes a response through and keeps a copy of its status and body.
type responseCopy struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *responseCopy) WriteHeader(status int) {
	c.status = status
	c.ResponseWriter.WriteHeader(status)
}

func (c *responseCopy) Write(b []byte) (int, error) {
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the connection beneath.
func (c *responseCopy) Unwrap() http.ResponseWriter { return c.ResponseWriter }
