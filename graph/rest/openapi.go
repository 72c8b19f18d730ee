package rest

import (
	_ "embed"
	"net/http"
)

// openAPIDocument describes every REST route, its parameters, bodies and answers. A test sends
// real requests to every route and checks each request and answer against it, so it cannot drift
// from the handlers.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument is GET /api/v1/openapi.json: the OpenAPI 3.0.3 document of this API, for
// client generators, open to anyone as the API's documentation is.
func OpenAPIDocument(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDocument)
}
