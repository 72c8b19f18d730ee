//go:build ignore

// entc generates the ent client and the entgql GraphQL schema (graph/ent.graphqls).
package main

import (
	"log"
	"strings"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
	"github.com/vektah/gqlparser/v2/ast"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithConfigPath("gqlgen.yml"),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("graph/ent.graphqls"),
		entgql.WithWhereInputs(true),
		entgql.WithSchemaHook(alwaysThere),
	)
	if err != nil {
		log.Fatalf("creating entgql extension: %v", err)
	}
	cfg := &gen.Config{
		Features: []gen.Feature{gen.FeatureVersionedMigration, gen.FeatureExecQuery, gen.FeatureIntercept, gen.FeatureModifier},
	}
	// ent/template adds InsertStatement to every create builder: a create rendered, not run, for
	// the writes that send several statements in one exchange.
	if err := entc.Generate("./ent/schema", cfg, entc.Extensions(ex), entc.TemplateDir("./ent/template")); err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}

// alwaysThere marks non-null what the generated schema leaves nullable but Paygate always fills,
// so that typed clients need no null checks for it: a connection's edges and each edge's node, an
// object's lists of objects (an edge with no rows is an empty list), and a payment's metadata
// (an empty map when it has none).
func alwaysThere(_ *gen.Graph, schema *ast.Schema) error {
	for name, def := range schema.Types {
		if def.Kind != ast.Object {
			continue
		}
		for _, field := range def.Fields {
			switch {
			case strings.HasSuffix(name, "Connection") && field.Name == "edges",
				strings.HasSuffix(name, "Edge") && field.Name == "node":
				nonNull(field.Type)
			case field.Type.Elem != nil && isObject(schema, field.Type.Elem.Name()):
				nonNull(field.Type)
			case name == "Payment" && field.Name == "metadata":
				field.Type.NonNull = true
			}
		}
	}
	return nil
}

// nonNull makes t non-null, and for a list, each of its items too.
func nonNull(t *ast.Type) {
	t.NonNull = true
	if t.Elem != nil {
		t.Elem.NonNull = true
	}
}

func isObject(schema *ast.Schema, name string) bool {
	def := schema.Types[name]
	return def != nil && def.Kind == ast.Object
}
