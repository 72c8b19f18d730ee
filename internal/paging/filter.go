// Package paging bounds what a list is asked for: the size of a page, and the filters of an entgql
// where input.
package paging

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/apierror"
)

// Bounds of a filter of payments or webhook events. Beyond them a filter is no dashboard's, and
// the databases refuse it anyway (SQLite nests an expression at most 1,000 deep), which would
// answer a server error for a client's mistake.
const (
	// MaxFilterDepth bounds the nesting of not, and, or.
	MaxFilterDepth = 5
	// MaxFilterTerms bounds the filters of a where, nested ones included.
	MaxFilterTerms = 50
	// MaxFilterValues bounds the values compared in a where, each entry of an In list counting one.
	MaxFilterValues = 500
	// MaxFilterText bounds one string compared, in characters: as long as an email address may be.
	MaxFilterText = 254
)

// whereShape is what CheckFilter walks of one where input type: its pointer and slice types, by
// which it knows a nested where, and its fields' GraphQL names.
type whereShape struct {
	ref, refs reflect.Type
	names     []string
}

// whereShapes caches each where input type's shape: the types are few and fixed.
var whereShapes sync.Map // reflect.Type -> whereShape

// CheckFilter refuses an entgql where input (of payments, of webhook events) over the bounds as
// invalid_request, naming the field at fault.
func CheckFilter[W any](where *W) error {
	t := reflect.TypeFor[W]()
	shape, ok := whereShapes.Load(t)
	if !ok {
		ref := reflect.PointerTo(t)
		shape, _ = whereShapes.LoadOrStore(t, whereShape{ref: ref, refs: reflect.SliceOf(ref), names: jsonNames(t)})
	}
	counts := filterCounts{whereShape: shape.(whereShape)}
	return counts.where(reflect.ValueOf(where), "where", 1)
}

type filterCounts struct {
	whereShape
	terms, values int
}

func (c *filterCounts) where(ref reflect.Value, path string, depth int) error {
	if ref.IsNil() {
		return nil
	}
	if depth > MaxFilterDepth {
		return apierror.ForParam(apierror.InvalidRequest, path, fmt.Sprintf("filters nest at most %d deep (not, and, or)", MaxFilterDepth))
	}
	if c.terms++; c.terms > MaxFilterTerms {
		return apierror.ForParam(apierror.InvalidRequest, path, fmt.Sprintf("a filter holds at most %d filters within it", MaxFilterTerms))
	}
	where, conditions := ref.Elem(), 0
	for i, name := range c.names {
		value := where.Field(i)
		// A field not given holds nothing to count; most of a filter's fields are not.
		if name == "" || value.IsZero() || (value.Kind() == reflect.Slice && value.Len() == 0) {
			continue
		}
		conditions++
		fieldPath := path + "." + name
		switch {
		case value.Type() == c.ref:
			if err := c.where(value, fieldPath, depth+1); err != nil {
				return err
			}
		case value.Type() == c.refs:
			for j := range value.Len() {
				if err := c.where(value.Index(j), fieldPath, depth+1); err != nil {
					return err
				}
			}
		case value.Kind() == reflect.Slice:
			for j := range value.Len() {
				if err := c.value(value.Index(j), fieldPath); err != nil {
					return err
				}
			}
		case value.Kind() == reflect.Pointer && !value.IsNil():
			if err := c.value(value.Elem(), fieldPath); err != nil {
				return err
			}
		}
	}
	if conditions == 0 && depth > 1 {
		// ent refuses an empty filter within another; at the top it means no filter.
		return apierror.ForParam(apierror.InvalidRequest, path, path+" holds no condition")
	}
	return nil
}

func (c *filterCounts) value(v reflect.Value, path string) error {
	if c.values++; c.values > MaxFilterValues {
		return apierror.ForParam(apierror.InvalidRequest, path, fmt.Sprintf("a filter compares at most %d values in all", MaxFilterValues))
	}
	if v.Kind() == reflect.String && utf8.RuneCountInString(v.String()) > MaxFilterText {
		return apierror.ForParam(apierror.InvalidRequest, path, fmt.Sprintf("%s is longer than %d characters", path, MaxFilterText))
	}
	return nil
}

// jsonNames lists the GraphQL names of a where type's fields, in field order; fields that are not
// part of the input (predicates built in code) have none.
func jsonNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "-" {
			names[i] = name
		}
	}
	return names
}

// Page sizes of lists: a page is never unbounded.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// CheckPage checks the size a Relay page asks for, first or last, and returns first, which is
// DefaultPageSize when neither is given. Every list pages by it.
func CheckPage(first, last *int) (*int, error) {
	switch {
	case first != nil && last != nil:
		return nil, apierror.ForParam(apierror.InvalidRequest, "last", "give first or last, not both")
	case first != nil && (*first < 1 || *first > MaxPageSize):
		return nil, apierror.ForParam(apierror.InvalidRequest, "first", fmt.Sprintf("first must be from 1 to %d", MaxPageSize))
	case last != nil && (*last < 1 || *last > MaxPageSize):
		return nil, apierror.ForParam(apierror.InvalidRequest, "last", fmt.Sprintf("last must be from 1 to %d", MaxPageSize))
	case first == nil && last == nil:
		pageSize := DefaultPageSize
		first = &pageSize
	}
	return first, nil
}
