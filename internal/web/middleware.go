package web

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	pathpkg "path"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/ratelimit"
)

// Middleware wraps a handler.
type Middleware func(http.Handler) http.Handler

// Chain applies middleware so that the first listed runs first.
func Chain(h http.Handler, middleware ...Middleware) http.Handler {
	for i := len(middleware) - 1; i >= 0; i-- {
		h = middleware[i](h)
	}
	return h
}

// requestValues are what the middleware learn of a request: its id, its logger, its client's
// address, its rate limit and the route that served it. They share one context value, so that the
// request is copied once for them rather than once for each (a copy of http.Request is some 250
// bytes, for every request). They are set on the request's goroutine as the middleware go: the
// id and logger first, the address when first asked, the meter by the API's rate limit, and the
// route by Fork or, as the handler returns, by Routed.
type requestValues struct {
	id     string
	logger *slog.Logger
	route  string
	// clientAddr is the client's address once a rate limit has worked it out.
	clientAddr string
	// meter is the request's rate limit, on the API's routes.
	meter *ratelimit.Meter
}

type requestValuesKey struct{}

// valuesOf returns the request's values, nil outside a request.
func valuesOf(ctx context.Context) *requestValues {
	values, _ := ctx.Value(requestValuesKey{}).(*requestValues)
	return values
}

// withValues returns r's values, and r carrying them: r itself if it already did.
func withValues(r *http.Request) (*requestValues, *http.Request) {
	if values := valuesOf(r.Context()); values != nil {
		return values, r
	}
	values := new(requestValues)
	return values, r.WithContext(context.WithValue(r.Context(), requestValuesKey{}, values))
}

// RequestID returns the request's id, or "" outside a request.
func RequestID(ctx context.Context) string {
	if values := valuesOf(ctx); values != nil {
		return values.id
	}
	return ""
}

var acceptableRequestID = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// WithRequestID gives every request an id: the caller's X-Request-Id when it is sane, else a new
// one. It is echoed in X-Request-Id and carried in every log line and error body.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if id == "" || !acceptableRequestID.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		values, r := withValues(r)
		values.id = id
		next.ServeHTTP(w, r)
	})
}

// newRequestID returns "req_" and 24 hex digits of 96 random bits. An id names a request in logs
// and error bodies and guards nothing, so it comes from the runtime's per-thread generator
// (ChaCha8, seeded by the system) rather than a call for the system's randomness per request.
func newRequestID() string {
	var raw [12]byte
	binary.LittleEndian.PutUint64(raw[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(raw[8:], rand.Uint32())
	id := [len("req_") + 2*len(raw)]byte{'r', 'e', 'q', '_'}
	hex.Encode(id[len("req_"):], raw[:])
	return string(id[:])
}

// WithLogger makes logger the request's logger, for the handlers that report failures.
func WithLogger(l *slog.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			values, r := withValues(r)
			values.logger = l
			next.ServeHTTP(w, r)
		})
	}
}

// Logger returns the request's logger.
func Logger(ctx context.Context) *slog.Logger {
	if values := valuesOf(ctx); values != nil && values.logger != nil {
		return values.logger
	}
	return slog.Default()
}

// statusRecorder remembers the status a handler wrote, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush sends what was written so far: an event stream's events, as they come.
func (s *statusRecorder) Flush() {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	http.NewResponseController(s.ResponseWriter).Flush()
}

// knownMethods are the methods a span is named by; any other is named HTTP, so that what a client
// sends cannot multiply the names.
var knownMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions}

// AccessLog logs one line per request: method, path, route (the pattern that served it, one
// value per route whatever the ids in the path), status, duration, request id. Never the query
// string, headers or body, which may carry credentials or card data. Each observer is told of
// every request too, by route, never by path.
func AccessLog(logger *slog.Logger, observers ...func(route, method string, status int, took time.Duration)) Middleware {
	handler := logger.Handler()
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			values, r := withValues(r)
			next.ServeHTTP(rec, r)
			took := time.Since(start)
			if rec.status == 0 {
				rec.status = http.StatusOK // nothing written: net/http answers 200
			}
			// A pattern may name its method ("GET /api/v1/payments/{id}"); observers count the
			// method apart.
			path := values.route
			if _, after, ok := strings.Cut(path, " "); ok {
				path = after
			}
			for _, observe := range observers {
				observe(path, r.Method, rec.status, took)
			}
			// The request's span, when traces are exported, is named by its route, never its path:
			// a request answered before it was routed (a preflight, a spent rate limit) keeps
			// otelhttp's name. The method is one the mux routes by, or else no more than HTTP.
			if span := trace.SpanFromContext(r.Context()); path != "" && span.IsRecording() {
				method := r.Method
				if !slices.Contains(knownMethods, method) {
					method = "HTTP"
				}
				span.SetName(method + " " + path)
				span.SetAttributes(attribute.String("http.route", path))
			}
			if !handler.Enabled(r.Context(), slog.LevelInfo) {
				return
			}
			// Made and handled here rather than by logger.LogAttrs, which walks the stack for a
			// source position this line never shows; the request ended at start+took.
			line := slog.NewRecord(start.Add(took), slog.LevelInfo, "request", 0)
			line.AddAttrs(
				slog.String("request_id", values.id),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("route", values.route),
				slog.Int("status", rec.status),
				slog.Duration("duration", took),
			)
			handler.Handle(r.Context(), line)
		})
	}
}

// Routed serves mux and records the pattern it served the request with for AccessLog. Of nested
// muxes, the innermost names the route.
func Routed(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Deferred, so a request whose handler panics is named too; mux sets r.Pattern before it
		// calls the handler.
		defer func() {
			if values := valuesOf(r.Context()); values != nil && values.route == "" {
				values.route = r.Pattern
			}
		}()
		mux.ServeHTTP(w, r)
	})
}

// Fork serves a request for exactly path with at, naming its route path for AccessLog, and any
// other with elsewhere, as a mux of the routes path and "/" would, and at less cost for the
// requests that matter: a clean path is matched by comparing it, and only an unclean one (or a
// CONNECT) is left to such a mux, which redirects it to the clean path before either runs. As no
// mux serves a request for path, its r.Pattern is "".
func Fork(path string, at, elsewhere http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(path, at)
	mux.Handle("/", elsewhere)
	routed := Routed(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if escaped := r.URL.EscapedPath(); r.Method == http.MethodConnect || cleanPath(escaped) != escaped {
			routed.ServeHTTP(w, r)
			return
		}
		values := valuesOf(r.Context())
		if r.URL.Path != path {
			if values != nil {
				// As the mux would: a request elsewhere that no inner mux names (refused by a
				// middleware first, or panicking there) is "/"'s.
				defer func() {
					if values.route == "" {
						values.route = "/"
					}
				}()
			}
			elsewhere.ServeHTTP(w, r)
			return
		}
		if values != nil {
			values.route = path
		}
		at.ServeHTTP(w, r)
	})
}

// cleanPath is the path a mux serves p at: rooted, without . or .. elements or repeated slashes,
// keeping a trailing slash. A clean path is returned as it is, without allocating.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	clean := pathpkg.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		if len(p) == len(clean)+1 && strings.HasPrefix(p, clean) {
			return p
		}
		clean += "/"
	}
	return clean
}

// RefuseControlBytes answers 400 to a request whose path or query holds a control character
// (NUL above all, which PostgreSQL's text refuses) or is not UTF-8: no id or parameter of the
// REST routes has one, so none reaches a handler or the database.
func RefuseControlBytes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !plainURL(r.URL) {
			WriteError(w, r, apierror.New(apierror.InvalidRequest, "the URL holds a control character or bytes that are not UTF-8"), nil)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// plainURL reports whether u's path and every key and value of its query are plain text. The
// query is parsed only when there is one.
func plainURL(u *url.URL) bool {
	if !plainText(u.Path) {
		return false
	}
	if u.RawQuery == "" {
		return true
	}
	for key, values := range u.Query() {
		if !plainText(key) {
			return false
		}
		for _, value := range values {
			if !plainText(value) {
				return false
			}
		}
	}
	return true
}

// plainText reports whether text is UTF-8 without a control character.
func plainText(text string) bool {
	return utf8.ValidString(text) && !strings.ContainsFunc(text, unicode.IsControl)
}

// Recover turns a panic into a 500 error envelope and a log line with the stack.
func Recover(logger *slog.Logger) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					logger.LogAttrs(r.Context(), slog.LevelError, "panic",
						slog.String("request_id", RequestID(r.Context())),
						slog.Any("panic", v),
						slog.String("stack", string(debug.Stack())),
					)
					WriteError(w, r, errors.New("panic"), nil)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// header is a response header by its canonical name, with its values.
type header struct {
	name   string
	values []string
}

// securityHeaders are set on every answer; Strict-Transport-Security joins them in production.
// They are what an answer read as data needs: nothing it says may be sniffed into another type,
// run, framed or kept in a cache. Each header an answer carries is work for the server and every
// client on every request, so the ones that guard only a document a browser shows (documentHeaders)
// are set by the pages alone.
var securityHeaders = []header{
	{"X-Content-Type-Options", []string{"nosniff"}},
	{"Content-Security-Policy", []string{"default-src 'none'; frame-ancestors 'none'"}},
	{"Cache-Control", []string{"no-store"}},
}

// SecurityHeaders sets the headers an API answer should carry. A page sets its own policy over
// these, and its document headers through Document.
func SecurityHeaders(production bool) Middleware {
	return func(next http.Handler) http.Handler {
		headers := securityHeaders
		if production {
			headers = append(slices.Clip(headers), header{"Strict-Transport-Security", []string{"max-age=63072000; includeSubDomains"}})
		}
		return setting(headers, next)
	}
}

// documentHeaders guard a page a browser shows: it is framed by no one (X-Frame-Options for the
// browsers that predate the policy's frame-ancestors), its address is sent to no site it links
// to, and no window it opens may reach back into it.
var documentHeaders = []header{
	{"X-Frame-Options", []string{"DENY"}},
	{"Referrer-Policy", []string{"no-referrer"}},
	{"Cross-Origin-Opener-Policy", []string{"same-origin"}},
}

// Document serves a page, and the files it loads, with the document headers.
func Document(page http.Handler) http.Handler {
	return setting(documentHeaders, page)
}

// setting sets headers on each answer before next writes it.
func setting(headers []header, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// The values are shared by every response, as Header.Set would not: one that replaces
		// or adds to a header gets a slice of its own, and none writes into one.
		for _, header := range headers {
			h[header.name] = header.values
		}
		next.ServeHTTP(w, r)
	})
}

// LimitBody reads a request body of at most limit bytes up front, so an oversized one answers
// 413 payload_too_large before any handler runs, through writeError, which renders it in the
// shape of the surface the request was for.
func LimitBody(limit int64, writeError func(http.ResponseWriter, *http.Request, error)) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			tooLarge := apierror.New(apierror.PayloadTooLarge, "the request body is larger than 1 MiB")
			if r.ContentLength > limit {
				writeError(w, r, tooLarge)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			r.Body.Close()
			switch {
			case err != nil:
				writeError(w, r, apierror.New(apierror.InvalidRequest, "the request body could not be read"))
				return
			case int64(len(body)) > limit:
				writeError(w, r, tooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// Authenticate reads a request's credential: an access token or an API key, as a bearer token
// in Authorization, or an API key in X-API-Key, acting for the merchant Paygate-Merchant names
// (platform staff only; none: the credential's own). A valid one puts its principal, and so its
// merchant, in the context; a bad one records why, and the operation answers with that reason if
// it needs a principal. Routes that need no principal (login, refresh) work either way.
//
// A credential whose check memory cannot answer pays gate first, once: when gate refuses, refused
// answers the request with gate's error and nothing is checked. gate may be nil: nothing to pay.
func Authenticate(authenticate func(ctx context.Context, credential, merchant string, pay func() error) (auth.Principal, error),
	gate func(http.ResponseWriter, *http.Request) error, refused func(http.ResponseWriter, *http.Request, error)) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			header, apiKey := r.Header.Get("Authorization"), r.Header.Get("X-API-Key")
			if header == "" && apiKey == "" {
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			scheme, credential, _ := strings.Cut(header, " ")
			credential = strings.TrimSpace(credential)
			switch {
			case header != "" && apiKey != "", len(r.Header.Values("Authorization")) > 1, len(r.Header.Values("X-API-Key")) > 1:
				// Which of two a proxy or a server would read is anyone's guess: none is.
				ctx = auth.WithFailure(ctx, apierror.New(apierror.TokenInvalid, "send one credential: one Authorization or one X-API-Key header"))
			case header != "" && (!strings.EqualFold(scheme, "Bearer") || credential == ""):
				ctx = auth.WithFailure(ctx, apierror.New(apierror.TokenInvalid, "the Authorization header must be: Bearer <token>"))
			case apiKey != "" && !auth.IsAPIKey(apiKey):
				ctx = auth.WithFailure(ctx, apierror.New(apierror.TokenInvalid, "X-API-Key takes an API key (pk_...); send access tokens as Authorization: Bearer <token>"))
			default:
				if apiKey != "" {
					credential = apiKey
				}
				toll := &gateToll{gate: gate, w: w, r: r}
				principal, err := authenticate(ctx, credential, r.Header.Get("Paygate-Merchant"), toll.pay)
				switch {
				case toll.refusal != nil:
					refused(w, r, toll.refusal)
					return
				case err != nil:
					failure := APIError(err)
					if _, judged := errors.AsType[*apierror.Error](err); !judged {
						// The database failed: the request cannot be authenticated now, which is
						// not the credential's fault. Its absence (a failover) is a warning.
						level := slog.LevelError
						if IsDatabaseUnavailable(failure) {
							level = slog.LevelWarn
						}
						Logger(ctx).Log(ctx, level, "authenticating a request", "request_id", RequestID(ctx), "error", err)
					}
					ctx = auth.WithFailure(ctx, failure)
				default:
					ctx = auth.Authenticated(ctx, principal, credential)
				}
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// gateToll is what one request's authentication pays its gate: once, however many checks it makes.
type gateToll struct {
	gate    func(http.ResponseWriter, *http.Request) error
	w       http.ResponseWriter
	r       *http.Request
	paid    bool
	refusal error
}

func (t *gateToll) pay() error {
	if !t.paid && t.gate != nil {
		t.paid = true
		t.refusal = t.gate(t.w, t.r)
	}
	return t.refusal
}
