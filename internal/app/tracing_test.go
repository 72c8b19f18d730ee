package app

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/tracing"
)

// otlpReceiver is an OTLP trace receiver in the test's process, over HTTP (protobuf at
// /v1/traces) or gRPC: it keeps every span it is sent, with its resource's attributes.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu       sync.Mutex
	spans    []*tracepb.Span
	resource map[string]string
}

func (rc *otlpReceiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		rc.resource = attributesOf(rs.GetResource().GetAttributes())
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
	return slices.Clone(rc.spans), rc.resource
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
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.TracedSQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.TracedPostgres
	}
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		for name, open := range databases {
			t.Run(protocol+"/"+name, func(t *testing.T) {
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
				defer stop(context.Background())
				if !tracing.Enabled() {
					t.Fatal("the OTEL_* variables name a receiver, and tracing is not on")
				}
				env := newTestEnv(t, open(t))
				admin := env.tokenFor("admin")
				paid := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("10.00", "USD", "4242424242424242"),
					"traceparent", "00-"+callerTrace+"-"+callerSpan+"-01")
				if paid.status != http.StatusCreated {
					t.Fatalf("payment = %d %s", paid.status, paid.raw)
				}
				if r := env.request(http.MethodGet, "/api/v1/payments/"+str(get(paid.data(), "id")), admin, nil); r.status != http.StatusOK {
					t.Fatalf("read = %d %s", r.status, r.raw)
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
