package rest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"net/http"
	"strconv"
)

// openAPITemplate describes every REST route, its parameters, bodies and answers; each list of
// providers in it is the marker providersMarker, and each bound that is the number of providers
// (a list naming each provider at most once) the marker providerCountMarker, both filled in from
// the providers Paygate has. A test sends real requests to every route and checks each request
// and answer against the document, so it cannot drift from the handlers.
//
//go:embed openapi.json
var openAPITemplate []byte

// providersMarker stands for the providers' names in openapi.json, and providerCountMarker for
// how many there are.
var (
	providersMarker     = []byte(`["<providers>"]`)
	providerCountMarker = []byte(`"<number of providers>"`)
)

// OpenAPIDocument serves GET /api/v1/openapi.json: the document OpenAPIDocumentFor gives, for
// client generators; open to anyone as the API's documentation is.
func OpenAPIDocument(providers []string) http.HandlerFunc {
	document := OpenAPIDocumentFor(providers)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(document)
	}
}

// OpenAPIDocumentFor is the OpenAPI 3.0.3 document of this API, with providers wherever a
// provider is named.
func OpenAPIDocumentFor(providers []string) []byte {
	names, _ := json.Marshal(providers) // a list of strings always marshals
	document := bytes.ReplaceAll(openAPITemplate, providersMarker, names)
	return bytes.ReplaceAll(document, providerCountMarker, []byte(strconv.Itoa(len(providers))))
}
