package app

import (
	"io"

	"github.com/vektah/gqlparser/v2/formatter"

	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/graph/rest"
)

// OpenAPIDocument is the OpenAPI document the server serves at /api/v1/openapi.json.
func OpenAPIDocument() []byte { return rest.OpenAPIDocumentFor(providerNames()) }

// WriteGraphQLSchema writes the GraphQL schema the server serves at /query, in one SDL document
// with its descriptions, as client generators read it.
func WriteGraphQLSchema(w io.Writer) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	formatter.NewFormatter(w).FormatSchema(schema)
}
