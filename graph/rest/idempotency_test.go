package rest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/web"
)

// A panic may come after the card was charged, so the key must keep a 500 to replay: left
// claimed, every retry would be refused as in use for a day.
func TestPanicStoresA500ToReplay(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		h := &Handlers{idempotency: idempotency.NewStore(db.Ent, []byte("secret"), time.Now)}
		var logs bytes.Buffer
		calls := 0
		handler := web.WithRequestID(web.Recover(slog.New(slog.NewJSONHandler(&logs, nil)))(h.idempotent(func(http.ResponseWriter, *http.Request) {
			calls++
			panic("charged, then a bug")
		})))
		send := func() *httptest.ResponseRecorder {
			r := httptest.NewRequest(http.MethodPost, "/api/v1/payments", strings.NewReader(`{}`))
			r.Header.Set("Idempotency-Key", "k")
			r = r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Subject: "usr_1"}))
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, r)
			return w
		}

		first := send()
		if first.Code != http.StatusInternalServerError || errorCode(t, first) != "internal_error" || first.Header().Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: %d %q %s", first.Code, first.Header().Get("Idempotent-Replayed"), first.Body.String())
		}
		if !strings.Contains(logs.String(), "charged, then a bug") {
			t.Errorf("the panic did not reach Recover's log: %s", logs.String())
		}
		retry := send()
		if retry.Code != http.StatusInternalServerError || errorCode(t, retry) != "internal_error" || retry.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry: %d %q %s", retry.Code, retry.Header().Get("Idempotent-Replayed"), retry.Body.String())
		}
		if calls != 1 {
			t.Errorf("the handler ran %d times", calls)
		}
	})
}

func errorCode(t *testing.T, w *httptest.ResponseRecorder) any {
	t.Helper()
	var body struct {
		Error map[string]any `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("not JSON: %s", w.Body.String())
	}
	return body.Error["code"]
}

// TestResponseCopyUnwrap: keeping a copy of the answer hides nothing of the connection from
// http.ResponseController.
func TestResponseCopyUnwrap(t *testing.T) {
	if err := http.NewResponseController(&responseCopy{ResponseWriter: httptest.NewRecorder()}).Flush(); err != nil {
		t.Errorf("flush through responseCopy = %v", err)
	}
}
