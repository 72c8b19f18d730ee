package outbound

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/contrib/entgql"
	"entgo.io/ent/dialect"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/webhookdelivery"
	"github.com/paygate/paygate/ent/webhookdeliveryattempt"
	"github.com/paygate/paygate/ent/webhookendpoint"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/event"
	"github.com/paygate/paygate/internal/paging"
	"github.com/paygate/paygate/internal/state"
)

// Bounds of the endpoints.
const (
	// MaxEndpoints is how many endpoints may exist at once, as many as Stripe allows an account.
	MaxEndpoints = 16
	// MaxDescription bounds an endpoint's description, in characters.
	MaxDescription = 500
	// SecretOverlap is how long a rotated secret keeps signing beside its successor, so the
	// endpoint can take up the new one without losing a delivery.
	SecretOverlap = 24 * time.Hour
)

// Endpoints keeps the merchants' webhook endpoints and serves their deliveries. Every call is
// authorised here.
type Endpoints struct {
	Client *ent.Client
	// Dialect is the database's, which says how two creations are kept from passing the limit
	// together.
	Dialect string
	// Production takes only https URLs, and refuses at once a URL that names an address of
	// Paygate's own networks (a name leading to one is refused as it is dialled).
	Production bool
	Now        func() time.Time
	// Queued is told when deliveries were queued or requeued, so the worker takes them at once.
	Queued func()
}

// EndpointInput makes an endpoint.
type EndpointInput struct {
	URL         string
	Events      []string
	Description *string
}

// EndpointChange changes an endpoint; nil leaves a field as it is.
type EndpointChange struct {
	URL         *string
	Events      []string
	Description *string
	Status      *state.EndpointStatus
}

// checkURL checks an endpoint's URL before anything is resolved or dialled.
func (e *Endpoints) checkURL(raw string) (string, error) {
	u, err := webhookURL(raw)
	if err != nil {
		return "", err
	}
	if e.Production && u.Scheme != "https" {
		return "", apierror.ForParam(apierror.InvalidRequest, "url", "url must be https in production")
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil {
		if kind := refusedKind(ip, e.Production); kind != "" {
			return "", apierror.ForParam(apierror.InvalidRequest, "url", "url is "+kind+" address, where webhooks are not sent")
		}
	}
	return u.String(), nil
}

func checkDescription(d *string) error {
	if d != nil && utf8.RuneCountInString(*d) > MaxDescription {
		return apierror.ForParam(apierror.InvalidRequest, "description", fmt.Sprintf("description is longer than %d characters", MaxDescription))
	}
	return nil
}

// Create makes an endpoint, enabled, with a new signing secret, which it returns: the only time
// it is shown.
func (e *Endpoints) Create(ctx context.Context, in EndpointInput) (*ent.WebhookEndpoint, string, error) {
	if err := auth.Authorize(ctx, auth.CreateWebhookEndpoint); err != nil {
		return nil, "", err
	}
	target, err := e.checkURL(in.URL)
	if err != nil {
		return nil, "", err
	}
	types, err := event.CheckTypes(in.Events)
	if err != nil {
		return nil, "", err
	}
	if err := checkDescription(in.Description); err != nil {
		return nil, "", err
	}
	p, _ := auth.PrincipalFrom(ctx) // the operation has a scope, so there is a principal
	secret := NewSigningSecret()
	var made *ent.WebhookEndpoint
	err = inTx(ctx, e.Client, func(tx *ent.Tx) error {
		if err := e.serializeCreations(ctx, tx); err != nil {
			return err
		}
		count, err := tx.WebhookEndpoint.Query().Count(ctx)
		if err != nil {
			return err
		}
		if count >= MaxEndpoints {
			return apierror.New(apierror.InvalidState, fmt.Sprintf("there are already %d webhook endpoints, the most there may be: delete one first", MaxEndpoints))
		}
		now := e.Now()
		made, err = tx.WebhookEndpoint.Create().SetURL(target).SetEvents(types).SetNillableDescription(in.Description).
			SetSecret(secret).SetCreatedBy(p.Subject).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return made.Unwrap(), secret, nil
}

// serializeCreations makes creations of endpoints run one at a time, so that two at once on two
// servers cannot both pass the limit: on PostgreSQL by a lock held to the transaction's end;
// SQLite's transactions already take the database's write lock at BEGIN.
func (e *Endpoints) serializeCreations(ctx context.Context, tx *ent.Tx) error {
	if e.Dialect != dialect.Postgres {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte("webhook_endpoints"))
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(h.Sum64()))
	return err
}

// NewestFirst orders endpoints and deliveries as they are listed.
var (
	EndpointsNewestFirst  = &ent.WebhookEndpointOrder{Direction: entgql.OrderDirectionDesc, Field: ent.WebhookEndpointOrderFieldCreatedAt}
	DeliveriesNewestFirst = &ent.WebhookDeliveryOrder{Direction: entgql.OrderDirectionDesc, Field: ent.WebhookDeliveryOrderFieldCreatedAt}
)

// List returns one page of endpoints, newest first unless orderBy says otherwise.
func (e *Endpoints) List(ctx context.Context, after *ent.Cursor, first *int, before *ent.Cursor, last *int, orderBy *ent.WebhookEndpointOrder) (*ent.WebhookEndpointConnection, error) {
	if err := auth.Authorize(ctx, auth.ListWebhookEndpoints); err != nil {
		return nil, err
	}
	first, err := paging.CheckPage(first, last)
	if err != nil {
		return nil, err
	}
	if err := cursorsFit(after, before); err != nil {
		return nil, err
	}
	if orderBy == nil {
		orderBy = EndpointsNewestFirst
	}
	return e.Client.WebhookEndpoint.Query().Paginate(ctx, after, first, before, last, ent.WithWebhookEndpointOrder(orderBy))
}

// cursorsFit refuses a cursor without a time: every list here is ordered by created_at, so it was
// taken from another list.
func cursorsFit(after, before *ent.Cursor) error {
	for param, cursor := range map[string]*ent.Cursor{"after": after, "before": before} {
		if cursor == nil {
			continue
		}
		if _, ok := cursor.Value.(time.Time); !ok {
			return apierror.ForParam(apierror.InvalidRequest, param, "the cursor belongs to another list")
		}
	}
	return nil
}

// EndpointCursorAt returns the cursor of the endpoint with the given id, for REST's
// starting_after and ending_before.
func (e *Endpoints) EndpointCursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := auth.Authorize(ctx, auth.ListWebhookEndpoints); err != nil {
		return nil, err
	}
	found, err := e.Client.WebhookEndpoint.Query().Where(webhookendpoint.ID(id)).Select(webhookendpoint.FieldCreatedAt).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no webhook endpoint has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	return &ent.Cursor{ID: id, Value: found.CreatedAt}, nil
}

// Get returns one endpoint.
func (e *Endpoints) Get(ctx context.Context, id string) (*ent.WebhookEndpoint, error) {
	if err := auth.Authorize(ctx, auth.GetWebhookEndpoint); err != nil {
		return nil, err
	}
	return e.find(ctx, e.Client, id)
}

func (e *Endpoints) find(ctx context.Context, client *ent.Client, id string) (*ent.WebhookEndpoint, error) {
	found, err := client.WebhookEndpoint.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no webhook endpoint has the id "+id)
	}
	return found, err
}

// Update changes an endpoint. Enabling it again clears why Paygate disabled it, and its
// deliveries waiting meanwhile are sent.
func (e *Endpoints) Update(ctx context.Context, id string, change EndpointChange) (*ent.WebhookEndpoint, error) {
	if err := auth.Authorize(ctx, auth.UpdateWebhookEndpoint); err != nil {
		return nil, err
	}
	update := e.Client.WebhookEndpoint.UpdateOneID(id).SetUpdatedAt(e.Now())
	if change.URL != nil {
		target, err := e.checkURL(*change.URL)
		if err != nil {
			return nil, err
		}
		update.SetURL(target)
	}
	if change.Events != nil {
		types, err := event.CheckTypes(change.Events)
		if err != nil {
			return nil, err
		}
		update.SetEvents(types)
	}
	switch {
	case change.Description == nil:
	case *change.Description == "":
		update.ClearDescription()
	default:
		if err := checkDescription(change.Description); err != nil {
			return nil, err
		}
		update.SetDescription(*change.Description)
	}
	if change.Status != nil {
		update.SetStatus(*change.Status).ClearDisabledReason()
		if *change.Status == state.EndpointEnabled {
			update.ClearFailingSince()
		}
	}
	updated, err := update.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no webhook endpoint has the id "+id)
	}
	if err == nil && change.Status != nil && *change.Status == state.EndpointEnabled {
		e.queued()
	}
	return updated, err
}

// Delete deletes an endpoint with its deliveries: nothing more is sent to it.
func (e *Endpoints) Delete(ctx context.Context, id string) (*ent.WebhookEndpoint, error) {
	if err := auth.Authorize(ctx, auth.DeleteWebhookEndpoint); err != nil {
		return nil, err
	}
	deleted, err := e.find(ctx, e.Client, id)
	if err != nil {
		return nil, err
	}
	// Its deliveries and their tries go with it, by the foreign keys' cascade.
	if err := e.Client.WebhookEndpoint.DeleteOneID(id).Exec(ctx); err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	return deleted, nil
}

// RotateSecret gives an endpoint a new signing secret, which it returns: the only time it is
// shown. The secret it replaces signs beside it for SecretOverlap; one replaced before is dropped.
func (e *Endpoints) RotateSecret(ctx context.Context, id string) (*ent.WebhookEndpoint, string, error) {
	if err := auth.Authorize(ctx, auth.RotateWebhookEndpointSecret); err != nil {
		return nil, "", err
	}
	secret := NewSigningSecret()
	var rotated *ent.WebhookEndpoint
	err := inTx(ctx, e.Client, func(tx *ent.Tx) error {
		current, err := tx.WebhookEndpoint.Query().Where(webhookendpoint.ID(id), database.ForUpdate).Only(ctx)
		if ent.IsNotFound(err) {
			return apierror.ForParam(apierror.NotFound, "id", "no webhook endpoint has the id "+id)
		}
		if err != nil {
			return err
		}
		now := e.Now()
		rotated, err = tx.WebhookEndpoint.UpdateOne(current).SetSecret(secret).SetPreviousSecret(current.Secret).
			SetPreviousSecretExpiresAt(now.Add(SecretOverlap)).SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return rotated.Unwrap(), secret, nil
}

// signingSecrets are the secrets that sign a delivery to endpoint at now: its own, and the one it
// replaced while that one still overlaps.
func signingSecrets(endpoint *ent.WebhookEndpoint, now time.Time) []string {
	secrets := []string{endpoint.Secret}
	if endpoint.PreviousSecret != nil && endpoint.PreviousSecretExpiresAt != nil && now.Before(*endpoint.PreviousSecretExpiresAt) {
		secrets = append(secrets, *endpoint.PreviousSecret)
	}
	return secrets
}

// Deliveries returns one page of an endpoint's deliveries, newest first, of one status or all.
func (e *Endpoints) Deliveries(ctx context.Context, endpointID string, status *state.DeliveryStatus, after *ent.Cursor, first *int, before *ent.Cursor, last *int) (*ent.WebhookDeliveryConnection, error) {
	if err := auth.Authorize(ctx, auth.ListWebhookDeliveries); err != nil {
		return nil, err
	}
	first, err := paging.CheckPage(first, last)
	if err != nil {
		return nil, err
	}
	if err := cursorsFit(after, before); err != nil {
		return nil, err
	}
	if _, err := e.find(ctx, e.Client, endpointID); err != nil {
		return nil, err
	}
	query := e.Client.WebhookDelivery.Query().Where(webhookdelivery.EndpointID(endpointID))
	if status != nil {
		query.Where(webhookdelivery.StatusEQ(*status))
	}
	return query.Paginate(ctx, after, first, before, last, ent.WithWebhookDeliveryOrder(DeliveriesNewestFirst))
}

// DeliveryCursorAt returns the cursor of an endpoint's delivery with the given id, for REST's
// starting_after and ending_before.
func (e *Endpoints) DeliveryCursorAt(ctx context.Context, endpointID, id, param string) (*ent.Cursor, error) {
	if err := auth.Authorize(ctx, auth.ListWebhookDeliveries); err != nil {
		return nil, err
	}
	found, err := e.Client.WebhookDelivery.Query().Where(webhookdelivery.ID(id), webhookdelivery.EndpointID(endpointID)).
		Select(webhookdelivery.FieldCreatedAt).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no delivery to this endpoint has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	return &ent.Cursor{ID: id, Value: found.CreatedAt}, nil
}

// Delivery returns one delivery to an endpoint with every try at it, oldest first.
func (e *Endpoints) Delivery(ctx context.Context, endpointID, id string) (*ent.WebhookDelivery, error) {
	if err := auth.Authorize(ctx, auth.ListWebhookDeliveries); err != nil {
		return nil, err
	}
	return e.delivery(ctx, endpointID, id)
}

func (e *Endpoints) delivery(ctx context.Context, endpointID, id string) (*ent.WebhookDelivery, error) {
	found, err := e.Client.WebhookDelivery.Query().Where(webhookdelivery.ID(id), webhookdelivery.EndpointID(endpointID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no delivery to this endpoint has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	found.Edges.AttemptLog, err = AttemptLog(ctx, found)
	return found, err
}

// MaxAttemptLog is how many of a delivery's tries are shown: the latest. A delivery makes at
// most ten tries on its schedule; only retries by hand make more.
const MaxAttemptLog = 100

// AttemptLog is delivery d's latest MaxAttemptLog tries, oldest first.
func AttemptLog(ctx context.Context, d *ent.WebhookDelivery) ([]*ent.WebhookDeliveryAttempt, error) {
	latest, err := d.QueryAttemptLog().Order(ent.Desc(webhookdeliveryattempt.FieldAt), ent.Desc(webhookdeliveryattempt.FieldID)).
		Limit(MaxAttemptLog).All(ctx)
	slices.Reverse(latest)
	return latest, err
}

// RetryDelivery sends a delivery again now: one delivered or failed is queued afresh, its tries
// counted from zero (its attempt log is kept); one pending is made due now.
func (e *Endpoints) RetryDelivery(ctx context.Context, endpointID, id string) (*ent.WebhookDelivery, error) {
	if err := auth.Authorize(ctx, auth.RetryWebhookDelivery); err != nil {
		return nil, err
	}
	// A try may end between the read and the write, changing the status the write is
	// conditional on: read again then.
	for range 3 {
		found, err := e.delivery(ctx, endpointID, id)
		if err != nil {
			return nil, err
		}
		now := e.Now()
		update := e.Client.WebhookDelivery.Update().Where(webhookdelivery.ID(id), webhookdelivery.StatusEQ(found.Status)).
			SetStatus(state.DeliveryPending).SetNextAttemptAt(now).SetUpdatedAt(now)
		if found.Status != state.DeliveryPending {
			update.SetAttempts(0).ClearDeliveredAt()
		}
		n, err := update.Save(ctx)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			e.queued()
			return e.delivery(ctx, endpointID, id)
		}
	}
	return nil, errors.New("the delivery kept changing while it was being retried")
}

func (e *Endpoints) queued() {
	if e.Queued != nil {
		e.Queued()
	}
}

// webhookURL checks a webhook's destination before anything is resolved or dialled: an absolute
// http(s) URL with a host and no user, of bounded length. The address it leads to is checked as
// it is dialled.
func webhookURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, apierror.ForParam(apierror.MissingField, "url", "url is required")
	}
	if len(raw) > MaxURL {
		return nil, apierror.ForParam(apierror.InvalidRequest, "url", fmt.Sprintf("url is longer than %d characters", MaxURL))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return nil, apierror.ForParam(apierror.InvalidRequest, "url", "url must be an absolute http or https URL with a host")
	}
	if u.User != nil {
		return nil, apierror.ForParam(apierror.InvalidRequest, "url", "url must not hold a user name or password")
	}
	u.Fragment, u.RawFragment = "", "" // never sent
	return u, nil
}

// inTx runs fn in a transaction, committing when it returns nil.
func inTx(ctx context.Context, client *ent.Client, fn func(tx *ent.Tx) error) error {
	tx, err := client.Tx(ctx)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
