package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/paygate/paygate/internal/auth"
)

// pageView returns ctx for entgql's Paginate, showing it a view of the connection's selection:
//   - without pageInfo when the edges are selected. Paginate counts every row the filter matches
//     whenever pageInfo is selected, though it takes the page info from the page's own extra row:
//     a count per page, which costs more as the table grows. It still counts when totalCount is
//     asked for, or when no edges are (the page info then comes from the count);
//   - with edges and totalCount under their own names, whatever their aliases: Paginate looks
//     fields up by alias, so an aliased edges read as no rows and an aliased totalCount as the
//     page's length.
//
// The view is read through an operation context of its own, since gqlgen caches collected fields
// per operation by the address of their selection, which the view's short-lived slices would
// otherwise share with later fields. The REST shim calls without a selection, which Paginate
// reads as "everything", count included; it is shown the edges alone (every column, no count).
func pageView(ctx context.Context) context.Context {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil {
		ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{})
		return graphql.WithFieldContext(ctx, &graphql.FieldContext{Field: graphql.CollectedField{
			Field:      &ast.Field{Name: "payments", Alias: "payments"},
			Selections: ast.SelectionSet{&ast.Field{Name: "edges", Alias: "edges"}},
		}})
	}
	oc := graphql.GetOperationContext(ctx)
	collected := graphql.CollectFields(oc, fc.Field.Selections, nil)
	var edges bool
	for _, field := range collected {
		edges = edges || field.Name == "edges"
	}
	var view ast.SelectionSet
	for _, field := range collected {
		if field.Name == "pageInfo" && edges {
			continue
		}
		copied := *field.Field
		copied.Alias = copied.Name
		copied.SelectionSet = field.Selections // merged from every place the field is selected
		view = append(view, &copied)
	}
	private := &graphql.OperationContext{
		RawQuery: oc.RawQuery, Variables: oc.Variables, OperationName: oc.OperationName, Doc: oc.Doc, Operation: oc.Operation,
	}
	viewed := *fc
	viewed.Field.Selections = view
	return graphql.WithFieldContext(graphql.WithOperationContext(ctx, private), &viewed)
}

// listPage is the page of a short list ordered by id (users, API keys, merchants) its arguments
// ask for.
func listPage(first *int, after *string, last *int, before *string) auth.ListPage {
	page := auth.ListPage{First: first, Last: last}
	if after != nil {
		page.After = *after
	}
	if before != nil {
		page.Before = *before
	}
	return page
}
