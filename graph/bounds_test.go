package graph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/paygate/paygate/graph/generated"
	"github.com/paygate/paygate/internal/payment"
)

// dashboardQuery is what a dashboard asks for a page of payments: the largest real query.
const dashboardQuery = `query Dashboard($after: Cursor, $status: PaymentStatus) {
  payments(first: 100, after: $after, where: {status: $status}, orderBy: {field: CREATED_AT, direction: DESC}) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges {
      cursor
      node {
        ...PaymentRow
        refunds { id amount currency status reason failureCode createdAt }
        statusHistory { from to reason actor at }
      }
    }
  }
}
fragment PaymentRow on Payment {
  id amount amountRefunded currency status paymentMethod provider providerPaymentId
  failureCode failureMessage description metadata createdAt updatedAt
  customer { email name }
  card { brand last4 expMonth expYear fingerprint }
}`

// introspectionQuery is the standard introspection query GraphiQL sends, ofType nested 9 deep
// as the newest clients do.
var introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type { kind name ` + strings.Repeat("ofType { kind name ", 9) + strings.Repeat("} ", 9) + `}`

func schemaForTest() *ast.Schema {
	return generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
}

// measureQuery refuses or accepts query as /query does before validation, and returns the walk
// over the parsed document (nil when it did not parse).
func measureQuery(t testing.TB, query string, noIntrospection bool) (*documentWalk, *gqlerror.Error) {
	t.Helper()
	bounds := documentBounds{limits: defaultDocumentLimits, cache: newDocumentCache(1), noIntrospection: noIntrospection}
	refusal := bounds.MutateOperationParameters(context.Background(), &graphql.RawParams{Query: query})
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, defaultDocumentLimits.Tokens)
	if err != nil {
		return nil, refusal
	}
	w := newDocumentWalk(doc, defaultDocumentLimits, noIntrospection)
	if walked := w.measure(doc); fmt.Sprint(walked) != fmt.Sprint(refusal) {
		t.Fatalf("the walk answered %v, /query %v", walked, refusal)
	}
	return w, refusal
}

func repeat(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

func TestRealQueriesPassTheBounds(t *testing.T) {
	schema := schemaForTest()
	for name, query := range map[string]string{"dashboard": dashboardQuery, "introspection": introspectionQuery} {
		if _, err := measureQuery(t, query, false); err != nil {
			t.Errorf("%s refused: %v", name, err)
		}
		doc, err := parser.ParseQuery(&ast.Source{Input: query})
		if err != nil {
			t.Fatal(err)
		}
		if errs := validator.Validate(schema, doc); errs != nil {
			t.Errorf("%s is not valid: %v", name, errs)
		}
	}
}

// TestFloodsAreRefusedBeforeValidation: each attack found on /query, and the bound refusing it,
// with the work done before the refusal counted.
func TestFloodsAreRefusedBeforeValidation(t *testing.T) {
	var chain strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&chain, "fragment C%d on Query { ...C%d }\n", i, i+1)
	}
	chain.WriteString("fragment C3000 on Query { __typename }\n{ ...C0 }")
	for _, tc := range []struct {
		name, query, code string
	}{
		{"one alias with 1,000 different arguments", "{" + repeat(1000, ` a:payment(id:"%d"){id}`) + "}", "query_too_complex"},
		{"1,000 aliases", "{" + repeat(1000, ` a%d:__typename`) + "}", "query_too_complex"},
		{"20,000 __typename", "{" + strings.Repeat(" __typename", 20000) + "}", "query_too_complex"},
		{"51 __typename", "{" + strings.Repeat(" __typename", 51) + "}", "query_too_complex"},
		{"unknown directives in a fragment spread by 450 operations", strings.Repeat("{...F}\n", 450) + "fragment F on Query { __typename" + strings.Repeat(" @x", 3800) + " }", "query_too_complex"},
		{"4,900 directives", "{ __typename" + strings.Repeat(" @x", 4900) + " }", "query_too_complex"},
		{"variable uses in a fragment spread by 450 operations", strings.Repeat("{...F}\n", 450) + "fragment F on Query { __typename(x: [" + strings.Repeat(" $a", 3800) + "]) }", "query_too_complex"},
		{"a list of 6,000 in a fragment spread by 300 operations", strings.Repeat("{...F}\n", 300) + "fragment F on Query { nodes(ids: [" + strings.Repeat(" true", 6000) + "]) { id } }", "query_too_complex"},
		{"directives on a fragment definition", "{...F ...F}\nfragment F on Query" + strings.Repeat(" @x", 3000) + " { __typename }", "query_too_complex"},
		{"same names merged below same-named fields", "{" + strings.Repeat(` payment(id: "1") {`+strings.Repeat(" refunds { id }", 10)+" }", 10) + "}", "query_too_complex"},
		{"inline fragments nested 4 deep", "{" + strings.Repeat(" ... {", 4) + " __typename" + strings.Repeat(" }", 4) + "}", "query_too_complex"},
		{"a filter literal nested 17 deep", "{ payments(where: " + strings.Repeat("{not: ", 16) + "{status: FAILED}" + strings.Repeat("}", 16) + ") { totalCount } }", "query_too_complex"},
		{"a fragment defined twice, the first one large", "{ ...F } fragment F on Query {" + strings.Repeat(" __typename", 2000) + " } fragment F on Query { __typename }", "GRAPHQL_VALIDATION_FAILED"},
		{"3,000 chained fragments", chain.String(), "query_too_complex"},
		{"fragments doubling 30 times", exponentialFragments(30), "query_too_complex"},
		{"nesting 16 deep", "{ payments { edges { node" + strings.Repeat(" { refunds { payment", 6) + " { id }" + strings.Repeat(" } }", 6) + " } } }", "query_too_complex"},
		{"4,000 unknown tokens", "{" + strings.Repeat(" a b", 2500) + "}", "query_too_complex"},
		{"1 MB of tokens", "{" + strings.Repeat(" a", 1<<19) + "}", "query_too_complex"},
		{"499 logins", "mutation {" + repeat(499, ` a%d: login(input: {email: "a@example.com", password: "guess"}) { accessToken }`) + "}", "invalid_request"},
		{"two logins", `mutation { a: login(input: {email: "a@example.com", password: "one"}) { accessToken } b: login(input: {email: "a@example.com", password: "two"}) { accessToken } }`, "invalid_request"},
		{"50 test webhooks", "mutation {" + repeat(50, ` a%d: sendTestWebhook(input: {url: "https://example.com/"}) { statusCode }`) + "}", "invalid_request"},
		{"two test webhooks through a fragment", `mutation { ...W sendTestWebhook(input: {url: "https://example.com/"}) { statusCode } } fragment W on Mutation { sendTestWebhook(input: {url: "https://example.org/"}) { statusCode } }`, "invalid_request"},
		{"two password changes", `mutation { a: changePassword(input: {currentPassword: "one", newPassword: "x"}) { changed } b: changePassword(input: {currentPassword: "two", newPassword: "x"}) { changed } }`, "invalid_request"},
		{"a login and a password reset", `mutation { login(input: {email: "a@example.com", password: "x"}) { accessToken } resetPassword(id: "usr_1", input: {newPassword: "x"}) { changed } }`, "invalid_request"},
		{"login and refresh through a fragment", `mutation { ...L refreshToken(refreshToken: "x") { accessToken } } fragment L on Mutation { login(input: {email: "a@example.com", password: "x"}) { accessToken } }`, "invalid_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := measureQuery(t, tc.query, false)
			if err == nil {
				t.Fatal("accepted")
			}
			if code := fmt.Sprint(err.Extensions["code"]); code != tc.code {
				t.Errorf("code %s (%s), want %s", code, err.Message, tc.code)
			}
			if w != nil && w.steps > maxSteps(defaultDocumentLimits) {
				t.Errorf("walked %d steps before refusing, over %d", w.steps, maxSteps(defaultDocumentLimits))
			}
		})
	}
}

// maxSteps is the most steps a walk may take: it stops at the first step over Nodes, which is
// at most a pair charge of every earlier same-named field, once per inline fragment around it.
func maxSteps(limits documentLimits) int {
	return limits.Nodes + (limits.SameName+1)*(limits.InlineNesting+1)
}

// exponentialFragments spreads each fragment twice in the next: 2^n fields from 3n lines.
func exponentialFragments(n int) string {
	var b strings.Builder
	b.WriteString("fragment F0 on Query { __typename }\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	fmt.Fprintf(&b, "{ ...F%d }", n)
	return b.String()
}

// TestColocatedFragmentsPass: a client that spreads many component fragments on one object, each
// asking for __typename and id as Apollo and Relay clients do, is no attack.
func TestColocatedFragmentsPass(t *testing.T) {
	query := `query($id: ID!) { payment(id: $id) { __typename id` + repeat(45, " ...P%d") + " } }" +
		repeat(45, "\nfragment P%d on Payment { __typename id status }")
	if _, err := measureQuery(t, query, false); err != nil {
		t.Errorf("45 colocated fragments refused: %v", err)
	}
}

// TestVariablesAreBounded: variables are bounded in depth and size before gqlgen reads them, for
// a cached document as for a new one.
func TestVariablesAreBounded(t *testing.T) {
	bounds := documentBounds{limits: defaultDocumentLimits, cache: newDocumentCache(10)}
	const query = `query($w: PaymentWhereInput) { payments(where: $w) { totalCount } }`
	doc, _ := parser.ParseQuery(&ast.Source{Input: query})
	deep := any(map[string]any{"status": "FAILED"})
	for range defaultDocumentLimits.ValueDepth {
		deep = map[string]any{"not": deep}
	}
	wide := make([]any, defaultDocumentLimits.VariableValues)
	for i := range wide {
		wide[i] = map[string]any{}
	}
	within := make([]any, 400)
	for i := range within {
		within[i] = map[string]any{"status": "FAILED"}
	}
	for _, cached := range []bool{false, true} {
		if cached {
			bounds.cache.Add(context.Background(), query, doc)
		}
		for name, tc := range map[string]struct {
			where any
			code  string
		}{
			"17 deep":       {deep, "invalid_request"},
			"2,001 values":  {map[string]any{"or": wide}, "invalid_request"},
			"800 values":    {map[string]any{"or": within}, ""},
			"a deep one ok": {deep.(map[string]any)["not"], ""},
		} {
			err := bounds.MutateOperationParameters(context.Background(), &graphql.RawParams{Query: query, Variables: map[string]any{"w": tc.where}})
			if code := codeOf(err); code != tc.code {
				t.Errorf("%s (cached %t) = %v, want %q", name, cached, err, tc.code)
			}
		}
	}
}

func codeOf(err *gqlerror.Error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprint(err.Extensions["code"])
}

func TestOneCredentialPerOperation(t *testing.T) {
	for _, query := range []string{
		`mutation { login(input: {email: "a@example.com", password: "x"}) { accessToken refreshToken } }`,
		// One per operation: only one of them runs.
		`mutation A { login(input: {email: "a@example.com", password: "x"}) { accessToken } }
		 mutation B { refreshToken(refreshToken: "x") { accessToken } }`,
		`mutation { login(input: {email: "a@example.com", password: "x"}) { accessToken } logout { __typename } }`,
	} {
		if _, err := measureQuery(t, query, false); err != nil {
			t.Errorf("%s refused: %v", query, err)
		}
	}
	// A credential and a call out are two of what a request asks once.
	query := `mutation { login(input: {email: "a@example.com", password: "x"}) { accessToken } sendTestWebhook(input: {url: "https://example.com/"}) { statusCode } }`
	if _, err := measureQuery(t, query, false); codeOf(err) != "invalid_request" {
		t.Errorf("%s = %v, want invalid_request", query, err)
	}
}

func TestProductionRefusesIntrospectionOnly(t *testing.T) {
	if _, err := measureQuery(t, `{ __typename payments(first: 1) { totalCount } }`, true); err != nil {
		t.Errorf("__typename refused in production: %v", err)
	}
	for _, query := range []string{introspectionQuery, `{ __type(name: "Payment") { name } }`, `{ ...F } fragment F on Query { __schema { queryType { name } } }`} {
		_, err := measureQuery(t, query, true)
		if err == nil || err.Extensions["code"] != "introspection_disabled" {
			t.Errorf("introspection in production = %v", err)
		}
	}
}

// FuzzDocumentBounds: whatever the document, measuring it never panics, takes at most a few
// steps over Nodes, and a document it accepts is within every bound when expanded naively.
func FuzzDocumentBounds(f *testing.F) {
	for _, seed := range []string{
		dashboardQuery, introspectionQuery, exponentialFragments(12),
		`{ a: payment(id: "1") { id } a: payment(id: "2") { id } }`,
		`{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`,
		`mutation { ... on Mutation { login(input: {email: "e", password: "p"}) { accessToken } } }`,
		`{ payments { edges { node { refunds { payment { id } } } } } }`,
	} {
		f.Add(seed)
	}
	limits := documentLimits{Tokens: 2000, Nodes: 60, Aliases: 8, SameName: 4, Depth: 6, FragmentDepth: 4, InlineNesting: 2, ValueDepth: 4, VariableValues: 20}
	f.Fuzz(func(t *testing.T, query string) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, limits.Tokens)
		if err != nil {
			return
		}
		w := newDocumentWalk(doc, limits, false)
		refusal := w.measure(doc)
		if w.steps > maxSteps(limits) {
			t.Fatalf("walked %d steps, over %d", w.steps, maxSteps(limits))
		}
		if refusal != nil {
			return
		}
		naive := naiveExpansion{fragments: w.fragments, budget: limits.Nodes + 1}
		for _, op := range doc.Operations {
			naive.merge([]pathedSet{{op.SelectionSet, nil}}, 1)
		}
		if naive.fields > limits.Nodes || naive.depth > limits.Depth || naive.sameName > limits.SameName {
			t.Fatalf("accepted a document of %d fields, %d deep, %d of one name", naive.fields, naive.depth, naive.sameName)
		}
	})
}

// naiveExpansion inlines every fragment spread and merges the fields of one response name, as
// validation sees the document, until it has counted budget fields.
type naiveExpansion struct {
	fragments               map[string]*ast.FragmentDefinition
	budget                  int
	fields, depth, sameName int
}

// pathedSet is a selection set with the fragments spread to reach it, to stop at cycles.
type pathedSet struct {
	set  ast.SelectionSet
	path []string
}

func (n *naiveExpansion) merge(sets []pathedSet, depth int) {
	counts, children := map[string]int{}, map[string][]pathedSet{}
	for _, s := range sets {
		n.collect(s.set, depth, s.path, counts, children)
	}
	for _, count := range counts {
		n.sameName = max(n.sameName, count)
	}
	for _, child := range children {
		n.merge(child, depth+1)
	}
}

func (n *naiveExpansion) collect(set ast.SelectionSet, depth int, path []string, counts map[string]int, children map[string][]pathedSet) {
	for _, selection := range set {
		if n.fields >= n.budget {
			return
		}
		switch s := selection.(type) {
		case *ast.Field:
			n.fields++
			n.depth = max(n.depth, depth)
			counts[s.Alias]++
			if len(s.SelectionSet) > 0 {
				children[s.Alias] = append(children[s.Alias], pathedSet{s.SelectionSet, path})
			}
		case *ast.InlineFragment:
			n.collect(s.SelectionSet, depth, path, counts, children)
		case *ast.FragmentSpread:
			fragment := n.fragments[s.Name]
			if fragment == nil || slices.Contains(path, s.Name) {
				continue
			}
			n.collect(fragment.SelectionSet, depth, append(slices.Clip(path), s.Name), counts, children)
		}
	}
}

// BenchmarkDocumentBounds measures what the bound adds to the dashboard query: for a new
// document, parsing and walking it (beside the validation gqlgen runs next, for scale); for a
// document seen before, one cache look-up.
func BenchmarkDocumentBounds(b *testing.B) {
	ctx := context.Background()
	bounds := documentBounds{limits: defaultDocumentLimits, cache: newDocumentCache(10)}
	params := &graphql.RawParams{Query: dashboardQuery}
	b.Run("new", func(b *testing.B) {
		for b.Loop() {
			if err := bounds.MutateOperationParameters(ctx, params); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("validate", func(b *testing.B) {
		schema := schemaForTest()
		for b.Loop() {
			doc, _ := parser.ParseQuery(&ast.Source{Input: dashboardQuery})
			if errs := validator.Validate(schema, doc); errs != nil {
				b.Fatal(errs)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		doc, _ := parser.ParseQuery(&ast.Source{Input: dashboardQuery})
		bounds.cache.Add(ctx, dashboardQuery, doc)
		for b.Loop() {
			if err := bounds.MutateOperationParameters(ctx, params); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestListCosts: a cost is the product of the list sizes along each path, so the dashboard page
// passes and nested lists of refunds do not.
func TestListCosts(t *testing.T) {
	cfg := generated.Config{Resolvers: &Resolver{}}
	listCosts(&cfg.Complexity)
	es := generated.NewExecutableSchema(cfg)
	cost := func(query string, variables map[string]any) int {
		doc, errs := gqlparser.LoadQuery(es.Schema(), query)
		if errs != nil {
			t.Fatal(errs)
		}
		return complexity.Calculate(context.Background(), es, doc.Operations[0], variables)
	}
	dashboard := cost(dashboardQuery, nil)
	if dashboard > MaxQueryCost || dashboard < 100*payment.MaxRefunds {
		t.Errorf("the dashboard page costs %d; want refunds counted and within %d", dashboard, MaxQueryCost)
	}
	t.Logf("the dashboard page costs %d", dashboard)
	if nested := cost(`{ payment(id: "x") { refunds { payment { refunds { payment { refunds { id } } } } } } }`, nil); nested <= MaxQueryCost {
		t.Errorf("refunds nested three times cost %d, within the limit", nested)
	}
	small, large := cost(`query($n: Int) { payments(first: $n) { edges { node { id } } } }`, map[string]any{"n": int64(10)}),
		cost(`query($n: Int) { payments(first: $n) { edges { node { id } } } }`, map[string]any{"n": int64(100)})
	if large < 9*small {
		t.Errorf("a page of 100 costs %d, of 10 %d: first is not counted", large, small)
	}
	events := cost(`{ webhookEvents(first: 100) { edges { node { id status attemptLog { at status error durationMs } } } } }`, nil)
	if events > MaxQueryCost || events < 100*attemptLogCost {
		t.Errorf("a page of 100 webhook events with their attempts costs %d; want attempts counted and within %d", events, MaxQueryCost)
	}
	if n := cost(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, map[string]any{"ids": []any{"a", "b", "c"}}); n != 1+3*1 {
		t.Errorf("nodes of 3 ids cost %d, want 4", n)
	}
}
