package inbound

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/paygate/paygate/internal/paging"

	"entgo.io/contrib/entgql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/webhookattempt"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/state"
)

// Logs serves the stored webhook events to people: pages of them, one with its attempts, a
// requeue of one that failed, and each provider's figures. Every call is authorised here.
type Logs struct {
	Client *ent.Client
	// Providers are the providers' names, in the order their figures are listed.
	Providers []string
	Now       func() time.Time
	// SignatureFailures are this process's refusals of deliveries for their signature.
	SignatureFailures *SignatureFailures
	// Requeued is told after an event was requeued, so the worker takes it at once.
	Requeued func()
}

// NewestFirst orders the logs as they are listed unless told otherwise.
var NewestFirst = &ent.WebhookEventOrder{Direction: entgql.OrderDirectionDesc, Field: ent.WebhookEventOrderFieldReceivedAt}

// servedColumns are an event's columns but its payload, which is never served and may be large.
var servedColumns = slices.DeleteFunc(slices.Clone(webhookevent.Columns), func(c string) bool { return c == webhookevent.FieldPayload })

// withoutPayload makes q read events without their payloads; a GraphQL selection it is given
// after narrows it further.
func withoutPayload(q *ent.WebhookEventQuery) *ent.WebhookEventQuery {
	q.Select(servedColumns...)
	return q
}

// List returns one page of events as a Relay connection: first (after) pages forwards, last
// (before) backwards; neither means the first DefaultPageSize. Newest first unless orderBy says
// otherwise.
func (l *Logs) List(ctx context.Context, after *ent.Cursor, first *int, before *ent.Cursor, last *int,
	orderBy *ent.WebhookEventOrder, where *ent.WebhookEventWhereInput) (*ent.WebhookEventConnection, error) {
	if err := auth.Authorize(ctx, auth.ListWebhookEvents); err != nil {
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
		orderBy = NewestFirst
	}
	if err := cursorFits(after, "after"); err != nil {
		return nil, err
	}
	if err := cursorFits(before, "before"); err != nil {
		return nil, err
	}
	return withoutPayload(l.Client.WebhookEvent.Query()).Paginate(ctx, after, first, before, last,
		ent.WithWebhookEventOrder(orderBy), ent.WithWebhookEventFilter(where.Filter))
}

// cursorFits refuses a cursor without a time: every order of the logs is by received_at, so it
// was taken from another list, and its value would be compared with the wrong column.
func cursorFits(cursor *ent.Cursor, param string) error {
	if cursor == nil {
		return nil
	}
	if _, ok := cursor.Value.(time.Time); !ok {
		return apierror.ForParam(apierror.InvalidRequest, param, "the cursor belongs to another list")
	}
	return nil
}

// CursorAt returns the cursor of the event with the given id under NewestFirst, for REST's
// starting_after and ending_before.
func (l *Logs) CursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := auth.Authorize(ctx, auth.ListWebhookEvents); err != nil {
		return nil, err
	}
	event, err := l.Client.WebhookEvent.Query().Where(webhookevent.ID(id)).Select(webhookevent.FieldReceivedAt).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no webhook event has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	return &ent.Cursor{ID: id, Value: event.ReceivedAt}, nil
}

// Get returns one event with every attempt at processing it, oldest first.
func (l *Logs) Get(ctx context.Context, id string) (*ent.WebhookEvent, error) {
	if err := auth.Authorize(ctx, auth.GetWebhookEvent); err != nil {
		return nil, err
	}
	event, err := withoutPayload(l.Client.WebhookEvent.Query()).Where(webhookevent.ID(id)).
		WithAttemptLog(func(q *ent.WebhookAttemptQuery) {
			q.Order(ent.Asc(webhookattempt.FieldAt), ent.Asc(webhookattempt.FieldID))
		}).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no webhook event has the id "+id)
	}
	return event, err
}

// Retry requeues a failed or dead event: received again, its attempts counted from zero, due
// now. Its last error and its attempt log are kept, so what went wrong before stays readable.
// Any other event is refused with invalid_state: it is done with, or already waits for the
// worker.
func (l *Logs) Retry(ctx context.Context, id string) (*ent.WebhookEvent, error) {
	if err := auth.Authorize(ctx, auth.RetryWebhookEvent); err != nil {
		return nil, err
	}
	status, err := l.statusOf(ctx, id)
	if err != nil {
		return nil, err
	}
	if !status.CanMoveTo(state.WebhookReceived) {
		return nil, notRetriable(id, status)
	}
	// Conditional on the status read: of two retries at once, or a retry and the worker, one
	// changes the event and the other finds it changed.
	requeued, err := l.Client.WebhookEvent.UpdateOneID(id).Where(webhookevent.StatusEQ(status)).
		SetStatus(state.WebhookReceived).SetAttempts(0).SetNextAttemptAt(l.Now()).
		Select(webhookevent.FieldID, servedColumns...).Save(ctx)
	if ent.IsNotFound(err) {
		if status, err = l.statusOf(ctx, id); err != nil {
			return nil, err
		}
		return nil, notRetriable(id, status)
	}
	if err != nil {
		return nil, err
	}
	if l.Requeued != nil {
		l.Requeued()
	}
	return requeued, nil
}

// statusOf reads the status of the event with the given id: not_found when there is none.
func (l *Logs) statusOf(ctx context.Context, id string) (state.WebhookStatus, error) {
	event, err := l.Client.WebhookEvent.Query().Where(webhookevent.ID(id)).Select(webhookevent.FieldStatus).Only(ctx)
	if ent.IsNotFound(err) {
		return "", apierror.ForParam(apierror.NotFound, "id", "no webhook event has the id "+id)
	}
	if err != nil {
		return "", err
	}
	return event.Status, nil
}

func notRetriable(id string, status state.WebhookStatus) error {
	reason := "it is done with"
	if status.Due() {
		reason = "it already waits for the worker"
	}
	return apierror.ForParam(apierror.InvalidState, "id",
		fmt.Sprintf("only a failed or dead webhook event can be retried; %s is %s: %s", id, status, reason))
}

// latencySamples is how many of a provider's latest processed events its latencies are taken
// over, so the figures cost the same however many events are kept.
const latencySamples = 1000

// ProviderMetrics are one provider's webhook figures.
type ProviderMetrics struct {
	Provider string `json:"provider"`
	// Received counts every stored event of the provider, whatever its status; the others count
	// those in each status.
	Received  int `json:"received"`
	Processed int `json:"processed"`
	Ignored   int `json:"ignored"`
	Failed    int `json:"failed"`
	Dead      int `json:"dead"`
	// SignatureFailures counts the deliveries this server refused for their signature since it
	// started.
	SignatureFailures int64 `json:"signature_failures"`
	// P50MS and P99MS are percentiles of the time from receipt to processing over the provider's
	// latest processed events; nil before any.
	P50MS *float64 `json:"p50_ms"`
	P99MS *float64 `json:"p99_ms"`
}

// Metrics returns the figures of every provider, in the order of l.Providers, those without any
// event included.
func (l *Logs) Metrics(ctx context.Context) ([]*ProviderMetrics, error) {
	if err := auth.Authorize(ctx, auth.WebhookMetrics); err != nil {
		return nil, err
	}
	var counts []struct {
		Provider string              `json:"provider"`
		Status   state.WebhookStatus `json:"status"`
		Count    int                 `json:"count"`
	}
	if err := l.Client.WebhookEvent.Query().GroupBy(webhookevent.FieldProvider, webhookevent.FieldStatus).
		Aggregate(ent.Count()).Scan(ctx, &counts); err != nil {
		return nil, err
	}
	figures := make([]*ProviderMetrics, len(l.Providers))
	for i, name := range l.Providers {
		m := &ProviderMetrics{Provider: name, SignatureFailures: l.SignatureFailures.Count(name)}
		figures[i] = m
		for _, c := range counts {
			if c.Provider != name {
				continue
			}
			m.Received += c.Count
			switch c.Status {
			case state.WebhookProcessed:
				m.Processed = c.Count
			case state.WebhookIgnored:
				m.Ignored = c.Count
			case state.WebhookFailed:
				m.Failed = c.Count
			case state.WebhookDead:
				m.Dead = c.Count
			}
		}
		if m.Processed == 0 {
			continue
		}
		latencies, err := l.latencies(ctx, name)
		if err != nil {
			return nil, err
		}
		m.P50MS, m.P99MS = metrics.PercentileMS(latencies, 0.50), metrics.PercentileMS(latencies, 0.99)
	}
	return figures, nil
}

// latencies returns, sorted, the time from receipt to processing of the provider's latest
// latencySamples processed events. Latest by receipt, which the (provider, received_at) index
// walks newest first, where latest by processing would sort all of the provider's events.
func (l *Logs) latencies(ctx context.Context, provider string) ([]time.Duration, error) {
	events, err := l.Client.WebhookEvent.Query().
		Where(webhookevent.Provider(provider), webhookevent.StatusEQ(state.WebhookProcessed), webhookevent.ProcessedAtNotNil()).
		Order(ent.Desc(webhookevent.FieldReceivedAt), ent.Desc(webhookevent.FieldID)).
		Limit(latencySamples).
		Select(webhookevent.FieldReceivedAt, webhookevent.FieldProcessedAt).All(ctx)
	if err != nil {
		return nil, err
	}
	latencies := make([]time.Duration, len(events))
	for i, event := range events {
		latencies[i] = event.ProcessedAt.Sub(event.ReceivedAt)
	}
	slices.Sort(latencies)
	return latencies, nil
}
