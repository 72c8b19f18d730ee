package app

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/apikey"
	"github.com/paygate/paygate/ent/merchant"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
)

// TestListsCountOnlyWhenAskedTo: a page of payments costs a count of every payment the filter
// matches only when totalCount is asked for, never for the page info, which the page's own extra
// row gives; a count per page would cost more as the table grows.
func TestListsCountOnlyWhenAskedTo(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		var counts atomic.Int32
		observed := ent.NewClient(ent.Driver(dialect.DebugWithContext(entsql.OpenDB(db.Dialect, db.SQL), func(_ context.Context, v ...any) {
			if strings.Contains(fmt.Sprint(v...), "COUNT(") {
				counts.Add(1)
			}
		})))
		env := newTestEnv(t, &database.DB{SQL: db.SQL, Dialect: db.Dialect, Ent: observed})
		token := env.tokenFor("developer")
		for range 3 {
			env.request(http.MethodPost, "/api/v1/payments", token, paymentBody("10.00", "USD", "4242424242424242"))
		}
		counts.Store(0)

		r := env.request(http.MethodGet, "/api/v1/payments?limit=2", token, nil)
		if data, _ := r.body["data"].([]any); len(data) != 2 || r.body["has_more"] != true || fmt.Sprint(data[0].(map[string]any)["amount"]) != "10.00" {
			t.Errorf("REST page = %s", r.raw)
		}
		if n := counts.Swap(0); n != 0 {
			t.Errorf("a REST page ran %d counts", n)
		}
		for _, query := range []string{
			`{ payments(first: 2) { edges { node { id amount } } pageInfo { hasNextPage endCursor } } }`,
			`{ payments(first: 2) { ...page } } fragment page on PaymentConnection { edges { node { id amount } } pageInfo { hasNextPage endCursor } }`,
		} {
			data := env.mustGraphQL(token, query, nil)
			if edges, _ := get(data, "payments", "edges").([]any); len(edges) != 2 || get(data, "payments", "pageInfo", "hasNextPage") != true ||
				get(data, "payments", "pageInfo", "endCursor") == nil || get(data, "payments", "edges", 0, "node", "amount") != "10.00" {
				t.Errorf("%s = %v", query, data)
			}
			if n := counts.Swap(0); n != 0 {
				t.Errorf("%s ran %d counts", query, n)
			}
		}
		data := env.mustGraphQL(token, `{ payments(first: 2) { totalCount pageInfo { hasNextPage } edges { node { id } } } }`, nil)
		if fmt.Sprint(get(data, "payments", "totalCount")) != "3" || get(data, "payments", "pageInfo", "hasNextPage") != true {
			t.Errorf("with totalCount = %v", data)
		}
		if n := counts.Swap(0); n != 1 {
			t.Errorf("a page with totalCount ran %d counts, want 1", n)
		}

		// Whatever the selection's shape, the answers are those of the whole connection.
		for _, tc := range []struct{ query, path, want string }{
			// No edges: the page info comes from the count.
			{`{ payments(first: 1) { pageInfo { hasNextPage } } }`, "payments.pageInfo.hasNextPage", "true"},
			{`{ payments(first: 1) { edges @skip(if: true) { cursor } pageInfo { hasNextPage } } }`, "payments.pageInfo.hasNextPage", "true"},
			// Aliases: Paginate looks fields up by alias.
			{`{ payments(first: 2) { t: totalCount pageInfo { hasNextPage } edges { cursor } } }`, "payments.t", "3"},
			{`{ payments(first: 2) { t: totalCount } }`, "payments.t", "3"},
			{`{ payments(first: 2) { e: edges { node { id } } pageInfo { hasNextPage } } }`, "payments.e.1.node.id", "pay_"},
			{`{ payments(first: 2) { e: edges { node { id } } pageInfo { hasNextPage } } }`, "payments.pageInfo.hasNextPage", "true"},
			// Two connections in one query, each with its own selection.
			{`{ a: payments(first: 1) { totalCount pageInfo { hasNextPage } } b: payments(first: 3) { edges { node { amount } } pageInfo { hasNextPage } } }`, "b.edges.2.node.amount", "10.00"},
			{`{ a: payments(first: 1) { totalCount pageInfo { hasNextPage } } b: payments(first: 3) { edges { node { amount } } pageInfo { hasNextPage } } }`, "a.totalCount", "3"},
			{`{ a: payments(first: 1) { totalCount pageInfo { hasNextPage } } b: payments(first: 3) { edges { node { amount } } pageInfo { hasNextPage } } }`, "b.pageInfo.hasNextPage", "false"},
			// Backwards.
			{`{ payments(last: 2) { edges { node { id } } pageInfo { hasPreviousPage hasNextPage } } }`, "payments.pageInfo.hasPreviousPage", "true"},
		} {
			data := env.mustGraphQL(token, tc.query, nil)
			var at any = data
			for _, step := range strings.Split(tc.path, ".") {
				if i, err := strconv.Atoi(step); err == nil {
					at = get(at, i)
				} else {
					at = get(at, step)
				}
			}
			if got := fmt.Sprint(at); !strings.HasPrefix(got, tc.want) {
				t.Errorf("%s: %s = %s, want %s (%v)", tc.query, tc.path, got, tc.want, data)
			}
		}
	})
}

// TestPaymentsNewestFirstByDefault: GraphQL's payments without orderBy lists newest first, as
// REST does, and its cursors page forwards and backwards from any page; they are the cursors of
// orderBy {CREATED_AT, DESC}, which takes them.
func TestPaymentsNewestFirstByDefault(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		token := env.tokenFor("viewer")
		var made []string
		for i, card := range []string{"4242424242424242", "4000000000000002", "4242424242424242", "4242424242424242", "4000000000000002"} {
			r := env.request(http.MethodPost, "/api/v1/payments", env.tokenFor("developer"), paymentBody(fmt.Sprintf("%d.00", i+1), "USD", card))
			made = append([]string{str(get(r.data(), "id"))}, made...) // newest first
		}
		if rest, _ := env.listIDs(token, "/api/v1/payments?limit=5"); !slices.Equal(rest, made) {
			t.Fatalf("REST lists %v, made (newest first) %v", rest, made)
		}

		type page struct {
			ids                          []string
			hasNext, hasPrevious         bool
			startCursor, endCursor, args string
		}
		list := func(args string) page {
			t.Helper()
			data := env.mustGraphQL(token, `{ payments(`+args+`) { pageInfo { hasNextPage hasPreviousPage startCursor endCursor } edges { node { id } } } }`, nil)
			p := page{args: args, hasNext: get(data, "payments", "pageInfo", "hasNextPage") == true,
				hasPrevious: get(data, "payments", "pageInfo", "hasPreviousPage") == true,
				startCursor: str(get(data, "payments", "pageInfo", "startCursor")), endCursor: str(get(data, "payments", "pageInfo", "endCursor"))}
			for _, edge := range get(data, "payments", "edges").([]any) {
				p.ids = append(p.ids, str(get(edge, "node", "id")))
			}
			return p
		}
		check := func(p page, want []string, hasNext, hasPrevious bool) {
			t.Helper()
			if !slices.Equal(p.ids, want) || p.hasNext != hasNext || p.hasPrevious != hasPrevious {
				t.Errorf("payments(%s) = %v next %v previous %v, want %v next %v previous %v", p.args, p.ids, p.hasNext, p.hasPrevious, want, hasNext, hasPrevious)
			}
		}

		// Forwards. A page after a cursor has pages before it, and one before a cursor pages after.
		first := list(`first: 2`)
		check(first, made[0:2], true, false)
		second := list(`first: 2, after: "` + first.endCursor + `"`)
		check(second, made[2:4], true, true)
		third := list(`first: 2, after: "` + second.endCursor + `"`)
		check(third, made[4:5], false, true)
		// Backwards, from the last page and from the middle one.
		check(list(`last: 2, before: "`+third.startCursor+`"`), made[2:4], true, true)
		check(list(`last: 2, before: "`+second.startCursor+`"`), made[0:2], true, false)
		check(list(`last: 2`), made[3:5], false, true)
		// The default's cursors are those of the order it stands for.
		check(list(`first: 2, after: "`+first.endCursor+`", orderBy: {field: CREATED_AT, direction: DESC}`), made[2:4], true, true)
	})
}

// pageReader reads a page of at most limit items: after the id after or, given before, the last
// before the id before.
type pageReader func(t *testing.T, limit int, after, before string) (ids []string, more bool)

// pageThrough reads a list two items a page, forwards from its start and backwards from its last
// item, and checks that each reading is want, no item lost or repeated: a page says more lie beyond
// it, in the direction it was read, exactly when they do.
func pageThrough(t *testing.T, name string, want []string, read pageReader) {
	t.Helper()
	const limit = 2
	var forwards []string
	for more, after := true, ""; more; {
		var ids []string
		ids, more = read(t, limit, after, "")
		if len(ids) == 0 || more && len(ids) != limit || len(forwards)+len(ids) > len(want) {
			t.Fatalf("%s: the page after %q = %v, more %v; read so far %v of %v", name, after, ids, more, forwards, want)
		}
		forwards = append(forwards, ids...)
		after = ids[len(ids)-1]
	}
	if !slices.Equal(forwards, want) {
		t.Errorf("%s forwards = %v, want %v", name, forwards, want)
	}
	backwards := want[len(want)-1:]
	for more := true; more; {
		var ids []string
		ids, more = read(t, limit, "", backwards[0])
		if len(ids) == 0 || more && len(ids) != limit || len(backwards)+len(ids) > len(want) {
			t.Fatalf("%s: the page before %s = %v, more %v; read so far %v of %v", name, backwards[0], ids, more, backwards, want)
		}
		backwards = slices.Concat(ids, backwards)
	}
	if !slices.Equal(backwards, want) {
		t.Errorf("%s backwards = %v, want %v", name, backwards, want)
	}
}

// restPages reads the REST list at path with limit, starting_after and ending_before.
func restPages(env *testEnv, token, path string) pageReader {
	return func(t *testing.T, limit int, after, before string) ([]string, bool) {
		t.Helper()
		query := url.Values{"limit": {strconv.Itoa(limit)}}
		if after != "" {
			query.Set("starting_after", after)
		}
		if before != "" {
			query.Set("ending_before", before)
		}
		return env.listIDs(token, path+"?"+query.Encode())
	}
}

// graphQLPages reads the GraphQL list field, whose page holds its items in itemsField, with
// first and after or, given before, last and before.
func graphQLPages(env *testEnv, token, field, itemsField string) pageReader {
	return func(t *testing.T, limit int, after, before string) ([]string, bool) {
		t.Helper()
		args := fmt.Sprintf("first: %d", limit)
		switch {
		case after != "":
			args += fmt.Sprintf(", after: %q", after)
		case before != "":
			args = fmt.Sprintf("last: %d, before: %q", limit, before)
		}
		data := env.mustGraphQL(token, fmt.Sprintf("{ %s(%s) { %s { id } hasMore } }", field, args, itemsField), nil)
		return idsOf(get(data, field, itemsField)), get(data, field, "hasMore") == true
	}
}

// TestPaginationOfListsOrderedByID: users, API keys and merchants page by id as every other list
// pages, over REST (limit, starting_after, ending_before, has_more) and GraphQL (first, after,
// last, before, hasMore), forwards and backwards with nothing lost or repeated; a key's list is
// still the caller's own unless they manage users. A parameter REST does not know, both cursors at
// once, or a cursor the caller does not list is refused, naming the parameter.
func TestPaginationOfListsOrderedByID(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin := env.tokenFor("admin") // the platform's: lists the merchants, and every key of its own merchant
		developer := env.tokenFor("developer")
		for i := range 5 {
			for _, made := range []response{
				env.request(http.MethodPost, "/api/v1/users", admin, map[string]any{"email": prefixid.New("user") + "@example.com", "password": "correct horse battery staple", "role": "viewer"}),
				env.request(http.MethodPost, "/api/v1/merchants", admin, map[string]any{"name": fmt.Sprintf("Merchant %d", i)}),
			} {
				if made.status != http.StatusCreated {
					t.Fatalf("making: %d %s", made.status, made.raw)
				}
			}
			env.apiKey(admin, "payments:read")
		}
		for range 4 {
			env.apiKey(developer, "payments:read")
		}

		ctx := databasetest.AsMerchant()
		users, err := db.Ent.User.Query().Order(ent.Asc(user.FieldID)).IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := db.Ent.APIKey.Query().Order(ent.Asc(apikey.FieldID)).IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ownKeys, err := db.Ent.APIKey.Query().Where(apikey.UserID(env.subjectOf(developer))).Order(ent.Asc(apikey.FieldID)).IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		merchants, err := db.Ent.Merchant.Query().Order(ent.Asc(merchant.FieldID)).IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(users) < 7 || len(keys) != 9 || len(ownKeys) != 4 || len(merchants) != 6 {
			t.Fatalf("%d users, %d keys (%d the developer's), %d merchants", len(users), len(keys), len(ownKeys), len(merchants))
		}

		lists := []struct {
			path, field, items, token string
			want                      []string
		}{
			{"/api/v1/users", "users", "users", admin, users},
			{"/api/v1/api-keys", "apiKeys", "keys", admin, keys},
			{"/api/v1/api-keys", "apiKeys", "keys", developer, ownKeys},
			{"/api/v1/merchants", "merchants", "merchants", admin, merchants},
		}
		for _, list := range lists {
			pageThrough(t, "GET "+list.path, list.want, restPages(env, list.token, list.path))
			pageThrough(t, list.field, list.want, graphQLPages(env, list.token, list.field, list.items))

			// GraphQL reads the last page without a cursor, and a page between two.
			data := env.mustGraphQL(list.token, fmt.Sprintf("{ %s(last: 2) { %s { id } hasMore } }", list.field, list.items), nil)
			if got := idsOf(get(data, list.field, list.items)); !slices.Equal(got, list.want[len(list.want)-2:]) || get(data, list.field, "hasMore") != true {
				t.Errorf("%s(last: 2) = %v", list.field, data)
			}
			data = env.mustGraphQL(list.token, fmt.Sprintf("{ %s(after: %q, before: %q, first: 5) { %s { id } hasMore } }", list.field, list.want[0], list.want[3], list.items), nil)
			if got := idsOf(get(data, list.field, list.items)); !slices.Equal(got, list.want[1:3]) || get(data, list.field, "hasMore") != false {
				t.Errorf("%s between %s and %s = %v", list.field, list.want[0], list.want[3], data)
			}

			for query, param := range map[string]string{
				"?limit=2&page=2": "page",
				"?limit=0":        "limit",
				"?limit=101":      "limit",
				"?limit=x":        "limit",
				"?starting_after=" + list.want[0] + "&ending_before=" + list.want[2]: "ending_before",
				"?starting_after=nobody": "starting_after",
				"?ending_before=nobody":  "ending_before",
			} {
				r := env.request(http.MethodGet, list.path+query, list.token, nil)
				if code, got := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || got != param {
					t.Errorf("GET %s%s = %d %s, want invalid_request naming %s", list.path, query, r.status, r.raw, param)
				}
			}
			for args, param := range map[string]string{"first: 1, last: 1": "last", "first: 0": "first", "last: 101": "last"} {
				_, errs := env.graphql(list.token, fmt.Sprintf("{ %s(%s) { hasMore } }", list.field, args), nil)
				if len(errs) != 1 || errs[0].code() != "invalid_request" || errs[0].Extensions["param"] != param {
					t.Errorf("%s(%s) = %+v, want invalid_request naming %s", list.field, args, errs, param)
				}
			}
		}

		// A key the developer does not list is no place for them to page from.
		adminsKey := keys[slices.IndexFunc(keys, func(id string) bool { return !slices.Contains(ownKeys, id) })]
		for _, param := range []string{"starting_after", "ending_before"} {
			r := env.request(http.MethodGet, "/api/v1/api-keys?"+param+"="+adminsKey, developer, nil)
			if code, got := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || got != param {
				t.Errorf("the developer paging from the admin's key with %s = %d %s", param, r.status, r.raw)
			}
		}
	})
}

// idsOf lists the ids of a list of objects.
func idsOf(items any) []string {
	var ids []string
	for _, item := range items.([]any) {
		ids = append(ids, str(get(item, "id")))
	}
	return ids
}
