// Package rest is the REST shim: it keeps the original /api/v1 routes by decoding each request,
// calling the same GraphQL resolver method the GraphQL twin calls, and encoding the envelope.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/idempotency"
	"github.com/paygate/paygate/internal/web"
)

// Handlers serve the REST routes.
type Handlers struct {
	query    generated.QueryResolver
	mutation generated.MutationResolver
	payment  generated.PaymentResolver
	// idempotency stores the responses of POSTs sent with an Idempotency-Key.
	idempotency *idempotency.Store
	// cursorAt turns a payment ID (starting_after, ending_before) into a Relay cursor.
	cursorAt func(ctx context.Context, id, param string) (*ent.Cursor, error)
}

// New returns the REST handlers over the resolver.
func New(r *graph.Resolver) *Handlers {
	return &Handlers{query: r.Query(), mutation: r.Mutation(), payment: r.Payment(),
		idempotency: r.Idempotency, cursorAt: r.PaymentService.CursorAt}
}

// Routes registers every REST route on mux.
func (h *Handlers) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/auth/login", h.login)
	mux.HandleFunc("POST /api/v1/auth/refresh", h.refresh)
	mux.Handle("POST /api/v1/payments", requireScope(auth.ScopePaymentsWrite, h.idempotent(h.createPayment)))
	mux.Handle("GET /api/v1/payments", requireScope(auth.ScopePaymentsRead, h.listPayments))
	mux.Handle("GET /api/v1/payments/{id}", requireScope(auth.ScopePaymentsRead, h.getPayment))
	mux.Handle("POST /api/v1/payments/{id}/refunds", requireScope(auth.ScopeRefundsWrite, h.idempotent(h.refundPayment)))
	mux.Handle("GET /api/v1/payments/{id}/refunds", requireScope(auth.ScopePaymentsRead, h.listRefunds))
	// A known path with another method answers 405 with the methods it has.
	mux.Handle("/api/v1/auth/login", allow(http.MethodPost))
	mux.Handle("/api/v1/auth/refresh", allow(http.MethodPost))
	mux.Handle("/api/v1/payments", allow(http.MethodGet, http.MethodPost))
	mux.Handle("/api/v1/payments/{id}", allow(http.MethodGet))
	mux.Handle("/api/v1/payments/{id}/refunds", allow(http.MethodGet, http.MethodPost))
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		web.WriteError(w, r, apierror.New(apierror.NotFound, "no route "+r.Method+" "+r.URL.Path), nil)
	})
}

func allow(methods ...string) http.Handler {
	allowed := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		web.WriteError(w, r, apierror.New(apierror.MethodNotAllowed, r.Method+" is not allowed here; use "+allowed), nil)
	})
}

// requireScope guards a route with the same scope as the @hasScope directive on its GraphQL twin.
func requireScope(scope string, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := auth.RequireScope(r.Context(), scope); err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
		next(w, r)
	})
}

// decodeOptional is decode for a body that may be left out, with or without a length: an empty
// one leaves dst as it is.
func decodeOptional(r *http.Request, dst any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return apierror.New(apierror.InvalidRequest, "the request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return decode(r, dst)
}

// decode reads a JSON object body into dst strictly: unknown fields (names are case-sensitive),
// repeated fields, wrong types, trailing data and malformed JSON are invalid_request errors
// naming the field when there is one.
func decode(r *http.Request, dst any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return apierror.New(apierror.InvalidRequest, "the request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return apierror.New(apierror.InvalidRequest, "the request body must be a JSON object")
	}
	value, err := jsonValue(json.NewDecoder(bytes.NewReader(body)), "", 0)
	if apiErr, ok := errors.AsType[*apierror.Error](err); ok {
		return apiErr
	}
	if err == nil { // malformed JSON is reported by decoding it below
		if err := checkFieldNames(value, reflect.TypeOf(dst), ""); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err = dec.Decode(dst)
	if err == nil {
		if _, next := dec.Token(); next != io.EOF {
			err = errors.New("trailing data after the JSON object")
		}
	}
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return apierror.ForParam(apierror.InvalidRequest, typeErr.Field, fmt.Sprintf("%s must be a %s", typeErr.Field, jsonKind(typeErr.Type.Kind().String())))
	case errors.As(err, &typeErr):
		return apierror.New(apierror.InvalidRequest, "the request body must be a JSON object")
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return apierror.New(apierror.InvalidRequest, "the request body is not valid JSON")
	default:
		var fieldErr *fieldError
		if errors.As(err, &fieldErr) {
			return fieldErr.apiError
		}
		return apierror.New(apierror.InvalidRequest, "the request body is not valid JSON: "+err.Error())
	}
}

// maxBodyDepth bounds the nesting of a REST request body: the deepest request holds a few levels.
const maxBodyDepth = 16

// jsonValue reads the next JSON value from dec as json.Unmarshal into an any would, but refuses
// a key repeated in one object. encoding/json merges a repeated object into the struct field it
// fills, while the idempotency fingerprint keeps only the last one: {"card":{A},"card":{"cvc":C}}
// would charge card A yet share a fingerprint with any other card sent the same way.
func jsonValue(dec *json.Decoder, path string, depth int) (any, error) {
	token, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if (token == json.Delim('{') || token == json.Delim('[')) && depth == maxBodyDepth {
		// Request bodies are shallow; a deeper one is refused before it costs memory or time.
		return nil, apierror.ForParam(apierror.InvalidRequest, path, fmt.Sprintf("the request body nests deeper than %d levels", maxBodyDepth))
	}
	switch token {
	case json.Delim('{'):
		object := map[string]any{}
		for dec.More() {
			token, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := token.(string) // the decoder allows nothing else here
			if _, repeated := object[key]; repeated {
				return nil, apierror.ForParam(apierror.InvalidRequest, joinPath(path, key), joinPath(path, key)+" appears more than once")
			}
			if object[key], err = jsonValue(dec, joinPath(path, key), depth+1); err != nil {
				return nil, err
			}
		}
		_, err := dec.Token()
		return object, err
	case json.Delim('['):
		list := []any{}
		for dec.More() {
			item, err := jsonValue(dec, fmt.Sprintf("%s[%d]", path, len(list)), depth+1)
			if err != nil {
				return nil, err
			}
			list = append(list, item)
		}
		_, err := dec.Token()
		return list, err
	}
	return token, nil
}

// checkFieldNames refuses every JSON object key that is not exactly the name of a field of the
// struct it decodes into. encoding/json matches names case-insensitively, the last match winning,
// so {"Amount":"500.00","amount":"1.00"} would mean 1.00 to the handler while the idempotency
// fingerprint, which sees the keys as written, cannot tell it from the same keys in the other
// order, which means 500.00. With exact names only, a body means what it spells.
func checkFieldNames(value any, t reflect.Type, path string) error {
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil // the type reads its own JSON
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkFieldNames(value, t.Elem(), path)
	case reflect.Slice, reflect.Array:
		list, _ := value.([]any)
		for i, item := range list {
			if err := checkFieldNames(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map: // any key is allowed, as in metadata
		object, _ := value.(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(object)) {
			if err := checkFieldNames(object[key], t.Elem(), joinPath(path, key)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		object, _ := value.(map[string]any)
		fields := jsonFields(t)
		for _, key := range slices.Sorted(maps.Keys(object)) {
			field, known := fields[key]
			if !known {
				return apierror.ForParam(apierror.InvalidRequest, joinPath(path, key), "unknown field "+joinPath(path, key))
			}
			if err := checkFieldNames(object[key], field, joinPath(path, key)); err != nil {
				return err
			}
		}
	}
	return nil
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// fieldsByType caches jsonFields: request types are few and fixed.
var fieldsByType sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields maps the JSON names of a struct's fields, as encoding/json spells them, to their
// types. Request structs embed no structs, so promoted fields need no handling.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if fields, ok := fieldsByType.Load(t); ok {
		return fields.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for field := range t.Fields() {
		tag := field.Tag.Get("json")
		if !field.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = field.Name
		}
		fields[name] = field.Type
	}
	fieldsByType.Store(t, fields)
	return fields
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int", "int64", "int32":
		return "whole number"
	case "struct", "map":
		return "JSON object"
	default:
		return goKind
	}
}

// fieldError carries an API error out of a field's UnmarshalJSON through encoding/json.
type fieldError struct{ apiError *apierror.Error }

func (e *fieldError) Error() string { return e.apiError.Error() }
