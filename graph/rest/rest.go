// Package rest is the REST shim: it keeps the original /api/v1 routes by decoding each request,
// calling the same GraphQL resolver method the GraphQL twin calls, and encoding the envelope.
package rest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/paging"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/web"
)

// Handlers serve the REST routes.
type Handlers struct {
	query    generated.QueryResolver
	mutation generated.MutationResolver
	payment  generated.PaymentResolver
	// webhookEvent reads an event's attempts.
	webhookEvent generated.WebhookEventResolver
	// cursorAt and eventCursorAt turn a payment's or a webhook event's ID (starting_after,
	// ending_before) into a Relay cursor.
	cursorAt, eventCursorAt, alertCursorAt func(ctx context.Context, id, param string) (*ent.Cursor, error)
	// shopperReturned settles a payment whose shopper came back from authenticating.
	shopperReturned func(ctx context.Context, id string, returned url.Values) (*ent.Payment, error)
	// providers are the providers' names, which the webhook logs may be filtered by.
	providers []string
	// merchantEventCursorAt, endpointCursorAt and deliveryCursorAt do for events told to
	// merchants, webhook endpoints and their deliveries what cursorAt does for payments.
	merchantEventCursorAt, endpointCursorAt func(ctx context.Context, id, param string) (*ent.Cursor, error)
	deliveryCursorAt                        func(ctx context.Context, endpointID, id, param string) (*ent.Cursor, error)
	// delivery reads one delivery to an endpoint with its tries.
	delivery func(ctx context.Context, endpointID, id string) (*ent.WebhookDelivery, error)
	// userCursorAt, apiKeyCursorAt and merchantCursorAt check that a starting_after or
	// ending_before of the lists paged by id names an item the caller lists.
	userCursorAt, apiKeyCursorAt, merchantCursorAt func(ctx context.Context, id, param string) (*ent.Cursor, error)
}

// New returns the REST handlers over the resolver.
func New(r *graph.Resolver) *Handlers {
	return &Handlers{query: r.Query(), mutation: r.Mutation(), payment: r.Payment(), webhookEvent: r.WebhookEvent(),
		cursorAt: r.PaymentService.CursorAt, eventCursorAt: r.WebhookLogs.CursorAt, alertCursorAt: r.Alerts.CursorAt,
		providers: r.WebhookLogs.Providers, shopperReturned: r.PaymentService.ShopperReturned,
		merchantEventCursorAt: r.Events.CursorAt, endpointCursorAt: r.Endpoints.EndpointCursorAt,
		deliveryCursorAt: r.Endpoints.DeliveryCursorAt, delivery: r.Endpoints.Delivery,
		userCursorAt: r.AuthService.UserCursorAt, apiKeyCursorAt: r.AuthService.APIKeyCursorAt, merchantCursorAt: r.AuthService.MerchantCursorAt}
}

// Allow answers a known path asked with another method: 405, with the methods it has.
func Allow(methods ...string) http.Handler {
	allowed := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowed)
		web.WriteError(w, r, apierror.New(apierror.MethodNotAllowed, r.Method+" is not allowed here; use "+allowed), nil)
	})
}

// NotFound answers a path no route has, in the REST envelope.
func NotFound(w http.ResponseWriter, r *http.Request) {
	web.WriteError(w, r, apierror.New(apierror.NotFound, "no route "+r.Method+" "+r.URL.Path), nil)
}

// Operation serves op's route with handle: the principal is authorised for op before the request
// is decoded (the service authorises again; this answers 401 or 403 before any 400), and the ids
// in its path are bounded before anything looks them up.
func (h *Handlers) Operation(op auth.Operation, handle http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := auth.Authorize(r.Context(), op); err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
		for _, name := range pathIDs {
			if err := checkID(name, r.PathValue(name)); err != nil {
				web.WriteError(w, r, err, nil)
				return
			}
		}
		handle(w, r)
	})
}

// pathIDs are the wildcards of the routes' paths, each an id.
var pathIDs = []string{"id", "delivery"}

// checkID refuses an id, named param, longer than any id Paygate makes.
func checkID(param, id string) error {
	if utf8.RuneCountInString(id) > prefixid.MaxLength {
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("%s is longer than any id (%d characters)", param, prefixid.MaxLength))
	}
	return nil
}

// page is a Relay page's arguments, read from REST's paging parameters.
type page struct {
	after, before *ent.Cursor
	first, last   *int
}

// readPage reads limit (1 to maxSize, default defaultSize) and starting_after (the page after
// this item) or ending_before (the page before it), Stripe style; cursorAt turns an item's ID
// into its cursor.
func readPage(r *http.Request, defaultSize, maxSize int, cursorAt func(ctx context.Context, id, param string) (*ent.Cursor, error)) (page, error) {
	q := r.URL.Query()
	limit := defaultSize
	if text := q.Get("limit"); text != "" {
		n, err := strconv.Atoi(text)
		if err != nil || n < 1 || n > maxSize {
			return page{}, apierror.ForParam(apierror.InvalidRequest, "limit", fmt.Sprintf("limit must be a whole number from 1 to %d", maxSize))
		}
		limit = n
	}
	startingAfter, endingBefore := q.Get("starting_after"), q.Get("ending_before")
	if err := cmp.Or(checkID("starting_after", startingAfter), checkID("ending_before", endingBefore)); err != nil {
		return page{}, err
	}
	var p page
	var err error
	switch {
	case startingAfter != "" && endingBefore != "":
		return page{}, apierror.ForParam(apierror.InvalidRequest, "ending_before", "give starting_after or ending_before, not both")
	case endingBefore != "":
		p.before, err = cursorAt(r.Context(), endingBefore, "ending_before")
		p.last = &limit
	case startingAfter != "":
		p.after, err = cursorAt(r.Context(), startingAfter, "starting_after")
		p.first = &limit
	default:
		p.first = &limit
	}
	return p, err
}

// readListPage reads the page of a list ordered by id (users, API keys, merchants), which takes
// no parameter but its paging's.
func readListPage(r *http.Request, cursorAt func(ctx context.Context, id, param string) (*ent.Cursor, error)) (page, error) {
	if err := knownParams(r.URL.Query(), "limit", "starting_after", "ending_before"); err != nil {
		return page{}, err
	}
	return readPage(r, paging.DefaultPageSize, paging.MaxPageSize, cursorAt)
}

// ids are the ids the page's cursors stand at, for a list paged by id.
func (p page) ids() (after, before *string) {
	if p.after != nil {
		after = &p.after.ID
	}
	if p.before != nil {
		before = &p.before.ID
	}
	return after, before
}

// hasMore is REST's has_more: whether there are items beyond the page in the direction it was
// read.
func (p page) hasMore(info ent.PageInfo) bool {
	if p.last != nil {
		return info.HasPreviousPage
	}
	return info.HasNextPage
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
	// A body of another type is refused before it is read: a browser sends text/plain across
	// origins without asking first, so reading it as JSON would let any page post to the API.
	if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		return apierror.New(apierror.UnsupportedMediaType, "send the request body as JSON, with Content-Type: application/json")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return apierror.New(apierror.InvalidRequest, "the request body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return apierror.New(apierror.InvalidRequest, "the request body must be a JSON object")
	}
	// Malformed JSON is left to the decoding below, which says what is wrong with it.
	if apiErr, ok := errors.AsType[*apierror.Error](checkFields(json.NewDecoder(bytes.NewReader(body)), reflect.TypeOf(dst), "", 0)); ok {
		return apiErr
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

// checkFields reads the next JSON value from dec against t, the type it decodes into, and refuses
// what encoding/json would take silently, leaving the request's meaning to the order of its keys:
//   - a key that is not exactly a field's name: encoding/json matches names case-insensitively,
//     the last match winning, so {"Amount":"500.00","amount":"1.00"} would mean 1.00 and the
//     same keys in the other order 500.00 (and "Amout" would read as a missing amount);
//   - a key repeated in one object: encoding/json merges a repeated object into the field it
//     fills, so {"card":{A},"card":{"cvc":C}} would charge card A with C's security code.
//
// Map keys (metadata) are the client's own, in any case. It reads in one pass, building nothing.
func checkFields(dec *json.Decoder, t reflect.Type, path string, depth int) error {
	token, err := dec.Token()
	if err != nil {
		return err
	}
	if text, ok := token.(string); ok && strings.ContainsRune(text, 0) {
		return unstorable(path)
	}
	if token != json.Delim('{') && token != json.Delim('[') {
		return nil
	}
	if depth == maxBodyDepth {
		// Request bodies are shallow; a deeper one is refused before it costs memory or time.
		return apierror.ForParam(apierror.InvalidRequest, path, fmt.Sprintf("the request body nests deeper than %d levels", maxBodyDepth))
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler)) {
		t = nil // the type reads its own JSON: its insides are not field names
	}
	var elem reflect.Type // what the items decode into; nil where decoding will fail on the type
	if t != nil && (t.Kind() == reflect.Map || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	}
	if token == json.Delim('[') {
		for i := 0; dec.More(); i++ {
			if err := checkFields(dec, elem, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		token, err := dec.Token()
		if err != nil {
			return err
		}
		key := token.(string) // the decoder allows nothing else here
		keyPath := joinPath(path, key)
		if strings.ContainsRune(key, 0) {
			return unstorable(keyPath)
		}
		if seen[key] {
			return apierror.ForParam(apierror.InvalidRequest, keyPath, keyPath+" appears more than once")
		}
		seen[key] = true
		fieldType := elem
		if t != nil && t.Kind() == reflect.Struct {
			var known bool
			if fieldType, known = jsonFields(t)[key]; !known {
				return apierror.ForParam(apierror.InvalidRequest, keyPath, "unknown field "+keyPath)
			}
		}
		if err := checkFields(dec, fieldType, keyPath, depth+1); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// unstorable refuses text holding a NUL character, which PostgreSQL cannot keep in a text
// column: checked once, as the body is read, for every field and key of every request.
func unstorable(path string) error {
	if path == "" {
		path = "body"
	}
	return apierror.ForParam(apierror.InvalidRequest, path, path+" holds a NUL character (\\u0000), which cannot be stored")
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

// knownParams refuses a query parameter not in known, naming it.
func knownParams(q url.Values, known ...string) error {
	for name := range q {
		if !slices.Contains(known, name) {
			return apierror.ForParam(apierror.InvalidRequest, name, "unknown parameter "+name+"; known: "+strings.Join(known, ", "))
		}
	}
	return nil
}
