package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/payment"
)

// eventObjects reads the payments and refunds a page of events tells of together, when the page
// selects them: a read of the page's payments and one of its refunds, rather than one per event.
type eventObjects struct {
	mu       sync.Mutex
	payments []string // the ids on the page, read at the first object asked
	refunds  []string
	read     map[string]ent.Noder // by id, once read
}

type eventObjectsKey struct{}

// batchEventObjects gives the events list a batch of its own for its events' objects.
func batchEventObjects(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if graphql.GetRootFieldContext(ctx).Field.Name == "events" {
		ctx = context.WithValue(ctx, eventObjectsKey{}, &eventObjects{})
	}
	return next(ctx)
}

// expect notes the objects of a page of events, to be read together.
func (b *eventObjects) expect(page *ent.EventConnection) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, edge := range page.Edges {
		if event.ShowsRefund(edge.Node.Type) {
			b.refunds = append(b.refunds, edge.Node.ObjectID)
		} else {
			b.payments = append(b.payments, edge.Node.ObjectID)
		}
	}
}

// object is e's object: read with all the page's on the first call, then from what was read.
func (b *eventObjects) object(ctx context.Context, payments *payment.Service, e *ent.Event) (ent.Noder, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.read == nil {
		b.read = map[string]ent.Noder{}
		if len(b.payments) > 0 {
			read, err := payments.GetMany(ctx, b.payments)
			if err != nil {
				return nil, false, err
			}
			for _, p := range read {
				b.read[p.ID] = p
			}
		}
		if len(b.refunds) > 0 {
			read, err := payments.GetRefunds(ctx, b.refunds)
			if err != nil {
				return nil, false, err
			}
			for _, r := range read {
				b.read[r.ID] = r
			}
		}
	}
	object, ok := b.read[e.ObjectID]
	return object, ok, nil
}
