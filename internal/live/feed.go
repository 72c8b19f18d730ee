package live

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/alert"
	"github.com/paygate/paygate/ent/alertchange"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/tenant"
)

// commitLag is how long after its rows were timed a transaction may commit: each round reads
// back this far before the newest change it has seen, so a change timed before another but
// committed after it is not missed. The times compared are all as the database keeps them, so
// the servers' clocks need not agree.
const commitLag = 5 * time.Second

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
	// from is the time of the newest change seen, which the next round reads from, less
	// commitLag; seen are the changes published since then, by when they were timed.
	from time.Time
	seen map[string]time.Time
	// providers are the statuses last published, by provider.
	providers map[string]metrics.ProviderStatus
	// started is when the feed began: what changed before was told before.
	started time.Time
}

// NewFeed returns f reading changes made from now on.
func NewFeed(f Feed) *Feed {
	f.wake = make(chan struct{}, 1)
	f.started = f.Now()
	f.from = f.started
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
	ctx = tenant.System(ctx) // every merchant's
	defer func() {
		select {
		case <-time.After(roundSpacing):
		case <-ctx.Done():
		}
	}()
	since := f.from.Add(-commitLag)
	var errs []error
	if f.Hub.Listening(Payment) || f.Hub.Listening(Refund) {
		errs = append(errs, f.events(ctx, since))
	}
	if f.Hub.Listening(Alert) {
		errs = append(errs, f.alerts(ctx, since))
	}
	if err := errors.Join(errs...); err != nil {
		return err // what failed is read again next round
	}
	for id, at := range f.seen {
		if at.Before(f.from.Add(-commitLag)) {
			delete(f.seen, id)
		}
	}
	return nil
}

// saw notes a change timed at as published, and moves the feed on to it.
func (f *Feed) saw(id string, at time.Time) {
	f.seen[id] = at
	if at.After(f.from) {
		f.from = at
	}
}

// events publishes the payments and refunds of the events written since since.
func (f *Feed) events(ctx context.Context, since time.Time) error {
	after, afterID := since, ""
	for {
		page, err := f.Client.Event.Query().
			Where(event.Or(event.CreatedAtGT(after), event.And(event.CreatedAt(after), event.IDGT(afterID)))).
			Order(ent.Asc(event.FieldCreatedAt), ent.Asc(event.FieldID)).
			Select(event.FieldID, event.FieldMerchantID, event.FieldType, event.FieldObjectID, event.FieldCreatedAt).Limit(feedBatch).All(ctx)
		if err != nil {
			return err
		}
		var payments, refunds []string
		var read []*ent.Event
		for _, e := range page {
			after, afterID = e.CreatedAt, e.ID
			if _, done := f.seen[e.ID]; done {
				continue
			}
			read = append(read, e)
			switch {
			case !e.CreatedAt.After(f.started): // told before the feed began
			case strings.HasPrefix(e.Type, "refund."):
				refunds = append(refunds, e.ObjectID) // a refund's payment is known once it is loaded
			case f.Hub.Wants(Change{Kind: Payment, ID: e.ObjectID, Merchant: e.MerchantID}):
				payments = append(payments, e.ObjectID)
			}
		}
		if err := f.publishPayments(ctx, payments); err != nil {
			return err
		}
		if err := f.publishRefunds(ctx, refunds); err != nil {
			return err
		}
		// Seen once published: a page that failed is read and published again.
		for _, e := range read {
			f.saw(e.ID, e.CreatedAt)
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
	if err != nil {
		return err
	}
	byID := make(map[string]*ent.Payment, len(found))
	for _, p := range found {
		byID[p.ID] = p
	}
	for _, id := range slices.Compact(ids) { // in the order the events were written
		if p := byID[id]; p != nil {
			f.Hub.Publish(Change{Kind: Payment, ID: p.ID, Merchant: p.MerchantID, Object: p})
		}
	}
	return nil
}

func (f *Feed) publishRefunds(ctx context.Context, ids []string) error {
	if len(ids) == 0 || !f.Hub.Listening(Refund) {
		return nil
	}
	found, err := f.Client.Refund.Query().Where(refund.IDIn(ids...)).All(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]*ent.Refund, len(found))
	for _, r := range found {
		byID[r.ID] = r
	}
	for _, id := range slices.Compact(ids) {
		if r := byID[id]; r != nil {
			f.Hub.Publish(Change{Kind: Refund, ID: r.ID, PaymentID: r.PaymentID, Merchant: r.MerchantID, Object: r})
		}
	}
	return nil
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
	seen := map[string]time.Time{}
	for _, c := range changed {
		if _, done := f.seen[c.ID]; !done {
			seen[c.ID] = c.At
			if c.At.After(f.started) {
				ids = append(ids, c.AlertID)
			}
		}
	}
	for _, a := range opened {
		if _, done := f.seen[a.ID]; !done {
			seen[a.ID] = a.OpenedAt
			if a.OpenedAt.After(f.started) {
				ids = append(ids, a.ID)
			}
		}
	}
	if len(ids) > 0 {
		found, err := f.Client.Alert.Query().Where(alert.IDIn(ids...)).Order(ent.Asc(alert.FieldOpenedAt)).All(ctx)
		if err != nil {
			return err
		}
		for _, a := range found {
			f.Hub.Publish(Change{Kind: Alert, ID: a.ID, Object: a})
		}
	}
	for id, at := range seen {
		f.saw(id, at)
	}
	return nil
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
