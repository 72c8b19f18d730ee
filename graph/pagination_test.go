package graph

import (
	"context"
	"runtime"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestPageViewIsReadThroughItsOwnOperation: gqlgen caches collected fields per operation by the
// address of their selection, which a view's short-lived slice shares, after a collection, with
// the next one made. Read through the operation, a second payments field of one query would be
// shown the first one's selection.
func TestPageViewIsReadThroughItsOwnOperation(t *testing.T) {
	field := func(name string, selections ...ast.Selection) *ast.Field {
		return &ast.Field{Name: name, Alias: name, SelectionSet: selections}
	}
	for range 50 {
		// One query: { a: payments { totalCount edges pageInfo } b: payments { edges __typename pageInfo } },
		// whose views have the same length.
		oc := &graphql.OperationContext{}
		base := graphql.WithOperationContext(context.Background(), oc)
		var document []*graphql.FieldContext // the parsed query outlives its fields' resolution
		for _, want := range [][]string{{"totalCount", "edges"}, {"edges", "__typename"}} {
			selections := ast.SelectionSet{}
			for _, name := range want {
				selections = append(selections, field(name, field("cursor")))
			}
			fc := &graphql.FieldContext{Field: graphql.CollectedField{Field: field("payments"), Selections: append(selections, field("pageInfo"))}}
			document = append(document, fc)
			ctx := pageView(graphql.WithFieldContext(base, fc))
			got := graphql.CollectFields(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field.Selections, nil)
			if len(got) != len(want) || got[0].Name != want[0] {
				t.Fatalf("the view of %v is %v", want, got)
			}
			runtime.GC()
		}
		runtime.KeepAlive(document)
	}
}
