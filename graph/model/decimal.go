package model

import (
	"encoding/json"
	"fmt"

	"github.com/99designs/gqlgen/graphql"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/money"
)

// The GraphQL codec of an amount, the Decimal scalar, kept out of the money package, which knows
// nothing of GraphQL. (The status and method enums keep theirs on their types: entgql requires
// an enum field's Go type to implement graphql.Marshaler.)

// MarshalDecimal writes an amount as a GraphQL string.
func MarshalDecimal(d money.Decimal) graphql.Marshaler {
	return graphql.MarshalString(string(d))
}

// UnmarshalDecimal reads an amount from a string or a JSON number (variables are decoded with
// json.Number, and literals are kept as text by the graph package), never from a float.
func UnmarshalDecimal(v any) (money.Decimal, error) {
	switch value := v.(type) {
	case string:
		return money.Decimal(value), nil
	case json.Number:
		return money.Decimal(value), nil
	}
	return "", apierror.ForParam(apierror.InvalidAmount, "amount", fmt.Sprintf("an amount must be a decimal string or number, not %s", describe(v)))
}
