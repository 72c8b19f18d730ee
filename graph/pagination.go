package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// withoutPageInfo returns ctx for entgql's Paginate, with pageInfo left out of the selection it
// reads. Paginate counts every row the filter matches whenever pageInfo or totalCount is selected,
// though it takes the page info from the page's own extra row: a count per page, which costs more
// as the table grows. With pageInfo left out, the count runs only when totalCount is asked for.
// The REST shim calls without a selection, which Paginate reads as "everything", count included;
// it is given a selection of the edges alone (every column, no count).
func withoutPageInfo(ctx context.Context) context.Context {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{})
		return graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{
			Field:      &ast.Field{Name: "payments", Alias: "payments"},
			Selections: ast.SelectionSet{&ast.Field{Name: "edges", Alias: "edges"}},
		}})
	}
	var kept ast.SelectionSet
	for _, collected := range graphql.CollectFields(graphql.GetOperationContext(ctx), fc.Field.Selections, nil) {
		if collected.Name == "pageInfo" {
			continue
		}
		field := *collected.Field
		field.SelectionSet = collected.Selections // merged from every place the field is selected
		kept = append(kept, &field)
	}
	view := *fc
	view.Field.Selections = kept
	return graphql.WithFieldContext(ctx, &view)
}
