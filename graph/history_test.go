package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
)

// TestStatusHistoryIsReadWithThePaymentWhenAsked: the payment(id:) resolver reads the history in
// the payment's statement when the query selects it, however it is spelt (aliased, in an inline
// or named fragment, under Node), or when the REST shim asks for the whole payment; not otherwise.
func TestStatusHistoryIsReadWithThePaymentWhenAsked(t *testing.T) {
	schema := schemaForTest()
	cases := []struct {
		query string
		want  bool
	}{
		{`{ payment(id: "pay_1") { id statusHistory { to } } }`, true},
		{`{ payment(id: "pay_1") { id moves: statusHistory { to } } }`, true},
		{`{ payment(id: "pay_1") { ... on Payment { statusHistory { to } } } }`, true},
		{`{ payment(id: "pay_1") { ... on Node { ... on Payment { statusHistory { to } } } } }`, true},
		{`{ payment(id: "pay_1") { ...Moves } } fragment Moves on Payment { statusHistory { at } }`, true},
		{`{ payment(id: "pay_1") { id status refunds { id } } }`, false},
		{`{ payment(id: "pay_1") { statusHistory @skip(if: true) { to } } }`, false},
	}
	for _, c := range cases {
		doc, errs := gqlparser.LoadQuery(schema, c.query)
		if errs != nil {
			t.Fatalf("%s: %v", c.query, errs)
		}
		oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{}}
		ctx := graphql.WithOperationContext(context.Background(), oc)
		root := graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"})
		if len(root) != 1 || root[0].Name != "payment" {
			t.Fatalf("%s: root fields %v", c.query, root)
		}
		ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{Object: "Query", Field: root[0]})
		if got := wantsStatusHistory(ctx); got != c.want {
			t.Errorf("%s: read with its history %v; want %v", c.query, got, c.want)
		}
	}
	if wantsStatusHistory(context.Background()) {
		t.Error("a read outside GraphQL that did not ask takes the history")
	}
	if !wantsStatusHistory(WithStatusHistory(context.Background())) {
		t.Error("the REST shim's read of the whole payment leaves the history out")
	}
}
