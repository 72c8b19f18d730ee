package graph

import (
	"context"
	"fmt"
	"math"

	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/paging"
	"github.com/paygate/paygate/internal/state"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/settings/settingsstore"
)

// MaxQueryCost bounds the estimated cost of one operation. A field costs 1 plus what it selects,
// and a list costs as many times what each item selects as it may hold, so a cost is the product
// of the list sizes along each path. A page of 100 payments with their refunds and status
// history costs about 127,000; refunds of refunds of refunds cost 100 times more at each level.
const MaxQueryCost = 200_000

// MaxNodes is the most IDs one nodes(ids:) looks up.
const MaxNodes = 100

// pageCost is the cost of a Relay page of first or last items, DefaultPageSize by default. A size
// out of range is refused by the resolver with a clearer error than a cost would give.
func pageCost(first, last *int, child int) int {
	size := paging.DefaultPageSize
	switch {
	case first != nil:
		size = *first
	case last != nil:
		size = *last
	}
	return listCost(min(max(size, 1), paging.MaxPageSize), child)
}

// listCosts sets the cost of every field that answers a list, by the most items it may hold.
func listCosts(c *generated.ComplexityRoot) {
	c.Query.Payments = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.PaymentOrder, _ *ent.PaymentWhereInput) int {
		return pageCost(first, last, child)
	}
	c.Query.AllPayments = c.Query.Payments
	c.Query.WebhookEvents = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.WebhookEventOrder, _ *ent.WebhookEventWhereInput) int {
		return pageCost(first, last, child)
	}
	c.Query.Alerts = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.AlertOrder, _ *ent.AlertWhereInput) int {
		return pageCost(first, last, child)
	}
	c.Query.Events = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.EventOrder, _ *ent.EventWhereInput) int {
		return pageCost(first, last, child)
	}
	c.Query.WebhookEndpoints = func(child int, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int, _ *ent.WebhookEndpointOrder) int {
		return pageCost(first, last, child)
	}
	c.Query.WebhookDeliveries = func(child int, _ string, _ *state.DeliveryStatus, _ *entgql.Cursor[string], first *int, _ *entgql.Cursor[string], last *int) int {
		return pageCost(first, last, child)
	}
	c.Query.Nodes = func(child int, ids []string) int {
		return listCost(min(max(len(ids), 1), MaxNodes), child)
	}
	c.Query.ConfigHistory = func(child int, first *int, _ *int) int {
		size := settingsstore.DefaultHistoryPage
		if first != nil {
			size = *first
		}
		return listCost(min(max(size, 1), settingsstore.MaxHistoryPage), child)
	}
	c.Payment.Refunds = func(child int) int { return listCost(payment.MaxRefunds, child) }
	c.Payment.StatusHistory = func(child int) int { return listCost(payment.MaxStatusChanges, child) }
	c.WebhookEvent.AttemptLog = func(child int) int { return listCost(attemptLogCost, child) }
	c.WebhookDelivery.AttemptLog = func(child int) int { return listCost(outbound.MaxAttemptLog, child) }
}

// attemptLogCost is what an event's attempt log is charged as: the retry policy allows at most 50
// attempts before an event is dead, and only an operator's retry starts another round.
const attemptLogCost = 100

// listCost is 1 for the field plus n items of child each, saturating instead of overflowing.
func listCost(n, child int) int {
	if child > (math.MaxInt32-1)/n {
		return math.MaxInt32
	}
	return 1 + n*child
}

// costLimit refuses an operation whose estimated cost is over limit, once its variables are
// known and before anything runs.
type costLimit struct {
	schema graphql.ExecutableSchema
	limit  int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = &costLimit{}

func (*costLimit) ExtensionName() string { return "CostLimit" }

func (c *costLimit) Validate(schema graphql.ExecutableSchema) error {
	c.schema = schema
	return nil
}

func (c *costLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if cost := complexity.Calculate(ctx, c.schema, oc.Operation, oc.Variables); cost > c.limit {
		return requestError(apierror.QueryTooComplex,
			fmt.Sprintf("the query may cost %d, over the limit of %d: ask for smaller pages or fewer nested lists", cost, c.limit))
	}
	return nil
}
