package outbound

import (
	"context"
	"time"

	"github.com/paygate/paygate/internal/paging"

	"entgo.io/contrib/entgql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	events "github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/tenant"
)

// Events serve the events to the API: pages of them and one by its id. Every call is authorised here.
type Events struct {
	Client *ent.Client
	Now    func() time.Time
}

// EventsNewestFirst orders the events as they are listed unless told otherwise.
var EventsNewestFirst = &ent.EventOrder{Direction: entgql.OrderDirectionDesc, Field: ent.EventOrderFieldCreatedAt}

// List returns one page of events as a Relay connection, newest first unless orderBy says
// otherwise.
func (l *Events) List(ctx context.Context, after *ent.Cursor, first *int, before *ent.Cursor, last *int,
	orderBy *ent.EventOrder, where *ent.EventWhereInput) (*ent.EventConnection, error) {
	if err := auth.Authorize(ctx, auth.ListEvents); err != nil {
		return nil, err
	}
	first, err := paging.CheckPage(first, last)
	if err != nil {
		return nil, err
	}
	if err := paging.CheckFilter(where); err != nil {
		return nil, err
	}
	if orderBy == nil {
		orderBy = EventsNewestFirst
	}
	if err := cursorsFit(after, before); err != nil {
		return nil, err
	}
	return l.Client.Event.Query().Paginate(ctx, after, first, before, last, ent.WithEventOrder(orderBy), ent.WithEventFilter(where.Filter))
}

// CursorAt returns the cursor of the event with the given id under NewestFirst, for REST's
// starting_after and ending_before.
func (l *Events) CursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := auth.Authorize(ctx, auth.ListEvents); err != nil {
		return nil, err
	}
	e, err := l.Client.Event.Query().Where(event.ID(id)).Select(event.FieldCreatedAt).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no event has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	return &ent.Cursor{ID: id, Value: e.CreatedAt}, nil
}

// Get returns one event.
func (l *Events) Get(ctx context.Context, id string) (*ent.Event, error) {
	if err := auth.Authorize(ctx, auth.GetEvent); err != nil {
		return nil, err
	}
	e, err := l.Client.Event.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no event has the id "+id)
	}
	return e, err
}

// Purge deletes the events older than Retention, and returns how many.
func (l *Events) Purge(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	return l.Client.Event.Delete().Where(event.CreatedAtLT(l.Now().Add(-events.Retention))).Exec(ctx)
}
