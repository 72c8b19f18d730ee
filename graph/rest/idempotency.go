package rest

import (
	"context"
	"net/http"

	"github.com/paygate/paygate/internal/idempotency"
)

// keyedCall reads a POST's Idempotency-Key header, which the service applies, and returns the
// context to call the service with and a function that marks w as a replay when the service
// answered with an earlier call's outcome. It is called before anything is written to w.
func keyedCall(r *http.Request) (ctx context.Context, key *string, markReplay func(w http.ResponseWriter)) {
	if header := r.Header.Get("Idempotency-Key"); header != "" {
		key = &header
	}
	ctx, replayed := idempotency.WatchReplays(r.Context())
	return ctx, key, func(w http.ResponseWriter) {
		if replayed() {
			w.Header().Set("Idempotent-Replayed", "true")
		}
	}
}
