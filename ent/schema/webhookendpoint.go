package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// WebhookEndpoint is a merchant's URL that Paygate delivers events to, signed the Standard
// Webhooks way with the endpoint's secret.
type WebhookEndpoint struct {
	ent.Schema
}

func (WebhookEndpoint) Fields() []ent.Field {
	noFilter := entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("we")),
		field.String("url").NotEmpty().MaxLen(2048).Annotations(noFilter),
		// events are the event types delivered to it, or ["*"] for every type.
		field.Strings("events").Annotations(noFilter),
		field.String("description").Optional().Nillable().MaxRuneLen(500).Annotations(noFilter),
		field.Enum("status").GoType(state.EndpointStatus("")).Default(string(state.EndpointEnabled)).
			Annotations(entgql.Type("WebhookEndpointStatus"), entgql.Skip(entgql.SkipEnumField, entgql.SkipOrderField)),
		// disabled_reason says why Paygate disabled it (an answer of 410 Gone); null when a person did.
		field.String("disabled_reason").Optional().Nillable().MaxLen(200).Annotations(noFilter),
		// secret signs every delivery; it is shown when the endpoint is made or rotated, never after.
		field.String("secret").Sensitive().NotEmpty().Annotations(entgql.Skip(entgql.SkipAll)),
		// previous_secret, after a rotation, signs beside secret until previous_secret_expires_at,
		// so an endpoint still holding it verifies what it receives meanwhile.
		field.String("previous_secret").Optional().Nillable().Sensitive().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Time("previous_secret_expires_at").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)),
		// failing_since is the first failed try since the endpoint last took a delivery; null
		// while it takes them. A day of it raises an alert.
		field.Time("failing_since").Optional().Nillable().Annotations(noFilter),
		// created_by is the subject of the principal who made it.
		field.String("created_by").Immutable().MaxLen(100).Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

func (WebhookEndpoint) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}, timestamps{}}
}

func (WebhookEndpoint) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("deliveries", WebhookDelivery.Type).
			Annotations(entsql.OnDelete(entsql.Cascade), entgql.Skip(entgql.SkipAll)),
	}
}

func (WebhookEndpoint) Indexes() []ent.Index {
	return []ent.Index{index.Fields("merchant_id", "created_at", "id")}
}

func (WebhookEndpoint) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Checks(map[string]string{
			"webhook_endpoint_status_known": "status IN ('enabled', 'disabled')",
		}),
		entgql.QueryField("webhookEndpoints").Directives(hasScope("webhooks:read")),
		entgql.RelayConnection(),
		entgql.Skip(entgql.SkipWhereInput),
	}
}

// WebhookDelivery is one event's delivery to one endpoint. The row is the delivery's place in the
// queue: a due delivery (pending, next_attempt_at come) is claimed by a conditional update, so on
// any number of servers each try is made by one, and a try whose server dies is taken again once
// its lease runs out.
type WebhookDelivery struct {
	ent.Schema
}

func (WebhookDelivery) Fields() []ent.Field {
	noFilter := entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("wd")),
		field.String("endpoint_id").Immutable().Annotations(noFilter),
		// event_id is the event delivered: an evt_ of the events, or an evt_test_ sent as a test,
		// whose body the delivery keeps itself.
		field.String("event_id").Immutable().NotEmpty().MaxLen(60).Annotations(noFilter),
		field.String("type").Immutable().NotEmpty().MaxLen(50).Annotations(noFilter),
		// test_body is a test event's body; a real event's is the event's own.
		field.Bytes("test_body").Optional().Immutable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Enum("status").GoType(state.DeliveryStatus("")).Default(string(state.DeliveryPending)).
			Annotations(entgql.Type("WebhookDeliveryStatus"), entgql.Skip(entgql.SkipEnumField, entgql.SkipOrderField)),
		// attempts counts the tries since it was queued or last retried by hand.
		field.Int("attempts").Default(0).NonNegative().Annotations(noFilter),
		// next_attempt_at is when it is tried next, or, while a try is under way, when that try's
		// lease runs out; null once delivered or failed.
		field.Time("next_attempt_at").Optional().Nillable().Annotations(noFilter),
		field.Int("last_status_code").Optional().Nillable().Annotations(noFilter),
		field.String("last_error").Optional().Nillable().MaxLen(1000).Annotations(noFilter),
		field.Int64("latency_ms").Optional().Nillable().Annotations(noFilter),
		field.Time("delivered_at").Optional().Nillable().Annotations(noFilter),
	}
}

func (WebhookDelivery) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}, timestamps{}, tracedCause{}}
}

func (WebhookDelivery) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("endpoint", WebhookEndpoint.Type).Ref("deliveries").Field("endpoint_id").Unique().Required().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
		edge.To("attempt_log", WebhookDeliveryAttempt.Type).
			Annotations(entsql.OnDelete(entsql.Cascade), entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		// An event is queued once per endpoint, however many dispatchers fan it out.
		index.Fields("endpoint_id", "event_id").Unique(),
		// The workers find the deliveries due.
		index.Fields("status", "next_attempt_at"),
		// The log lists an endpoint's deliveries newest first.
		index.Fields("endpoint_id", "created_at", "id"),
		index.Fields("created_at"),
	}
}

func (WebhookDelivery) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Checks(map[string]string{
			"webhook_delivery_status_known": "status IN ('pending', 'delivered', 'failed')",
		}),
		entgql.RelayConnection(),
		entgql.Skip(entgql.SkipWhereInput),
	}
}

// WebhookDeliveryAttempt is one try at a delivery: when, what the endpoint answered, how long it
// took, and why it failed.
type WebhookDeliveryAttempt struct {
	ent.Schema
}

func (WebhookDeliveryAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("wda")),
		field.String("delivery_id").Immutable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Time("at").Immutable().Default(now),
		// status_code is the endpoint's answer; null when none came.
		field.Int("status_code").Optional().Nillable().Immutable(),
		field.Int64("latency_ms").Immutable().NonNegative(),
		field.String("error").Optional().Nillable().Immutable().MaxLen(1000),
	}
}

func (WebhookDeliveryAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("delivery", WebhookDelivery.Type).Ref("attempt_log").Field("delivery_id").Unique().Required().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

func (WebhookDeliveryAttempt) Indexes() []ent.Index {
	return []ent.Index{index.Fields("delivery_id", "at")}
}

func (WebhookDeliveryAttempt) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)}
}

func (WebhookDeliveryAttempt) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}}
}
