// Written by hand, beside the code ent generates: ent leaves files it did not write alone.

package ent

import "github.com/paygate/paygate/internal/money"

// GraphQL shows some of a payment's columns in shapes of their own: its amounts as decimals, its
// customer and card as objects. gqlgen binds those fields to the methods below (see gqlgen.yml).
// Being methods without a context rather than resolvers, they are read in line: a resolver runs in
// a goroutine of its own for each field of each payment, several per payment on a page of them.

// AmountDecimal is the amount as GraphQL's Decimal shows it.
func (_m *Payment) AmountDecimal() money.Decimal { return _m.decimal(_m.Amount) }

// AmountRefundedDecimal is the amount refunded as GraphQL's Decimal shows it.
func (_m *Payment) AmountRefundedDecimal() money.Decimal { return _m.decimal(_m.AmountRefunded) }

// AmountCapturableDecimal is the amount capturable as GraphQL's Decimal shows it.
func (_m *Payment) AmountCapturableDecimal() money.Decimal { return _m.decimal(_m.AmountCapturable) }

// AmountCapturedDecimal is the amount captured as GraphQL's Decimal shows it.
func (_m *Payment) AmountCapturedDecimal() money.Decimal { return _m.decimal(_m.AmountCaptured) }

func (_m *Payment) decimal(minor int64) money.Decimal {
	return money.Amount{Minor: minor, Currency: _m.Currency}.Decimal()
}

// CustomerFields is the payment as GraphQL's Customer shows it: its customer_email and
// customer_name.
func (_m *Payment) CustomerFields() *Payment { return _m }

// CardFields is the payment as GraphQL's Card shows it: its card_* columns.
func (_m *Payment) CardFields() *Payment { return _m }

// MetadataOrEmpty is the payment's metadata, an empty map when it has none: never null, over
// GraphQL as over REST and in events.
func (_m *Payment) MetadataOrEmpty() map[string]string {
	if _m.Metadata == nil {
		return map[string]string{}
	}
	return _m.Metadata
}
