package model

import (
	"encoding/json"
	"errors"
	"io"
)

// JSON is a JSON value written as Paygate keeps it: an event's data, in the REST API's shape.
type JSON json.RawMessage

// MarshalGQL writes the value as it is.
func (j JSON) MarshalGQL(w io.Writer) { w.Write(j) }

// UnmarshalGQL refuses every input: JSON is only ever an answer.
func (j *JSON) UnmarshalGQL(any) error { return errors.New("JSON values are answers only") }
