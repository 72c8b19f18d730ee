// Package web is Paygate's HTTP plumbing: the JSON envelope every REST answer uses and the
// middleware every request passes through.
package web

import (
	"encoding/json"
	"net/http"

	"github.com/paygate/paygate/internal/apierror"
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
	apiErr := apierror.From(err)
	if apiErr.Code == apierror.Internal {
		Logger(r.Context()).ErrorContext(r.Context(), "request failed",
			"request_id", RequestID(r.Context()), "error", err)
	}
	write(w, Status(apiErr.Code), errorEnvelope(r, apiErr, data))
}

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
