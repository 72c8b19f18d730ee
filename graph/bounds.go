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
	"github.com/paygate/paygate/internal/auth"
)

// documentLimits bound a GraphQL request before it is validated. gqlparser's validation compares
// fields pairwise (the overlapping-fields rule), so its cost grows with the square of what it
// compares: without these bounds a 24 KB document sent without a token held the server for
// seconds and gigabytes. Every bound is checked in one walk over the parsed document, which reads
// each fragment where it is spread and once on its own, as validation does, and stops at the first
// bound exceeded; and in one pass over the variables.
type documentLimits struct {
	// Tokens bounds the lexical tokens of the document; parsing stops at the first one over.
	Tokens int
	// Nodes bounds the work validation does on the document: its fields, fragment spreads,
	// directives and argument values, a fragment's counted each time it is spread and once on its
	// own (validation reads it as often, reporting each mistake in it each time), plus the extra
	// readings that inline fragments and same-named fields cause (see InlineNesting, SameName).
	Nodes int
	// Aliases bounds the aliased fields, counted as Nodes are.
	Aliases int
	// SameName bounds the fields of one response name that validation merges: written side by
	// side, brought by fragments, or below fields of one response name. It compares each pair.
	SameName int
	// Depth bounds the nesting of selection sets.
	Depth int
	// FragmentDepth bounds fragments spread within fragments.
	FragmentDepth int
	// InlineNesting bounds inline fragments written directly inside one another: validation reads
	// the fields below such a chain once per link.
	InlineNesting int
	// ValueDepth bounds the nesting of objects and lists in an argument or a variable: the
	// generated readers of input objects cost the square of their depth.
	ValueDepth int
	// VariableValues bounds the values in all the variables, objects and lists included.
	VariableValues int
}

// defaultDocumentLimits are generous for real clients: a dashboard page of 100 payments with
// their refunds and status history is about 60 nodes 6 deep, the standard introspection query
// (development only) about 500 nodes 13 deep, and the deepest payment filter 11 values deep.
var defaultDocumentLimits = documentLimits{
	Tokens:         10_000,
	Nodes:          1_000,
	Aliases:        100,
	SameName:       50,
	Depth:          15,
	FragmentDepth:  10,
	InlineNesting:  3,
	ValueDepth:     16,
	VariableValues: 2_000,
}

// documentBounds refuses a request over its limits, or asking for introspection in production,
// before gqlgen validates it. A document already in the cache passed these checks when it was
// first parsed, so a repeated query costs one cache look-up and the pass over its variables.
type documentBounds struct {
	limits          documentLimits
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
	values := 0
	for name, value := range params.Variables {
		if at := nulIn(value, "variables."+name); at != "" {
			err := requestError(apierror.InvalidRequest, at+" holds a NUL character (\\u0000), which cannot be stored")
			err.Extensions["param"] = at
			return err
		}
		if over := b.variable(value, 1, &values); over != "" {
			// The variables' size is the client's to fix, as a filter's is.
			err := requestError(apierror.InvalidRequest, "$"+name+" "+over)
			err.Extensions["param"] = "variables." + name
			return err
		}
	}
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
			return tooComplex("the document has more than %d tokens", b.limits.Tokens)
		}
		// Reported as gqlgen reports it, so the document is not parsed a second time to fail again.
		errcode.Set(gqlErr, errcode.ParseFailed)
		return gqlErr
	}
	return newDocumentWalk(doc, b.limits, b.noIntrospection).measure(doc)
}

// nulIn returns the path of the first string of a decoded JSON variable, key or value, holding a
// NUL character, which PostgreSQL cannot keep in a text column; "" when none does.
func nulIn(value any, path string) string {
	switch v := value.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return path
		}
	case map[string]any:
		for key, item := range v {
			if strings.ContainsRune(key, 0) {
				return path + "." + key
			}
			if at := nulIn(item, path+"."+key); at != "" {
				return at
			}
		}
	case []any:
		for i, item := range v {
			if at := nulIn(item, fmt.Sprintf("%s[%d]", path, i)); at != "" {
				return at
			}
		}
	}
	return ""
}

// variable counts a decoded JSON variable value (objects, lists and scalars) and its depth, and
// says which bound it exceeds, if any.
func (b documentBounds) variable(value any, depth int, values *int) (over string) {
	if *values++; *values > b.limits.VariableValues {
		return fmt.Sprintf("takes the variables over %d values in all", b.limits.VariableValues)
	}
	var items []any
	switch v := value.(type) {
	case map[string]any:
		for _, item := range v {
			items = append(items, item)
		}
	case []any:
		items = v
	default:
		return ""
	}
	if depth > b.limits.ValueDepth {
		return fmt.Sprintf("nests objects and lists more than %d deep", b.limits.ValueDepth)
	}
	for _, item := range items {
		if over := b.variable(item, depth+1, values); over != "" {
			return over
		}
	}
	return ""
}

func newDocumentWalk(doc *ast.QueryDocument, limits documentLimits, noIntrospection bool) *documentWalk {
	w := &documentWalk{
		limits:          limits,
		noIntrospection: noIntrospection,
		fragments:       make(map[string]*ast.FragmentDefinition, len(doc.Fragments)),
		spreading:       map[string]bool{},
	}
	for _, fragment := range doc.Fragments {
		if w.fragments[fragment.Name] != nil {
			w.duplicate = fragment.Name
		}
		w.fragments[fragment.Name] = fragment
	}
	return w
}

// measure walks every operation of doc, then every fragment definition, and refuses the document
// at the first bound it exceeds.
func (w *documentWalk) measure(doc *ast.QueryDocument) *gqlerror.Error {
	if w.duplicate != "" {
		// Validation refuses it too, but only after reading the definition this walk would skip.
		err := gqlerror.Errorf("there can be only one fragment named %q", w.duplicate)
		errcode.Set(err, errcode.ValidationFailed)
		return err
	}
	for _, op := range doc.Operations {
		for _, variable := range op.VariableDefinitions {
			if err := w.value(variable.DefaultValue, 1); err != nil {
				return err
			}
			if err := w.directives(variable.Directives); err != nil {
				return err
			}
		}
		if err := w.directives(op.Directives); err != nil {
			return err
		}
		w.alone = 0
		w.mutation = op.Operation == ast.Mutation
		if err := w.selectionSet(op.SelectionSet, 1, 0, 0, newMergedSelection()); err != nil {
			return err
		}
	}
	// Validation reads every fragment definition on its own as well: so does the walk.
	w.mutation = false
	for _, fragment := range doc.Fragments {
		if err := w.fragment(fragment, 1, 1, newMergedSelection()); err != nil {
			return err
		}
	}
	return nil
}

// fragment walks a fragment definition, its directives included, with its fields at depth.
func (w *documentWalk) fragment(fragment *ast.FragmentDefinition, depth, fragmentDepth int, merged *mergedSelection) *gqlerror.Error {
	if err := w.directives(fragment.Directives); err != nil {
		return err
	}
	w.spreading[fragment.Name] = true
	defer func() { w.spreading[fragment.Name] = false }()
	return w.selectionSet(fragment.SelectionSet, depth, fragmentDepth, 0, merged)
}

// charge counts n steps of validation work and refuses the document once they exceed Nodes.
func (w *documentWalk) charge(n int) *gqlerror.Error {
	w.steps += n
	if w.steps > w.limits.Nodes {
		return tooComplex("the document is too large to check: more than %d fields, fragments, directives and values, counting a fragment each time it is spread", w.limits.Nodes)
	}
	return nil
}

type documentWalk struct {
	limits          documentLimits
	noIntrospection bool
	fragments       map[string]*ast.FragmentDefinition
	duplicate       string // a fragment name defined twice
	// spreading holds the fragments on the path being walked: a spread of one of them is a cycle,
	// which is not followed (validation reports it).
	spreading map[string]bool
	// steps counts the work validation does: fields, fragments, directives and values as walked,
	// each field once more for every inline fragment directly around it (validation reads it
	// anew), and each pair of same-named fields that may conflict.
	steps, aliases int
	// mutation and alone follow the root fields of the operation being walked: alone counts those
	// asked once per request (auth.Operation.OnePerRequest).
	mutation bool
	alone    int
}

// mergedSelection counts the fields of one response name that validation merges into one
// selection set; the fields below same-named fields merge too, so they share a child.
type mergedSelection struct {
	counts   map[string]int
	children map[string]*mergedSelection
}

func newMergedSelection() *mergedSelection {
	return &mergedSelection{counts: map[string]int{}, children: map[string]*mergedSelection{}}
}

func (m *mergedSelection) child(name string) *mergedSelection {
	child := m.children[name]
	if child == nil {
		child = newMergedSelection()
		m.children[name] = child
	}
	return child
}

// selectionSet walks the selections of one selection set whose fields sit at depth, inline
// fragments nesting directly around it, into merged.
func (w *documentWalk) selectionSet(set ast.SelectionSet, depth, fragmentDepth, inlineNesting int, merged *mergedSelection) *gqlerror.Error {
	for _, selection := range set {
		cost := 1
		if _, isField := selection.(*ast.Field); isField {
			cost += inlineNesting
		}
		if err := w.charge(cost); err != nil {
			return err
		}
		switch s := selection.(type) {
		case *ast.Field:
			if err := w.field(s, depth, fragmentDepth, inlineNesting, merged); err != nil {
				return err
			}
		case *ast.InlineFragment:
			if inlineNesting+1 > w.limits.InlineNesting {
				return tooComplex("inline fragments nest directly more than %d deep", w.limits.InlineNesting)
			}
			if err := w.directives(s.Directives); err != nil {
				return err
			}
			if err := w.selectionSet(s.SelectionSet, depth, fragmentDepth, inlineNesting+1, merged); err != nil {
				return err
			}
		case *ast.FragmentSpread:
			if err := w.directives(s.Directives); err != nil {
				return err
			}
			fragment := w.fragments[s.Name]
			if fragment == nil || w.spreading[s.Name] {
				continue // an unknown fragment or a cycle: validation refuses the document
			}
			if fragmentDepth+1 > w.limits.FragmentDepth {
				return tooComplex("fragments are spread more than %d deep", w.limits.FragmentDepth)
			}
			if err := w.fragment(fragment, depth, fragmentDepth+1, merged); err != nil {
				return err
			}
		}
	}
	return nil
}

func (w *documentWalk) field(f *ast.Field, depth, fragmentDepth, inlineNesting int, merged *mergedSelection) *gqlerror.Error {
	if depth > w.limits.Depth {
		return tooComplex("the document nests fields more than %d deep", w.limits.Depth)
	}
	if f.Alias != f.Name { // the parser sets Alias to Name when there is no alias
		w.aliases++
		if w.aliases > w.limits.Aliases {
			return tooComplex("the document has more than %d aliases", w.limits.Aliases)
		}
	}
	if f.Alias != f.Name || len(f.Arguments) > 0 {
		// It may conflict with each field of its name before it (other arguments, another field
		// under the alias), and validation describes every conflicting pair: each is a step.
		if err := w.charge(merged.counts[f.Alias] * (1 + inlineNesting)); err != nil {
			return err
		}
	}
	merged.counts[f.Alias]++
	if merged.counts[f.Alias] > w.limits.SameName {
		return tooComplex("more than %d fields of one selection answer under the same name", w.limits.SameName)
	}
	if w.noIntrospection && (f.Name == "__schema" || f.Name == "__type") {
		return requestError(apierror.IntrospectionDisabled, "introspection is turned off in production")
	}
	if op, ok := auth.OperationNamed(f.Name); ok && w.mutation && depth == 1 && op.OnePerRequest {
		w.alone++
		if w.alone > 1 {
			return requestError(apierror.InvalidRequest, "a request may hold one mutation that moves money, makes or checks a credential, or calls out ("+
				strings.Join(auth.OnePerRequestNames(), ", ")+"), not several: send each as its own request")
		}
	}
	for _, argument := range f.Arguments {
		if err := w.value(argument.Value, 1); err != nil {
			return err
		}
	}
	if err := w.directives(f.Directives); err != nil {
		return err
	}
	if len(f.SelectionSet) == 0 {
		return nil
	}
	return w.selectionSet(f.SelectionSet, depth+1, fragmentDepth, 0, merged.child(f.Alias))
}

func (w *documentWalk) directives(directives ast.DirectiveList) *gqlerror.Error {
	for _, directive := range directives {
		if err := w.charge(1); err != nil {
			return err
		}
		for _, argument := range directive.Arguments {
			if err := w.value(argument.Value, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// value counts the nodes of a value written in the document (each item of a list, each field of
// an object, each use of a variable) and bounds its nesting.
func (w *documentWalk) value(v *ast.Value, depth int) *gqlerror.Error {
	if v == nil {
		return nil
	}
	if err := w.charge(1); err != nil {
		return err
	}
	if (v.Kind == ast.StringValue || v.Kind == ast.BlockValue) && strings.ContainsRune(v.Raw, 0) {
		return requestError(apierror.InvalidRequest, "a string of the document holds a NUL character (\\u0000), which cannot be stored")
	}
	if len(v.Children) == 0 {
		return nil
	}
	if depth > w.limits.ValueDepth {
		return tooComplex("an argument nests objects and lists more than %d deep", w.limits.ValueDepth)
	}
	for _, child := range v.Children {
		if err := w.value(child.Value, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func tooComplex(format string, limit int) *gqlerror.Error {
	return requestError(apierror.QueryTooComplex, fmt.Sprintf(format, limit))
}

// requestError is a refusal of the whole request before it runs: one short error with its code,
// answered as a request error (400 under application/graphql-response+json).
func requestError(code apierror.Code, message string) *gqlerror.Error {
	return &gqlerror.Error{Message: message, Extensions: map[string]any{"code": string(code)}}
}
