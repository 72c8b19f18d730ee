package graph

import (
	"context"
	"fmt"

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
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/prefixid"
)

// nodeType is a kind of object node(id:) resolves: the operation that reads it, and how to load
// many of them in one query (with the edges the request selects).
type nodeType struct {
	read auth.Operation
	load func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error
}

// nodeTypes maps an ID prefix to its node type.
var nodeTypes = map[string]nodeType{
	"pay": {read: auth.GetPayment, load: func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error {
		query, err := client.Payment.Query().Where(payment.IDIn(ids...)).CollectFields(ctx, "Payment", "Node")
		if err != nil {
			return err
		}
		payments, err := query.All(ctx)
		for _, p := range payments {
			into[p.ID] = p
		}
		return err
	}},
	"re": {read: auth.GetRefund, load: func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error {
		query, err := client.Refund.Query().Where(refund.IDIn(ids...)).CollectFields(ctx, "Refund", "Node")
		if err != nil {
			return err
		}
		refunds, err := query.All(ctx)
		for _, r := range refunds {
			into[r.ID] = r
		}
		return err
	}},
	"whe": {read: auth.GetWebhookEvent, load: func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error {
		query, err := inbound.WithoutPayload(client.WebhookEvent.Query()).Where(webhookevent.IDIn(ids...)).CollectFields(ctx, "WebhookEvent", "Node")
		if err != nil {
			return err
		}
		events, err := query.All(ctx)
		for _, e := range events {
			into[e.ID] = e
		}
		return err
	}},
	"evt": {read: auth.GetEvent, load: func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error {
		query, err := client.Event.Query().Where(event.IDIn(ids...)).CollectFields(ctx, "Event", "Node")
		if err != nil {
			return err
		}
		events, err := query.All(ctx)
		for _, e := range events {
			into[e.ID] = e
		}
		return err
	}},
	"we": {read: auth.GetWebhookEndpoint, load: func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error {
		query, err := client.WebhookEndpoint.Query().Where(webhookendpoint.IDIn(ids...)).CollectFields(ctx, "WebhookEndpoint", "Node")
		if err != nil {
			return err
		}
		endpoints, err := query.All(ctx)
		for _, e := range endpoints {
			into[e.ID] = e
		}
		return err
	}},
	"wd": {read: auth.ListWebhookDeliveries, load: func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error {
		query, err := client.WebhookDelivery.Query().Where(webhookdelivery.IDIn(ids...)).CollectFields(ctx, "WebhookDelivery", "Node")
		if err != nil {
			return err
		}
		deliveries, err := query.All(ctx)
		for _, d := range deliveries {
			into[d.ID] = d
		}
		return err
	}},
	"alr": {read: auth.ListAlerts, load: func(ctx context.Context, client *ent.Client, ids []string, into map[string]ent.Noder) error {
		query, err := client.Alert.Query().Where(alert.IDIn(ids...)).CollectFields(ctx, "Alert", "Node")
		if err != nil {
			return err
		}
		alerts, err := query.All(ctx)
		for _, a := range alerts {
			into[a.ID] = a
		}
		return err
	}},
}

// node resolves any ID to its object, or nil when no object has it.
func (r *Resolver) node(ctx context.Context, id string) (ent.Noder, error) {
	nodes, err := r.nodes(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	return nodes[0], nil
}

// nodes resolves up to MaxNodes IDs in one query per type; an ID no object has answers nil in
// its place, as node does.
func (r *Resolver) nodes(ctx context.Context, ids []string) ([]ent.Noder, error) {
	idsByPrefix := map[string][]string{}
	for _, id := range ids {
		prefix := prefixid.Prefix(id)
		if nodeType, ok := nodeTypes[prefix]; ok {
			if err := auth.Authorize(ctx, nodeType.read); err != nil {
				return nil, err
			}
			idsByPrefix[prefix] = append(idsByPrefix[prefix], id)
		}
	}
	// Counted once the principal is known to read these types: 401 and 403 come before a 400.
	if len(ids) > MaxNodes {
		return nil, apierror.ForParam(apierror.InvalidRequest, "ids", fmt.Sprintf("nodes takes at most %d ids", MaxNodes))
	}
	byID := make(map[string]ent.Noder, len(ids))
	for prefix, typeIDs := range idsByPrefix {
		if err := nodeTypes[prefix].load(ctx, r.Ent, typeIDs, byID); err != nil {
			return nil, err
		}
	}
	nodes := make([]ent.Noder, len(ids))
	for i, id := range ids {
		nodes[i] = byID[id]
	}
	return nodes, nil
}
