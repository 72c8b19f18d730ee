package idempotency

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

func signedIn(subject string) context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{Subject: subject, UserID: subject, Role: "admin", Scopes: auth.ScopesOf("admin"), Merchant: tenant.DefaultMerchant, Home: tenant.DefaultMerchant})
}

func keyOf(t *testing.T, store *Store, ctx context.Context, op auth.Operation, key string, input any) *Key {
	t.Helper()
	k, err := store.For(ctx, op, &key, input)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestFingerprintIsKeyedAndNamesOperationAndInput(t *testing.T) {
	a := NewStore(nil, []byte("secret-a"), time.Now)
	b := NewStore(nil, []byte("secret-b"), time.Now)
	ctx := signedIn("usr_1")
	input := map[string]any{"amount": "1", "card": map[string]string{"number": "4242424242424242", "cvc": "123"}}
	fingerprint := keyOf(t, a, ctx, auth.CreatePayment, "k", input).Fingerprint
	if keyOf(t, a, ctx, auth.CreatePayment, "other", input).Fingerprint != fingerprint {
		t.Error("the same call under two keys has two fingerprints")
	}
	if keyOf(t, b, ctx, auth.CreatePayment, "k", input).Fingerprint == fingerprint {
		t.Error("the fingerprint does not depend on the secret")
	}
	if keyOf(t, a, ctx, auth.RefundPayment, "k", input).Fingerprint == fingerprint {
		t.Error("the operation is not part of the fingerprint")
	}
	if keyOf(t, a, ctx, auth.CreatePayment, "k", map[string]any{"amount": "2"}).Fingerprint == fingerprint {
		t.Error("the input is not part of the fingerprint")
	}
	if k := keyOf(t, a, ctx, auth.CreatePayment, "k", input); k.Principal != "usr_1" || k.Value != "k" {
		t.Errorf("key = %+v", k)
	}
	if k, err := a.For(ctx, auth.CreatePayment, nil, input); k != nil || err != nil {
		t.Errorf("no key = %v, %v", k, err)
	}
	for _, bad := range []string{"", "clé", "tab\tkey", string(make([]byte, MaxKeyLength+1))} {
		if _, err := a.For(ctx, auth.CreatePayment, &bad, input); !isCode(err, apierror.InvalidRequest) {
			t.Errorf("key %q = %v", bad, err)
		}
	}
}

func isCode(err error, code apierror.Code) bool {
	apiErr, ok := errors.AsType[*apierror.Error](err)
	return ok && apiErr.Code == code
}

// claim runs Claim in a transaction of its own, committed when it succeeds.
func claim(t *testing.T, db *database.DB, store *Store, k *Key, resourceID string) error {
	t.Helper()
	tx, err := db.Ent.Tx(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Claim(databasetest.AsMerchant(), tx, k, resourceID); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func TestClaimSettleAndPrevious(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		store := NewStore(db.Ent, []byte("s"), time.Now)
		ctx := signedIn("usr_1")
		k := keyOf(t, store, ctx, auth.CreatePayment, "k", "input")
		if _, found, err := store.Previous(ctx, k); found || err != nil {
			t.Fatalf("Previous of a new key = %v, %v", found, err)
		}
		if err := claim(t, db, store, k, "pay_1"); err != nil {
			t.Fatal(err)
		}
		if err := claim(t, db, store, k, "pay_2"); !errors.Is(err, ErrTaken) {
			t.Fatalf("second claim = %v", err)
		}
		if _, _, err := store.Previous(ctx, k); !isCode(err, apierror.IdempotencyKeyInUse) {
			t.Errorf("held key = %v", err)
		}
		other := keyOf(t, store, ctx, auth.CreatePayment, "k", "other input")
		if _, _, err := store.Previous(ctx, other); !isCode(err, apierror.IdempotencyKeyReused) {
			t.Errorf("key with other input = %v", err)
		}

		if err := store.SettleAlone(ctx, k, nil); err != nil {
			t.Fatal(err)
		}
		watched, replayed := WatchReplays(ctx)
		outcome, found, err := store.Previous(watched, k)
		if err != nil || !found || outcome.ResourceID != "pay_1" || outcome.Err != nil || !replayed() {
			t.Errorf("settled key = %+v, %v, %v, replayed %v", outcome, found, err, replayed())
		}
		// Settled once: a later settling changes nothing.
		if err := store.SettleAlone(ctx, k, errors.New("late")); err != nil {
			t.Fatal(err)
		}
		if outcome, _, _ := store.Previous(ctx, k); outcome.Err != nil {
			t.Errorf("a settled key was settled again: %+v", outcome)
		}

		// An error outcome is kept as the API error it becomes; a cause that is not one is not shown.
		failed := keyOf(t, store, ctx, auth.CreatePayment, "failed", "input")
		if err := claim(t, db, store, failed, "pay_3"); err != nil {
			t.Fatal(err)
		}
		store.SettleAlone(ctx, failed, errors.New("connection reset by 10.0.0.7"))
		outcome, _, _ = store.Previous(ctx, failed)
		if outcome.Err == nil || outcome.Err.Code != apierror.Internal || outcome.Err.Message != "an internal error occurred" {
			t.Errorf("error outcome = %+v", outcome.Err)
		}

		// A key stored before keys named their resource has a fingerprint no request matches: it
		// is held until it expires, never "use a new key", which could charge twice.
		if err := db.Ent.IdempotencyKey.Create().SetPrincipal("usr_1").SetKey("legacy").SetRequestHash("old-form").
			SetExpiresAt(time.Now().Add(TTL)).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		legacy := keyOf(t, store, ctx, auth.CreatePayment, "legacy", "input")
		if _, _, err := store.Previous(ctx, legacy); !isCode(err, apierror.IdempotencyKeyInUse) {
			t.Errorf("legacy key = %v", err)
		}
		db.Ent.IdempotencyKey.Delete().Where(idempotencykey.KeyEQ("legacy")).ExecX(ctx)

		// Keys are per principal.
		theirs := keyOf(t, store, signedIn("usr_2"), auth.CreatePayment, "k", "input")
		if err := claim(t, db, store, theirs, "pay_4"); err != nil {
			t.Errorf("another principal's key of the same name = %v", err)
		}

		// After the replay window, Previous deletes the key so that it can be claimed afresh.
		later := NewStore(db.Ent, []byte("s"), func() time.Time { return time.Now().Add(TTL + time.Second) })
		if _, found, err := later.Previous(ctx, k); found || err != nil {
			t.Errorf("expired key = %v, %v", found, err)
		}
		if err := claim(t, db, later, k, "pay_5"); err != nil {
			t.Errorf("claiming an expired key = %v", err)
		}
		if n, err := later.Purge(ctx); err != nil || n != 2 {
			t.Errorf("Purge = %d, %v; want the 2 keys claimed a day earlier", n, err)
		}
		if n, _ := db.Ent.IdempotencyKey.Query().Count(ctx); n != 1 {
			t.Errorf("%d keys left, want 1", n)
		}
	})
}

// Recording what became of a payment settles the calls that made it, found by the payment's id;
// the tenant rule adds the merchant to the query. The server keeps a generic plan of a prepared
// statement made while the table was small (a new database, its first minute of traffic), and
// that plan must still go by the payment: through the index that leads with the merchant it
// would read every key of a server with one merchant, each time.
func TestResolveIsPlannedByResource(t *testing.T) {
	db := databasetest.Postgres(t)
	var resolve string
	client := databasetest.RecordingClient(db, func(query string) {
		if strings.HasPrefix(query, `UPDATE "idempotency_keys"`) {
			resolve = query
		}
	})
	ctx := databasetest.AsMerchant()
	tx, err := client.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := NewStore(client, []byte("s"), time.Now).Resolve(ctx, tx, "pay_resolved"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resolve, `"merchant_id"`) {
		t.Fatalf("Resolve sent %q: not one statement scoped to the merchant", resolve)
	}
	plan := databasetest.GenericPlan(t, db, resolve)
	if !regexp.MustCompile(`Index Cond: .*resource_id`).MatchString(plan) {
		t.Fatalf("the generic plan of %s does not find the keys by resource:\n%s", resolve, plan)
	}
}
