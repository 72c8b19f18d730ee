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

// WebhookEvent is one event a payment provider sent to /webhooks/{provider}, verified and stored
// before it was acknowledged, then processed by the worker. The row is the event's place in the
// queue too: its status, attempts and next_attempt_at are what the worker claims it by.
type WebhookEvent struct {
	ent.Schema
}

func (WebhookEvent) Fields() []ent.Field {
	noFilter := entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("whe")),
		field.String("provider").Immutable().NotEmpty().MaxLen(20).Annotations(entgql.Skip(entgql.SkipOrderField)),
		// event_id is the provider's id of the event, by which a delivery sent again is known.
		field.String("event_id").Immutable().NotEmpty().MaxLen(300).Annotations(entgql.Skip(entgql.SkipOrderField)),
		field.String("type").Immutable().NotEmpty().MaxLen(100).Annotations(entgql.Skip(entgql.SkipOrderField)),
		field.Enum("status").GoType(state.WebhookStatus("")).
			Annotations(entgql.Type("WebhookStatus"), entgql.Skip(entgql.SkipEnumField)),
		// payload is the event as the provider sent it, kept for processing and never served:
		// provider events carry no card numbers, but they are the provider's, not the reader's.
		field.Bytes("payload").Immutable().Sensitive().Annotations(entgql.Skip(entgql.SkipAll)),
		// attempts counts the tries at processing it since it was received or last requeued.
		field.Int("attempts").Default(0).NonNegative().Annotations(noFilter),
		// next_attempt_at is when the worker takes it next; null once it is done with.
		field.Time("next_attempt_at").Optional().Nillable().Annotations(noFilter),
		field.String("last_error").Optional().Nillable().MaxLen(1000).Annotations(noFilter),
		// ignored_reason says why an ignored event changed nothing.
		field.String("ignored_reason").Optional().Nillable().MaxLen(1000).Annotations(noFilter),
		// payment_id is the payment the event is about, once processing found it.
		field.String("payment_id").Optional().Nillable().MaxLen(40).Annotations(entgql.Skip(entgql.SkipOrderField)),
		field.Time("received_at").Immutable().Default(now).Annotations(entgql.OrderField("RECEIVED_AT")),
		field.Time("processed_at").Optional().Nillable().Annotations(noFilter),
	}
}

func (WebhookEvent) Mixin() []ent.Mixin {
	return []ent.Mixin{tracedCause{}}
}

func (WebhookEvent) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("attempt_log", WebhookAttempt.Type).
			Annotations(entsql.OnDelete(entsql.Cascade), entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (WebhookEvent) Indexes() []ent.Index {
	return []ent.Index{
		// A delivery sent again is the same event: stored once.
		index.Fields("provider", "event_id").Unique(),
		// The worker finds the events due.
		index.Fields("status", "next_attempt_at"),
		// The logs list newest first, by provider or not.
		index.Fields("received_at", "id"),
		index.Fields("provider", "received_at"),
	}
}

// webhookStatuses are the statuses of state.WebhookStatus, as SQL, for the CHECKs that hold them.
const webhookStatuses = "('received', 'processed', 'ignored', 'failed', 'dead')"

func (WebhookEvent) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Checks(map[string]string{
			"webhook_event_status_known": "status IN " + webhookStatuses,
		}),
		entgql.QueryField("webhookEvents").Directives(hasScope("webhooks:read")),
		entgql.RelayConnection(),
	}
}

// WebhookAttempt is one try at processing a webhook event: when, how it ended, and the error.
type WebhookAttempt struct {
	ent.Schema
}

func (WebhookAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("wha")),
		field.String("event_id").Immutable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Time("at").Immutable().Default(now),
		// status is where the try left the event.
		field.Enum("status").GoType(state.WebhookStatus("")).Immutable().
			Annotations(entgql.Type("WebhookStatus"), entgql.Skip(entgql.SkipEnumField)),
		field.String("error").Optional().Nillable().Immutable().MaxLen(1000),
		field.Int64("duration_ms").Immutable().NonNegative(),
	}
}

func (WebhookAttempt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("event", WebhookEvent.Type).Ref("attempt_log").Field("event_id").Unique().Required().Immutable().
			Annotations(entgql.Skip(entgql.SkipAll)),
	}
}

func (WebhookAttempt) Indexes() []ent.Index {
	return []ent.Index{index.Fields("event_id", "at")}
}

func (WebhookAttempt) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entsql.Checks(map[string]string{
			"webhook_attempt_status_known": "status IN " + webhookStatuses,
		}),
		entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField),
	}
}
