package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/paygate/paygate/internal/apierror"
)

// Close codes of a WebSocket that say why the server closed it.
const (
	// closeForbidden is graphql-transport-ws's "forbidden": the connection's credential is
	// refused, at connection_init or later. graphql-ws clients connect again, which asks the
	// application for the credential anew.
	closeForbidden = 4403
	// closeGoingAway is the WebSocket's own "going away": the server stops, and the client
	// subscribes again, to another server.
	closeGoingAway = 1001
)

// Streams are the long-lived requests of /query open on this server, WebSockets and Server-Sent
// Events: bounded per client address, let outlast the server's write timeout, and aborted when
// the server stops, so that their clients subscribe again to another server instead of being
// told the subscriptions are complete.
type Streams struct {
	addressOf func(*http.Request) string

	mu       sync.Mutex
	open     map[*openStream]struct{}
	byAddr   map[string]int
	stopping bool
}

// NewStreams returns the streams of a server, which tells client addresses apart by addressOf.
func NewStreams(addressOf func(*http.Request) string) *Streams {
	return &Streams{addressOf: addressOf, open: map[*openStream]struct{}{}, byAddr: map[string]int{}}
}

// MaxStreamsPerAddress bounds the WebSockets and event streams open from one client address on
// one server.
const MaxStreamsPerAddress = 50

// longLived reports whether r opens a stream that lasts (a WebSocket or Server-Sent Events),
// which the server's write timeout must not cut.
func longLived(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// Middleware lets the long-lived requests of /query outlast the server's write timeout, which
// ordinary requests keep, bounds how many one client address holds open at once (one more is
// answered 429), and keeps each open stream where Abort finds it.
func (s *Streams) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !longLived(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stream := &openStream{webSocket: r.Header.Get("Upgrade") != "", cancel: cancel}
		address := s.addressOf(r)
		if err := s.admit(stream, address); err != nil {
			WriteError(w, r, err)
			return
		}
		defer s.leave(stream, address)
		// The stream writes for as long as it lasts; keep-alives find a dead peer.
		http.NewResponseController(w).SetWriteDeadline(time.Time{})
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, openStreamKey{}, stream)))
		if !stream.webSocket && stream.wasAborted() {
			// Cut, not completed: net/http drops the connection without ending the response.
			// (Here, outside gqlgen's handler, which would answer a panic as an error.)
			panic(http.ErrAbortHandler)
		}
	})
}

func (s *Streams) admit(stream *openStream, address string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopping:
		return apierror.New(apierror.ServiceUnavailable, "this server is stopping: subscribe again, to another")
	case s.byAddr[address] >= MaxStreamsPerAddress:
		return apierror.New(apierror.RateLimited, fmt.Sprintf("at most %d streams may be open from one address", MaxStreamsPerAddress))
	}
	s.byAddr[address]++
	s.open[stream] = struct{}{}
	return nil
}

func (s *Streams) leave(stream *openStream, address string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.open, stream)
	if s.byAddr[address]--; s.byAddr[address] <= 0 {
		delete(s.byAddr, address)
	}
}

// Abort aborts every stream, as the server stops: a WebSocket is closed with 1001 (going away),
// an event stream's connection is cut, and no subscription is completed, so each client
// subscribes again, to another server. Streams opened after are refused.
func (s *Streams) Abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
	for stream := range s.open {
		stream.abort()
	}
}

// openStream is one long-lived request of /query.
type openStream struct {
	webSocket bool
	// subscriptions counts a WebSocket's subscriptions.
	subscriptions atomic.Int32
	// cancel ends the request: an event stream's subscription ends with it.
	cancel context.CancelFunc

	mu sync.Mutex
	// socket is a WebSocket's connection, once accepted.
	socket transport.WebsocketConn
	// aborted says the server stopped: the stream is cut, never completed.
	aborted bool
	// refusal is why connection_init was refused.
	refusal apierror.Code
}

type openStreamKey struct{}

// openStreamOf returns the stream ctx belongs to, nil for an ordinary request.
func openStreamOf(ctx context.Context) *openStream {
	stream, _ := ctx.Value(openStreamKey{}).(*openStream)
	return stream
}

// overWebSocket reports whether ctx is a WebSocket's.
func overWebSocket(ctx context.Context) bool {
	stream := openStreamOf(ctx)
	return stream != nil && stream.webSocket
}

func (s *openStream) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborted = true
	if !s.webSocket {
		s.cancel()
	} else if s.socket != nil {
		s.socket.WriteClose(closeGoingAway, "the server is stopping: subscribe again")
	}
}

// wasAborted reports whether the server stopped the stream; false for an ordinary request's nil.
func (s *openStream) wasAborted() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aborted
}

// accepted keeps a WebSocket's connection, closed at once if the server stopped meanwhile.
func (s *openStream) accepted(socket transport.WebsocketConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.socket = socket
	if s.aborted {
		socket.WriteClose(closeGoingAway, "the server is stopping: subscribe again")
	}
}

// refuseCredential closes a WebSocket whose credential stopped being good with 4403 and the
// error's code as the reason, which a graphql-ws client answers by connecting again with the
// credential it is given anew. The first close wins: the socket closes once.
func (s *openStream) refuseCredential(code apierror.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.socket != nil {
		s.socket.WriteClose(closeForbidden, string(code))
	}
}

func (s *openStream) refused(code apierror.Code) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusal = code
}

func (s *openStream) refusalCode() apierror.Code {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refusal
}

// sockets accepts /query's WebSockets as gqlgen's coder/websocket implementation does, and keeps
// each in its open stream, to be closed with the code that says why.
type sockets struct {
	transport.CoderWebsocketImplementation
}

func (i sockets) Accept(w http.ResponseWriter, r *http.Request, options transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := i.CoderWebsocketImplementation.Accept(w, r, options)
	if err != nil {
		return nil, err
	}
	s := &socket{WebsocketConn: conn, stream: openStreamOf(r.Context())}
	if s.stream != nil {
		s.stream.accepted(s)
	}
	return s, nil
}

// socket is a WebSocket whose every error sent carries extensions.code: gqlgen's transport sends
// a few of its own without one (a subscribe message that is not JSON, a refused connection_init).
type socket struct {
	transport.WebsocketConn
	stream *openStream
}

// SetReadLimit and SetReadDeadline pass gqlgen's bounds on to the connection.
func (s *socket) SetReadLimit(limit int64) {
	if limiter, ok := s.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		limiter.SetReadLimit(limit)
	}
}

func (s *socket) SetReadDeadline(deadline time.Time) error {
	if deadliner, ok := s.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return deadliner.SetReadDeadline(deadline)
	}
	return nil
}

func (s *socket) WriteJSON(v any) error {
	message, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if bytes.Contains(message, []byte(`"message"`)) { // an error's, or a result's that holds one
		refusal := apierror.InvalidRequest
		if s.stream != nil && s.stream.refusalCode() != "" {
			refusal = s.stream.refusalCode()
		}
		message = withErrorCodes(message, refusal)
	}
	return s.WebsocketConn.WriteJSON(json.RawMessage(message))
}

// withErrorCodes gives each error of a graphql-transport-ws (or legacy graphql-ws) message that
// has no extensions.code one: invalid_request (gqlgen's own errors without a code are about the
// message the client sent), or for connection_error (legacy graphql-ws) why connection_init was
// refused.
func withErrorCodes(message []byte, refusal apierror.Code) []byte {
	var envelope map[string]json.RawMessage
	if json.Unmarshal(message, &envelope) != nil {
		return message
	}
	var kind string
	json.Unmarshal(envelope["type"], &kind)
	var errs []map[string]any
	switch kind {
	case "error":
		if json.Unmarshal(envelope["payload"], &errs) != nil {
			return message
		}
		if !withCodes(errs, apierror.InvalidRequest) {
			return message
		}
		envelope["payload"], _ = json.Marshal(errs)
	case "next", "data":
		var payload map[string]json.RawMessage
		if json.Unmarshal(envelope["payload"], &payload) != nil || json.Unmarshal(payload["errors"], &errs) != nil {
			return message
		}
		if !withCodes(errs, apierror.InvalidRequest) {
			return message
		}
		payload["errors"], _ = json.Marshal(errs)
		envelope["payload"], _ = json.Marshal(payload)
	case "connection_error":
		var one map[string]any
		if json.Unmarshal(envelope["payload"], &one) != nil || !withCodes([]map[string]any{one}, refusal) {
			return message
		}
		envelope["payload"], _ = json.Marshal(one)
	default:
		return message
	}
	coded, err := json.Marshal(envelope)
	if err != nil {
		return message
	}
	return coded
}

// withCodes sets code in the extensions of each error that has none, and reports whether it set
// any.
func withCodes(errs []map[string]any, code apierror.Code) bool {
	set := false
	for _, e := range errs {
		extensions, _ := e["extensions"].(map[string]any)
		if _, ok := extensions["code"]; ok {
			continue
		}
		if extensions == nil {
			extensions = map[string]any{}
			e["extensions"] = extensions
		}
		extensions["code"] = code
		set = true
	}
	return set
}

// overEventStream is /query's Server-Sent Events transport, graphql-sse's distinct connections
// mode: a POST of a GraphQL request with Accept: text/event-stream, answered by a `next` event for
// each result and a `complete` event at the end. gqlgen has one, which cannot do two things this
// one does: a subscription that ends for a reason sends the reason, an error with its
// extensions.code in a last `next` event, before `complete`; and when the server stops, the
// stream is cut rather than completed, so that the client subscribes again to another server.
type overEventStream struct {
	// keepAlive is how often an idle stream is sent a comment, so a dead peer is found and
	// proxies keep it.
	keepAlive time.Duration
}

var _ graphql.Transport = overEventStream{}

func (overEventStream) Supports(r *http.Request) bool {
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && r.Method == http.MethodPost && mediaType == "application/json" &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

func (t overEventStream) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	params, paramsErr := readParams(r)
	if paramsErr != nil {
		w.Header().Set("Content-Type", "application/json")
		refuse(w, http.StatusBadRequest, exec.DispatchError(ctx, gqlerror.List{paramsErr}))
		return
	}
	events := &eventWriter{w: w, flush: http.NewResponseController(w).Flush}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	events.write(":\n\n") // the headers go out: the client knows it is subscribed
	defer events.keepAlive(t.keepAlive)()

	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		events.next(exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs))
		events.write("event: complete\ndata:\n\n")
		return
	}
	ending := &subscriptionEnding{}
	responses, ctx := exec.DispatchOperation(context.WithValue(ctx, subscriptionEndingKey{}, ending), opCtx)
	for response := responses(ctx); response != nil; response = responses(ctx) {
		events.next(response)
	}
	if openStreamOf(r.Context()).wasAborted() {
		return // not completed: the stream is cut (Streams.Middleware)
	}
	if err := ending.err.Load(); err != nil {
		events.next(&graphql.Response{Errors: gqlerror.List{err}})
	}
	events.write("event: complete\ndata:\n\n")
}

// eventWriter writes an event stream's events, one at a time.
type eventWriter struct {
	mu    sync.Mutex
	w     io.Writer
	flush func() error
}

func (e *eventWriter) write(event string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	io.WriteString(e.w, event)
	e.flush()
}

func (e *eventWriter) next(response *graphql.Response) {
	data, err := json.Marshal(response)
	if err != nil {
		// A bug: gqlgen's recovery answers it, as with its own transports.
		panic(fmt.Errorf("encoding a GraphQL answer: %w", err))
	}
	e.write("event: next\ndata: " + string(data) + "\n\n")
}

// keepAlive writes a comment every interval until the returned stop is called, which returns
// once nothing more is written.
func (e *eventWriter) keepAlive(interval time.Duration) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		ticker := time.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				e.write(": ping\n\n")
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// subscriptionEnding is why an event stream's subscription ended, when it ended for a reason.
type subscriptionEnding struct {
	err atomic.Pointer[gqlerror.Error]
}

type subscriptionEndingKey struct{}

// endSubscription records why the subscription of ctx ends, to be said before it completes:
// over Server-Sent Events an error in a last `next` event before `complete`; over a WebSocket an
// `error` message, which ends it in graphql-transport-ws. The caller then closes the
// subscription's channel.
func endSubscription(ctx context.Context, err *apierror.Error) {
	gqlErr := &gqlerror.Error{Message: err.Message, Path: graphql.GetPath(ctx), Extensions: map[string]any{"code": err.Code}}
	if ending, ok := ctx.Value(subscriptionEndingKey{}).(*subscriptionEnding); ok {
		ending.err.Store(gqlErr)
	} else if overWebSocket(ctx) {
		transport.AddSubscriptionError(ctx, gqlErr)
	}
}
