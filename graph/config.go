package graph

import (
	"context"
	"slices"
	"strings"

	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/settings"
)

// authorized returns the request's principal when it may ask op. The configuration store keeps
// documents and knows nothing of who asks, so its resolvers authorise here, as the services do
// for theirs (REST and GraphQL have refused already; this holds for any other caller).
func authorized(ctx context.Context, op auth.Operation) (auth.Principal, error) {
	if err := auth.Authorize(ctx, op); err != nil {
		return auth.Principal{}, err
	}
	p, _ := auth.PrincipalFrom(ctx) // op has a scope, so a principal holds it
	return p, nil
}

// documentOf reads a configuration input into the document it stands for. GraphQL requires every
// section; REST may leave one out, which is refused naming it rather than read as all zeros.
func documentOf(input model.ConfigInput, current settings.Document) (settings.Document, error) {
	for _, section := range []struct {
		name    string
		missing bool
	}{
		{"routing", input.Routing == nil},
		{"providers", input.Providers == nil},
		{"circuit_breaker", input.CircuitBreaker == nil},
		{"webhook_retry", input.WebhookRetry == nil},
		{"rate_limits", input.RateLimits == nil},
		{"alerts", input.Alerts == nil},
	} {
		if section.missing {
			return settings.Document{}, apierror.ForParam(apierror.MissingField, section.name, section.name+" is required: send the whole document")
		}
	}
	doc := settings.Document{
		Version:        input.Version,
		Routing:        *input.Routing,
		Providers:      make(map[string]settings.Provider, len(input.Providers)),
		CircuitBreaker: *input.CircuitBreaker,
		WebhookRetry:   *input.WebhookRetry,
		RateLimits:     *input.RateLimits,
		Alerts:         *input.Alerts,
		Capture:        current.Capture,
	}
	if input.Capture != nil { // added after the other sections: clients that predate it leave it out
		doc.Capture = *input.Capture
	}
	for _, p := range input.Providers {
		if _, twice := doc.Providers[p.Name]; twice {
			return settings.Document{}, apierror.ForParam(apierror.InvalidRequest, "providers."+p.Name, "provider "+p.Name+" is listed more than once")
		}
		doc.Providers[p.Name] = settings.Provider{Enabled: p.Enabled, TimeoutMS: p.TimeoutMs}
	}
	return doc, nil
}

// providerList is the document's providers as GraphQL lists them, by name.
func providerList(doc *settings.Document) []*model.ProviderSettings {
	list := make([]*model.ProviderSettings, 0, len(doc.Providers))
	for name, provider := range doc.Providers {
		list = append(list, &model.ProviderSettings{Name: name, Enabled: provider.Enabled, TimeoutMs: provider.TimeoutMS})
	}
	slices.SortFunc(list, func(a, b *model.ProviderSettings) int { return strings.Compare(a.Name, b.Name) })
	return list
}
