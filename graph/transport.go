package graph

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/internal/apierror"
)

const graphQLResponseJSON = "application/graphql-response+json"

// overHTTP is /query's only transport: POST, and GET for queries, as GraphQL over HTTP says,
// where gqlgen's own transports differ. Another method answers 405, a POST body that is not JSON
// 415, a mutation over GET 405 (gqlgen: 406), and parameters that are not a GraphQL request (no
// query, variables that are not an object) 400 whatever the client accepts. A request refused
// before it runs (it does not parse, validate, or fit the bounds) answers its errors and no data
// entry (gqlgen: "data": null), with 200 under application/json, since a legacy JSON client reads
// errors from the body, and 400 under application/graphql-response+json.
type overHTTP struct{}

var _ graphql.Transport = overHTTP{}

func (overHTTP) Supports(*http.Request) bool { return true }

func (overHTTP) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	switch r.Method {
	case http.MethodGet:
	case http.MethodPost:
		if mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mediaType != "application/json" {
			writeRequestError(w, http.StatusUnsupportedMediaType, apierror.UnsupportedMediaType, "send the GraphQL request as application/json")
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		writeRequestError(w, http.StatusMethodNotAllowed, apierror.MethodNotAllowed, "use POST, or GET for queries")
		return
	}
	ctx := r.Context()
	mediaType := answerMediaType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", mediaType)
	params, paramsErr := readParams(r)
	if paramsErr != nil {
		refuse(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{paramsErr}))
		return
	}
	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		status := http.StatusOK
		if mediaType == graphQLResponseJSON {
			status = http.StatusBadRequest
		}
		refuse(w, status, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		return
	}
	if opCtx.Operation.Operation == ast.Subscription {
		// One answer cannot carry a stream of them.
		writeRequestError(w, http.StatusBadRequest, apierror.InvalidRequest,
			"subscribe over a WebSocket (graphql-transport-ws) or Server-Sent Events (Accept: text/event-stream)")
		return
	}
	if r.Method == http.MethodGet && opCtx.Operation.Operation != ast.Query {
		w.Header().Set("Allow", http.MethodPost)
		writeRequestError(w, http.StatusMethodNotAllowed, apierror.MethodNotAllowed, "use POST for mutations")
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	writeJSON(w, http.StatusOK, responses(ctx))
}

// answerMediaType picks the answer's media type from Accept as gqlgen does: the first of
// application/json (or */*, application/*) and application/graphql-response+json the client
// names; application/json without Accept, as legacy clients expect; else
// application/graphql-response+json.
func answerMediaType(accept string) string {
	if accept == "" {
		return "application/json"
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", "application/json":
			return "application/json"
		case graphQLResponseJSON:
			return graphQLResponseJSON
		}
	}
	return graphQLResponseJSON
}

// readParams reads the GraphQL request from a POST's JSON body or a GET's query string.
func readParams(r *http.Request) (*graphql.RawParams, *gqlerror.Error) {
	params := &graphql.RawParams{Headers: r.Header}
	if r.Method == http.MethodPost {
		if err := decodeJSON(r.Body, params); err != nil {
			// Not the decoder's message, which may quote the body, and the body a card number.
			return nil, requestError(apierror.InvalidRequest, "the request body is not a GraphQL request: a JSON object of query and operationName (strings), variables and extensions (objects)")
		}
	} else {
		values, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, requestError(apierror.InvalidRequest, "the query string is not URL-encoded")
		}
		params.Query, params.OperationName = values.Get("query"), values.Get("operationName")
		for name, into := range map[string]*map[string]any{"variables": &params.Variables, "extensions": &params.Extensions} {
			if text := values.Get(name); text != "" {
				if err := decodeJSON(strings.NewReader(text), into); err != nil {
					return nil, requestError(apierror.InvalidRequest, name+" is not a JSON object")
				}
			}
		}
	}
	if params.Query == "" {
		return nil, requestError(apierror.InvalidRequest, "the request has no query")
	}
	return params, nil
}

// decodeJSON keeps numbers as their text, so that a Decimal in the variables never passes
// through a float.
func decodeJSON(r io.Reader, into any) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	return dec.Decode(into)
}

// refuse answers a request refused before it runs. GraphQL gives such an answer no data entry.
func refuse(w http.ResponseWriter, status int, resp *graphql.Response) {
	writeJSON(w, status, struct {
		Errors     gqlerror.List  `json:"errors"`
		Extensions map[string]any `json:"extensions,omitempty"`
	}{resp.Errors, resp.Extensions})
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	encoded, err := json.Marshal(body)
	if err != nil {
		// A bug: gqlgen's recovery answers it 500, as with its own transports.
		panic(fmt.Errorf("encoding a GraphQL answer: %w", err))
	}
	w.WriteHeader(status)
	w.Write(encoded)
}
