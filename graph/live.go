package graph

import (
	"context"
	"fmt"
	"net/http"
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
	// credentialRecheck is how often a subscription checks its credential is still good: revoked,
	// or its user disabled, it ends within this.
	credentialRecheck = 5 * time.Second
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

type connectionKey struct{}

// connectionSubscriptions counts the subscriptions of the WebSocket ctx belongs to; nil over SSE,
// where a connection holds one.
func connectionSubscriptions(ctx context.Context) *atomic.Int32 {
	count, _ := ctx.Value(connectionKey{}).(*atomic.Int32)
	return count
}

// stream subscribes to the changes of kind that accepts takes, for the principal of ctx if op
// allows it, and hands each one's object to the subscription. It ends when ctx does (the client
// left), when the subscriber falls behind, or when its credential stops being good.
func stream[T any](ctx context.Context, r *Resolver, op auth.Operation, kind string, accepts func(live.Change) bool) (<-chan T, error) {
	if err := auth.Authorize(ctx, op); err != nil {
		return nil, err
	}
	principal, _ := auth.PrincipalFrom(ctx) // authorised, so there is one
	if count := connectionSubscriptions(ctx); count != nil {
		if count.Add(1) > MaxSubscriptionsPerConnection {
			count.Add(-1)
			return nil, apierror.New(apierror.RateLimited, fmt.Sprintf("a connection holds at most %d subscriptions", MaxSubscriptionsPerConnection))
		}
	}
	if err := r.subscribers.admit(principal.UserID); err != nil {
		if count := connectionSubscriptions(ctx); count != nil {
			count.Add(-1)
		}
		return nil, err
	}
	merchant := principal.Merchant // a merchant's changes; the platform's have none
	if op.Platform {
		merchant = ""
	}
	sub := r.Hub.Subscribe(kind, merchant, accepts)
	out := make(chan T, 1)
	go func() {
		defer func() {
			r.Hub.Unsubscribe(sub)
			r.subscribers.leave(principal.UserID)
			if count := connectionSubscriptions(ctx); count != nil {
				count.Add(-1)
			}
			close(out)
		}()
		recheck := time.NewTicker(credentialRecheck)
		defer recheck.Stop()
		var expired <-chan time.Time
		if !principal.Expires.IsZero() {
			timer := time.NewTimer(time.Until(principal.Expires))
			defer timer.Stop()
			expired = timer.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-expired:
				return
			case <-recheck.C:
				if !r.credentialGood(ctx, principal, op) {
					return
				}
			case change, open := <-sub.Changes():
				if !open {
					return // fell behind
				}
				object, ok := change.Object.(T)
				if !ok {
					continue
				}
				select {
				case out <- object:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// credentialGood reports whether the credential principal came with still authenticates as it,
// for the same merchant, and still holds op's scope: not revoked, its user neither disabled nor
// changed role, its merchant not disabled.
func (r *Resolver) credentialGood(ctx context.Context, principal auth.Principal, op auth.Operation) bool {
	credential := auth.CredentialFrom(ctx)
	if credential == "" {
		return false
	}
	now, err := r.AuthService.Authenticate(ctx, credential, principal.Merchant, nil)
	return err == nil && now.Subject == principal.Subject && now.Merchant == principal.Merchant && now.Can(op.Scope)
}

// subscriptionsOnlyOverWebSockets refuses queries and mutations sent over a WebSocket: its
// principal was authenticated once, at connection_init, and its messages pass no rate limit, so
// everything else goes over HTTP, where each request is authenticated and limited.
func subscriptionsOnlyOverWebSockets(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if connectionSubscriptions(ctx) != nil && graphql.GetOperationContext(ctx).Operation.Operation != ast.Subscription {
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
		code := string(apierror.From(err).Code)
		return transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, closeForbidden), code), nil, err
	}
	ctx = auth.Authenticated(ctx, principal, credential)
	return context.WithValue(ctx, connectionKey{}, new(atomic.Int32)), nil, nil
}

// closeForbidden is graphql-transport-ws's close code for a connection_init refused.
const closeForbidden = 4403

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

// longLived reports whether r opens a stream that lasts (a WebSocket or Server-Sent Events),
// which the server's write timeout must not cut.
func longLived(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// MaxStreamsPerAddress bounds the WebSockets and event streams open from one client address on
// one server.
const MaxStreamsPerAddress = 50

// Streams lets the long-lived requests of /query (a WebSocket, Server-Sent Events) outlast the
// server's write timeout, which ordinary requests keep, and bounds how many one client address
// holds open at once: one more is answered 429.
func Streams(addressOf func(*http.Request) string) func(http.Handler) http.Handler {
	var mu sync.Mutex
	open := map[string]int{}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !longLived(r) {
				next.ServeHTTP(w, r)
				return
			}
			address := addressOf(r)
			mu.Lock()
			if open[address] >= MaxStreamsPerAddress {
				mu.Unlock()
				WriteError(w, r, apierror.New(apierror.RateLimited, fmt.Sprintf("at most %d streams may be open from one address", MaxStreamsPerAddress)))
				return
			}
			open[address]++
			mu.Unlock()
			defer func() {
				mu.Lock()
				if open[address]--; open[address] <= 0 {
					delete(open, address)
				}
				mu.Unlock()
			}()
			// The stream writes for as long as it lasts; keep-alives find a dead peer.
			http.NewResponseController(w).SetWriteDeadline(time.Time{})
			next.ServeHTTP(w, r)
		})
	}
}
