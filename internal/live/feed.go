package live

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/alert"
	"github.com/paygate/paygate/ent/alertchange"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/metrics"
)

// commitLag is how long after its rows were timed a transaction may commit: each round reads
// back this far, so a change timed before the last round but committed after it is not missed.
const commitLag = time.Second

// roundSpacing is the least time between two rounds: a burst of announcements is read in one.
const roundSpacing = 200 * time.Millisecond

// feedBatch is how many events one query reads.
const feedBatch = 500

// Feed finds what changed on any server, in the events and alert history all servers write to
// the one database, and publishes each change once to the hub, with the object as it now is.
// A round runs when woken (a change was written, here or on another server) and on a tick.
type Feed struct {
	Client *ent.Client
	Hub    *Hub
	Now    func() time.Time
	// Providers is this server's view of the providers, whose changes it publishes.
	Providers func() []metrics.ProviderStatus

	wake chan struct{}
	// from is where the next round reads from, less commitLag; seen are the changes published
	// since then, by when they were timed.
	from time.Time
	seen map[string]time.Time
	// providers are the statuses last published, by provider.
	providers map[string]metrics.ProviderStatus
}

// NewFeed returns f reading changes made from now on.
func NewFeed(f Feed) *Feed {
	f.wake = make(chan struct{}, 1)
	f.from = f.Now()
	f.seen = map[string]time.Time{}
	f.providers = map[string]metrics.ProviderStatus{}
	return &f
}

// Wake makes the next round start now.
func (f *Feed) Wake() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Woken receives when the feed was woken.
func (f *Feed) Woken() <-chan struct{} { return f.wake }

// Round publishes what changed since the last round. Nothing is read for a kind no one here
// subscribes to.
func (f *Feed) Round(ctx context.Context) error {
	defer func() {
		select {
		case <-time.After(roundSpacing):
		case <-ctx.Done():
		}
	}()
	now := f.Now()
	since := f.from.Add(-commitLag)
	var errs []error
	if f.Hub.Listening(Payment) || f.Hub.Listening(Refund) {
		errs = append(errs, f.events(ctx, since))
	}
	if f.Hub.Listening(Alert) {
		errs = append(errs, f.alerts(ctx, since))
	}
	if err := errors.Join(errs...); err != nil {
		return err // read again from the same place next round
	}
	f.from = now
	for id, at := range f.seen {
		if at.Before(since) {
			delete(f.seen, id)
		}
	}
	return nil
}

// events publishes the payments and refunds of the events written since since.
func (f *Feed) events(ctx context.Context, since time.Time) error {
	after, afterID := since, ""
	for {
		page, err := f.Client.Event.Query().
			Where(event.Or(event.CreatedAtGT(after), event.And(event.CreatedAt(after), event.IDGT(afterID)))).
			Order(ent.Asc(event.FieldCreatedAt), ent.Asc(event.FieldID)).
			Select(event.FieldID, event.FieldType, event.FieldObjectID, event.FieldCreatedAt).Limit(feedBatch).All(ctx)
		if err != nil {
			return err
		}
		var payments, refunds []string
		for _, e := range page {
			after, afterID = e.CreatedAt, e.ID
			if _, done := f.seen[e.ID]; done {
				continue
			}
			f.seen[e.ID] = e.CreatedAt
			switch {
			case strings.HasPrefix(e.Type, "refund."):
				refunds = append(refunds, e.ObjectID) // a refund's payment is known once it is loaded
			case f.Hub.Wants(Change{Kind: Payment, ID: e.ObjectID}):
				payments = append(payments, e.ObjectID)
			}
		}
		if err := f.publishPayments(ctx, payments); err != nil {
			return err
		}
		if err := f.publishRefunds(ctx, refunds); err != nil {
			return err
		}
		if len(page) < feedBatch {
			return nil
		}
	}
}

func (f *Feed) publishPayments(ctx context.Context, ids []string) error {
	if len(ids) == 0 || !f.Hub.Listening(Payment) {
		return nil
	}
	found, err := f.Client.Payment.Query().Where(payment.IDIn(ids...)).All(ctx)
	for _, p := range found {
		f.Hub.Publish(Change{Kind: Payment, ID: p.ID, Object: p})
	}
	return err
}

func (f *Feed) publishRefunds(ctx context.Context, ids []string) error {
	if len(ids) == 0 || !f.Hub.Listening(Refund) {
		return nil
	}
	found, err := f.Client.Refund.Query().Where(refund.IDIn(ids...)).All(ctx)
	for _, r := range found {
		f.Hub.Publish(Change{Kind: Refund, ID: r.ID, PaymentID: r.PaymentID, Object: r})
	}
	return err
}

// alerts publishes the alerts raised, acknowledged or resolved since since.
func (f *Feed) alerts(ctx context.Context, since time.Time) error {
	changed, err := f.Client.AlertChange.Query().Where(alertchange.AtGTE(since)).
		Select(alertchange.FieldID, alertchange.FieldAlertID, alertchange.FieldAt).All(ctx)
	if err != nil {
		return err
	}
	opened, err := f.Client.Alert.Query().Where(alert.OpenedAtGTE(since)).Select(alert.FieldID, alert.FieldOpenedAt).All(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for _, c := range changed {
		if _, done := f.seen[c.ID]; !done {
			f.seen[c.ID] = c.At
			ids = append(ids, c.AlertID)
		}
	}
	for _, a := range opened {
		if _, done := f.seen[a.ID]; !done {
			f.seen[a.ID] = a.OpenedAt
			ids = append(ids, a.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	found, err := f.Client.Alert.Query().Where(alert.IDIn(ids...)).Order(ent.Asc(alert.FieldOpenedAt)).All(ctx)
	for _, a := range found {
		f.Hub.Publish(Change{Kind: Alert, ID: a.ID, Object: a})
	}
	return err
}

// ProviderRound publishes each provider whose status on this server changed since it was last
// published: circuits are each server's own, so these changes are this server's alone.
func (f *Feed) ProviderRound(context.Context) error {
	if !f.Hub.Listening(Provider) {
		clear(f.providers)
		return nil
	}
	for _, status := range f.Providers() {
		if last, ok := f.providers[status.Provider]; ok && reflect.DeepEqual(last, status) {
			continue
		}
		f.providers[status.Provider] = status
		f.Hub.Publish(Change{Kind: Provider, ID: status.Provider, Object: &status})
	}
	return nil
}
