package idempotency

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

func TestFingerprintIsKeyedAndComparesJSONByMeaning(t *testing.T) {
	a := NewStore(nil, []byte("secret-a"), time.Now)
	b := NewStore(nil, []byte("secret-b"), time.Now)
	body := []byte(`{"amount": 1, "card": {"number": "4242424242424242", "cvc": "123"}}`)
	reordered := []byte(`{"card":{"cvc":"123","number":"4242424242424242"},"amount":1}`)
	if a.Fingerprint([]byte("rest"), body) != a.Fingerprint([]byte("rest"), reordered) {
		t.Error("the same JSON in another order is another request")
	}
	if a.Fingerprint([]byte("rest"), body) == b.Fingerprint([]byte("rest"), body) {
		t.Error("the fingerprint does not depend on the secret")
	}
	if a.Fingerprint([]byte("rest"), body) == a.Fingerprint([]byte("graphql"), body) {
		t.Error("the surface is not part of the fingerprint")
	}
	if a.Fingerprint([]byte("ab"), []byte("c")) == a.Fingerprint([]byte("a"), []byte("bc")) {
		t.Error("parts run into each other")
	}
}

func TestKeeps(t *testing.T) {
	kept := []int{http.StatusOK, http.StatusCreated, http.StatusPaymentRequired, http.StatusInternalServerError, http.StatusBadGateway}
	released := []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity}
	for _, status := range kept {
		if !Keeps(status) {
			t.Errorf("%d is not kept", status)
		}
	}
	for _, status := range released {
		if Keeps(status) {
			t.Errorf("%d is kept", status)
		}
	}
}

func TestBeginFinishRelease(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := context.Background()
		store := NewStore(db.Ent, []byte("s"), time.Now)
		fp := store.Fingerprint([]byte("x"))
		if stored, err := store.Begin(ctx, "usr_1", "k", fp); stored != nil || err != nil {
			t.Fatalf("Begin = %v, %v", stored, err)
		}
		if err := store.Finish(ctx, "usr_1", "k", Response{Status: http.StatusBadRequest, Body: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
		// Released: the key runs again.
		if stored, err := store.Begin(ctx, "usr_1", "k", store.Fingerprint([]byte("y"))); stored != nil || err != nil {
			t.Fatalf("Begin after release = %v, %v", stored, err)
		}
		if err := store.Finish(ctx, "usr_1", "k", Response{Status: http.StatusCreated, Body: []byte(`{"ok":true}`)}); err != nil {
			t.Fatal(err)
		}
		stored, err := store.Begin(ctx, "usr_1", "k", store.Fingerprint([]byte("y")))
		if err != nil || stored == nil || stored.Status != http.StatusCreated || string(stored.Body) != `{"ok":true}` {
			t.Errorf("replay = %+v, %v", stored, err)
		}
		// Another principal's key of the same name is its own.
		if stored, err := store.Begin(ctx, "usr_2", "k", fp); stored != nil || err != nil {
			t.Errorf("another principal = %v, %v", stored, err)
		}
		// An expired key that was not purged yet is replaced.
		later := NewStore(db.Ent, []byte("s"), func() time.Time { return time.Now().Add(TTL + time.Second) })
		if stored, err := later.Begin(ctx, "usr_1", "k", fp); stored != nil || err != nil {
			t.Errorf("expired key = %v, %v", stored, err)
		}
	})
}
