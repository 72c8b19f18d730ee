// Package web is Paygate's HTTP plumbing: the JSON envelope every REST answer uses and the
// middleware every request passes through.
package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
)

type errorBody struct {
	Code      apierror.Code `json:"code"`
	Message   string        `json:"message"`
	Param     string        `json:"param,omitempty"`
	RequestID string        `json:"request_id,omitempty"`
}

type envelope struct {
	Success bool       `json:"success"`
	Data    any        `json:"data,omitempty"`
	HasMore *bool      `json:"has_more,omitempty"`
	Error   *errorBody `json:"error,omitempty"`
}

// WriteJSON writes a success envelope {"success":true,"data":...}.
func WriteJSON(w http.ResponseWriter, status int, data any) {
	write(w, status, envelope{Success: true, Data: data})
}

// WriteList writes a list envelope {"success":true,"data":[...],"has_more":...}.
func WriteList(w http.ResponseWriter, data any, hasMore bool) {
	write(w, http.StatusOK, envelope{Success: true, Data: data, HasMore: &hasMore})
}

// WriteError writes the error envelope with the status of its code. data, when not nil, rides
// along (a declined payment still exists and is returned with its 402).
func WriteError(w http.ResponseWriter, r *http.Request, err error, data any) {
	apiErr := APIError(err)
	switch {
	case apiErr.Code == apierror.Internal:
		Logger(r.Context()).ErrorContext(r.Context(), "request failed",
			"request_id", RequestID(r.Context()), "error", err)
	case IsDatabaseUnavailable(apiErr):
		Logger(r.Context()).WarnContext(r.Context(), "request failed: the database is unavailable",
			"request_id", RequestID(r.Context()), "error", err)
		w.Header().Set("Retry-After", strconv.Itoa(int(DatabaseRetryAfter/time.Second)))
	}
	write(w, Status(apiErr.Code), errorEnvelope(r, apiErr, data))
}

// DatabaseRetryAfter is when a request refused for the database's absence may come back: a
// failover on Patroni takes seconds to tens of seconds, and a client that keeps its idempotency
// key may retry as often as it likes.
const DatabaseRetryAfter = 2 * time.Second

// errDatabaseUnavailable answers a request that failed because the database could not be reached
// or could not take writes: the same request sent again shortly succeeds once a primary is back.
var errDatabaseUnavailable = apierror.New(apierror.ServiceUnavailable,
	"the database is unavailable for now (a failover may be under way): retry shortly, with the same idempotency key if the request had one")

// APIError is err as the API answers it: apierror.From's, except that a failure of the database's
// availability (database.Unavailable), not of a rule or a bug, is service_unavailable.
func APIError(err error) *apierror.Error {
	if _, ok := errors.AsType[*apierror.Error](err); !ok && database.Unavailable(err) {
		return errDatabaseUnavailable
	}
	return apierror.From(err)
}

// IsDatabaseUnavailable reports whether apiErr is APIError's answer for the database's absence.
func IsDatabaseUnavailable(apiErr *apierror.Error) bool { return apiErr == errDatabaseUnavailable }

func errorEnvelope(r *http.Request, apiErr *apierror.Error, data any) envelope {
	return envelope{
		Data: data,
		Error: &errorBody{
			Code:      apiErr.Code,
			Message:   apiErr.Message,
			Param:     apiErr.Param,
			RequestID: RequestID(r.Context()),
		},
	}
}

// jsonContentType is every JSON answer's Content-Type, shared as securityHeaders' values are.
var jsonContentType = []string{"application/json"}

func write(w http.ResponseWriter, status int, body envelope) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
