package rest

import (
	"context"
	"errors"
	"net/http"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/idempotency"
)

// keyedCall reads a POST's Idempotency-Key header, which the service applies, and returns the
// context to call the service with and finish, to call with the service's error before anything
// is written to w. finish marks w as a replay when the service answered with an earlier call's
// outcome, and returns the error with the header named where the service named the key as
// GraphQL's input does (idempotency_key).
func keyedCall(r *http.Request) (ctx context.Context, key *string, finish func(w http.ResponseWriter, err error) error) {
	if header := r.Header.Get("Idempotency-Key"); header != "" {
		key = &header
	}
	ctx, replayed := idempotency.WatchReplays(r.Context())
	return ctx, key, func(w http.ResponseWriter, err error) error {
		if replayed() {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		if apiErr, ok := errors.AsType[*apierror.Error](err); ok && apiErr.Param == "idempotency_key" {
			return apierror.ForParam(apiErr.Code, "Idempotency-Key", apiErr.Message)
		}
		return err
	}
}
