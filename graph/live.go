package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/live"
)

// Bounds of the subscriptions.
const (
	// MaxSubscriptionsPerConnection bounds the subscriptions one WebSocket holds at once.
	MaxSubscriptionsPerConnection = 20
	// MaxSubscriptionsPerPrincipal bounds one user's subscriptions on one server, over every
	// connection and every API key of theirs.
	MaxSubscriptionsPerPrincipal = 100
	// MaxSubscriptionsPerServer bounds every subscription on one server: each change is resolved
	// once per subscriber.
	MaxSubscriptionsPerServer = 10_000
	// credentialRecheck is how often a subscription checks its credential is still good besides
	// when told a credential may have stopped being (auth.Service.CredentialsChanged): should a
	// change go untold, it ends within this.
	credentialRecheck = time.Minute
)

// subscribers counts the subscriptions on this server, in all and by user.
type subscribers struct {
	mu     sync.Mutex
	all    int
	byUser map[string]int
}

func (s *subscribers) admit(user string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byUser == nil {
		s.byUser = map[string]int{}
	}
	switch {
	case s.byUser[user] >= MaxSubscriptionsPerPrincipal:
		return apierror.New(apierror.RateLimited, fmt.Sprintf("you hold %d subscriptions on this server, the most one user may: end one first", MaxSubscriptionsPerPrincipal))
	case s.all >= MaxSubscriptionsPerServer:
		return apierror.New(apierror.ServiceUnavailable, "this server holds as many subscriptions as it takes: try again later")
	}
	s.byUser[user]++
	s.all++
	return nil
}

func (s *subscribers) leave(user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all--
	if s.byUser[user]--; s.byUser[user] <= 0 {
		delete(s.byUser, user)
	}
}

// stream subscribes to the changes of kind that accepts takes, for the principal of ctx if op
// allows it, and hands each one's object to the subscription. It ends when ctx does (the client
// left, or the server stopped), or for a reason it tells the client: the subscriber fell behind,
// or its credential stopped being good or lost op's scope.
func stream[T any](ctx context.Context, r *Resolver, op auth.Operation, kind string, accepts func(live.Change) bool) (<-chan T, error) {
	if err := auth.Authorize(ctx, op); err != nil {
		return nil, err
	}
	principal, _ := auth.PrincipalFrom(ctx) // authorised, so there is one
	var onConnection *atomic.Int32
	if overWebSocket(ctx) {
		onConnection = &openStreamOf(ctx).subscriptions
		if onConnection.Add(1) > MaxSubscriptionsPerConnection {
			onConnection.Add(-1)
			return nil, apierror.New(apierror.RateLimited, fmt.Sprintf("a connection holds at most %d subscriptions", MaxSubscriptionsPerConnection))
		}
	}
	if err := r.subscribers.admit(principal.UserID); err != nil {
		if onConnection != nil {
			onConnection.Add(-1)
		}
		return nil, err
	}
	var sub *live.Subscription
	switch {
	case op.EveryMerchant:
		sub = r.Hub.SubscribeEveryMerchant(kind, accepts)
	case op.Platform: // the platform's changes name no merchant
		sub = r.Hub.Subscribe(kind, "", accepts)
	default:
		sub = r.Hub.Subscribe(kind, principal.Merchant, accepts)
	}
	out := make(chan T, 1)
	go func() {
		defer func() {
			r.Hub.Unsubscribe(sub)
			r.subscribers.leave(principal.UserID)
			if onConnection != nil {
				onConnection.Add(-1)
			}
			close(out)
		}()
		ended := r.follow(ctx, sub, principal, op, func(c *live.Change) bool {
			object, ok := c.Object.(T)
			if !ok {
				return true
			}
			select {
			case out <- object:
				return true
			case <-ctx.Done():
				return false
			}
		})
		switch {
		case ended.err == nil: // the client left, or the server stopped
		case ended.credential && overWebSocket(ctx):
			// The credential is the connection's: closed with 4403, the client connects again
			// with the credential it is given anew. The subscription ends with the connection,
			// so that its complete cannot go out before the close.
			openStreamOf(ctx).refuseCredential(ended.err.Code)
			<-ctx.Done()
		default:
			endSubscription(ctx, ended.err)
		}
	}()
	return out, nil
}

// ending is why a subscription ends: nil when its client left; else the error it is told, and
// whether its credential stopped being good, which ends every subscription it holds.
type ending struct {
	err        *apierror.Error
	credential bool
}

// follow hands each change of sub to send until ctx ends or send refuses (the client left), or
// the subscription ends for a reason: it fell behind, or its credential stopped being good or
// lost op's scope. The credential is checked again each time one may have stopped being good
// (told by the auth service), at its expiry, and every credentialRecheck.
func (r *Resolver) follow(ctx context.Context, sub *live.Subscription, principal auth.Principal, op auth.Operation, send func(*live.Change) bool) ending {
	changed := r.AuthService.CredentialsChanged()
	// A WebSocket's credential was checked at connection_init, maybe long before.
	if ended := r.credentialEnds(ctx, principal, op); ended.err != nil {
		return ended
	}
	recheck := time.NewTicker(credentialRecheck)
	defer recheck.Stop()
	var expired <-chan time.Time
	if !principal.Expires.IsZero() {
		timer := time.NewTimer(principal.Expires.Sub(r.Now()))
		defer timer.Stop()
		expired = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return ending{}
		case <-sub.Ready():
			changes, err := sub.Take()
			for _, c := range changes {
				if !send(c) {
					return ending{}
				}
			}
			if err != nil {
				return ending{err: apierror.New(apierror.SubscriberTooSlow,
					fmt.Sprintf("%d changes waited for this subscription, which reads slower than they come: subscribe again, and read what was missed from events", live.MaxBehind))}
			}
			continue
		case <-expired:
			// Whatever leeway a token's check allows for the clocks of other servers, a
			// subscription ends when its credential does, by this server's clock.
			if !r.Now().Before(principal.Expires) {
				return ending{err: apierror.New(apierror.TokenExpired, "the credential expired: subscribe again with a new one"), credential: true}
			}
			expired = time.After(principal.Expires.Sub(r.Now()))
			continue
		case <-changed:
			changed = r.AuthService.CredentialsChanged() // before the check, so a change meanwhile is told again
		case <-recheck.C:
		}
		if ended := r.credentialEnds(ctx, principal, op); ended.err != nil {
			return ended
		}
	}
}

// credentialEnds says why a subscription of principal with op is to end now: its credential no
// longer authenticates as it (expired, revoked, its user or merchant disabled), or no longer holds
// op's scope. While it is good, or when that cannot be told (the database did not answer), it
// says nothing: it is asked again.
func (r *Resolver) credentialEnds(ctx context.Context, principal auth.Principal, op auth.Operation) ending {
	now, err := r.AuthService.Recheck(ctx, auth.CredentialFrom(ctx), principal)
	switch {
	case errors.Is(err, auth.ErrUserDisabled):
		return ending{err: apierror.New(apierror.UserDisabled, "the credential's user was disabled"), credential: true}
	case errors.Is(err, auth.ErrMerchantDisabled):
		return ending{err: apierror.New(apierror.MerchantUnavailable, "the credential's merchant was disabled"), credential: true}
	case err != nil:
		if refused, ok := errors.AsType[*apierror.Error](err); ok {
			return ending{err: refused, credential: true}
		}
		return ending{}
	case now.Subject != principal.Subject || now.Merchant != principal.Merchant:
		return ending{err: apierror.New(apierror.TokenRevoked, "the credential no longer acts as it did when it subscribed: subscribe again"), credential: true}
	case !now.Can(op.Scope):
		return ending{err: apierror.New(apierror.Forbidden, "the credential no longer holds "+op.Scope+", which this subscription needs")}
	}
	return ending{}
}

// subscriptionsOnlyOverWebSockets refuses queries and mutations sent over a WebSocket: its
// principal was authenticated once, at connection_init, and its messages pass no rate limit, so
// everything else goes over HTTP, where each request is authenticated and limited.
func subscriptionsOnlyOverWebSockets(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if overWebSocket(ctx) && graphql.GetOperationContext(ctx).Operation.Operation != ast.Subscription {
		return graphql.OneShot(graphql.ErrorResponse(ctx, "only subscriptions go over the WebSocket: send queries and mutations as HTTP requests to /query"))
	}
	return next(ctx)
}

// subscriptionOperations are the subscriptions: a connection whose credential may ask none of
// them is refused at once.
var subscriptionOperations = []auth.Operation{auth.PaymentUpdated, auth.RefundUpdated, auth.ProviderStatusChanged, auth.AlertRaised}

// authenticateConnection is the WebSocket's connection_init: a connection without a good
// credential, or whose credential may subscribe to nothing, is refused before any subscription.
func (r *Resolver) authenticateConnection(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	principal, credential, err := r.connectionPrincipal(ctx, payload)
	if err == nil && !slices.ContainsFunc(subscriptionOperations, func(op auth.Operation) bool { return principal.Can(op.Scope) }) {
		err = apierror.New(apierror.Forbidden, "this credential may subscribe to nothing: subscriptions need payments:read or monitoring:read")
	}
	if err != nil {
		// Closed with 4403, as graphql-transport-ws refuses a connection_init, and the error's
		// code as the reason (a close reason holds at most 123 bytes).
		code := apierror.From(err).Code
		if stream := openStreamOf(ctx); stream != nil {
			stream.refused(code)
		}
		return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, closeForbidden), string(code)), nil, err
	}
	return auth.Authenticated(ctx, principal, credential), nil, nil
}

// connectionPrincipal authenticates the credential connection_init's payload carries
// ({"Authorization": "Bearer ..."} or {"X-API-Key": "pk_..."}, and "Paygate-Merchant" to act for
// a merchant), as a request's headers do, or else the upgrade request's own.
func (r *Resolver) connectionPrincipal(ctx context.Context, payload transport.InitPayload) (auth.Principal, string, error) {
	credential, merchant := "", payload.GetString("Paygate-Merchant")
	if header := payload.Authorization(); header != "" {
		scheme, token, _ := strings.Cut(header, " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return auth.Principal{}, "", apierror.New(apierror.TokenInvalid, "the Authorization value must be: Bearer <token>")
		}
		credential = strings.TrimSpace(token)
	} else if key := payload.GetString("X-API-Key"); key != "" {
		credential = key
	} else if credential = auth.CredentialFrom(ctx); credential == "" {
		return auth.Principal{}, "", apierror.New(apierror.Unauthenticated, `send a credential in connection_init's payload: {"Authorization": "Bearer <token>"} or {"X-API-Key": "pk_..."}`)
	} else if upgraded, ok := auth.PrincipalFrom(ctx); ok && merchant == "" {
		merchant = upgraded.Merchant // as the upgrade request's Paygate-Merchant said
	}
	principal, err := r.AuthService.Authenticate(ctx, credential, merchant, nil)
	return principal, credential, err
}

// originPatterns are the hosts of the origins allowed to open a WebSocket besides the server's
// own: PAYGATE_CORS_ORIGINS's, which are whole origins (https://dash.example.com).
func originPatterns(origins []string) []string {
	var hosts []string
	for _, origin := range origins {
		if _, host, ok := strings.Cut(origin, "://"); ok {
			hosts = append(hosts, host)
		}
	}
	return hosts
}
