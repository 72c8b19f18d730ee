package app

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
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
