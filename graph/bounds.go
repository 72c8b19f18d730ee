package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/paygate/paygate/internal/apierror"
)

// DocumentLimits bound a GraphQL document before it is validated. gqlparser's validation compares
// fields pairwise (the overlapping-fields rule), so its cost grows with the square of a document's
// size: without these bounds a 24 KB document sent without a token held the server for seconds
// and gigabytes. Every bound is checked in one pass over the parsed document, in which each
// fragment spread is walked as the fields it brings, so the pass costs at most Fields steps.
type DocumentLimits struct {
	// Tokens bounds the lexical tokens of the document; parsing stops at the first one over.
	Tokens int
	// Fields bounds the fields of the document, counting a fragment's fields once per spread.
	Fields int
	// Aliases bounds the aliased fields, counted as Fields are.
	Aliases int
	// SameName bounds the fields of one response name merged into one selection set (written
	// side by side or brought by fragments): validation compares each pair of them.
	SameName int
	// Depth bounds the nesting of selection sets.
	Depth int
	// FragmentDepth bounds fragments spread within fragments.
	FragmentDepth int
}

// DefaultDocumentLimits are generous for real clients: a dashboard page of 100 payments with
// their refunds and status history is about 40 fields 6 deep, and the standard introspection
// query (development only) about 150 fields 13 deep.
var DefaultDocumentLimits = DocumentLimits{
	Tokens:        10_000,
	Fields:        1_000,
	Aliases:       100,
	SameName:      10,
	Depth:         15,
	FragmentDepth: 10,
}

// credentialFields are mutations that check a secret. One request tests at most one secret:
// aliases would otherwise try hundreds of passwords in one request, and the number of errors
// would tell which alias held the right one.
var credentialFields = map[string]bool{"login": true, "refreshToken": true}

// documentBounds refuses a document over its limits, or asking for introspection in production,
// before gqlgen validates it. A document already in the cache passed these checks when it was
// first parsed, so a repeated query costs one cache look-up here.
type documentBounds struct {
	limits          DocumentLimits
	cache           documentCache
	noIntrospection bool
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = documentBounds{}

func (documentBounds) ExtensionName() string { return "DocumentBounds" }

func (documentBounds) Validate(graphql.ExecutableSchema) error { return nil }

func (b documentBounds) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if _, checked := b.cache.Get(ctx, params.Query); checked {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, b.limits.Tokens)
	if err != nil {
		gqlErr, ok := errors.AsType[*gqlerror.Error](err)
		if !ok {
			gqlErr = gqlerror.Wrap(err)
		}
		if strings.HasPrefix(gqlErr.Message, "exceeded token limit") {
			return requestError(apierror.QueryTooComplex, fmt.Sprintf("the document has more than %d tokens", b.limits.Tokens))
		}
		// Reported as gqlgen reports it, so the document is not parsed a second time to fail again.
		errcode.Set(gqlErr, errcode.ParseFailed)
		return gqlErr
	}
	return newDocumentWalk(doc, b.limits, b.noIntrospection).measure(doc)
}

func newDocumentWalk(doc *ast.QueryDocument, limits DocumentLimits, noIntrospection bool) *documentWalk {
	w := &documentWalk{
		limits:          limits,
		noIntrospection: noIntrospection,
		fragments:       make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		spreading:       map[string]bool{},
		reached:         map[string]bool{},
	}
	for _, fragment := range doc.Fragments {
		w.fragments[fragment.Name] = fragment
	}
	return w
}

// measure walks every operation of doc, then every fragment no operation spreads (which
// validation still reads), and refuses the document at the first bound it exceeds.
func (w *documentWalk) measure(doc *ast.QueryDocument) *gqlerror.Error {
	for _, op := range doc.Operations {
		w.credentials = 0
		w.mutation = op.Operation == ast.Mutation
		if err := w.selectionSet(op.SelectionSet, 1, 0, map[string]int{}); err != nil {
			return err
		}
	}
	w.mutation = false
	for _, fragment := range doc.Fragments {
		if w.reached[fragment.Name] {
			continue
		}
		w.reached[fragment.Name] = true
		w.spreading[fragment.Name] = true
		err := w.selectionSet(fragment.SelectionSet, 1, 1, map[string]int{})
		w.spreading[fragment.Name] = false
		if err != nil {
			return err
		}
	}
	return nil
}

type documentWalk struct {
	limits          DocumentLimits
	noIntrospection bool
	fragments       map[string]*ast.FragmentDefinition
	// spreading holds the fragments on the path being walked: a spread of one of them is a cycle,
	// which is not followed (validation reports it).
	spreading map[string]bool
	reached   map[string]bool
	// steps counts fields and spreads walked, so fragments that spread others and bring no field
	// of their own are bounded too.
	steps, aliases int
	// mutation and credentials follow the root fields of the operation being walked.
	mutation    bool
	credentials int
}

// selectionSet walks the selections of one selection set whose fields sit at depth; names counts
// the response names merged into it, which its fragments share.
func (w *documentWalk) selectionSet(set ast.SelectionSet, depth, fragmentDepth int, names map[string]int) *gqlerror.Error {
	for _, selection := range set {
		w.steps++
		if w.steps > w.limits.Fields {
			return tooComplex("the document has more than %d fields, counting each fragment once per spread", w.limits.Fields)
		}
		switch s := selection.(type) {
		case *ast.Field:
			if err := w.field(s, depth, fragmentDepth, names); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if err := w.selectionSet(s.SelectionSet, depth, fragmentDepth, names); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			fragment := w.fragments[s.Name]
			if fragment == nil || w.spreading[s.Name] {
				continue // an unknown fragment or a cycle: validation refuses the document
			}
			if fragmentDepth+1 > w.limits.FragmentDepth {
				return tooComplex("fragments are spread more than %d deep", w.limits.FragmentDepth)
			}
			w.reached[s.Name] = true
			w.spreading[s.Name] = true
			err := w.selectionSet(fragment.SelectionSet, depth, fragmentDepth+1, names)
			w.spreading[s.Name] = false
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *documentWalk) field(f *ast.Field, depth, fragmentDepth int, names map[string]int) *gqlerror.Error {
	if depth > w.limits.Depth {
		return tooComplex("the document nests fields more than %d deep", w.limits.Depth)
	}
	if f.Alias != f.Name { // the parser sets Alias to Name when there is no alias
		w.aliases++
		if w.aliases > w.limits.Aliases {
			return tooComplex("the document has more than %d aliases", w.limits.Aliases)
		}
	}
	names[f.Alias]++
	if names[f.Alias] > w.limits.SameName {
		return tooComplex("more than %d fields of one selection answer under the same name", w.limits.SameName)
	}
	if w.noIntrospection && (f.Name == "__schema" || f.Name == "__type") {
		return requestError(apierror.IntrospectionDisabled, "introspection is turned off in production")
	}
	if w.mutation && depth == 1 && credentialFields[f.Name] {
		w.credentials++
		if w.credentials > 1 {
			return requestError(apierror.InvalidRequest, "a request may hold one login or refreshToken, not several")
		}
	}
	if len(f.SelectionSet) == 0 {
		return nil
	}
	return w.selectionSet(f.SelectionSet, depth+1, fragmentDepth, map[string]int{})
}

func tooComplex(format string, limit int) *gqlerror.Error {
	return requestError(apierror.QueryTooComplex, fmt.Sprintf(format, limit))
}

// requestError is a refusal of the whole request before it runs: one short error with its code,
// answered as a request error (400 under application/graphql-response+json).
func requestError(code apierror.Code, message string) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": string(code)}}
}
