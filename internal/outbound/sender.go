// Package outbound sends webhooks over HTTP: the sandboxes' deliveries to Paygate and the test
// events to merchants' endpoints. One Sender makes every try: bounded in time, never redirected,
// and in production never dialled to an address of Paygate's own networks.
package outbound

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate/paygate/internal/tracing"
)

// Bounds of one try.
const (
	// defaultTryTimeout bounds a whole try: connecting, TLS, the answer and its excerpt.
	defaultTryTimeout = 10 * time.Second
	// maxExcerpt is how much of an answer's body is read, and all that is read.
	maxExcerpt = 1024
	// maxAnswerHeaderBytes bounds an answer's headers, which are read whole before the excerpt.
	maxAnswerHeaderBytes = 64 << 10
)

// Sender posts webhooks, one try at a time.
type Sender struct {
	client  *http.Client
	timeout time.Duration
}

// NewSender returns a sender whose tries end after timeout (default 10 s) and dial only what
// dialGuard allows: in production no address of Paygate's own networks, and never a cloud's
// metadata service. It takes no proxy from the environment and leaves answers as sent (no
// transparent gzip, which would read more than the excerpt).
func NewSender(production bool, timeout time.Duration) *Sender {
	dialer := &net.Dialer{ControlContext: dialGuard(production)}
	return newSender(&http.Transport{
		DialContext:            dialer.DialContext,
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxAnswerHeaderBytes,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
	}, timeout)
}

// NewSenderOver returns a sender over transport, which decides where a try goes: a sandbox
// delivering to the server it runs in, in process.
func NewSenderOver(transport http.RoundTripper, timeout time.Duration) *Sender {
	return newSender(transport, timeout)
}

func newSender(transport http.RoundTripper, timeout time.Duration) *Sender {
	if timeout <= 0 {
		timeout = defaultTryTimeout
	}
	return &Sender{timeout: timeout, client: &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Attempt is what came of one try.
type Attempt struct {
	// StatusCode is the answer's status, a redirect's included (never followed); 0 when no answer
	// came.
	StatusCode int
	Latency    time.Duration
	// Excerpt is the start of the answer's body, valid UTF-8, trimmed.
	Excerpt string
	// Failure says why no answer, or no whole answer, came, in Paygate's own words; "" when one did.
	Failure string
	// Refused names the kind of address the guard would not dial ("a loopback address"); the
	// try was not made.
	Refused string
}

// Delivered reports whether the endpoint took the webhook: a whole 2xx answer.
func (a Attempt) Delivered() bool {
	return a.StatusCode >= 200 && a.StatusCode <= 299 && a.Failure == ""
}

// String says what came of the try, for a log.
func (a Attempt) String() string {
	switch {
	case a.Refused != "":
		return "refused destination: " + a.Refused + " address"
	case a.Failure != "":
		return a.Failure
	}
	return fmt.Sprintf("answered %d", a.StatusCode)
}

// Try POSTs body to url once with header (Content-Type is set to JSON), within the sender's
// timeout and ctx.
func (s *Sender) Try(ctx context.Context, url string, body []byte, header http.Header) (Attempt, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	post, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		// Its text quotes the URL, which may hold the merchant's token.
		return Attempt{}, errors.New("a request to the endpoint's URL cannot be made")
	}
	for name, values := range header {
		post.Header[name] = values
	}
	post.Header.Set("Content-Type", "application/json")
	post, span := traceTry(post)
	start := time.Now()
	resp, err := s.client.Do(post)
	attempt := Attempt{Latency: time.Since(start)}
	defer func() { endTry(span, attempt) }()
	if err != nil {
		if refused, ok := errors.AsType[*refusedAddress](err); ok {
			attempt.Refused = refused.kind
		} else {
			attempt.Failure = failureOf(err, s.timeout)
		}
		return attempt, nil
	}
	defer resp.Body.Close() // unread beyond the excerpt
	attempt.StatusCode = resp.StatusCode
	excerpt, err := io.ReadAll(io.LimitReader(resp.Body, maxExcerpt))
	attempt.Excerpt = excerptOf(excerpt)
	if err != nil {
		attempt.Failure = "the answer's body was cut short: " + failureOf(err, s.timeout)
	}
	return attempt, nil
}

// traceTry hands the endpoint the trace the try is made in (its traceparent) and, within a
// recorded trace, starts the try's client span. The span names the endpoint's host and port and
// never its URL, whose path or query may hold the merchant's token: otelhttp's transport would
// record it whole.
func traceTry(post *http.Request) (*http.Request, trace.Span) {
	var span trace.Span
	if trace.SpanFromContext(post.Context()).IsRecording() {
		port, err := strconv.Atoi(post.URL.Port())
		if err != nil {
			port = map[string]int{"http": 80, "https": 443}[post.URL.Scheme]
		}
		var ctx context.Context
		ctx, span = tracing.Tracer().Start(post.Context(), http.MethodPost, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(semconv.HTTPRequestMethodPost, semconv.URLScheme(post.URL.Scheme),
				semconv.ServerAddress(post.URL.Hostname()), semconv.ServerPort(port)))
		post = post.WithContext(ctx)
	}
	otel.GetTextMapPropagator().Inject(post.Context(), propagation.HeaderCarrier(post.Header))
	return post, span
}

// endTry ends a try's span, if it has one, with what came of the try: a failure, or an answer
// of 400 or above, marks it failed.
func endTry(span trace.Span, attempt Attempt) {
	if span == nil {
		return
	}
	if attempt.StatusCode != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(attempt.StatusCode))
	}
	switch {
	case attempt.Failure != "" || attempt.Refused != "":
		span.SetAttributes(semconv.ErrorTypeOther)
		span.SetStatus(codes.Error, attempt.String())
	case attempt.StatusCode >= 400:
		span.SetAttributes(semconv.ErrorTypeKey.String(strconv.Itoa(attempt.StatusCode)))
		span.SetStatus(codes.Error, attempt.String())
	}
	span.End()
}

// excerptOf is the start of an answer as text: valid UTF-8 (a character cut by the limit is left
// out, bytes that are no UTF-8 are replaced), trimmed.
func excerptOf(b []byte) string {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), string(utf8.RuneError)))
}

// failureOf says why a delivery got no answer, in words of Paygate's own: the errors' texts name
// Paygate's resolver and its own address.
func failureOf(err error, timeout time.Duration) string {
	var netErr net.Error
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var alert tls.AlertError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("timeout: no answer within %s", timeout)
	case errors.As(err, &dnsErr):
		return "the host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the connection was refused"
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return "the host cannot be reached"
	case errors.As(err, &certErr):
		return "TLS: the certificate could not be verified (" + certificateProblem(certErr.Err) + ")"
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"): // net/http has no type for it
		return "TLS: the endpoint answered in plain HTTP (is it http://?)"
	case errors.As(err, &alert):
		return "TLS: the handshake failed"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before a whole answer came"
	default:
		return "no HTTP answer could be read"
	}
}

func certificateProblem(err error) string {
	invalid, isInvalid := errors.AsType[x509.CertificateInvalidError](err)
	switch {
	case errors.As(err, new(x509.UnknownAuthorityError)):
		return "signed by an unknown authority"
	case errors.As(err, new(x509.HostnameError)):
		return "not valid for the host"
	case isInvalid && invalid.Reason == x509.Expired:
		return "expired or not yet valid"
	default:
		return "invalid"
	}
}

// refusedAddress is a destination dialGuard refuses; kind names its range, never the address,
// which may be one of Paygate's networks that the URL did not spell.
type refusedAddress struct{ kind string }

func (e *refusedAddress) Error() string { return "refused destination: " + e.kind + " address" }

// addressRange is a range of addresses never dialled: always, or in production only when local.
type addressRange struct {
	prefix netip.Prefix
	kind   string
	// local ranges are where a merchant's endpoint under development may be (localhost, a LAN):
	// allowed outside production. The others hold no endpoint anyone tests, and some the clouds'
	// metadata services (169.254.169.254, 192.0.0.192), so a server left in development mode
	// does not reach them either.
	local bool
}

var refusedRanges = []addressRange{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified", false},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback", true},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private", true},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private", true},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private", true},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT)", true},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking", true},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local", false},
	{netip.MustParsePrefix("192.0.0.0/24"), "a special-purpose", false},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast", false},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved", false},
	{netip.MustParsePrefix("::/128"), "an unspecified", false},
	{netip.MustParsePrefix("::1/128"), "a loopback", true},
	{netip.MustParsePrefix("fc00::/7"), "a private", true},
	{netip.MustParsePrefix("fe80::/10"), "a link-local", false},
	{netip.MustParsePrefix("fec0::/10"), "a site-local", false},
	{netip.MustParsePrefix("ff00::/8"), "a multicast", false},
}

// nat64 is the well-known NAT64 prefix, whose addresses stand for the IPv4 address in their last
// 32 bits.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// ipv4Carriers are the IPv6 ranges whose addresses carry an IPv4 address somewhere a router may
// act on it (IPv4-compatible addresses, local-use NAT64, 6to4): refused whatever they carry,
// since no merchant's endpoint is reached through them.
var ipv4Carriers = []netip.Prefix{netip.MustParsePrefix("::/96"), netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("2002::/16")}

// dialGuard checks each address as it is dialled, after resolution, so a host name resolving to a
// refused address (localhost, or a name rebound between two look-ups) is refused as the address
// itself is. IPv4 addresses written as IPv6 (::ffff:127.0.0.1, 64:ff9b::7f00:1) are checked as the
// IPv4 address they stand for.
func dialGuard(production bool) func(ctx context.Context, network, address string, _ syscall.RawConn) error {
	return func(_ context.Context, network, address string, _ syscall.RawConn) error {
		addrPort, err := netip.ParseAddrPort(address)
		if err != nil || (network != "tcp4" && network != "tcp6") {
			return &refusedAddress{kind: "an unknown"}
		}
		if kind := refusedKind(addrPort.Addr(), production); kind != "" {
			return &refusedAddress{kind: kind}
		}
		return nil
	}
}

// refusedKind names the range of addresses ip is in that is never dialled (in production, or
// always), or "" when ip may be dialled.
func refusedKind(ip netip.Addr, production bool) string {
	ip = ip.WithZone("").Unmap() // a zoned address matches no prefix
	if nat64.Contains(ip) {
		b := ip.As16()
		ip = netip.AddrFrom4([4]byte(b[12:]))
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(ip) && (production || !r.local) {
			return r.kind
		}
	}
	for _, carrier := range ipv4Carriers {
		if carrier.Contains(ip) && !ip.IsLoopback() && !ip.IsUnspecified() { // ::1 and :: are judged above
			return "an IPv4-carrying"
		}
	}
	return ""
}
