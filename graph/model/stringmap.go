// Package model holds the GraphQL types that are not ent entities.
package model

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/99designs/gqlgen/graphql"
)

// StringMap is merchant metadata: string keys to string values.
type StringMap = map[string]string

// MarshalStringMap writes metadata as a JSON object. (A payment's metadata is never nil: see
// ent.Payment.MetadataOrEmpty.)
func MarshalStringMap(m map[string]string) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) { json.NewEncoder(w).Encode(m) })
}

// UnmarshalStringMap reads metadata; every value must be a string.
func UnmarshalStringMap(v any) (map[string]string, error) {
	object, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("metadata must be an object of strings")
	}
	m := make(map[string]string, len(object))
	for key, value := range object {
		text, ok := value.(string)
		if !ok {
			return nil, fmt.Errorf("metadata value for %q must be a string", key)
		}
		m[key] = text
	}
	return m, nil
}
