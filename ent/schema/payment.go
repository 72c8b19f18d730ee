package schema

import (
	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/state"
)

// Payment is one card payment. Amounts are minor units of the currency; GraphQL serves them as
// Decimal through resolvers in graph/, since formatting needs the currency too.
type Payment struct {
	ent.Schema
}

func (Payment) Fields() []ent.Field {
	hidden := entgql.Skip(entgql.SkipType, entgql.SkipWhereInput, entgql.SkipOrderField)
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().MaxLen(40).DefaultFunc(prefixid.Generator("pay")),
		// Filters and ordering on amount work in minor units; GraphQL shows it as Decimal.
		field.Int64("amount").Immutable().Positive().
			Annotations(entgql.Skip(entgql.SkipType), entgql.OrderField("AMOUNT")),
		field.String("currency").Immutable().MinLen(3).MaxLen(3),
		field.Enum("status").GoType(state.PaymentStatus("")).
			Annotations(entgql.Type("PaymentStatus"), entgql.Skip(entgql.SkipEnumField)),
		field.Enum("payment_method").GoType(card.PaymentMethod("")).Immutable().
			Annotations(entgql.Type("PaymentMethod"), entgql.Skip(entgql.SkipEnumField, entgql.SkipWhereInput)),
		field.String("customer_email").Immutable().MaxRuneLen(254).
			Annotations(entgql.Skip(entgql.SkipType, entgql.SkipOrderField)),
		field.String("customer_name").Immutable().MaxRuneLen(200).Default("").Annotations(hidden),
		field.String("card_brand").Immutable().Annotations(hidden),
		// Shown as the card's; filtered on to find a payment by its card's last four digits.
		field.String("card_last4").Immutable().MinLen(4).MaxLen(4).
			Annotations(entgql.Skip(entgql.SkipType, entgql.SkipOrderField)),
		field.Int("card_exp_month").Immutable().Range(1, 12).Annotations(hidden),
		field.Int("card_exp_year").Immutable().Annotations(hidden),
		field.String("card_fingerprint").Immutable().Annotations(hidden),
		field.String("provider").Annotations(entgql.Skip(entgql.SkipOrderField)),
		field.String("provider_payment_id").Optional().Nillable().Annotations(hidden),
		// provider_decline_code is the decline as the provider gave it, beside our failure_code.
		field.String("provider_decline_code").Optional().Nillable().Annotations(hidden),
		// routing is how the payment was routed: the rule and each provider tried.
		field.JSON("routing", &state.RoutingDecision{}).Optional().Annotations(hidden),
		field.Int64("amount_refunded").Default(0).NonNegative().Annotations(hidden),
		// capture_method says whether the amount is captured at once or held by an authorisation
		// until captured or canceled.
		field.Enum("capture_method").GoType(state.CaptureMethod("")).Default(string(state.CaptureAutomatic)).Immutable().
			Annotations(entgql.Type("CaptureMethod"), entgql.Skip(entgql.SkipEnumField, entgql.SkipOrderField)),
		// amount_capturable is what an authorisation holds and may still be captured;
		// amount_captured what was captured, which refunds give back at most.
		field.Int64("amount_capturable").Default(0).NonNegative().Annotations(hidden),
		field.Int64("amount_captured").Default(0).NonNegative().Annotations(hidden),
		// capture_before is when an authorisation lapses; one not captured by then is canceled.
		field.Time("capture_before").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		field.Time("canceled_at").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		field.Enum("cancellation_reason").GoType(state.CancellationReason("")).Optional().Nillable().
			Annotations(entgql.Type("CancellationReason"), entgql.Skip(entgql.SkipEnumField, entgql.SkipWhereInput, entgql.SkipOrderField)),
		// pending_action is the capture or cancellation a request has claimed and is asking the
		// provider for, so that no other starts meanwhile; capture_requested is the amount that
		// capture asks for. Both are cleared once the provider's answer is recorded.
		field.Enum("pending_action").Values("capture", "cancel").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Int64("capture_requested").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)),
		// return_url is the merchant's page the shopper's browser goes back to once they have
		// authenticated (3-D Secure). next_action_url is the provider's page they authenticate on,
		// kept while the payment waits for them (requires_action), and authenticate_before when a
		// payment still waiting is abandoned.
		field.String("return_url").Optional().Nillable().Immutable().MaxLen(2048).Annotations(hidden),
		// return_secret_hash is the SHA-256, in hex, of the secret in the return address a payment
		// with a return_url gives its provider: the shopper's browser brings it back, and no one
		// else is told of the payment there. Only its hash is kept, never served.
		field.String("return_secret_hash").Optional().Nillable().Immutable().Sensitive().Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("next_action_url").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Time("authenticate_before").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.String("failure_code").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipOrderField)),
		field.String("failure_message").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		field.String("description").Optional().Nillable().MaxRuneLen(1000).
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		// disputed_at is when the provider reported the cardholder's dispute (chargeback), and
		// dispute_reason its reason; the payment's status stays as it is while the dispute runs.
		field.Time("disputed_at").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		field.String("dispute_reason").Optional().Nillable().MaxRuneLen(500).
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		// reversal_status is set once the provider approves a payment canceled while it waited
		// for its shopper (the shopper authenticated after all): the payment stays canceled, and
		// Paygate voids or refunds the approval there (pending), then says how that ended:
		// voided, refunded, or failed with reversal_failure_message. reversal_refund is what the
		// provider captured of it, to refund; 0 voids the authorisation it holds.
		field.Enum("reversal_status").GoType(state.ReversalStatus("")).Optional().Nillable().
			Annotations(entgql.Type("ReversalStatus"), entgql.Skip(entgql.SkipEnumField, entgql.SkipWhereInput, entgql.SkipOrderField)),
		field.String("reversal_failure_message").Optional().Nillable().
			Annotations(entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
		field.Int64("reversal_refund").Default(0).NonNegative().Annotations(entgql.Skip(entgql.SkipAll)),
		// reversal_due is when Paygate next acts at the provider about a payment canceled while
		// it waited: voids or refunds its approval (reversal pending), or asks the provider
		// whether the shopper authenticated after all (no reversal yet: its provider had nothing
		// to cancel, and could still approve it). reversal_attempts counts the tries.
		field.Time("reversal_due").Optional().Nillable().Annotations(entgql.Skip(entgql.SkipAll)),
		field.Int("reversal_attempts").Default(0).NonNegative().Annotations(entgql.Skip(entgql.SkipAll)),
		field.JSON("metadata", map[string]string{}).Optional().
			Annotations(entgql.Type("StringMap"), entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField)),
	}
}

func (Payment) Mixin() []ent.Mixin {
	return []ent.Mixin{merchantOwned{}, timestamps{}, tracedCause{}}
}

func (Payment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("refunds", Refund.Type).Annotations(entgql.Skip(entgql.SkipWhereInput)),
		edge.To("status_history", PaymentStatusChange.Type).Annotations(entgql.Skip(entgql.SkipWhereInput)),
	}
}

func (Payment) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("created_at", "id"),
		// A merchant's list pages newest first.
		index.Fields("merchant_id", "created_at", "id"),
		index.Fields("status", "created_at"),
		index.Fields("customer_email", "created_at"),
		// A merchant's payments by their card's last four digits, newest first.
		index.Fields("merchant_id", "card_last4", "created_at"),
		// A provider's webhook names the payment by the provider's id of its charge.
		index.Fields("provider", "provider_payment_id"),
		// The expiry loop finds the authorisations that lapsed.
		index.Fields("status", "capture_before"),
		// The reversal loop and reconciliation find the canceled payments due at their provider.
		index.Fields("reversal_due"),
	}
}

// paymentStatuses are the statuses of state.PaymentStatus, as SQL, for the CHECKs that hold them.
const paymentStatuses = "('pending', 'processing', 'requires_action', 'requires_capture', 'succeeded', 'failed', 'canceled', 'partially_refunded', 'refunded')"

func (Payment) Annotations() []schema.Annotation {
	return []schema.Annotation{
		// The database holds the money invariants too, whatever code writes to it.
		entsql.Checks(map[string]string{
			"payment_amount_positive":      "amount > 0",
			"payment_refund_within_amount": "amount_refunded >= 0 AND amount_refunded <= amount",
			"payment_capture_within_amount": "amount_captured >= 0 AND amount_captured <= amount AND " +
				"amount_capturable >= 0 AND amount_capturable <= amount",
			"payment_status_known": "status IN " + paymentStatuses,
			"payment_reversal_known": "(reversal_status IS NULL OR reversal_status IN ('pending', 'voided', 'refunded', 'failed')) AND " +
				"reversal_refund >= 0 AND reversal_refund <= amount",
		}),
		entgql.QueryField().Description("Payments, newest first (createdAt, then id, descending) unless orderBy says otherwise, as REST lists them.").
			Directives(hasScope("payments:read")),
		entgql.RelayConnection(),
	}
}
