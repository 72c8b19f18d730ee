package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// decimalLiterals keeps a Decimal written inline in a document (amount: 49.99) as its text.
// gqlparser would otherwise hand the value over as a float64, and money never passes through
// floating point. Variables need nothing: gqlgen decodes them as json.Number.
type decimalLiterals struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = decimalLiterals{}

func (decimalLiterals) ExtensionName() string { return "DecimalLiterals" }

func (decimalLiterals) Validate(graphql.ExecutableSchema) error { return nil }

func (decimalLiterals) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	for _, op := range oc.Doc.Operations {
		keepDecimalText(op.SelectionSet)
	}
	for _, fragment := range oc.Doc.Fragments {
		keepDecimalText(fragment.SelectionSet)
	}
	return nil
}

func keepDecimalText(selections ast.SelectionSet) {
	for _, selection := range selections {
		switch s := selection.(type) {
		case *ast.Field:
			for _, arg := range s.Arguments {
				keepValueText(arg.Value)
			}
			keepDecimalText(s.SelectionSet)
		case *ast.InlineFragment:
			keepDecimalText(s.SelectionSet)
		}
	}
}

func keepValueText(v *ast.Value) {
	if v == nil {
		return
	}
	if (v.Kind == ast.FloatValue || v.Kind == ast.IntValue) && v.ExpectedType != nil && v.ExpectedType.Name() == "Decimal" {
		v.Kind = ast.StringValue
		return
	}
	for _, child := range v.Children {
		keepValueText(child.Value)
	}
}
