package app

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/state"
)

// neverServed is in every test event's payload: no answer may hold it.
const neverServed = "never-served-payload"

// loggedEvent is a stored webhook event as the worker would have left it.
type loggedEvent struct {
	provider, eventType string
	status              state.WebhookStatus
	received            time.Time
	// latency is from receipt to processing, for a processed or ignored event.
	latency time.Duration
}

// servesNoPayload fails the test when an answer holds an event's payload, or a field named so.
func servesNoPayload(t *testing.T, what, raw string) {
	t.Helper()
	if strings.Contains(raw, neverServed) || strings.Contains(strings.ToLower(raw), "payload") {
		t.Errorf("%s serves the payload: %s", what, raw)
	}
}

// loggedEventFields selects every field of a webhook event over GraphQL.
const loggedEventFields = `fragment E on WebhookEvent { id provider eventID type status attempts nextAttemptAt lastError ignoredReason paymentID receivedAt processedAt }`

// sameLoggedEvent reports how a REST event and its GraphQL twin differ, if they do.
func sameLoggedEvent(restEvent, gqlEvent any) error {
	for restName, gqlName := range map[string]string{"id": "id", "provider": "provider", "event_id": "eventID", "type": "type",
		"attempts": "attempts", "last_error": "lastError", "ignored_reason": "ignoredReason", "payment_id": "paymentID"} {
		if r, g := get(restEvent, restName), get(gqlEvent, gqlName); str(r) != str(g) || (r == nil) != (g == nil) {
			return fmt.Errorf("%s: REST %v, GraphQL %s %v", restName, r, gqlName, g)
		}
	}
	if r, g := str(get(restEvent, "status")), str(get(gqlEvent, "status")); strings.ToUpper(r) != g || r == "" {
		return fmt.Errorf("status: REST %s, GraphQL %s", r, g)
	}
	for restName, gqlName := range map[string]string{"next_attempt_at": "nextAttemptAt", "received_at": "receivedAt", "processed_at": "processedAt"} {
		r, g := get(restEvent, restName), get(gqlEvent, gqlName)
		if r == nil || g == nil {
			if r != nil || g != nil {
				return fmt.Errorf("%s: REST %v, GraphQL %v", restName, r, g)
			}
			continue
		}
		rt, rErr := time.Parse(time.RFC3339Nano, str(r))
		gt, gErr := time.Parse(time.RFC3339Nano, str(g))
		if rErr != nil || gErr != nil || !rt.Equal(gt) {
			return fmt.Errorf("%s: REST %v, GraphQL %v", restName, r, g)
		}
	}
	return nil
}

// TestWebhookLogsListFiltersAndPages: the logs list newest first, narrowed by provider, status,
// type and when received, paged both ways with has_more right; bad filters are refused naming
// the parameter; GraphQL lists the same events with the same fields.
func TestWebhookLogsListFiltersAndPages(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		viewer := env.staffToken("viewer")
		base := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
		var ids []string // oldest first
		for i, ev := range []loggedEvent{
			{provider: "stripe", eventType: "payment_intent.succeeded", status: state.WebhookProcessed, latency: 40 * time.Millisecond},
			{provider: "adyen", eventType: "AUTHORISATION", status: state.WebhookFailed},
			{provider: "checkout", eventType: "payment_approved", status: state.WebhookDead},
			{provider: "stripe", eventType: "charge.refunded", status: state.WebhookIgnored, latency: 5 * time.Millisecond},
			{provider: "stripe", eventType: "payment_intent.succeeded", status: state.WebhookReceived},
		} {
			ev.received = base.Add(time.Duration(i) * time.Minute)
			ids = append(ids, env.storeLoggedEvent(ev).ID)
		}
		newestFirst := func(indexes ...int) string {
			var want []string
			for _, i := range indexes {
				want = append(want, ids[i])
			}
			return strings.Join(want, ",")
		}
		at := func(minutes int) string {
			return base.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339Nano)
		}

		for query, want := range map[string]string{
			"":                               newestFirst(4, 3, 2, 1, 0),
			"?provider=stripe":               newestFirst(4, 3, 0),
			"?status=dead":                   newestFirst(2),
			"?type=payment_intent.succeeded": newestFirst(4, 0),
			"?created_gte=" + at(2):          newestFirst(4, 3, 2),
			"?created_lte=" + at(1):          newestFirst(1, 0),
			"?created_gte=" + at(1) + "&created_lte=" + at(3):           newestFirst(3, 2, 1),
			"?created_lte=" + fmt.Sprint(base.Add(-time.Minute).Unix()): "",
			"?provider=stripe&status=ignored":                           newestFirst(3),
			"?provider=adyen&type=AUTHORISATION":                        newestFirst(1),
		} {
			if got, more := env.listIDs(viewer, "/api/v1/webhooks/logs"+query); strings.Join(got, ",") != want || more {
				t.Errorf("list %s = %v more=%v, want %s", query, got, more, want)
			}
		}

		for _, tc := range []struct {
			query, want string
			more        bool
		}{
			{"?limit=2", newestFirst(4, 3), true},
			{"?limit=2&starting_after=" + ids[3], newestFirst(2, 1), true},
			{"?limit=2&starting_after=" + ids[1], newestFirst(0), false},
			{"?limit=2&ending_before=" + ids[1], newestFirst(3, 2), true},
			{"?limit=2&ending_before=" + ids[3], newestFirst(4), false},
			{"?provider=stripe&limit=2", newestFirst(4, 3), true},
			{"?provider=stripe&limit=2&starting_after=" + ids[3], newestFirst(0), false},
			{"?provider=stripe&limit=2&ending_before=" + ids[0], newestFirst(4, 3), false},
		} {
			if got, more := env.listIDs(viewer, "/api/v1/webhooks/logs"+tc.query); strings.Join(got, ",") != tc.want || more != tc.more {
				t.Errorf("list %s = %v more=%v, want %s more=%v", tc.query, got, more, tc.want, tc.more)
			}
		}

		for query, param := range map[string]string{
			"?provider=paypal":                  "provider",
			"?status=processing":                "status",
			"?status=DEAD":                      "status",
			"?type=" + strings.Repeat("x", 255): "type",
			"?created_gte=monday":               "created_gte",
			"?created_lte=1.5":                  "created_lte",
			"?colour=red":                       "colour",
			"?limit=0":                          "limit",
			"?limit=101":                        "limit",
			"?limit=x":                          "limit",
			"?starting_after=whe_missing":       "starting_after",
			"?ending_before=" + ids[4] + "&starting_after=" + ids[0]: "ending_before",
		} {
			r := env.request(http.MethodGet, "/api/v1/webhooks/logs"+query, viewer, nil)
			if code, got := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || got != param {
				t.Errorf("list %.60s = %d %s, want invalid_request naming %s", query, r.status, r.raw, param)
			}
		}

		// GraphQL: the same events, newest first by default, paged by cursor both ways.
		page := func(args string) ([]string, map[string]any) {
			data := env.mustGraphQL(viewer, `{ webhookEvents(`+args+`) { edges { node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`, nil)
			var got []string
			for _, edge := range get(data, "webhookEvents", "edges").([]any) {
				got = append(got, str(get(edge, "node", "id")))
			}
			return got, get(data, "webhookEvents", "pageInfo").(map[string]any)
		}
		got, info := page("first: 2")
		if strings.Join(got, ",") != newestFirst(4, 3) || info["hasNextPage"] != true {
			t.Errorf("first page = %v %v", got, info)
		}
		got, info = page(fmt.Sprintf("first: 3, after: %q", info["endCursor"]))
		if strings.Join(got, ",") != newestFirst(2, 1, 0) || info["hasNextPage"] != false {
			t.Errorf("page after = %v %v", got, info)
		}
		got, info = page(fmt.Sprintf("last: 2, before: %q", info["startCursor"]))
		if strings.Join(got, ",") != newestFirst(4, 3) || info["hasPreviousPage"] != false {
			t.Errorf("page before = %v %v", got, info)
		}
		if got, _ = page(`where: {provider: "stripe", statusIn: [IGNORED, RECEIVED]}`); strings.Join(got, ",") != newestFirst(4, 3) {
			t.Errorf("where = %v", got)
		}
		if got, _ = page(`first: 1, orderBy: {field: RECEIVED_AT, direction: ASC}`); strings.Join(got, ",") != newestFirst(0) {
			t.Errorf("oldest first = %v", got)
		}
		// A cursor of the payments' default order, by id alone.
		var idCursor strings.Builder
		ent.Cursor{ID: ids[0]}.MarshalGQL(&idCursor)
		deep := `{provider: "stripe"}`
		for range 6 {
			deep = `{not: ` + deep + `}`
		}
		for _, args := range []string{"first: 101", "first: 1, last: 1", "where: " + deep, "after: " + idCursor.String()} {
			data, errs := env.graphql(viewer, `{ webhookEvents(`+args+`) { totalCount } }`, nil)
			if len(errs) != 1 || errs[0].code() != "invalid_request" {
				t.Errorf("webhookEvents(%.40s) = %v %+v, want invalid_request", args, data, errs)
			}
		}

		// Both surfaces, field by field, and never a payload.
		rest := env.request(http.MethodGet, "/api/v1/webhooks/logs", viewer, nil)
		servesNoPayload(t, "the REST list", rest.raw)
		data := env.mustGraphQL(viewer, `{ webhookEvents { totalCount edges { node { ...E } } } } `+loggedEventFields, nil)
		servesNoPayload(t, "the GraphQL list", mustJSON(t, data))
		restItems, gqlEdges := rest.body["data"].([]any), get(data, "webhookEvents", "edges").([]any)
		if len(restItems) != 5 || len(gqlEdges) != 5 || str(get(data, "webhookEvents", "totalCount")) != "5" {
			t.Fatalf("REST %d events, GraphQL %d", len(restItems), len(gqlEdges))
		}
		for i := range restItems {
			if err := sameLoggedEvent(restItems[i], get(gqlEdges[i], "node")); err != nil {
				t.Errorf("event %d: %v", i, err)
			}
		}
		if first := restItems[4]; str(get(first, "object")) != "webhook_event" || str(get(first, "status")) != "processed" ||
			str(get(first, "payment_id")) != "pay_logged" || get(first, "processed_at") == nil || get(first, "next_attempt_at") != nil ||
			get(first, "attempt_log") != nil {
			t.Errorf("a processed event in the list = %v", first)
		}
	})
}

// TestWebhookEventDetail: an event read by its id comes with every attempt, oldest first, over
// REST, GraphQL and node(id:), never with its payload; an unknown id is not_found.
func TestWebhookEventDetail(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		viewer := env.staffToken("viewer")
		received := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
		dead := env.storeLoggedEvent(loggedEvent{provider: "adyen", eventType: "REFUND", status: state.WebhookDead, received: received})
		fresh := env.storeLoggedEvent(loggedEvent{provider: "stripe", eventType: "refund.updated", status: state.WebhookReceived, received: received})
		// Stored out of order: the log is ordered by when each attempt was made.
		for _, a := range []struct {
			after  time.Duration
			status state.WebhookStatus
			err    string
			ms     int64
		}{{2 * time.Minute, state.WebhookDead, "database busy 3", 30}, {0, state.WebhookFailed, "database busy 1", 10}, {time.Minute, state.WebhookFailed, "database busy 2", 20}} {
			db.Ent.WebhookAttempt.Create().SetEventID(dead.ID).SetAt(received.Add(a.after)).SetStatus(a.status).
				SetError(a.err).SetDurationMs(a.ms).ExecX(databasetest.AsMerchant())
		}

		r := env.request(http.MethodGet, "/api/v1/webhooks/logs/"+dead.ID, viewer, nil)
		servesNoPayload(t, "the REST detail", r.raw)
		log, _ := get(r.data(), "attempt_log").([]any)
		if r.status != http.StatusOK || str(get(r.data(), "attempts")) != "8" || str(get(r.data(), "status")) != "dead" || len(log) != 3 {
			t.Fatalf("detail = %d %s", r.status, r.raw)
		}
		for i, a := range log {
			at, err := time.Parse(time.RFC3339Nano, str(get(a, "at")))
			if err != nil || !at.Equal(received.Add(time.Duration(i)*time.Minute)) || str(get(a, "error")) != fmt.Sprint("database busy ", i+1) ||
				str(get(a, "duration_ms")) != fmt.Sprint((i+1)*10) {
				t.Errorf("attempt %d = %v", i, a)
			}
		}
		if str(get(log, 0, "status")) != "failed" || str(get(log, 2, "status")) != "dead" {
			t.Errorf("attempt statuses = %v", log)
		}
		if r := env.request(http.MethodGet, "/api/v1/webhooks/logs/"+fresh.ID, viewer, nil); !strings.Contains(r.raw, `"attempt_log":[]`) {
			t.Errorf("an event without attempts = %s, want an empty attempt_log", r.raw)
		}

		query := `query($id: ID!) { webhookEvent(id: $id) { ...E attemptLog { at status error durationMs } } } ` + loggedEventFields
		data := env.mustGraphQL(viewer, query, map[string]any{"id": dead.ID})
		servesNoPayload(t, "the GraphQL detail", mustJSON(t, data))
		if err := sameLoggedEvent(r.data(), get(data, "webhookEvent")); err != nil {
			t.Error(err)
		}
		for i := range 3 {
			restAttempt, gqlAttempt := get(log, i), get(data, "webhookEvent", "attemptLog", i)
			if str(get(restAttempt, "error")) != str(get(gqlAttempt, "error")) || str(get(restAttempt, "duration_ms")) != str(get(gqlAttempt, "durationMs")) ||
				strings.ToUpper(str(get(restAttempt, "status"))) != str(get(gqlAttempt, "status")) {
				t.Errorf("attempt %d: REST %v, GraphQL %v", i, restAttempt, gqlAttempt)
			}
		}

		// node and nodes resolve whe_ ids, with the attempts in the same order.
		data = env.mustGraphQL(viewer, `query($id: ID!, $ids: [ID!]!) {
			node(id: $id) { id ... on WebhookEvent { status attemptLog { at error } } }
			nodes(ids: $ids) { id ... on WebhookEvent { provider } } }`, map[string]any{"id": dead.ID, "ids": []string{fresh.ID, dead.ID}})
		if str(get(data, "node", "status")) != "DEAD" || str(get(data, "node", "attemptLog", 0, "error")) != "database busy 1" ||
			str(get(data, "node", "attemptLog", 2, "error")) != "database busy 3" ||
			str(get(data, "nodes", 0, "provider")) != "stripe" || str(get(data, "nodes", 1, "provider")) != "adyen" {
			t.Errorf("node, nodes = %v", data)
		}

		if r := env.request(http.MethodGet, "/api/v1/webhooks/logs/whe_missing", viewer, nil); r.status != http.StatusNotFound {
			t.Errorf("unknown event = %d %s", r.status, r.raw)
		} else if code, param := r.errorCode(); code != "not_found" || param != "id" {
			t.Errorf("unknown event = %s", r.raw)
		}
		if _, errs := env.graphql(viewer, `{ webhookEvent(id: "whe_missing") { id } }`, nil); len(errs) != 1 || errs[0].code() != "not_found" {
			t.Errorf("unknown event over GraphQL = %+v", errs)
		}
		if data := env.mustGraphQL(viewer, `{ node(id: "whe_missing") { id } }`, nil); get(data, "node") != nil {
			t.Errorf("node of an unknown event = %v", data)
		}
	})
}

// TestRetryWebhookEvent: a failed or dead event is requeued (received, attempts from zero, due
// now, its last error and attempt log kept); any other is 409; a viewer may read but not retry.
func TestRetryWebhookEvent(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		viewer, operator := env.staffToken("viewer"), env.staffToken("operator")
		received := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
		event := func(status state.WebhookStatus) *ent.WebhookEvent {
			return env.storeLoggedEvent(loggedEvent{provider: "checkout", eventType: "payment_approved", status: status, received: received, latency: time.Second})
		}
		dead, failed := event(state.WebhookDead), event(state.WebhookFailed)
		db.Ent.WebhookAttempt.Create().SetEventID(dead.ID).SetAt(received).SetStatus(state.WebhookDead).SetError("database busy").
			SetDurationMs(5).ExecX(databasetest.AsMerchant())

		r := env.request(http.MethodPost, "/api/v1/webhooks/logs/"+dead.ID+"/retry", viewer, nil)
		if code, _ := r.errorCode(); r.status != http.StatusForbidden || code != "forbidden" || !strings.Contains(r.raw, "webhooks:manage") {
			t.Errorf("a viewer's retry = %d %s", r.status, r.raw)
		}
		if _, errs := env.graphql(viewer, `mutation($id: ID!) { retryWebhookEvent(id: $id) { id } }`, map[string]any{"id": dead.ID}); len(errs) != 1 ||
			errs[0].code() != "forbidden" || !strings.Contains(errs[0].Message, "webhooks:manage") {
			t.Errorf("a viewer's retry over GraphQL = %+v", errs)
		}
		if got := db.Ent.WebhookEvent.GetX(databasetest.AsMerchant(), dead.ID); got.Status != state.WebhookDead {
			t.Fatalf("refused retries changed the event: %s", got.Status)
		}

		before := time.Now()
		r = env.request(http.MethodPost, "/api/v1/webhooks/logs/"+dead.ID+"/retry", operator, nil)
		servesNoPayload(t, "the REST retry", r.raw)
		next, err := time.Parse(time.RFC3339Nano, str(get(r.data(), "next_attempt_at")))
		if r.status != http.StatusOK || str(get(r.data(), "status")) != "received" || str(get(r.data(), "attempts")) != "0" ||
			str(get(r.data(), "last_error")) != "database busy" || err != nil || next.Before(before.Add(-time.Second)) || next.After(time.Now()) {
			t.Errorf("retry of a dead event = %d %s", r.status, r.raw)
		}
		if r := env.request(http.MethodGet, "/api/v1/webhooks/logs/"+dead.ID, viewer, nil); len(get(r.data(), "attempt_log").([]any)) != 1 {
			t.Errorf("the attempt log after a retry = %s", r.raw)
		}
		data := env.mustGraphQL(operator, `mutation($id: ID!) { retryWebhookEvent(id: $id) { ...E } } `+loggedEventFields, map[string]any{"id": failed.ID})
		servesNoPayload(t, "the GraphQL retry", mustJSON(t, data))
		if str(get(data, "retryWebhookEvent", "status")) != "RECEIVED" || str(get(data, "retryWebhookEvent", "attempts")) != "0" ||
			str(get(data, "retryWebhookEvent", "lastError")) != "database busy" {
			t.Errorf("retry of a failed event = %v", data)
		}

		// The dead event was requeued: it waits for the worker now, like any received event.
		for _, id := range []string{dead.ID, event(state.WebhookReceived).ID, event(state.WebhookProcessed).ID, event(state.WebhookIgnored).ID} {
			r := env.request(http.MethodPost, "/api/v1/webhooks/logs/"+id+"/retry", operator, nil)
			if code, _ := r.errorCode(); r.status != http.StatusConflict || code != "invalid_state" || !strings.Contains(r.raw, "only a failed or dead") {
				t.Errorf("retry of %s = %d %s", id, r.status, r.raw)
			}
			if _, errs := env.graphql(operator, `mutation($id: ID!) { retryWebhookEvent(id: $id) { id } }`, map[string]any{"id": id}); len(errs) != 1 || errs[0].code() != "invalid_state" {
				t.Errorf("retry of %s over GraphQL = %+v", id, errs)
			}
		}
		if r := env.request(http.MethodPost, "/api/v1/webhooks/logs/whe_missing/retry", operator, nil); r.status != http.StatusNotFound {
			t.Errorf("retry of an unknown event = %d %s", r.status, r.raw)
		}
		if r := env.request(http.MethodPost, "/api/v1/webhooks/logs/"+failed.ID+"/retry", operator, `{"force": true}`); r.status != http.StatusBadRequest {
			t.Errorf("retry with a body = %d %s", r.status, r.raw)
		}
		if r := env.request(http.MethodGet, "/api/v1/webhooks/logs/"+failed.ID+"/retry", operator, nil); r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != "POST" {
			t.Errorf("GET of the retry route = %d %s", r.status, r.raw)
		}
	})
}

// TestConcurrentRetriesRequeueOnce: two servers asked at once to retry one dead event requeue
// it once; every other retry finds it requeued and answers 409.
func TestConcurrentRetriesRequeueOnce(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		operator := servers[0].staffToken("operator")
		dead := servers[0].storeLoggedEvent(loggedEvent{provider: "stripe", eventType: "charge.refunded", status: state.WebhookDead,
			received: time.Now().UTC().Add(-time.Hour)})
		const retries = 8
		var requeued, refused atomic.Int32
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range retries {
			wg.Go(func() {
				<-start
				r := servers[i%2].request(http.MethodPost, "/api/v1/webhooks/logs/"+dead.ID+"/retry", operator, nil)
				switch code, _ := r.errorCode(); {
				case r.status == http.StatusOK:
					requeued.Add(1)
				case r.status == http.StatusConflict && code == "invalid_state":
					refused.Add(1)
				default:
					t.Errorf("retry = %d %s", r.status, r.raw)
				}
			})
		}
		close(start)
		wg.Wait()
		if requeued.Load() != 1 || refused.Load() != retries-1 {
			t.Errorf("%d retries requeued, %d refused; want 1 and %d", requeued.Load(), refused.Load(), retries-1)
		}
		if got := pools[0].Ent.WebhookEvent.GetX(databasetest.AsMerchant(), dead.ID); got.Status != state.WebhookReceived || got.Attempts != 0 {
			t.Errorf("after the retries: %s, %d attempts", got.Status, got.Attempts)
		}
	})
}

// TestWebhookMetrics: each provider's counts and latencies are exact for a known set of events,
// the same over REST and GraphQL, signature refusals included; the counts take one query.
func TestWebhookMetrics(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		var queries atomic.Int32
		var groupBys atomic.Int32
		observed := ent.NewClient(ent.Driver(dialect.DebugWithContext(entsql.OpenDB(db.Dialect, db.SQL), func(_ context.Context, v ...any) {
			queries.Add(1)
			if strings.Contains(fmt.Sprint(v...), "GROUP BY") {
				groupBys.Add(1)
			}
		})))
		env := newTestEnv(t, &database.DB{SQL: db.SQL, Dialect: db.Dialect, Ent: observed})
		viewer := env.staffToken("viewer")
		received := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
		store := func(provider string, status state.WebhookStatus, latency time.Duration) {
			env.storeLoggedEvent(loggedEvent{provider: provider, eventType: "x", status: status, received: received, latency: latency})
		}
		for _, ms := range []int{400, 100, 300, 200} {
			store("stripe", state.WebhookProcessed, time.Duration(ms)*time.Millisecond)
		}
		store("stripe", state.WebhookIgnored, time.Hour) // not processed: no latency of it counts
		store("stripe", state.WebhookFailed, 0)
		store("stripe", state.WebhookFailed, 0)
		store("stripe", state.WebhookDead, 0)
		store("stripe", state.WebhookReceived, 0)
		store("adyen", state.WebhookProcessed, 1500*time.Millisecond)
		store("adyen", state.WebhookDead, 0)
		// A delivery refused for its signature counts; so does one the inbox reports.
		if r := env.request(http.MethodPost, "/webhooks/stripe", "", `{"id":"evt_unsigned"}`); r.status != http.StatusUnauthorized {
			t.Fatalf("unsigned delivery = %d %s", r.status, r.raw)
		}
		env.app.services.webhookLogs.SignatureFailures.Add("checkout")
		env.app.services.webhookLogs.SignatureFailures.Add("checkout")

		want := []string{
			"stripe received=9 processed=4 ignored=1 failed=2 dead=1 signature_failures=1 p50_ms=200 p99_ms=400",
			"adyen received=2 processed=1 ignored=0 failed=0 dead=1 signature_failures=0 p50_ms=1500 p99_ms=1500",
			"checkout received=0 processed=0 ignored=0 failed=0 dead=0 signature_failures=2 p50_ms=<nil> p99_ms=<nil>",
		}
		restNames := []string{"received", "processed", "ignored", "failed", "dead", "signature_failures", "p50_ms", "p99_ms"}
		gqlNames := []string{"received", "processed", "ignored", "failed", "dead", "signatureFailures", "p50Ms", "p99Ms"}
		describe := func(m any, names []string) string {
			parts := []string{str(get(m, "provider"))}
			for i, name := range names {
				parts = append(parts, fmt.Sprintf("%s=%v", restNames[i], get(m, name)))
			}
			return strings.Join(parts, " ")
		}

		queries.Store(0)
		groupBys.Store(0)
		r := env.request(http.MethodGet, "/api/v1/webhooks/metrics", viewer, nil)
		if n, g := queries.Load(), groupBys.Load(); g != 1 || n > 3 {
			t.Errorf("the metrics took %d queries, %d of them grouped; want one grouped and one per provider with latencies", n, g)
		}
		restMetrics, _ := r.body["data"].([]any)
		data := env.mustGraphQL(viewer, `{ webhookMetrics { provider received processed ignored failed dead signatureFailures p50Ms p99Ms } }`, nil)
		gqlMetrics, _ := get(data, "webhookMetrics").([]any)
		if r.status != http.StatusOK || len(restMetrics) != 3 || len(gqlMetrics) != 3 {
			t.Fatalf("metrics: REST %d %s, GraphQL %v", r.status, r.raw, data)
		}
		for i := range want {
			if got := describe(restMetrics[i], restNames); got != want[i] {
				t.Errorf("REST metrics %d = %s\nwant %s", i, got, want[i])
			}
			if got := describe(gqlMetrics[i], gqlNames); got != want[i] {
				t.Errorf("GraphQL metrics %d = %s\nwant %s", i, got, want[i])
			}
		}
		if !slices.Equal([]string{str(get(restMetrics, 0, "provider")), str(get(restMetrics, 1, "provider")), str(get(restMetrics, 2, "provider"))},
			[]string{"stripe", "adyen", "checkout"}) {
			t.Errorf("providers = %s", r.raw)
		}
	})
}
