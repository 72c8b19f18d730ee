package outbound

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/ent/webhookdelivery"
	"github.com/paygate/paygate/ent/webhookendpoint"
	"github.com/paygate/paygate/internal/database"
	events "github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/internal/tracing"
)

// RetryWaits are the waits after each failed try of a delivery before the next, as the Standard
// Webhooks specification suggests: after the last, the delivery has failed.
var RetryWaits = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
	10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// Bounds of the deliveries.
const (
	// DeliveryTimeout bounds one try: an endpoint that has not answered by then failed it.
	DeliveryTimeout = 15 * time.Second
	// deliveryLease is how long a claimed try holds its delivery: longer than any try takes, so
	// only a try whose server died runs out of it, and the delivery is tried again by any server.
	deliveryLease = time.Minute
	// defaultMaxInFlight bounds the tries under way on one server.
	defaultMaxInFlight = 64
	// defaultPerEndpoint bounds the tries under way to one endpoint from one server, so an
	// endpoint that hangs holds only a few of them and never delays the others'.
	defaultPerEndpoint = 4
	// dispatchBatch is how many events one transaction fans out.
	dispatchBatch = 100
	// maxDueEndpoints bounds the endpoints one round looks at; the rest wait for the next.
	maxDueEndpoints = 500
	// maxErrorText bounds the error kept on a delivery or a try, as the columns do.
	maxErrorText = 1000
	// userAgent names Paygate to the endpoints.
	userAgent = "Paygate-Webhooks/1.0"
)

// Outcomes of a try, as the metrics count them.
const (
	OutcomeDelivered = "delivered"
	// OutcomeRetrying: the try failed and the delivery is tried again later.
	OutcomeRetrying = "retrying"
	// OutcomeFailed: the last try of the schedule failed.
	OutcomeFailed = "failed"
	// OutcomeGone: the endpoint answered 410 Gone, and was disabled.
	OutcomeGone = "gone"
)

// Deliveries takes the events to the merchants' endpoints. Each event is fanned out into one
// delivery per enabled endpoint subscribed to its type; the delivery rows are the queue, claimed
// by conditional updates, so any number of servers share the work and a try whose server dies is
// made again by another. Each try runs on its own, so a slow endpoint delays no other.
type Deliveries struct {
	Client *ent.Client
	// Sender makes each try: bounded by DeliveryTimeout, never redirected, and in production
	// never dialled to an address of Paygate's own networks.
	Sender *Sender
	Now    func() time.Time
	Logger *slog.Logger
	// Observe, when set, is told of each try's outcome and how long the endpoint took.
	Observe func(outcome string, latency time.Duration)
	// Jitter returns a number in [0, 1) that spreads retries (default: math/rand/v2).
	Jitter func() float64
	// MaxInFlight and PerEndpoint bound the tries under way on this server, in all and to one
	// endpoint (defaults 64 and 4).
	MaxInFlight, PerEndpoint int

	wake    chan struct{}
	running *running
}

// running are the tries under way on this server.
type running struct {
	mu       sync.Mutex
	busy     map[string]int // by endpoint
	inFlight int
	underWay sync.WaitGroup
}

// NewDeliveries returns d ready to run.
func NewDeliveries(d Deliveries) *Deliveries {
	d.wake = make(chan struct{}, 1)
	d.running = &running{busy: map[string]int{}}
	if d.Jitter == nil {
		d.Jitter = rand.Float64
	}
	if d.MaxInFlight <= 0 {
		d.MaxInFlight = defaultMaxInFlight
	}
	if d.PerEndpoint <= 0 {
		d.PerEndpoint = defaultPerEndpoint
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &d
}

// Wake makes the next round start now rather than at its next tick.
func (d *Deliveries) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Woken receives when the deliveries were woken: events were written or deliveries requeued.
func (d *Deliveries) Woken() <-chan struct{} { return d.wake }

// Wait returns once the tries under way have ended.
func (d *Deliveries) Wait() { d.running.underWay.Wait() }

// Round fans out the new events and starts a try of each due delivery there is room for. The
// tries go on in the background, until they end or ctx does.
func (d *Deliveries) Round(ctx context.Context) error {
	ctx = tenant.System(ctx) // every merchant's
	return errors.Join(d.Dispatch(ctx), d.startDue(ctx))
}

// Pending counts the deliveries not delivered yet, on every server: the queue.
func (d *Deliveries) Pending(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	return d.Client.WebhookDelivery.Query().Where(webhookdelivery.StatusEQ(state.DeliveryPending)).Count(ctx)
}

// Dispatch queues a delivery of each event not fanned out yet to every enabled endpoint of its
// merchant subscribed to its type. The events are claimed by a conditional update in the
// transaction that queues their deliveries, so two servers fanning out at once queue each delivery
// once; a batch is claimed in one statement, whatever its size.
func (d *Deliveries) Dispatch(ctx context.Context) error {
	ctx = tenant.System(ctx) // every merchant's
	for {
		waiting, err := d.Client.Event.Query().Where(event.FannedOut(false)).
			Order(ent.Asc(event.FieldCreatedAt), ent.Asc(event.FieldID)).
			Select(event.FieldID, event.FieldMerchantID, event.FieldType, event.FieldTraceParent).Limit(dispatchBatch).All(ctx)
		if err != nil || len(waiting) == 0 {
			return err
		}
		endpoints, err := d.Client.WebhookEndpoint.Query().Where(webhookendpoint.StatusEQ(state.EndpointEnabled)).
			Select(webhookendpoint.FieldID, webhookendpoint.FieldMerchantID, webhookendpoint.FieldEvents).All(ctx)
		if err != nil {
			return err
		}
		var queued bool
		fanOut := func(together bool) error {
			return inTx(ctx, d.Client, func(tx *ent.Tx) error {
				claimed, err := claim(ctx, tx, waiting, together)
				if err == nil {
					queued, err = d.queue(ctx, tx, claimed, endpoints)
				}
				return err
			})
		}
		err = fanOut(true)
		if errors.Is(err, errClaimedElsewhere) {
			err = fanOut(false)
		}
		if err != nil {
			return err
		}
		if queued {
			d.Wake()
		}
		if len(waiting) < dispatchBatch {
			return nil
		}
	}
}

// queue queues, within tx, a delivery of each claimed event to every enabled endpoint of its
// merchant subscribed to its type, and reports whether it queued any.
func (d *Deliveries) queue(ctx context.Context, tx *ent.Tx, claimed []*ent.Event, endpoints []*ent.WebhookEndpoint) (bool, error) {
	now := d.Now()
	var deliveries []*ent.WebhookDeliveryCreate
	for _, e := range claimed {
		for _, endpoint := range endpoints {
			if endpoint.MerchantID == e.MerchantID && events.Subscribed(endpoint.Events, e.Type) {
				deliveries = append(deliveries, tx.WebhookDelivery.Create().SetMerchantID(e.MerchantID).SetEndpointID(endpoint.ID).SetEventID(e.ID).
					SetType(e.Type).SetNillableTraceParent(e.TraceParent).SetNextAttemptAt(now).SetCreatedAt(now).SetUpdatedAt(now))
			}
		}
	}
	if len(deliveries) == 0 {
		return false, nil
	}
	return true, tx.WebhookDelivery.CreateBulk(deliveries...).Exec(ctx)
}

// errClaimedElsewhere says another server fanned out some of the events claimed together.
var errClaimedElsewhere = errors.New("another server fanned out some of these events")

// claim marks the waiting events fanned out within tx and returns those it claimed. Together, it
// claims them all in one statement, or fails with errClaimedElsewhere (the transaction is then
// to be rolled back) when another server fanned out any meanwhile; otherwise it claims each by a
// conditional update of its own, which tells which are this server's to fan out.
func claim(ctx context.Context, tx *ent.Tx, waiting []*ent.Event, together bool) ([]*ent.Event, error) {
	if together {
		ids := make([]string, len(waiting))
		for i, e := range waiting {
			ids[i] = e.ID
		}
		n, err := tx.Event.Update().Where(event.IDIn(ids...), event.FannedOut(false)).SetFannedOut(true).Save(ctx)
		switch {
		case err != nil:
			return nil, err
		case n != len(waiting):
			return nil, errClaimedElsewhere
		}
		return waiting, nil
	}
	// In the order of their ids, so that two servers claiming one by one at once take the locks
	// in one order and wait for each other rather than deadlock.
	byID := slices.SortedFunc(slices.Values(waiting), func(a, b *ent.Event) int { return strings.Compare(a.ID, b.ID) })
	var claimed []*ent.Event
	for _, e := range byID {
		n, err := tx.Event.Update().Where(event.ID(e.ID), event.FannedOut(false)).SetFannedOut(true).Save(ctx)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			claimed = append(claimed, e)
		}
	}
	return claimed, nil
}

// startDue claims and starts a try of each due delivery of an enabled endpoint, as many as the
// bounds on tries under way allow, a few per endpoint at most.
func (d *Deliveries) startDue(ctx context.Context) error {
	if d.room("") == 0 {
		return nil
	}
	now := d.Now()
	due := func() *ent.WebhookDeliveryQuery {
		return d.Client.WebhookDelivery.Query().Where(webhookdelivery.StatusEQ(state.DeliveryPending), webhookdelivery.NextAttemptAtLTE(now))
	}
	endpointIDs, err := due().Where(webhookdelivery.HasEndpointWith(webhookendpoint.StatusEQ(state.EndpointEnabled))).
		Unique(true).Limit(maxDueEndpoints).Select(webhookdelivery.FieldEndpointID).Strings(ctx)
	if err != nil {
		return err
	}
	// In no set order, so that when there is room for only some, it goes to different ones each round.
	rand.Shuffle(len(endpointIDs), func(i, j int) { endpointIDs[i], endpointIDs[j] = endpointIDs[j], endpointIDs[i] })
	var errs []error
	for _, endpointID := range endpointIDs {
		room := d.room(endpointID)
		if room == 0 {
			continue
		}
		deliveries, err := due().Where(webhookdelivery.EndpointID(endpointID)).
			Order(ent.Asc(webhookdelivery.FieldNextAttemptAt), ent.Asc(webhookdelivery.FieldID)).
			Select(webhookdelivery.FieldID, webhookdelivery.FieldMerchantID, webhookdelivery.FieldEndpointID, webhookdelivery.FieldEventID, webhookdelivery.FieldType, webhookdelivery.FieldAttempts,
				webhookdelivery.FieldTraceParent).
			Limit(room).All(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, delivery := range deliveries {
			if err := d.claimAndStart(ctx, delivery, now); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// room is how many more tries may start: in all, or to endpointID too when it is given.
func (d *Deliveries) room(endpointID string) int {
	t := d.running
	t.mu.Lock()
	defer t.mu.Unlock()
	free := d.MaxInFlight - t.inFlight
	if endpointID != "" {
		free = min(free, d.PerEndpoint-t.busy[endpointID])
	}
	return max(free, 0)
}

// claimAndStart claims a try of delivery, as read, and starts it in the background; a delivery
// another server claimed first is left alone.
func (d *Deliveries) claimAndStart(ctx context.Context, delivery *ent.WebhookDelivery, now time.Time) error {
	attempt := delivery.Attempts + 1
	n, err := d.Client.WebhookDelivery.Update().
		Where(webhookdelivery.ID(delivery.ID), webhookdelivery.StatusEQ(state.DeliveryPending),
			webhookdelivery.Attempts(delivery.Attempts), webhookdelivery.NextAttemptAtLTE(now)).
		SetAttempts(attempt).SetNextAttemptAt(now.Add(deliveryLease)).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	t := d.running
	t.mu.Lock()
	t.inFlight++
	t.busy[delivery.EndpointID]++
	t.mu.Unlock()
	t.underWay.Add(1)
	go func() {
		defer t.underWay.Done()
		defer func() {
			t.mu.Lock()
			t.inFlight--
			if t.busy[delivery.EndpointID]--; t.busy[delivery.EndpointID] <= 0 {
				delete(t.busy, delivery.EndpointID)
			}
			t.mu.Unlock()
		}()
		ctx, span := tracing.StartWork(ctx, "deliver webhook", delivery.TraceParent, trace.SpanKindInternal,
			attribute.String("paygate.webhook_delivery.id", delivery.ID), attribute.String("paygate.webhook_endpoint.id", delivery.EndpointID),
			attribute.String("paygate.event.id", delivery.EventID), attribute.String("paygate.event.type", delivery.Type),
			attribute.Int("paygate.webhook_delivery.attempt", attempt))
		err := d.try(ctx, span, delivery, attempt)
		switch {
		case ctx.Err() != nil:
			span.SetAttributes(attribute.String("paygate.webhook_delivery.outcome", "cut short: tried again later"))
			err = nil
		case err != nil:
			d.Logger.WarnContext(ctx, "webhook delivery failed to be recorded", "delivery", delivery.ID, "endpoint", delivery.EndpointID, "error", err)
		}
		tracing.End(span, err)
	}()
	return nil
}

// try makes the claimed attempt-th try of delivery, traced in its span, and records what came of
// it. A try cut short because ctx ended is not recorded: its claim runs out and the delivery is
// tried again.
func (d *Deliveries) try(ctx context.Context, traced trace.Span, delivery *ent.WebhookDelivery, attempt int) error {
	endpoint, err := d.Client.WebhookEndpoint.Get(ctx, delivery.EndpointID)
	if ent.IsNotFound(err) {
		return nil // deleted meanwhile, with its deliveries
	}
	if err != nil {
		return d.record(ctx, traced, delivery, attempt, &ent.WebhookEndpoint{ID: delivery.EndpointID}, Attempt{Failure: "the endpoint could not be read"}, false)
	}
	testing := strings.HasPrefix(delivery.EventID, "evt_test_")
	switch {
	case endpoint.Status != state.EndpointEnabled:
		return d.release(ctx, delivery, attempt) // it waits for the endpoint to be enabled
	case !testing && !events.Subscribed(endpoint.Events, delivery.Type):
		return d.record(ctx, traced, delivery, attempt, endpoint, Attempt{Failure: "the endpoint no longer subscribes to " + delivery.Type}, true)
	}
	body, err := d.bodyOf(ctx, delivery)
	if ent.IsNotFound(err) {
		return d.record(ctx, traced, delivery, attempt, endpoint, Attempt{Failure: "the event is no longer kept"}, true)
	}
	if err != nil {
		return d.record(ctx, traced, delivery, attempt, endpoint, Attempt{Failure: "the event could not be read"}, false)
	}
	sent, err := d.send(ctx, endpoint, delivery.EventID, body)
	if err != nil || ctx.Err() != nil {
		return err
	}
	return d.record(ctx, traced, delivery, attempt, endpoint, sent, false)
}

// release gives back the claim of a try not made, as it was before, due now: it waits for what
// the due deliveries are chosen by (an enabled endpoint).
func (d *Deliveries) release(ctx context.Context, delivery *ent.WebhookDelivery, attempt int) error {
	return d.Client.WebhookDelivery.Update().Where(webhookdelivery.ID(delivery.ID), webhookdelivery.StatusEQ(state.DeliveryPending),
		webhookdelivery.Attempts(attempt)).SetAttempts(attempt - 1).SetNextAttemptAt(d.Now()).Exec(ctx)
}

// send posts body, event eventID, to endpoint once, signed now by each of its secrets.
func (d *Deliveries) send(ctx context.Context, endpoint *ent.WebhookEndpoint, eventID string, body []byte) (Attempt, error) {
	return d.post(ctx, endpoint.URL, signingSecrets(endpoint, d.Now()), eventID, body)
}

// post posts body, event eventID, to url once, signed now the Standard Webhooks way by each of
// secrets.
func (d *Deliveries) post(ctx context.Context, url string, secrets []string, eventID string, body []byte) (Attempt, error) {
	headers, err := SignedHeaders(eventID, d.Now(), body, secrets...)
	if err != nil {
		return Attempt{}, err
	}
	headers.Set("User-Agent", userAgent)
	return d.Sender.Try(ctx, url, body, headers)
}

// Test queues a test event to endpoint as a delivery of its own, which keeps the body, and makes
// its first try now, recorded as every try is: what came of it answers. A failed one is tried
// again on the schedule, as every delivery is.
func (d *Deliveries) Test(ctx context.Context, endpoint *ent.WebhookEndpoint, eventID, eventType string, body []byte) (string, Attempt, error) {
	now := d.Now()
	delivery, err := d.Client.WebhookDelivery.Create().SetMerchantID(endpoint.MerchantID).SetEndpointID(endpoint.ID).SetEventID(eventID).SetType(eventType).
		SetTestBody(body).SetNillableTraceParent(tracing.Cause(ctx)).SetAttempts(1).SetNextAttemptAt(now.Add(deliveryLease)).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return "", Attempt{}, err
	}
	sent, err := d.send(ctx, endpoint, eventID, body)
	if err != nil {
		return delivery.ID, sent, err
	}
	return delivery.ID, sent, d.record(context.WithoutCancel(ctx), nil, delivery, 1, endpoint, sent, false)
}

// bodyOf is what a delivery sends: its event's body, or the test event it keeps.
func (d *Deliveries) bodyOf(ctx context.Context, delivery *ent.WebhookDelivery) ([]byte, error) {
	full, err := d.Client.WebhookDelivery.Query().Where(webhookdelivery.ID(delivery.ID)).Select(webhookdelivery.FieldTestBody).Only(ctx)
	if err != nil {
		return nil, err
	}
	if len(full.TestBody) > 0 {
		return full.TestBody, nil
	}
	e, err := d.Client.Event.Query().Where(event.ID(delivery.EventID)).Select(event.FieldBody).Only(ctx)
	if err != nil {
		return nil, err
	}
	return e.Body, nil
}

// record writes what came of the attempt-th try of delivery to endpoint, with the try in its
// log, in one transaction, conditional on the delivery still being as this try claimed it (a
// retry by hand meanwhile starts it afresh). final ends the delivery whatever came of the try.
// traced, when set, is the try's span, which is told the outcome.
func (d *Deliveries) record(ctx context.Context, traced trace.Span, delivery *ent.WebhookDelivery, attempt int, endpoint *ent.WebhookEndpoint, sent Attempt, final bool) error {
	now := d.Now()
	outcome := OutcomeRetrying
	switch {
	case sent.Delivered():
		outcome = OutcomeDelivered
	case sent.StatusCode == http.StatusGone:
		outcome = OutcomeGone
	case final || attempt > len(RetryWaits):
		outcome = OutcomeFailed
	}
	latency := sent.Latency.Milliseconds()
	err := inTx(ctx, d.Client, func(tx *ent.Tx) error {
		update := tx.WebhookDelivery.Update().Where(webhookdelivery.ID(delivery.ID), webhookdelivery.StatusEQ(state.DeliveryPending),
			webhookdelivery.Attempts(attempt)).SetUpdatedAt(now).SetLatencyMs(latency)
		if sent.StatusCode != 0 {
			update.SetLastStatusCode(sent.StatusCode)
		} else {
			update.ClearLastStatusCode()
		}
		var failure *string
		if outcome != OutcomeDelivered {
			failure = new(database.StorableText(sent.String(), maxErrorText))
			update.SetLastError(*failure)
		}
		switch outcome {
		case OutcomeDelivered:
			update.SetStatus(state.DeliveryDelivered).SetDeliveredAt(now).ClearNextAttemptAt().ClearLastError()
		case OutcomeRetrying:
			update.SetNextAttemptAt(now.Add(d.retryWait(attempt)))
		default:
			update.SetStatus(state.DeliveryFailed).ClearNextAttemptAt()
		}
		n, err := update.Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return errChanged
		}
		try := tx.WebhookDeliveryAttempt.Create().SetMerchantID(delivery.MerchantID).SetDeliveryID(delivery.ID).SetAt(now).SetLatencyMs(max(latency, 0)).SetNillableError(failure)
		if sent.StatusCode != 0 {
			try.SetStatusCode(sent.StatusCode)
		}
		if err := try.Exec(ctx); err != nil {
			return err
		}
		return d.endpointTried(ctx, tx, endpoint.ID, outcome, now)
	})
	if errors.Is(err, errChanged) {
		return nil // retried by hand or deleted meanwhile: this try's record is moot
	}
	if err != nil {
		return err
	}
	if d.Observe != nil {
		d.Observe(outcome, sent.Latency)
	}
	if traced != nil {
		traced.SetAttributes(attribute.String("paygate.webhook_delivery.outcome", outcome))
		if outcome != OutcomeDelivered {
			traced.SetStatus(codes.Error, sent.String())
		}
	}
	if outcome == OutcomeGone {
		d.Logger.WarnContext(ctx, "webhook endpoint answered 410 Gone and was disabled", "endpoint", endpoint.ID)
	}
	return nil
}

// errChanged says a delivery changed since its try was claimed.
var errChanged = errors.New("the delivery changed since its try was claimed")

// endpointTried keeps endpoint's failing_since, which the alert reads: cleared by a delivery, set
// by the first failure after one. An endpoint that answers 410 Gone is disabled.
func (d *Deliveries) endpointTried(ctx context.Context, tx *ent.Tx, endpointID, outcome string, now time.Time) error {
	if outcome == OutcomeDelivered {
		return tx.WebhookEndpoint.Update().Where(webhookendpoint.ID(endpointID), webhookendpoint.FailingSinceNotNil()).
			ClearFailingSince().Exec(ctx)
	}
	if err := tx.WebhookEndpoint.Update().Where(webhookendpoint.ID(endpointID), webhookendpoint.FailingSinceIsNil()).
		SetFailingSince(now).Exec(ctx); err != nil {
		return err
	}
	if outcome == OutcomeGone {
		return tx.WebhookEndpoint.UpdateOneID(endpointID).SetStatus(state.EndpointDisabled).
			SetDisabledReason("answered 410 Gone").SetUpdatedAt(now).Exec(ctx)
	}
	return nil
}

// retryWait is the wait after the attempt-th try failed, spread by ±10% so deliveries that
// failed together are not all tried again together.
func (d *Deliveries) retryWait(attempt int) time.Duration {
	wait := RetryWaits[min(attempt, len(RetryWaits))-1]
	return time.Duration(float64(wait) * (0.9 + 0.2*d.Jitter())).Round(time.Millisecond)
}

// Purge deletes the deliveries made more than the events' retention ago, with their tries: their
// events are gone, and one still pending (of an endpoint disabled since) could send nothing.
func (d *Deliveries) Purge(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	return d.Client.WebhookDelivery.Delete().Where(webhookdelivery.CreatedAtLT(d.Now().Add(-events.Retention))).Exec(ctx)
}
