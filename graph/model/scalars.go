package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
)

// The built-in scalars, read as the GraphQL specification coerces input: gqlgen's own readers
// also take a number for a String (a card number sent as a JSON number would be read), a
// string for an Int or a Boolean, and a boolean for an ID. Values come from the document
// (string, int64, bool) or from JSON variables (string, json.Number, bool).

// MarshalString writes a String.
func MarshalString(s string) graphql.Marshaler { return graphql.MarshalString(s) }

// UnmarshalString reads a String: a string and nothing else.
func UnmarshalString(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("%s is not a String: send it as a string", describe(v))
}

// MarshalInt writes an Int.
func MarshalInt(i int) graphql.Marshaler { return graphql.MarshalInt(i) }

// UnmarshalInt reads an Int: a whole number, not a string holding one.
func UnmarshalInt(v any) (int, error) {
	n, err := UnmarshalInt64(v)
	return int(n), err
}

// MarshalInt64 writes an Int held in 64 bits (amounts in minor units).
func MarshalInt64(i int64) graphql.Marshaler { return graphql.MarshalInt64(i) }

// UnmarshalInt64 reads an Int into 64 bits.
func UnmarshalInt64(v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s is not an Int: send a whole number", describe(v))
}

// MarshalBoolean writes a Boolean.
func MarshalBoolean(b bool) graphql.Marshaler { return graphql.MarshalBoolean(b) }

// UnmarshalBoolean reads a Boolean: true or false, not a string or a number.
func UnmarshalBoolean(v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, fmt.Errorf("%s is not a Boolean: send true or false", describe(v))
}

// MarshalFloat writes a Float.
func MarshalFloat(f float64) graphql.Marshaler { return graphql.MarshalFloat(f) }

// UnmarshalFloat reads a Float: a number, not a string holding one.
func UnmarshalFloat(v any) (float64, error) {
	switch n := v.(type) {
	case float64:
		return n, nil
	case int64:
		return float64(n), nil
	case json.Number:
		if f, err := n.Float64(); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%s is not a Float: send a number", describe(v))
}

// MarshalID writes an ID, always as a string.
func MarshalID(id string) graphql.Marshaler { return graphql.MarshalString(id) }

// UnmarshalID reads an ID: a string, or a whole number as the specification allows.
func UnmarshalID(v any) (string, error) {
	switch id := v.(type) {
	case string:
		// No ID Paygate makes holds one, and PostgreSQL's text refuses NUL with an error that
		// is no client's fault: refused here, as REST refuses such a URL.
		if !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
			return "", fmt.Errorf("an ID holds no control characters")
		}
		return id, nil
	case json.Number:
		if _, err := id.Int64(); err == nil {
			return id.String(), nil
		}
	case int64:
		return fmt.Sprint(id), nil
	}
	return "", fmt.Errorf("%s is not an ID: send a string", describe(v))
}

// describe names the kind of a value without repeating it: it may be a card number.
func describe(v any) string {
	switch v.(type) {
	case json.Number, int64, float64:
		return "a number"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	default:
		return "this value"
	}
}
