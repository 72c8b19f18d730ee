package state

import "io"

// EndpointStatus says whether a merchant's webhook endpoint is sent events. Stored and served over
// REST in lower case and served over GraphQL in upper case.
type EndpointStatus string

const (
	// EndpointEnabled: events of the types it subscribes to are delivered to it.
	EndpointEnabled EndpointStatus = "enabled"
	// EndpointDisabled: nothing is sent to it; its deliveries wait until it is enabled again. An
	// endpoint that answers 410 Gone is disabled by Paygate.
	EndpointDisabled EndpointStatus = "disabled"
)

// Values lists every endpoint status; ent uses it for the column's allowed values.
func (EndpointStatus) Values() []string {
	return []string{string(EndpointEnabled), string(EndpointDisabled)}
}

// MarshalGQL writes the GraphQL enum name.
func (s EndpointStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *EndpointStatus) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "webhook endpoint status")
	*s = EndpointStatus(value)
	return err
}

// DeliveryStatus is where one event's delivery to one endpoint is.
type DeliveryStatus string

const (
	// DeliveryPending: not delivered yet; it is tried at next_attempt_at.
	DeliveryPending DeliveryStatus = "pending"
	// DeliveryDelivered: the endpoint answered 2xx.
	DeliveryDelivered DeliveryStatus = "delivered"
	// DeliveryFailed: every try of the retry schedule failed, or the endpoint answered 410 Gone;
	// only a retry sends it again.
	DeliveryFailed DeliveryStatus = "failed"
)

// Values lists every delivery status; ent uses it for the column's allowed values.
func (DeliveryStatus) Values() []string {
	return []string{string(DeliveryPending), string(DeliveryDelivered), string(DeliveryFailed)}
}

// MarshalGQL writes the GraphQL enum name.
func (s DeliveryStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *DeliveryStatus) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "webhook delivery status")
	*s = DeliveryStatus(value)
	return err
}
