package graph

import (
	"context"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/alert"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/ent/webhookdelivery"
	"github.com/paygate/paygate/ent/webhookendpoint"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/prefixid"
)

// nodeTypes maps an ID prefix to the table holding its objects and the operation that reads them.
var nodeTypes = map[string]struct {
	table string
	read  auth.Operation
}{
	"pay": {payment.Table, auth.GetPayment},
	"re":  {refund.Table, auth.GetRefund},
	"whe": {webhookevent.Table, auth.GetWebhookEvent},
	"evt": {event.Table, auth.GetEvent},
	"we":  {webhookendpoint.Table, auth.GetWebhookEndpoint},
	"wd":  {webhookdelivery.Table, auth.ListWebhookDeliveries},
	"alr": {alert.Table, auth.ListAlerts},
}

// errNoNodeType is an ID whose prefix is none of nodeTypes'.
var errNoNodeType = errors.New("no node type has this ID's prefix")

// nodeTable tells ent's Noders which table holds the object an ID names.
func nodeTable(_ context.Context, id string) (string, error) {
	if nodeType, ok := nodeTypes[prefixid.Prefix(id)]; ok {
		return nodeType.table, nil
	}
	return "", errNoNodeType
}

// node resolves any ID to its object, or nil when no object has it.
func (r *Resolver) node(ctx context.Context, id string) (ent.Noder, error) {
	nodes, err := r.nodes(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return nodes[0], nil
}

// nodes resolves up to MaxNodes IDs through ent's Noders, one query per type, reading the columns
// the request selects (never a webhook event's payload, which no field serves); an ID no object
// has answers nil in its place, as node does.
func (r *Resolver) nodes(ctx context.Context, ids []string) ([]ent.Noder, error) {
	for _, id := range ids {
		if nodeType, ok := nodeTypes[prefixid.Prefix(id)]; ok {
			if err := auth.Authorize(ctx, nodeType.read); err != nil {
				return nil, err
			}
		}
	}
	// Counted once the principal is known to read these types: 401 and 403 come before a 400.
	if len(ids) > MaxNodes {
		return nil, apierror.ForParam(apierror.InvalidRequest, "ids", fmt.Sprintf("nodes takes at most %d ids", MaxNodes))
	}
	// Given several IDs, Noders adds an error to the response for each one it finds nothing for,
	// which answers null here without an error: its errors go to a response of its own, and only
	// a failure to look is kept, without the path of the ID it was added for.
	var failure error
	unreported := graphql.WithResponseContext(ctx, func(_ context.Context, err error) *gqlerror.Error {
		if failure == nil && !foundNothing(err) {
			failure = err
			if cause := errors.Unwrap(err); cause != nil {
				failure = cause
			}
		}
		return nil
	}, graphql.DefaultRecover)
	nodes, err := r.Ent.Noders(unreported, ids, ent.WithNodeType(nodeTable))
	if err != nil && foundNothing(err) {
		// Given one ID, Noders returns Noder's error instead.
		return []ent.Noder{nil}, nil
	}
	if err == nil {
		err = failure
	}
	if err != nil {
		return nil, err
	}
	return nodes, nil
}

// foundNothing tells Noder's and Noders' errors for an ID no object has from a failure to look.
func foundNothing(err error) bool {
	if ent.IsNotFound(err) || errors.Is(err, errNoNodeType) {
		return true
	}
	// An ID of a known type that no row has: entgql.ErrNodeNotFound.
	gqlErr, ok := errors.AsType[*gqlerror.Error](err)
	return ok && gqlErr.Extensions["code"] == "NOT_FOUND"
}
