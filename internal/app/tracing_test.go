package app

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/paygate/paygate/ent/event"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tracing"
)

// otlpReceiver is an OTLP trace receiver in the test's process, over HTTP (protobuf at
// /v1/traces) or gRPC: it keeps every span it is sent, with its resource's attributes.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu       sync.Mutex
	spans    []*tracepb.Span
	resource []*commonpb.KeyValue
}

func (rc *otlpReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		rc.resource = rs.GetResource().GetAttributes()
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// startOTLPReceiver starts a receiver for protocol (http/protobuf or grpc) on 127.0.0.1, and
// answers its endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT names it.
func startOTLPReceiver(t *testing.T, protocol string) (*otlpReceiver, string) {
	t.Helper()
	rc := &otlpReceiver{}
	if protocol == "grpc" {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		server := grpc.NewServer()
		coltracepb.RegisterTraceServiceServer(server, rc)
		go server.Serve(listener)
		t.Cleanup(server.Stop)
		return rc, "http://" + listener.Addr().String()
	}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &coltracepb.ExportTraceServiceRequest{}
		if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
			http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
			return
		}
		answer, _ := rc.Export(r.Context(), req)
		out, _ := proto.Marshal(answer)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(server.Close)
	return rc, server.URL
}

func attributesOf(kvs []*commonpb.KeyValue) map[string]string {
	attributes := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			attributes[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			attributes[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		}
	}
	return attributes
}

// spans are what the receiver holds now.
func (rc *otlpReceiver) received() ([]*tracepb.Span, map[string]string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.spans), attributesOf(rc.resource)
}

// exported renders everything the receiver holds as text to look for secrets in, each string
// quoted: the resource's attributes; each span's name, status message and trace state; and the
// keys and string values of its attributes, its events' and its links', those in arrays and
// maps included. Numbers (a size, a port, a process id) are left out: a short secret (a CVC) is
// found by its digits alone.
func (rc *otlpReceiver) exported() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var text strings.Builder
	writeStrings(&text, rc.resource)
	for _, span := range rc.spans {
		fmt.Fprintf(&text, "%q %q %q\n", span.Name, span.Status.GetMessage(), span.TraceState)
		writeStrings(&text, span.Attributes)
		for _, event := range span.Events {
			fmt.Fprintf(&text, "%q\n", event.Name)
			writeStrings(&text, event.Attributes)
		}
		for _, link := range span.Links {
			writeStrings(&text, link.Attributes)
		}
	}
	return text.String()
}

// writeStrings writes the keys of kvs and the strings among their values, quoted, a line each.
func writeStrings(text *strings.Builder, kvs []*commonpb.KeyValue) {
	var write func(*commonpb.AnyValue)
	write = func(value *commonpb.AnyValue) {
		switch v := value.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			fmt.Fprintf(text, "%q\n", v.StringValue)
		case *commonpb.AnyValue_ArrayValue:
			for _, item := range v.ArrayValue.GetValues() {
				write(item)
			}
		case *commonpb.AnyValue_KvlistValue:
			writeStrings(text, v.KvlistValue.GetValues())
		case *commonpb.AnyValue_BytesValue:
			fmt.Fprintf(text, "%q\n", v.BytesValue)
		}
	}
	for _, kv := range kvs {
		fmt.Fprintf(text, "%q\n", kv.Key)
		write(kv.Value)
	}
}

// traceTo turns tracing on for the test, exported over protocol to a receiver of its own, named
// by the standard variables only; it answers the receiver and what flushes and stops the export.
// Tracing is the process's: a test that calls it is not parallel.
func traceTo(t *testing.T, protocol string) (*otlpReceiver, func(context.Context) error) {
	t.Helper()
	receiver, endpoint := startOTLPReceiver(t, protocol)
	clearTracingEnvironment(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
	t.Setenv("OTEL_SERVICE_NAME", "paygate-under-test")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	stop, err := tracing.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(context.Background()) })
	if !tracing.Enabled() {
		t.Fatal("the OTEL_* variables name a receiver, and tracing is not on")
	}
	return receiver, stop
}

// tracedDatabases are the databases the tracing tests run on, each with its statements traced.
func tracedDatabases() map[string]func(testing.TB) *database.DB {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.TracedSQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.TracedPostgres
	}
	return databases
}

// clearTracingEnvironment unsets, for the test, every OTEL_* variable the process was started with
// that would change where or whether its traces go.
func clearTracingEnvironment(t *testing.T) {
	for _, variable := range os.Environ() {
		if name, _, _ := strings.Cut(variable, "="); strings.HasPrefix(name, "OTEL_") {
			t.Setenv(name, "")
		}
	}
}

// TestTracesContinueTheCallersTrace: with the standard OTEL_* variables naming an OTLP receiver,
// over http/protobuf and over gRPC, on both databases, a request that carries its caller's W3C
// traceparent is served in a server span of that trace, a child of the caller's span, named by
// its route, with the HTTP semantic conventions; one without starts a trace of its own; a
// GraphQL operation is a span of its own under its request's, with graphql.operation.type and
// .name; each call to the provider is a client span within the request's trace; the service is
// named as OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES say; and the request's log line
// carries its trace_id and span_id. Not parallel: the variables and the tracer provider are the
// process's.
func TestTracesContinueTheCallersTrace(t *testing.T) {
	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	const graphQLTrace = "0af7651916cd43dd8448eb211c80319c"
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		for name, open := range tracedDatabases() {
			t.Run(protocol+"/"+name, func(t *testing.T) {
				receiver, stop := traceTo(t, protocol)
				env := newTestEnv(t, open(t))
				admin := env.tokenFor("admin")
				// A login, an API key and a payment's card: none of it may be exported.
				access, refresh := env.login(env.userWith("admin"))
				key := env.apiKey(admin, "payments:read")
				if r := env.request(http.MethodGet, "/api/v1/payments", key, nil); r.status != http.StatusOK {
					t.Fatalf("listing with a key = %d %s", r.status, r.raw)
				}
				paid := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4242424242424242"),
					"traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
				if paid.status != http.StatusCreated {
					t.Fatalf("payment = %d %s", paid.status, paid.raw)
				}
				if r := env.request(http.MethodGet, "/api/v1/payments/"+str(get(paid.data(), "id")), admin, nil); r.status != http.StatusOK {
					t.Fatalf("read = %d %s", r.status, r.raw)
				}
				// A caller that does not sample its trace: Paygate does not either, and keeps no
				// cause for later work.
				unsampled := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("11.00", "USD", "4242424242424242"),
					"traceparent", "00-"+strings.Repeat("7", 32)+"-"+callerSpan+"-00")
				if unsampled.status != http.StatusCreated || env.payment(str(unsampled.data()["id"])).TraceParent != nil {
					t.Errorf("an unsampled payment = %d, keeps a cause %v", unsampled.status, env.payment(str(unsampled.data()["id"])).TraceParent)
				}
				// Card data in requests refused before they are served, which errors would quote.
				for _, bad := range []string{
					`{"query": "mutation { createPayment(input: {amount: \"1.00\", currency: \"USD\", card: {number: 4242424242424242, expMonth: 12, expYear: 2030, cvc: 123}}) { id } }"}`,
					`{"query": "query($s: PaymentStatus) { payments(where: {status: $s}) { totalCount } }", "variables": {"s": "4242424242424242"}}`,
				} {
					if r := env.request(http.MethodPost, "/query", admin, bad); r.status >= 500 || get(r.body, "errors") == nil {
						t.Errorf("%s = %d %s", bad, r.status, r.raw)
					}
				}
				query := strings.Replace(createPaymentMutation, "mutation(", "mutation TracedPay(", 1)
				viaGraphQL := env.request(http.MethodPost, "/query", admin, map[string]any{"query": query,
					"variables": map[string]any{"in": gqlPaymentInput("12.00", "USD", "4242424242424242")}},
					"traceparent", "00-"+graphQLTrace+"-"+callerSpan+"-01")
				if get(viaGraphQL.body, "data", "createPayment", "id") == nil {
					t.Fatalf("GraphQL payment = %d %s", viaGraphQL.status, viaGraphQL.raw)
				}
				// A call to a provider hands it the trace it is made in.
				var heard string
				toProvider := tracedCalls(provider.InProcess{Handler: http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
					heard = r.Header.Get("traceparent")
				})})
				ctx, span := otel.Tracer("test").Start(t.Context(), "a payment") // a root of the test's own
				call, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://stripe.sandbox/v1/payment_intents", nil)
				if answer, err := toProvider.RoundTrip(call); err != nil {
					t.Fatal(err)
				} else {
					answer.Body.Close()
				}
				span.End()
				if !strings.HasPrefix(heard, "00-"+span.SpanContext().TraceID().String()+"-") {
					t.Errorf("the provider heard traceparent %q, want one of trace %s", heard, span.SpanContext().TraceID())
				}
				if err := stop(t.Context()); err != nil { // exports what the batch holds
					t.Fatal(err)
				}

				spans, resource := receiver.received()
				if resource["service.name"] != "paygate-under-test" || resource["deployment.environment.name"] != "test" {
					t.Errorf("the resource = %v", resource)
				}
				// Only requests start traces: what runs outside one (the test's own writes to the
				// database, a provider called from no request) is not traced.
				for _, span := range spans {
					if len(span.ParentSpanId) == 0 && span.Kind != tracepb.Span_SPAN_KIND_SERVER && span.Name != "a payment" {
						t.Errorf("a span outside any request's trace: %s %v", span.Name, attributesOf(span.Attributes))
					}
				}
				var created, read, queried, operation *tracepb.Span
				calls := map[string][]*tracepb.Span{} // the provider calls, by trace
				var statements []string               // the SQL the REST payment ran
				for _, span := range spans {
					attributes := attributesOf(span.Attributes)
					if text := attributes["db.query.text"] + attributes["db.statement"]; text != "" && hex.EncodeToString(span.TraceId) == callerTrace {
						if attributes["db.system.name"]+attributes["db.system"] == "" {
							t.Errorf("a statement's span names no database system: %v", attributes)
						}
						statements = append(statements, text)
					}
					switch {
					case span.Kind == tracepb.Span_SPAN_KIND_SERVER && span.Name == "POST /api/v1/payments":
						created = span
					case span.Kind == tracepb.Span_SPAN_KIND_SERVER && span.Name == "GET /api/v1/payments/{id}":
						read = span
					case span.Kind == tracepb.Span_SPAN_KIND_SERVER && span.Name == "POST /query":
						queried = span
					case span.Name == "mutation TracedPay":
						operation = span
					case span.Kind == tracepb.Span_SPAN_KIND_CLIENT && attributes["http.request.method"] != "":
						calls[hex.EncodeToString(span.TraceId)] = append(calls[hex.EncodeToString(span.TraceId)], span)
					}
				}
				if created == nil || read == nil || queried == nil || operation == nil {
					t.Fatalf("spans: created %v, read %v, /query %v, the operation %v, of %d spans", created, read, queried, operation, len(spans))
				}
				if attributes := attributesOf(operation.Attributes); hex.EncodeToString(operation.TraceId) != graphQLTrace ||
					!slices.Equal(operation.ParentSpanId, queried.SpanId) || attributes["graphql.operation.type"] != "mutation" ||
					attributes["graphql.operation.name"] != "TracedPay" {
					t.Errorf("the GraphQL operation's span: trace %x, parent %x (the request's %x), attributes %v",
						operation.TraceId, operation.ParentSpanId, queried.SpanId, attributes)
				}
				// Each payment asked its provider (the sandbox, in process) within its own trace;
				// through GraphQL, under the operation.
				for trace, parent := range map[string][]byte{callerTrace: nil, graphQLTrace: operation.SpanId} {
					asked := calls[trace]
					if len(asked) == 0 {
						t.Errorf("no provider call in trace %s", trace)
						continue
					}
					if attributes := attributesOf(asked[0].Attributes); attributes["server.address"] != "stripe.sandbox" || attributes["http.request.method"] != "POST" {
						t.Errorf("the provider call's attributes = %v", attributes)
					}
					if parent != nil && !slices.Equal(asked[0].ParentSpanId, parent) {
						t.Errorf("the provider call in trace %s is under %x, want the operation's %x", trace, asked[0].ParentSpanId, parent)
					}
				}
				if hex.EncodeToString(created.TraceId) != callerTrace || hex.EncodeToString(created.ParentSpanId) != callerSpan {
					t.Errorf("the payment's span is in trace %x under %x, want the caller's %s under %s",
						created.TraceId, created.ParentSpanId, callerTrace, callerSpan)
				}
				// The payment keeps its request's span as the cause of the work it leaves.
				if cause, want := env.payment(str(get(paid.data(), "id"))).TraceParent, "00-"+callerTrace+"-"+hex.EncodeToString(created.SpanId)+"-01"; cause == nil || *cause != want {
					t.Errorf("the payment keeps the cause %v, want %s", cause, want)
				}
				attributes := attributesOf(created.Attributes)
				if attributes["http.route"] != "/api/v1/payments" || attributes["http.request.method"] != "POST" ||
					attributes["http.response.status_code"] != "201" {
					t.Errorf("the payment's span's attributes = %v", attributes)
				}
				if hex.EncodeToString(read.TraceId) == callerTrace || len(read.ParentSpanId) != 0 {
					t.Errorf("a request without traceparent is in trace %x under %x, want a trace of its own", read.TraceId, read.ParentSpanId)
				}
				// Every statement of the payment is a span of its trace, with its text and never its
				// values: the customer's email is a parameter.
				inserted := false
				for _, text := range statements {
					inserted = inserted || strings.Contains(text, "INSERT INTO") && strings.Contains(text, "payments")
					if strings.Contains(text, "ann@example.com") || strings.Contains(text, "4242") {
						t.Errorf("a statement's span holds a value: %s", text)
					}
				}
				if !inserted {
					t.Errorf("no span of the payment's insert among its %d statements: %q", len(statements), statements)
				}
				// The request's log line names its trace and span.
				want := `"trace_id":"` + callerTrace + `","span_id":"` + hex.EncodeToString(created.SpanId) + `"`
				found := false
				for _, line := range strings.Split(env.logs.String(), "\n") {
					found = found || strings.Contains(line, `"msg":"request"`) && strings.Contains(line, `"method":"POST"`) && strings.Contains(line, want)
				}
				if !found {
					t.Errorf("no request line carries %s:\n%s", want, env.logs.String())
				}
				if found := leaks(receiver.exported(), secret{"the card number", "4242424242424242"}, secret{"the CVC", "123"},
					secret{"a password", testPassword}, secret{"a bearer token", admin}, secret{"an access token", access},
					secret{"a refresh token", refresh}, secret{"an API key", key}); len(found) > 0 {
					t.Errorf("exported in a span: %v", found)
				}
				// Subscriptions still connect through the instrumented server, over both
				// transports (a real client in node, skipped without it).
				t.Run("subscriptions", func(t *testing.T) {
					for _, transport := range []string{"ws", "sse"} {
						subscribe(t, env, transport, admin, `subscription { paymentUpdated { id } }`)
					}
				})
			})
		}
	}
}

// TestNoTracesWithoutTheEnvironment: with no OTEL_* variable asking for traces, none is exported
// and the server is not instrumented; an exporter other than OTLP, or an unknown protocol, is
// refused at start.
func TestNoTracesWithoutTheEnvironment(t *testing.T) {
	clearTracingEnvironment(t)
	stop, err := tracing.Start(t.Context())
	if err != nil || tracing.Enabled() {
		t.Fatalf("no variables: tracing on = %v, %v", tracing.Enabled(), err)
	}
	stop(t.Context())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SDK_DISABLED", "true")
	if stop, err := tracing.Start(t.Context()); err != nil || tracing.Enabled() {
		t.Fatalf("OTEL_SDK_DISABLED=true: tracing on = %v, %v", tracing.Enabled(), err)
	} else {
		stop(t.Context())
	}
	t.Setenv("OTEL_SDK_DISABLED", "")
	for name, value := range map[string]string{"OTEL_TRACES_EXPORTER": "zipkin", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			stop, err := tracing.Start(t.Context())
			if err == nil || tracing.Enabled() {
				t.Errorf("%s=%s is taken: %v", name, value, err)
			}
			if stop != nil {
				stop(t.Context())
			}
		})
	}
}

// TestBackgroundWorkIsTracedFromItsCause: on both databases, the work done after a request in
// the background is traced, each piece in a trace of its own linked to the span that caused it:
// a provider's webhook, processed by the worker, to the request that brought it; an authorisation
// expired and a lost answer reconciled, to the requests that made their payments; and each
// delivery of an event to a merchant, to whatever recorded the event. A delivery hands the
// merchant's endpoint its trace, and its client span names the endpoint's host, never its URL.
// The lines logged by that work carry its trace, and nothing secret is exported.
func TestBackgroundWorkIsTracedFromItsCause(t *testing.T) {
	const paidTrace, heldTrace, lostTrace = "11111111111111111111111111111111", "22222222222222222222222222222222", "33333333333333333333333333333333"
	const hookTrace = "44444444444444444444444444444444" // told by the test's webhook, to be found among the sandbox's own
	const testEventTrace = "55555555555555555555555555555555"
	const callerSpan = "00f067aa0ba902b7"
	for name, open := range tracedDatabases() {
		t.Run(name, func(t *testing.T) {
			receiver, stop := traceTo(t, "http/protobuf")
			env := newTestEnv(t, open(t), webhookSecretsEnv...)
			ctx := databasetest.AsMerchant()
			admin := env.tokenFor("admin")
			// The merchant's endpoint keeps the traceparent each event came with, by event id. It
			// fails test events.
			var mu sync.Mutex
			heard := map[string]string{}
			endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				heard[r.Header.Get("webhook-id")] = r.Header.Get("traceparent")
				if strings.HasPrefix(r.Header.Get("webhook-id"), "evt_test_") {
					w.WriteHeader(http.StatusInternalServerError)
				}
			}))
			defer endpoint.Close()
			const urlToken = "the-merchants-own-token"
			made := env.request(http.MethodPost, "/api/v1/webhook-endpoints", admin, map[string]any{"url": endpoint.URL + "/hooks?token=" + urlToken,
				"events": []string{"payment.succeeded", "payment.canceled", "dispute.created"}})
			if made.status != http.StatusCreated {
				t.Fatalf("endpoint = %d %s", made.status, made.raw)
			}
			pay := func(body map[string]any, trace string, want int) string {
				body["card"].(map[string]any)["cvc"] = "987"
				r := env.request(http.MethodPost, "/api/v1/payments", admin, body, "traceparent", "00-"+trace+"-"+callerSpan+"-01")
				if r.status != want {
					t.Fatalf("payment = %d %s, want %d", r.status, r.raw, want)
				}
				return str(r.data()["id"])
			}
			paid := pay(paymentBody("10.00", "USD", "4242424242424242"), paidTrace, http.StatusCreated)
			held := pay(manualBody("20.00", "USD"), heldTrace, http.StatusCreated)
			switches := env.app.services.providers.sandboxes["stripe"].Switches()
			switches.LoseAnswers.Store(true) // charged, its answer lost
			lost := pay(paymentBody("30.00", "USD", "4242424242424242"), lostTrace, http.StatusAccepted)
			switches.LoseAnswers.Store(false)

			// Stripe tells of a dispute; the worker records it. (The sandbox delivers webhooks of
			// its own too.)
			dispute := stripeEventBody("evt_traced_dispute", "charge.dispute.created",
				map[string]any{"id": "dp_traced", "object": "dispute", "reason": "fraudulent", "payment_intent": *env.payment(paid).ProviderPaymentID})
			signed := stripeDelivery(dispute, testStripeSecret, env.clock.Now())
			if r := env.request(http.MethodPost, "/webhooks/stripe", "", dispute, append(signed, "traceparent", "00-"+hookTrace+"-"+callerSpan+"-01")...); r.status != http.StatusOK {
				t.Fatalf("the webhook = %d %s", r.status, r.raw)
			}
			if err := env.app.services.webhookWorker.ProcessDueAll(ctx); err != nil || env.payment(paid).DisputedAt == nil {
				t.Fatalf("the dispute was not recorded: %v", err)
			}
			// A week later the authorisation has lapsed, and the lost answer is asked for.
			env.clock.Advance(8 * 24 * time.Hour)
			if err := env.app.expire(ctx); err != nil || env.payment(held).Status != state.PaymentCanceled {
				t.Fatalf("expiry: %v, the payment is %s", err, env.payment(held).Status)
			}
			if err := env.app.reconcile(ctx); err != nil || env.payment(lost).Status != state.PaymentSucceeded {
				t.Fatalf("reconciliation: %v, the payment is %s", err, env.payment(lost).Status)
			}
			for pending := -1; pending != 0; {
				if err := env.app.services.deliveries.Round(ctx); err != nil {
					t.Fatal(err)
				}
				env.app.services.deliveries.Wait()
				var err error
				if pending, err = env.app.services.deliveries.Pending(ctx); err != nil {
					t.Fatal(err)
				}
			}
			// A test event is sent within its request, and traced in it; the endpoint fails it.
			admin = env.tokenFor("admin") // the first expired with the clock
			if r := env.request(http.MethodPost, "/api/v1/webhooks/test", admin, map[string]any{"endpoint_id": str(made.data()["id"])},
				"traceparent", "00-"+testEventTrace+"-"+callerSpan+"-01"); r.status != http.StatusOK || str(get(r.data(), "status_code")) != "500" {
				t.Fatalf("the test event = %d %s", r.status, r.raw)
			}
			if err := stop(t.Context()); err != nil {
				t.Fatal(err)
			}

			spans, _ := receiver.received()
			spanID := func(s *tracepb.Span) string {
				return hex.EncodeToString(s.TraceId) + "-" + hex.EncodeToString(s.SpanId)
			}
			linked := func(s *tracepb.Span) []string {
				var to []string
				for _, link := range s.Links {
					to = append(to, hex.EncodeToString(link.TraceId)+"-"+hex.EncodeToString(link.SpanId))
				}
				return to
			}
			// The spans by what they are: the requests' by trace, the work's by what it worked on.
			requests := map[string]*tracepb.Span{}
			var hook *tracepb.Span
			work := map[string]*tracepb.Span{}             // by name and id
			deliveries := map[string]*tracepb.Span{}       // by event id
			children := map[string][]*tracepb.Span{}       // by trace and parent span
			calls := map[string]map[string]*tracepb.Span{} // client spans by trace, by host
			for _, span := range spans {
				attributes := attributesOf(span.Attributes)
				children[hex.EncodeToString(span.TraceId)+"-"+hex.EncodeToString(span.ParentSpanId)] = append(
					children[hex.EncodeToString(span.TraceId)+"-"+hex.EncodeToString(span.ParentSpanId)], span)
				if span.Kind == tracepb.Span_SPAN_KIND_CLIENT {
					trace := hex.EncodeToString(span.TraceId)
					if calls[trace] == nil {
						calls[trace] = map[string]*tracepb.Span{}
					}
					calls[trace][attributes["server.address"]] = span
				}
				switch {
				case span.Name == "POST /api/v1/payments":
					requests[hex.EncodeToString(span.TraceId)] = span
				case span.Name == "POST /webhooks/{provider}" && hex.EncodeToString(span.TraceId) == hookTrace:
					hook = span
				case span.Name == "process webhook event":
					work[span.Name+" "+attributes["paygate.webhook_event.type"]] = span
				case span.Name == "expire payment", span.Name == "reconcile payment":
					work[span.Name+" "+attributes["paygate.payment.id"]] = span
				case span.Name == "deliver webhook":
					deliveries[attributes["paygate.event.id"]] = span
				}
			}
			processed, expired, reconciled := work["process webhook event charge.dispute.created"], work["expire payment "+held], work["reconcile payment "+lost]
			if hook == nil || processed == nil || expired == nil || reconciled == nil || len(requests) != 3 {
				t.Fatalf("of %d spans: the webhook's request %v, its processing %v, the expiry %v, the reconciliation %v, %d payments' requests",
					len(spans), hook, processed, expired, reconciled, len(requests))
			}
			// Each piece of work is a root of its own, linked to its cause, and holds its
			// statements and its calls to the provider.
			for name, tc := range map[string]struct {
				span  *tracepb.Span
				cause *tracepb.Span
			}{"the webhook's processing": {processed, hook}, "the expiry": {expired, requests[heldTrace]}, "the reconciliation": {reconciled, requests[lostTrace]}} {
				if tc.cause == nil {
					t.Errorf("%s: its cause's span is missing", name)
					continue
				}
				if len(tc.span.ParentSpanId) != 0 || slices.Equal(tc.span.TraceId, tc.cause.TraceId) || !slices.Equal(linked(tc.span), []string{spanID(tc.cause)}) {
					t.Errorf("%s: in trace %x under %x, linked to %v; want a trace of its own linked to %s", name, tc.span.TraceId, tc.span.ParentSpanId, linked(tc.span), spanID(tc.cause))
				}
				statements := 0
				for _, child := range children[spanID(tc.span)] {
					if attributes := attributesOf(child.Attributes); attributes["db.system.name"]+attributes["db.system"] != "" {
						statements++
					}
				}
				if statements == 0 {
					t.Errorf("%s: no statement in its span", name)
				}
			}
			for name, span := range map[string]*tracepb.Span{"the expiry": expired, "the reconciliation": reconciled} {
				if call := calls[hex.EncodeToString(span.TraceId)]["stripe.sandbox"]; call == nil || !slices.Equal(call.ParentSpanId, span.SpanId) {
					t.Errorf("%s asked no provider within its span: %v", name, call)
				}
			}
			if attributes := attributesOf(processed.Attributes); processed.Kind != tracepb.Span_SPAN_KIND_CONSUMER || attributes["paygate.provider"] != "stripe" {
				t.Errorf("the webhook's processing: kind %v, attributes %v", processed.Kind, attributes)
			}

			// Each event reaches the endpoint in a delivery traced from what recorded it.
			recorded := env.db.Ent.Event.Query().Where(event.TypeIn("payment.succeeded", "payment.canceled", "dispute.created")).AllX(ctx)
			causes := map[string]*tracepb.Span{"payment.succeeded " + paid: requests[paidTrace], "dispute.created " + paid: processed,
				"payment.canceled " + held: expired, "payment.succeeded " + lost: reconciled}
			if len(recorded) != len(causes) {
				t.Errorf("%d events recorded, want %d", len(recorded), len(causes))
			}
			for _, e := range recorded {
				cause, delivery := causes[e.Type+" "+e.ObjectID], deliveries[e.ID]
				if cause == nil || delivery == nil {
					t.Errorf("event %s %s of %s: its cause %v, its delivery %v", e.ID, e.Type, e.ObjectID, cause, delivery)
					continue
				}
				if len(delivery.ParentSpanId) != 0 || !slices.Equal(linked(delivery), []string{spanID(cause)}) {
					t.Errorf("the delivery of %s of %s is linked to %v, want %s (%s)", e.Type, e.ObjectID, linked(delivery), spanID(cause), cause.Name)
				}
				call := calls[hex.EncodeToString(delivery.TraceId)]["127.0.0.1"]
				if call == nil || !slices.Equal(call.ParentSpanId, delivery.SpanId) {
					t.Errorf("the delivery of %s of %s made no call within its span: %v", e.Type, e.ObjectID, call)
					continue
				}
				attributes := attributesOf(call.Attributes)
				if call.Name != "POST" || attributes["http.request.method"] != "POST" || attributes["http.response.status_code"] != "200" ||
					attributes["server.port"] != endpoint.URL[strings.LastIndex(endpoint.URL, ":")+1:] || attributes["url.full"] != "" {
					t.Errorf("the delivery's call: %s %v", call.Name, attributes)
				}
				mu.Lock()
				traceparent := heard[e.ID]
				mu.Unlock()
				if want := "00-" + hex.EncodeToString(call.TraceId) + "-" + hex.EncodeToString(call.SpanId) + "-01"; traceparent != want {
					t.Errorf("the endpoint heard traceparent %q with %s, want %q", traceparent, e.Type, want)
				}
			}

			// The test event's call is made under its request's span, which its failure leaves
			// alone: the call's span is marked failed.
			var tested *tracepb.Span
			for _, span := range spans {
				if span.Name == "POST /api/v1/webhooks/test" && hex.EncodeToString(span.TraceId) == testEventTrace {
					tested = span
				}
			}
			if call := calls[testEventTrace]["127.0.0.1"]; tested == nil || call == nil || !slices.Equal(call.ParentSpanId, tested.SpanId) ||
				tested.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR || call.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("the test event's request %v, its call %v", tested, call)
			} else {
				mu.Lock()
				hasHeard := slices.Contains(slices.Collect(maps.Values(heard)), "00-"+testEventTrace+"-"+hex.EncodeToString(call.SpanId)+"-01")
				mu.Unlock()
				if !hasHeard {
					t.Errorf("the endpoint never heard the test event's trace: %v", heard)
				}
			}

			// What the work logs carries its trace.
			for line, span := range map[string]*tracepb.Span{"canceled a payment not captured or authenticated in time": expired,
				"reconciled a payment with its provider": reconciled} {
				want := `"trace_id":"` + hex.EncodeToString(span.TraceId) + `","span_id":"` + hex.EncodeToString(span.SpanId) + `"`
				if !slices.ContainsFunc(strings.Split(env.logs.String(), "\n"), func(logged string) bool {
					return strings.Contains(logged, `"msg":"`+line+`"`) && strings.Contains(logged, want)
				}) {
					t.Errorf("no line %q carries %s", line, want)
				}
			}
			if found := leaks(receiver.exported(), secret{"the card number", "4242424242424242"}, secret{"the CVC", "987"},
				secret{"a bearer token", admin}, secret{"Stripe's webhook secret", testStripeSecret}, secret{"the endpoint's secret", str(made.data()["secret"])},
				secret{"the token in the endpoint's URL", urlToken}, secret{"Stripe's signature", signed[1]}); len(found) > 0 {
				t.Errorf("exported in a span: %v", found)
			}
		})
	}
}
