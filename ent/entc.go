//go:build ignore

// entc generates the ent client and the entgql GraphQL schema (graph/ent.graphqls).
package main

import (
	"log"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	ex, err := entgql.NewExtension(
		entgql.WithConfigPath("gqlgen.yml"),
		entgql.WithSchemaGenerator(),
		entgql.WithSchemaPath("graph/ent.graphqls"),
		entgql.WithWhereInputs(true),
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
