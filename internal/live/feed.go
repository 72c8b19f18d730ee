package live

import (
	"context"
	"errors"
	"reflect"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/alert"
	"github.com/paygate/paygate/ent/alertchange"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	eventtypes "github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/tenant"
)

// commitLag is how long after its rows were timed a transaction may commit: each round reads
// back this far before the newest change it has seen, so a change timed before another but
// committed after it is not missed. The servers' clocks are to agree within it (NTP keeps them
// within milliseconds).
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
	// events and alerts are where the rounds read the events and the alert history from.
	events, alerts readPosition
	// providers are the statuses last published, by provider.
	providers map[string]metrics.ProviderStatus
}

// readPosition is where a round reads a table from: commitLag before from, the time of the newest
// change seen, skipping the changes seen since then, which were published.
type readPosition struct {
	from time.Time
	seen map[string]time.Time
}

func (p *readPosition) since() time.Time { return p.from.Add(-commitLag) }

// saw notes a change timed at as published, and moves the position on to it.
func (p *readPosition) saw(id string, at time.Time) {
	p.seen[id] = at
	if at.After(p.from) {
		p.from = at
	}
}

// forget drops the changes seen that no round reads again.
func (p *readPosition) forget() {
	for id, at := range p.seen {
		if at.Before(p.since()) {
			delete(p.seen, id)
		}
	}
}

// idle moves the position on to now while no one here subscribes to what it reads. A subscriber
// who comes later is sent only what changed after it came, LookBack at most before, and now less
// commitLag is well before that: nothing it is to be sent is skipped, and the first round that
// reads for it reads commitLag of changes, however long no one listened.
func (p *readPosition) idle(now time.Time) {
	if now.After(p.from) {
		p.from = now
	}
	p.forget()
}

// NewFeed returns f reading changes made from now on.
func NewFeed(f Feed) *Feed {
	f.wake = make(chan struct{}, 1)
	now := f.Now()
	f.events = readPosition{from: now, seen: map[string]time.Time{}}
	f.alerts = readPosition{from: now, seen: map[string]time.Time{}}
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
	now := f.Now()
	var errs []error
	if f.Hub.Listening(Payment) || f.Hub.Listening(Refund) {
		errs = append(errs, f.readEvents(ctx))
	} else {
		f.events.idle(now)
	}
	if f.Hub.Listening(Alert) {
		errs = append(errs, f.readAlerts(ctx))
	} else {
		f.alerts.idle(now)
	}
	return errors.Join(errs...) // what failed is read again next round
}

// readEvents publishes the payments and refunds of the events written since the last round.
func (f *Feed) readEvents(ctx context.Context) error {
	after, afterID := f.events.since(), ""
	for {
		page, err := f.Client.Event.Query().
			Where(event.Or(event.CreatedAtGT(after), event.And(event.CreatedAt(after), event.IDGT(afterID)))).
			Order(ent.Asc(event.FieldCreatedAt), ent.Asc(event.FieldID)).
			Select(event.FieldID, event.FieldMerchantID, event.FieldType, event.FieldObjectID, event.FieldCreatedAt).Limit(feedBatch).All(ctx)
		if err != nil {
			return err
		}
		var payments, refunds []Change
		var read []*ent.Event
		for _, e := range page {
			after, afterID = e.CreatedAt, e.ID
			if _, done := f.events.seen[e.ID]; done {
				continue
			}
			read = append(read, e)
			change := Change{Kind: Payment, ID: e.ObjectID, Merchant: e.MerchantID, At: e.CreatedAt}
			switch {
			case eventtypes.ShowsRefund(e.Type):
				// A refund's payment is known once it is loaded, and whether anyone takes it then.
				change.Kind = Refund
				refunds = appendChange(refunds, change)
			case f.Hub.Wants(change):
				payments = appendChange(payments, change)
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
			f.events.saw(e.ID, e.CreatedAt)
		}
		if len(page) < feedBatch {
			f.events.forget()
			return nil
		}
	}
}

// appendChange appends c to changes, as one change with the one before when both are of one
// object: it is published once, as it now is.
func appendChange(changes []Change, c Change) []Change {
	if n := len(changes); n > 0 && changes[n-1].ID == c.ID {
		changes[n-1].At = c.At
		return changes
	}
	return append(changes, c)
}

func (f *Feed) publishPayments(ctx context.Context, changes []Change) error {
	if len(changes) == 0 || !f.Hub.Listening(Payment) {
		return nil
	}
	found, err := f.Client.Payment.Query().Where(payment.IDIn(changeIDs(changes)...)).All(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]*ent.Payment, len(found))
	for _, p := range found {
		byID[p.ID] = p
	}
	for _, c := range changes { // in the order the events were written
		if p := byID[c.ID]; p != nil {
			c.Object = p
			f.Hub.Publish(c)
		}
	}
	return nil
}

func (f *Feed) publishRefunds(ctx context.Context, changes []Change) error {
	if len(changes) == 0 || !f.Hub.Listening(Refund) {
		return nil
	}
	found, err := f.Client.Refund.Query().Where(refund.IDIn(changeIDs(changes)...)).All(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]*ent.Refund, len(found))
	for _, r := range found {
		byID[r.ID] = r
	}
	for _, c := range changes {
		if r := byID[c.ID]; r != nil {
			c.PaymentID, c.Merchant, c.Object = r.PaymentID, r.MerchantID, r
			f.Hub.Publish(c)
		}
	}
	return nil
}

func changeIDs(changes []Change) []string {
	ids := make([]string, len(changes))
	for i, c := range changes {
		ids[i] = c.ID
	}
	return ids
}

// readAlerts publishes the alerts raised, acknowledged or resolved since the last round.
func (f *Feed) readAlerts(ctx context.Context) error {
	since := f.alerts.since()
	changed, err := f.Client.AlertChange.Query().Where(alertchange.AtGTE(since)).
		Select(alertchange.FieldID, alertchange.FieldAlertID, alertchange.FieldAt).All(ctx)
	if err != nil {
		return err
	}
	opened, err := f.Client.Alert.Query().Where(alert.OpenedAtGTE(since)).Select(alert.FieldID, alert.FieldOpenedAt).All(ctx)
	if err != nil {
		return err
	}
	// Each alert changed is published once, timed by its latest change.
	seen := map[string]time.Time{}
	latest := map[string]time.Time{}
	note := func(id, alertID string, at time.Time) {
		if _, done := f.alerts.seen[id]; done {
			return
		}
		seen[id] = at
		if at.After(latest[alertID]) {
			latest[alertID] = at
		}
	}
	for _, c := range changed {
		note(c.ID, c.AlertID, c.At)
	}
	for _, a := range opened {
		note(a.ID, a.ID, a.OpenedAt)
	}
	if len(latest) > 0 {
		ids := make([]string, 0, len(latest))
		for id := range latest {
			ids = append(ids, id)
		}
		found, err := f.Client.Alert.Query().Where(alert.IDIn(ids...)).Order(ent.Asc(alert.FieldOpenedAt)).All(ctx)
		if err != nil {
			return err
		}
		for _, a := range found {
			f.Hub.Publish(Change{Kind: Alert, ID: a.ID, At: latest[a.ID], Object: a})
		}
	}
	for id, at := range seen {
		f.alerts.saw(id, at)
	}
	f.alerts.forget()
	return nil
}

// ProviderRound publishes each provider whose status on this server changed since it was last
// published: circuits are each server's own, so these changes are this server's alone.
func (f *Feed) ProviderRound(context.Context) error {
	if !f.Hub.Listening(Provider) {
		clear(f.providers)
		return nil
	}
	now := f.Now()
	for _, status := range f.Providers() {
		if last, ok := f.providers[status.Provider]; ok && reflect.DeepEqual(last, status) {
			continue
		}
		f.providers[status.Provider] = status
		f.Hub.Publish(Change{Kind: Provider, ID: status.Provider, At: now, Object: &status})
	}
	return nil
}
