// Package schema is Paygate's data model.
package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/mixin"
	"github.com/vektah/gqlparser/v2/ast"
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
