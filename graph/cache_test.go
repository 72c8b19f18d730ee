package graph

import (
	"context"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const testSchema = `
scalar Decimal
input CardInput { number: String! }
input PayInput { amount: Decimal!, card: CardInput }
type Query { ok: Boolean }
type Mutation { pay(input: PayInput!): Boolean }
`

func parse(t *testing.T, query string) *ast.QueryDocument {
	t.Helper()
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: testSchema})
	doc, errs := gqlparser.LoadQuery(schema, query)
	if errs != nil {
		t.Fatal(errs)
	}
	return doc
}

func TestDocumentCacheKeepsDecimalTextAndNoInlineCards(t *testing.T) {
	ctx := context.Background()
	cache := newDocumentCache(10)

	const decimals = `mutation { pay(input: {amount: 0.1}) }`
	doc := parse(t, decimals)
	cache.Add(ctx, decimals, doc)
	amount := doc.Operations[0].SelectionSet[0].(*ast.Field).Arguments[0].Value.Children[0].Value
	if value, err := amount.Value(nil); err != nil || value != "0.1" {
		t.Errorf("inline Decimal 0.1 = %#v (%v), want the text \"0.1\"", value, err)
	}
	if _, ok := cache.Get(ctx, decimals); !ok {
		t.Error("a document without a card was not cached")
	}

	const inlineCard = `mutation { pay(input: {amount: "1", card: {number: "4242424242424242"}}) }`
	cache.Add(ctx, inlineCard, parse(t, inlineCard))
	if _, ok := cache.Get(ctx, inlineCard); ok {
		t.Error("a document holding a card number was cached")
	}

	const cardVariable = `mutation($card: CardInput) { pay(input: {amount: "1", card: $card}) }`
	cache.Add(ctx, cardVariable, parse(t, cardVariable))
	if _, ok := cache.Get(ctx, cardVariable); !ok {
		t.Error("a document taking the card as a variable was not cached")
	}
}
