package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// nul is text PostgreSQL cannot keep in a text column.
const nul = "a\x00b"

// TestNULIsRefusedWhereverTextIsRead walks the OpenAPI document's request bodies and the GraphQL
// schema's arguments, and sends a NUL character in each string field in turn (keys of free-form
// objects too): every one is a 400 invalid_request naming the field, on both databases, never
// the 500 PostgreSQL's refusal used to become. So are out-of-range times in list filters.
func TestNULIsRefusedWhereverTextIsRead(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin")
		raw, err := os.ReadFile("../../graph/rest/openapi.json")
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		pathParam := regexp.MustCompile(`\{[^}]+\}`)
		sent := 0
		for path, operations := range doc["paths"].(map[string]any) {
			if !strings.HasPrefix(path, "/api/v1/") {
				continue // providers' webhooks are read only once their signature holds
			}
			for method, op := range operations.(map[string]any) {
				body, _ := get(op, "requestBody", "content", "application/json", "schema").(map[string]any)
				if body == nil {
					continue
				}
				for _, field := range stringFields(body, schemas, "", 0) {
					sent++
					r := env.request(strings.ToUpper(method), pathParam.ReplaceAllString(path, "x"), admin, field.body)
					if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != field.path {
						t.Errorf("%s %s with a NUL in %s = %d %.200s", strings.ToUpper(method), path, field.path, r.status, r.raw)
					}
				}
			}
		}

		schema := generated.NewExecutableSchema(generated.Config{}).Schema()
		for _, root := range []*ast.Definition{schema.Query, schema.Mutation} {
			for _, field := range root.Fields {
				for _, argument := range field.Arguments {
					for _, leaf := range graphStringFields(schema, argument.Type, "variables.v", map[string]bool{}) {
						sent++
						selection := ""
						if def := schema.Types[field.Type.Name()]; def != nil && (def.Kind == ast.Object || def.Kind == ast.Interface || def.Kind == ast.Union) {
							selection = "{ __typename }"
						}
						document := fmt.Sprintf("%s($v: %s) { %s(%s: $v) %s }", strings.ToLower(root.Name), argument.Type.String(), field.Name, argument.Name, selection)
						_, errs := env.graphql(admin, document, map[string]any{"v": leaf.value})
						if len(errs) != 1 || errs[0].code() != "invalid_request" || errs[0].Extensions["param"] != leaf.path {
							t.Errorf("%s with a NUL in %s = %+v", document, leaf.path, errs)
						}
					}
				}
			}
		}
		if _, errs := env.graphql(admin, `{ payments(where: {customerEmail: "a\u0000b"}) { totalCount } }`, nil); len(errs) != 1 || errs[0].code() != "invalid_request" {
			t.Errorf("a NUL written in the document = %+v", errs)
		}
		for _, path := range []string{"/api/v1/payments?created_gte=99999999999999999", "/api/v1/webhooks/logs?created_lte=-99999999999999999"} {
			if r := env.request(http.MethodGet, path, admin, nil); r.status != http.StatusBadRequest {
				t.Errorf("%s = %d %.200s", path, r.status, r.raw)
			}
		}
		t.Logf("%d fields walked", sent)
		if sent < 50 {
			t.Errorf("only %d fields walked", sent)
		}
	})
}

// textField is a request body with a NUL in the string at path, and nothing else.
type textField struct {
	path string
	body any
}

// stringFields lists every string an OpenAPI schema holds, each as the smallest body carrying
// a NUL there: fields, list items and the keys and values of free-form objects.
func stringFields(schema map[string]any, schemas map[string]any, path string, depth int) []textField {
	if ref, ok := schema["$ref"].(string); ok {
		schema = schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any)
	}
	if depth > 8 {
		return nil
	}
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	var fields []textField
	kinds := fmt.Sprint(schema["type"])
	switch {
	case strings.Contains(kinds, "string"):
		return []textField{{path, nul}}
	case strings.Contains(kinds, "array"):
		items, _ := schema["items"].(map[string]any)
		for _, item := range stringFields(items, schemas, path+"[0]", depth+1) {
			fields = append(fields, textField{item.path, []any{item.body}})
		}
	case strings.Contains(kinds, "object"):
		properties, _ := schema["properties"].(map[string]any)
		names := make([]string, 0, len(properties))
		for name := range properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			for _, inner := range stringFields(properties[name].(map[string]any), schemas, join(name), depth+1) {
				fields = append(fields, textField{inner.path, map[string]any{name: inner.body}})
			}
		}
		if free, ok := schema["additionalProperties"].(map[string]any); ok {
			for _, inner := range stringFields(free, schemas, join("k"), depth+1) {
				fields = append(fields, textField{inner.path, map[string]any{"k": inner.body}})
			}
			fields = append(fields, textField{join(nul), map[string]any{nul: "x"}})
		}
	}
	return fields
}

// graphField is a GraphQL variable with a NUL in the string at path.
type graphField struct {
	path  string
	value any
}

// graphStringFields lists every String or ID a GraphQL input type holds, each input type walked
// once.
func graphStringFields(schema *ast.Schema, t *ast.Type, path string, seen map[string]bool) []graphField {
	if t.Elem != nil {
		var fields []graphField
		for _, item := range graphStringFields(schema, t.Elem, path+"[0]", seen) {
			fields = append(fields, graphField{item.path, []any{item.value}})
		}
		return fields
	}
	def := schema.Types[t.Name()]
	switch {
	case t.Name() == "String" || t.Name() == "ID":
		return []graphField{{path, nul}}
	case def == nil || def.Kind != ast.InputObject, seen[def.Name]:
		return nil // each input type once: the filters' and, or and not hold themselves
	}
	seen[def.Name] = true
	var fields []graphField
	for _, f := range def.Fields {
		for _, inner := range graphStringFields(schema, f.Type, path+"."+f.Name, seen) {
			fields = append(fields, graphField{inner.path, map[string]any{f.Name: inner.value}})
		}
	}
	return fields
}
