package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
)

// documentCache keeps parsed, validated documents, and prepares each once, before it is shared:
//
//   - A Decimal written inline (amount: 49.99) keeps its text. gqlparser would hand the value over
//     as a float64, and money never passes through floating point. Variables need nothing: gqlgen
//     decodes them as json.Number.
//   - A document with an inline card (card: {number: "4242..."}) is used once and never kept, so
//     no card number stays in memory. Cards sent as variables are not part of the document.
type documentCache struct {
	lru *lru.LRU[*ast.QueryDocument]
}

func newDocumentCache(size int) documentCache {
	return documentCache{lru: lru.New[*ast.QueryDocument](size)}
}

func (c documentCache) Get(ctx context.Context, query string) (*ast.QueryDocument, bool) {
	return c.lru.Get(ctx, query)
}

// Add is called by gqlgen with every newly parsed document once it passed validation, before
// the document is executed, so expected types are known and no other request holds it yet.
func (c documentCache) Add(ctx context.Context, query string, doc *ast.QueryDocument) {
	var p preparer
	for _, op := range doc.Operations {
		p.selections(op.SelectionSet)
	}
	for _, fragment := range doc.Fragments {
		p.selections(fragment.SelectionSet)
	}
	if !p.inlineCard {
		c.lru.Add(ctx, query, doc)
	}
}

type preparer struct{ inlineCard bool }

func (p *preparer) selections(selections ast.SelectionSet) {
	for _, selection := range selections {
		switch s := selection.(type) {
		case *ast.Field:
			for _, arg := range s.Arguments {
				p.value(arg.Value)
			}
			p.selections(s.SelectionSet)
		case *ast.InlineFragment:
			p.selections(s.SelectionSet)
		}
	}
}

func (p *preparer) value(v *ast.Value) {
	if v == nil || v.ExpectedType == nil {
		return
	}
	switch name := v.ExpectedType.Name(); {
	case name == "Decimal" && (v.Kind == ast.FloatValue || v.Kind == ast.IntValue):
		v.Kind = ast.StringValue
	case name == "CardInput" && v.Kind == ast.ObjectValue:
		p.inlineCard = true
	}
	for _, child := range v.Children {
		p.value(child.Value)
	}
}
