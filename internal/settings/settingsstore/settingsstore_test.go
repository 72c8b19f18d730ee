package settingsstore

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/settings"
)

var providers = []string{"stripe", "adyen", "checkout"}

// preferred are the currencies Paygate's providers take first.
var preferred = map[string][]string{"adyen": {"EUR"}, "checkout": {"GBP"}}

var at = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return at }

func apiCode(err error) (apierror.Code, string) {
	if apiErr, ok := errors.AsType[*apierror.Error](err); ok {
		return apiErr.Code, apiErr.Param
	}
	return "", ""
}

// withoutAuthor is doc as the client sends it: who wrote it and when are the store's to say.
func withoutAuthor(doc settings.Document) settings.Document {
	doc.UpdatedAt, doc.UpdatedBy = nil, ""
	return doc
}

func sameDocument(t *testing.T, what string, got, want settings.Document) {
	t.Helper()
	got, want = withoutAuthor(got), withoutAuthor(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %s, want %s", what, mustJSON(t, got), mustJSON(t, want))
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// edited is the document in force with one change: a rule for yen.
func edited(s *Store) settings.Document {
	doc := s.Current()
	doc.Routing.Rules = append(append([]settings.Rule{}, doc.Routing.Rules...),
		settings.Rule{Name: "jpy", Currency: []string{"JPY"}, Providers: []settings.Weighted{{Provider: "stripe", Weight: 1}}})
	return doc
}

func TestFirstChangeKeepsTheDefaultAsVersionOne(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := context.Background()
		store := New(db.Ent, providers, settings.Default(providers, preferred), clock)
		if err := store.Load(ctx); err != nil {
			t.Fatal(err)
		}
		current := store.Current()
		if current.Version != 1 || current.UpdatedAt != nil || current.UpdatedBy != "" {
			t.Errorf("before any change: version %d, updated %v by %q", current.Version, current.UpdatedAt, current.UpdatedBy)
		}
		sameDocument(t, "before any change", current, settings.Default(providers, preferred))
		if history, err := store.History(ctx, nil, nil); err != nil || len(history) != 0 {
			t.Errorf("history before any change = %v, %v", history, err)
		}

		change := edited(store)
		sent := change
		sent.UpdatedBy = "usr_forged" // ignored: the store says who
		updated, err := store.Update(ctx, sent, "usr_admin")
		if err != nil {
			t.Fatal(err)
		}
		change.Version = 2
		sameDocument(t, "updated", updated, change)
		if updated.UpdatedBy != "usr_admin" || updated.UpdatedAt == nil || !updated.UpdatedAt.Equal(at) {
			t.Errorf("updated by %q at %v", updated.UpdatedBy, updated.UpdatedAt)
		}
		if got := store.Current(); !reflect.DeepEqual(got, updated) {
			t.Errorf("in force after the change: %s, want %s", mustJSON(t, got), mustJSON(t, updated))
		}

		history, err := store.History(ctx, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(history) != 2 {
			t.Fatalf("history has %d versions, want 2", len(history))
		}
		newest, first := history[0], history[1]
		if newest.Version != 2 || newest.ChangedBy != "usr_admin" || !newest.ChangedAt.Equal(at) || newest.Previous == nil {
			t.Errorf("newest = %+v", newest)
		} else {
			sameDocument(t, "newest", newest.Document, change)
			sameDocument(t, "newest's previous", *newest.Previous, settings.Default(providers, preferred))
		}
		if first.Version != 1 || first.ChangedBy != SystemAuthor || first.Previous != nil || first.Document.UpdatedBy != SystemAuthor {
			t.Errorf("first = %+v", first)
		}

		// Another server, started now, loads what is stored.
		other := New(db.Ent, providers, settings.Default(providers, preferred), clock)
		if err := other.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if got := other.Current(); !reflect.DeepEqual(got, updated) {
			t.Errorf("loaded: %s, want %s", mustJSON(t, got), mustJSON(t, updated))
		}
	})
}

func TestRefusedChangesChangeNothing(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := context.Background()
		store := New(db.Ent, providers, settings.Default(providers, preferred), clock)
		if _, err := store.Update(ctx, edited(store), "usr_admin"); err != nil {
			t.Fatal(err)
		}
		before := store.Current()
		for _, tc := range []struct {
			name   string
			change func(*settings.Document)
			code   apierror.Code
			param  string
		}{
			{"unknown provider", func(c *settings.Document) { c.Routing.Fallback = []string{"paypal"} }, apierror.InvalidRequest, "routing.fallback[0]"},
			{"weight 0", func(c *settings.Document) { c.Routing.Rules[0].Providers[0].Weight = 0 }, apierror.InvalidRequest, "routing.rules[0].providers[0].weight"},
			{"version 0", func(c *settings.Document) { c.Version = 0 }, apierror.InvalidRequest, "version"},
			{"stale", func(c *settings.Document) { c.Version = 1 }, apierror.InvalidState, ""},
			{"from the future", func(c *settings.Document) { c.Version = 7 }, apierror.InvalidState, ""},
		} {
			doc := store.Current()
			doc.Routing.Rules = append([]settings.Rule{}, doc.Routing.Rules...)
			doc.Routing.Rules[0].Providers = append([]settings.Weighted{}, doc.Routing.Rules[0].Providers...)
			tc.change(&doc)
			_, err := store.Update(ctx, doc, "usr_admin")
			if code, param := apiCode(err); code != tc.code || param != tc.param {
				t.Errorf("%s: %v, want %s %q", tc.name, err, tc.code, tc.param)
			}
		}
		if got := store.Current(); !reflect.DeepEqual(got, before) {
			t.Errorf("in force after refusals: %s, want %s", mustJSON(t, got), mustJSON(t, before))
		}
		if history, err := store.History(ctx, nil, nil); err != nil || len(history) != 2 {
			t.Errorf("history after refusals: %d versions, %v; want 2", len(history), err)
		}
	})
}

func TestHistoryPages(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := context.Background()
		store := New(db.Ent, providers, settings.Default(providers, preferred), clock)
		for range 4 { // versions 1 (the default) to 5
			doc := store.Current()
			doc.RateLimits.PerSecond++
			if _, err := store.Update(ctx, doc, "usr_admin"); err != nil {
				t.Fatal(err)
			}
		}
		versions := func(first, before *int) []int {
			t.Helper()
			page, err := store.History(ctx, first, before)
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, change := range page {
				got = append(got, change.Version)
				if change.Document.Version != change.Version || (change.Version > 1) != (change.Previous != nil) ||
					change.Previous != nil && change.Previous.Version != change.Version-1 {
					t.Errorf("version %d: document %d, previous %v", change.Version, change.Document.Version, change.Previous)
				}
			}
			return got
		}
		two, three := 2, 3
		for _, tc := range []struct {
			first, before *int
			want          []int
		}{
			{nil, nil, []int{5, 4, 3, 2, 1}},
			{&two, nil, []int{5, 4}},
			{&two, &three, []int{2, 1}},
			{nil, &two, []int{1}},
		} {
			if got := versions(tc.first, tc.before); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("first %v before %v = %v, want %v", tc.first, tc.before, got, tc.want)
			}
		}
		zero, tooMany := 0, MaxHistoryPage+1
		for _, tc := range []struct {
			first, before *int
			param         string
		}{{&zero, nil, "first"}, {&tooMany, nil, "first"}, {nil, &zero, "before"}} {
			_, err := store.History(ctx, tc.first, tc.before)
			if code, param := apiCode(err); code != apierror.InvalidRequest || param != tc.param {
				t.Errorf("first %v before %v: %v, want invalid_request about %s", tc.first, tc.before, err, tc.param)
			}
		}
	})
}

// TestOneOfTwoConcurrentChangesWins: two servers change the document from the same version at
// once, the first change of all (both also store the default) and a later one: one is stored,
// the other refused as stale. Run with -count=20.
func TestOneOfTwoConcurrentChangesWins(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		ctx := context.Background()
		stores := []*Store{New(pools[0].Ent, providers, settings.Default(providers, preferred), clock), New(pools[1].Ent, providers, settings.Default(providers, preferred), clock)}
		for round, from := range []int{1, 2} {
			doc := stores[0].Current()
			if doc.Version != from {
				t.Fatalf("round %d: version %d in force, want %d", round, doc.Version, from)
			}
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, store := range stores {
				wg.Go(func() {
					change := doc
					change.RateLimits.PerSecond = 100 + i
					_, errs[i] = store.Update(ctx, change, "usr_"+string(rune('a'+i)))
				})
			}
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch code, _ := apiCode(err); {
				case err == nil:
					won = i
				case code != apierror.InvalidState:
					t.Fatalf("round %d, server %d: %v", round, i, err)
				}
			}
			if won < 0 || errs[1-won] == nil {
				t.Fatalf("round %d: %v, want exactly one change stored", round, errs)
			}
			for _, store := range stores {
				if err := store.Load(ctx); err != nil {
					t.Fatal(err)
				}
				if got := store.Current(); got.Version != from+1 || got.RateLimits.PerSecond != 100+won {
					t.Errorf("round %d: in force version %d with per_second %d, want %d and %d", round, got.Version, got.RateLimits.PerSecond, from+1, 100+won)
				}
			}
		}
	})
}

// eventually polls until cond holds, failing the test after 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRefreshLoadsChangesMadeElsewhere(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		ctx := context.Background()
		a, b := New(pools[0].Ent, providers, settings.Default(providers, preferred), clock), New(pools[1].Ent, providers, settings.Default(providers, preferred), clock)
		for _, perSecond := range []int{150, 175} {
			doc := a.Current()
			doc.RateLimits.PerSecond = perSecond
			updated, err := a.Update(ctx, doc, "usr_admin")
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, "the change is not in force on the other server", func() bool { b.Refresh(ctx); return b.Current().Version == updated.Version })
			if got := b.Current(); !reflect.DeepEqual(got, updated) {
				t.Errorf("in force on the other server: %s, want %s", mustJSON(t, got), mustJSON(t, updated))
			}
		}

		// The database lost: the poll fails, and the last document read stays.
		last := b.Current()
		pools[1].Close()
		if err := b.Refresh(ctx); err == nil {
			t.Error("a refresh without its database succeeded")
		}
		if got := b.Current(); !reflect.DeepEqual(got, last) {
			t.Errorf("in force after a failed poll: %s, want %s", mustJSON(t, got), mustJSON(t, last))
		}
	})
}
