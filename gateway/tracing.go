package gateway

import (
	"context"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/contractgateway/gateway/config"
)

// tracingShutdownTimeout bounds the last export when the server closes.
const tracingShutdownTimeout = 5 * time.Second

// newTracerProvider exports the guard's spans to cfg.Endpoint over
// OTLP/HTTP; nil when no endpoint is configured. The closer flushes and
// stops the exporter.
func newTracerProvider(cfg config.Tracing) (trace.TracerProvider, func(), error) {
	if cfg.Endpoint == "" {
		return nil, func() {}, nil
	}
	endpoint := cfg.Endpoint
	if u, err := url.Parse(endpoint); err == nil && (u.Path == "" || u.Path == "/") {
		endpoint = strings.TrimSuffix(endpoint, "/") + "/v1/traces"
	}
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, nil, err
	}
	name := cfg.ServiceName
	if name == "" {
		name = "contract-gateway"
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", name))))
	return tp, func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}, nil
}
