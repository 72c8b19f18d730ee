package state

import "io"

// AlertStatus is where an alert is: open until someone acknowledges it, then resolved. Stored and
// served over REST in lower case and served over GraphQL in upper case, as every enum here.
type AlertStatus string

const (
	AlertOpen         AlertStatus = "open"
	AlertAcknowledged AlertStatus = "acknowledged"
	AlertResolved     AlertStatus = "resolved"
)

// Values lists every alert status; ent uses it for the column's allowed values.
func (AlertStatus) Values() []string {
	return []string{string(AlertOpen), string(AlertAcknowledged), string(AlertResolved)}
}

// MarshalGQL writes the GraphQL enum name.
func (s AlertStatus) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *AlertStatus) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "alert status")
	*s = AlertStatus(value)
	return err
}

// AlertSeverity says how soon an alert needs someone.
type AlertSeverity string

const (
	AlertInfo     AlertSeverity = "info"
	AlertWarning  AlertSeverity = "warning"
	AlertCritical AlertSeverity = "critical"
)

// Values lists every severity.
func (AlertSeverity) Values() []string {
	return []string{string(AlertInfo), string(AlertWarning), string(AlertCritical)}
}

// MarshalGQL writes the GraphQL enum name.
func (s AlertSeverity) MarshalGQL(w io.Writer) { marshalEnum(w, string(s)) }

// UnmarshalGQL reads the GraphQL enum name.
func (s *AlertSeverity) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, s.Values(), "alert severity")
	*s = AlertSeverity(value)
	return err
}

// AlertAction is a change in an alert's history.
type AlertAction string

const (
	AlertOpened          AlertAction = "opened"
	AlertWasAcknowledged AlertAction = "acknowledged"
	AlertWasResolved     AlertAction = "resolved"
)

// Values lists every action.
func (AlertAction) Values() []string {
	return []string{string(AlertOpened), string(AlertWasAcknowledged), string(AlertWasResolved)}
}

// MarshalGQL writes the GraphQL enum name.
func (a AlertAction) MarshalGQL(w io.Writer) { marshalEnum(w, string(a)) }

// UnmarshalGQL reads the GraphQL enum name.
func (a *AlertAction) UnmarshalGQL(v any) error {
	value, err := unmarshalEnum(v, a.Values(), "alert action")
	*a = AlertAction(value)
	return err
}
