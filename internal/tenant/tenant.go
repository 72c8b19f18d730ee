// Package tenant says whose data a piece of work may see and change: one merchant's, or, for the
// server's own background work and what platform staff read across merchants, every merchant's.
//
// The rule is enforced once, in the data layer: every query of a merchant's data is filtered by
// the merchant in its context, every change is held to it, and work whose context names neither
// a merchant nor the system is refused, so a query that forgets to say whose it is fails instead
// of reading everyone's.
package tenant

import (
	"context"
	"errors"
	"fmt"

	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"

	// The generated queries take a predicate through it. The schema imports this package, so a
	// schema change that leaves the generated code broken is generated with entc's snapshot.
	"github.com/paygate/paygate/ent/intercept"
)

// DefaultMerchant is the merchant every server starts with, and the one a database from before
// merchants existed is moved into. Its ID sorts before any other merchant's.
const DefaultMerchant = "mer_00000000000000000000000000"

// Field is the column that says whose a row is.
const Field = "merchant_id"

// ErrNoMerchant is the error of a query or change of a merchant's data made in a context that
// names no merchant and is not the system's: a bug, refused rather than let read everyone's.
var ErrNoMerchant = errors.New("a merchant's data was queried without saying whose: the context names no merchant")

type scopeKey struct{}

// scope is whose data work may see: merchant's, or everyone's when system.
type scope struct {
	merchant string
	system   bool
}

// For returns a context whose work sees and changes the merchant's data alone.
func For(ctx context.Context, merchant string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope{merchant: merchant})
}

// System returns a context whose work sees every merchant's data: the server's background work
// (webhooks from providers, deliveries, reconciliation, expiry) and its own bookkeeping
// (sessions, API key lookups). Rows it creates must name their merchant.
func System(ctx context.Context) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope{system: true})
}

// IsSystem says whether the context's work is the system's, seeing every merchant's data.
func IsSystem(ctx context.Context) bool {
	s, _ := ctx.Value(scopeKey{}).(scope)
	return s.system
}

// Merchant returns the merchant the context's work is for, if it is for one.
func Merchant(ctx context.Context) (string, bool) {
	s, _ := ctx.Value(scopeKey{}).(scope)
	return s.merchant, s.merchant != ""
}

// scopeOf returns whose data the context's work is for, or ErrNoMerchant when it says neither a
// merchant nor the system: the one check every query and change of a merchant's data passes.
func scopeOf(ctx context.Context) (scope, error) {
	s, _ := ctx.Value(scopeKey{}).(scope)
	if !s.system && s.merchant == "" {
		return s, ErrNoMerchant
	}
	return s, nil
}

// wherer is what ent generates for every mutation: a predicate on its own table.
type wherer interface {
	WhereP(...func(*sql.Selector))
}

// Filter is the query interceptor of every merchant-owned entity: a query in a merchant's context
// reads that merchant's rows alone, one in the system's reads all, any other is refused. It runs
// for every query ent builds, edges and counts included.
func Filter() ent.Interceptor { return filter{} }

// filter is Filter's interceptor.
type filter struct{}

// Intercept leaves the query to run as it is: the filter's work is Traverse's.
func (filter) Intercept(next ent.Querier) ent.Querier { return next }

// Traverse adds the merchant's predicate.
func (filter) Traverse(ctx context.Context, q ent.Query) error {
	s, err := scopeOf(ctx)
	if err != nil || s.system {
		return err
	}
	w, err := intercept.NewQuery(q)
	if err != nil {
		return fmt.Errorf("tenant: filtering by merchant: %w", err)
	}
	w.WhereP(sql.FieldEQ(Field, s.merchant))
	return nil
}

// Guard is the mutation hook of every merchant-owned entity: a row created in a merchant's
// context is that merchant's (naming another is refused), one created in the system's must name
// its merchant, and an update or delete in a merchant's context touches that merchant's rows
// alone, so another's answers as missing.
func Guard() ent.Hook {
	return func(next ent.Mutator) ent.Mutator {
		return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
			s, err := scopeOf(ctx)
			if err != nil {
				return nil, err
			}
			if m.Op().Is(ent.OpCreate) {
				named, set := m.Field(Field)
				switch {
				case s.system && (!set || named == ""):
					return nil, fmt.Errorf("tenant: a %s created by the system must name its merchant", m.Type())
				case !s.system && !set:
					if err := m.SetField(Field, s.merchant); err != nil {
						return nil, err
					}
				case !s.system && named != s.merchant:
					return nil, fmt.Errorf("tenant: a %s of merchant %v was created for merchant %s", m.Type(), named, s.merchant)
				}
				return next.Mutate(ctx, m)
			}
			if !s.system {
				w, ok := m.(wherer)
				if !ok {
					return nil, fmt.Errorf("tenant: %T cannot be held to a merchant", m)
				}
				w.WhereP(sql.FieldEQ(Field, s.merchant))
			}
			return next.Mutate(ctx, m)
		})
	}
}
