// Package model holds the GraphQL types that are not ent entities.
package model

import (
	"encoding/json"
	"fmt"
	"io"
)

// StringMap is merchant metadata: string keys to string values.
type StringMap = map[string]string

// MarshalStringMap writes metadata as a JSON object.
func MarshalStringMap(m map[string]string) graphqlMarshaler {
	return graphqlMarshaler(func(w io.Writer) {
		if m == nil {
			m = map[string]string{}
		}
		json.NewEncoder(w).Encode(m)
	})
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

type graphqlMarshaler func(io.Writer)

func (f graphqlMarshaler) MarshalGQL(w io.Writer) { f(w) }
