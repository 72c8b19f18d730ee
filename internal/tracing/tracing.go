// Package tracing sets up OpenTelemetry tracing from the standard OTEL_* environment variables
// and no other setting of Paygate's own: the OTLP exporter's endpoint, protocol (http/protobuf or
// grpc), headers and timeouts; the service's name and resource attributes; the sampler and its
// argument; and the batch span processor's settings, all read by the OpenTelemetry Go SDK. With
// none of them set nothing is exported and nothing is instrumented.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// exporting says whether Start installed a tracer provider that exports.
var exporting atomic.Bool

// Enabled reports whether spans are exported: the server, its GraphQL operations, its database
// pools and its calls to the providers are instrumented only then, and cost nothing when not.
func Enabled() bool { return exporting.Load() }

// serviceName names Paygate's spans unless OTEL_SERVICE_NAME (or service.name in
// OTEL_RESOURCE_ATTRIBUTES) names them otherwise.
const serviceName = "paygate"

// Start installs, for the whole process, the W3C trace context propagator and, when the
// environment asks for traces, a tracer provider that exports them over OTLP in batches. It
// answers what flushes and stops it at shutdown (nothing to do when nothing is exported). A
// caller's baggage is not taken: it would be handed on to the providers, third parties.
func Start(ctx context.Context) (stop func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	// Detected from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, over Paygate's own name.
	detected, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost(), resource.WithProcessPID())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: reading the resource: %w", err)
	}
	described, err := resource.Merge(resource.NewSchemaless(semconv.ServiceName(serviceName)), detected)
	if err != nil {
		return nil, fmt.Errorf("tracing: describing the service: %w", err)
	}
	exporter, err := exporterFromEnvironment(ctx)
	if err != nil || exporter == nil {
		return func(context.Context) error { return nil }, err
	}
	// The sampler (OTEL_TRACES_SAMPLER, _ARG) and the batch's bounds (OTEL_BSP_*) are the SDK's
	// to read.
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(described))
	otel.SetTracerProvider(provider)
	exporting.Store(true)
	return func(ctx context.Context) error {
		exporting.Store(false)
		otel.SetTracerProvider(noop.NewTracerProvider())
		return provider.Shutdown(ctx) // exports what the batch holds
	}, nil
}

// exporterFromEnvironment is the OTLP exporter the environment asks for, or nil when it asks for
// none: traces are exported when OTEL_TRACES_EXPORTER is otlp, or an OTLP endpoint is set and
// OTEL_TRACES_EXPORTER does not say none; never when OTEL_SDK_DISABLED is true.
func exporterFromEnvironment(ctx context.Context) (sdktrace.SpanExporter, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	endpointSet := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	switch exporter := os.Getenv("OTEL_TRACES_EXPORTER"); exporter {
	case "none":
		return nil, nil
	case "":
		if !endpointSet {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%s: Paygate exports traces over OTLP (otlp) or not at all (none)", exporter)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	// The exporters read the endpoint, headers, timeout, compression and certificates themselves.
	switch protocol {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("tracing: OTLP protocol %q: Paygate exports over http/protobuf or grpc", protocol)
	}
}

// scope names the spans Paygate starts itself, as their instrumentation scope.
const scope = "github.com/paygate/paygate"

// Tracer starts the spans Paygate writes itself, where no maintained instrumentation does.
func Tracer() trace.Tracer { return otel.Tracer(scope) }

// Cause is what work left for later keeps, so that the span of that work links to the trace ctx
// is in: the W3C traceparent of ctx's span when it is sampled, nil when it is not or nothing is
// exported (and then nothing is kept).
func Cause(ctx context.Context) *string {
	if !exporting.Load() || !trace.SpanContextFromContext(ctx).IsSampled() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	traceparent := carrier.Get("traceparent")
	return &traceparent
}

// StartWork starts the span of one piece of work done in the background: the root of a trace of
// its own, since the request that caused it was answered long before, linked to that request's
// span when cause (what Cause kept) names one. With nothing exported it starts nothing.
func StartWork(ctx context.Context, name string, cause *string, kind trace.SpanKind, attributes ...attribute.KeyValue) (context.Context, trace.Span) {
	if !exporting.Load() {
		return ctx, noop.Span{}
	}
	options := []trace.SpanStartOption{trace.WithNewRoot(), trace.WithSpanKind(kind), trace.WithAttributes(attributes...)}
	if cause != nil {
		caused := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": *cause})
		if link := trace.SpanContextFromContext(caused); link.IsValid() {
			options = append(options, trace.WithLinks(trace.Link{SpanContext: link}))
		}
	}
	return Tracer().Start(ctx, name, options...)
}

// End ends span, marked failed by err when there is one.
func End(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
