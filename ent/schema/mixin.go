// Package schema is Paygate's data model.
package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/paygate/paygate/internal/tenant"
)

// timestamps gives a resource created_at and updated_at, always in UTC.
type timestamps struct {
	mixin.Schema
}

// now is the default of every time field: the current time in UTC, to the microsecond that
// PostgreSQL keeps, so an answer shows the time a later read will.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func (timestamps) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Immutable().Default(now).
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(now).UpdateDefault(now).
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
	}
}

// hasScope is the GraphQL directive that guards a field with an access scope.
func hasScope(scope string) entgql.Directive {
	return entgql.NewDirective("hasScope", &ast.Argument{
		Name:  "scope",
		Value: &ast.Value{Raw: scope, Kind: ast.StringValue},
	})
}

// merchantOwned makes an entity a merchant's. Every query of it is filtered by the merchant its
// context is for, and every change held to that merchant, by the tenant package's interceptor
// and hook: a query cannot forget whose data it reads.
type merchantOwned struct {
	mixin.Schema
}

func (merchantOwned) Fields() []ent.Field {
	return []ent.Field{
		// The column's default is the database's alone, for the rows from before merchants
		// existed: what Paygate writes always names its merchant.
		field.String("merchant_id").Immutable().NotEmpty().MaxLen(40).
			Annotations(entgql.Skip(entgql.SkipAll), entsql.Default(tenant.DefaultMerchant)),
	}
}

func (merchantOwned) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{tenant.Filter()}
}

func (merchantOwned) Hooks() []ent.Hook {
	return []ent.Hook{tenant.Guard()}
}

// tracedCause keeps, with a row that leaves work for later (a payment to reconcile or expire,
// a refund to reconcile, a provider's event to apply, an event to deliver), the W3C traceparent
// of the request or background work that wrote it, so the span of that later work links to it.
// Only when that was sampled for tracing: otherwise none, and nothing is written.
type tracedCause struct {
	mixin.Schema
}

func (tracedCause) Fields() []ent.Field {
	return []ent.Field{
		field.String("trace_parent").Optional().Nillable().Immutable().MaxLen(55).
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}
