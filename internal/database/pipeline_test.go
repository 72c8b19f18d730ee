package database_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/idempotencykey"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestPipelinedTransactions: on PostgreSQL a pipelined transaction sends the statements whose
// answers are not read with the next one whose answer is, or with COMMIT, in one round trip;
// it writes what an ordinary one writes, all or nothing, and an error it sends late is still
// the error of the read or the commit it went with, never a success.
func TestPipelinedTransactions(t *testing.T) {
	db := databasetest.CountingPostgres(t)
	db.SQL.SetMaxOpenConns(1) // every transaction on one connection, which must come back clean
	merchant := databasetest.AsMerchant()
	pipelined := database.Pipelined(merchant)
	n := 0
	claim := func(tx *ent.Tx, key string) error {
		return tx.IdempotencyKey.Create().SetPrincipal("pipeline").SetKey(key).SetRequestHash("hash").
			SetExpiresAt(time.Now().Add(time.Hour)).Exec(merchant)
	}
	fresh := func() string { n++; return fmt.Sprintf("key-%d", n) }
	stored := func(t *testing.T, keys ...string) int {
		t.Helper()
		count, err := db.Ent.IdempotencyKey.Query().Where(idempotencykey.KeyIn(keys...)).Count(merchant)
		if err != nil {
			t.Fatal(err)
		}
		return count
	}
	backend := func(t *testing.T) int {
		t.Helper()
		var pid int
		if err := db.SQL.QueryRowContext(context.Background(), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatalf("the pool's connection after the transaction: %v", err)
		}
		return pid
	}
	connection := backend(t)
	begin := func(t *testing.T, ctx context.Context) *ent.Tx {
		t.Helper()
		tx, err := db.Ent.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}

	// commitSettled commits tx, which settled key, and checks that it took want round trips since
	// before and that the key is stored settled.
	commitSettled := func(t *testing.T, tx *ent.Tx, key string, before, want int64) {
		t.Helper()
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if trips := db.RoundTrips() - before; trips != want {
			t.Errorf("the transaction took %d round trips; want %d", trips, want)
		}
		if settled, err := db.Ent.IdempotencyKey.Query().Where(idempotencykey.Key(key), idempotencykey.SettledAtNotNil()).Count(merchant); err != nil || settled != 1 {
			t.Errorf("%d settled rows (%v); want 1", settled, err)
		}
	}
	// holdingARefusedInsert is a pipelined transaction holding the insert of other, then one of a
	// key already stored, which the unique index will refuse.
	holdingARefusedInsert := func(t *testing.T) (*ent.Tx, string) {
		t.Helper()
		taken, other := fresh(), fresh()
		tx := begin(t, merchant)
		if err := claim(tx, taken); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		tx = begin(t, pipelined)
		for _, key := range []string{other, taken} {
			if err := claim(tx, key); err != nil {
				t.Fatalf("a held insert answered %v", err)
			}
		}
		return tx, other
	}
	// nothingKeptOf checks that the transaction's insert of key was rolled back, and its
	// connection given back to the pool clean.
	nothingKeptOf := func(t *testing.T, key string) {
		t.Helper()
		if got := stored(t, key); got != 0 {
			t.Errorf("an insert of a transaction that failed was kept")
		}
		if backend(t) != connection {
			t.Errorf("the connection was dropped, not given back rolled back")
		}
	}

	t.Run("inserts go with the commit", func(t *testing.T) {
		keys := []string{fresh(), fresh(), fresh()}
		before := db.RoundTrips()
		tx := begin(t, pipelined)
		for _, key := range keys {
			if err := claim(tx, key); err != nil {
				t.Fatal(err)
			}
		}
		if trips := db.RoundTrips() - before; trips != 0 {
			t.Errorf("%d round trips before the commit; want none", trips)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if trips := db.RoundTrips() - before; trips != 1 {
			t.Errorf("BEGIN, three inserts and COMMIT took %d round trips; want 1", trips)
		}
		if got := stored(t, keys...); got != 3 {
			t.Errorf("%d of the 3 rows stored", got)
		}
	})

	t.Run("an answer read takes the held statements with it", func(t *testing.T) {
		key := fresh()
		before := db.RoundTrips()
		tx := begin(t, pipelined)
		if err := claim(tx, key); err != nil {
			t.Fatal(err)
		}
		// The update finds the row inserted before it: it went first, in the same exchange.
		updated, err := tx.IdempotencyKey.Update().Where(idempotencykey.Key(key)).SetSettledAt(time.Now()).Save(merchant)
		if err != nil || updated != 1 {
			t.Fatalf("the update after the insert changed %d rows (%v); want 1", updated, err)
		}
		if trips := db.RoundTrips() - before; trips != 1 {
			t.Errorf("BEGIN, the insert and the update took %d round trips; want 1", trips)
		}
		commitSettled(t, tx, key, before, 2)
	})

	t.Run("an update whose count is not read goes with the commit", func(t *testing.T) {
		key := fresh()
		before := db.RoundTrips()
		tx := begin(t, pipelined)
		if err := claim(tx, key); err != nil {
			t.Fatal(err)
		}
		if err := tx.IdempotencyKey.Update().Where(idempotencykey.Key(key)).SetSettledAt(time.Now()).
			Exec(database.CountUnread(merchant)); err != nil {
			t.Fatal(err)
		}
		if trips := db.RoundTrips() - before; trips != 0 {
			t.Errorf("%d round trips before the commit; want none", trips)
		}
		commitSettled(t, tx, key, before, 1)
	})

	t.Run("an insert refused at the commit writes nothing", func(t *testing.T) {
		tx, other := holdingARefusedInsert(t)
		err := tx.Commit()
		if !database.UniqueViolation(err, idempotencykey.Table) {
			t.Fatalf("the commit answered %v; want the unique index's refusal", err)
		}
		nothingKeptOf(t, other)
	})

	t.Run("an insert refused is the error of the read it went with", func(t *testing.T) {
		tx, other := holdingARefusedInsert(t)
		_, err := tx.IdempotencyKey.Query().Count(merchant)
		if !database.UniqueViolation(err, idempotencykey.Table) {
			t.Fatalf("the read answered %v; want the unique index's refusal", err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		nothingKeptOf(t, other)
	})

	t.Run("a commit after a failed statement fails", func(t *testing.T) {
		key := fresh()
		tx := begin(t, pipelined)
		if err := claim(tx, key); err != nil {
			t.Fatal(err)
		}
		_, err := tx.IdempotencyKey.Query().Where(func(s *sql.Selector) { s.Where(sql.ExprP("1 / 0 = 1")) }).Count(merchant)
		if err == nil {
			t.Fatal("a division by zero was answered")
		}
		if err := tx.Commit(); err == nil {
			t.Fatal("the commit of a transaction the server aborted answered success")
		}
		nothingKeptOf(t, key)
	})

	t.Run("a commit after a failed exchange fails", func(t *testing.T) {
		tx, other := holdingARefusedInsert(t)
		if _, err := tx.IdempotencyKey.Update().Where(idempotencykey.Key(other)).SetSettledAt(time.Now()).Save(merchant); err == nil {
			t.Fatal("the update sent with a refused insert answered success")
		}
		if err := claim(tx, fresh()); err == nil {
			t.Fatal("a statement after the failed exchange was taken")
		}
		if err := tx.Commit(); err == nil {
			t.Fatal("the commit after a failed exchange answered success")
		}
		nothingKeptOf(t, other)
	})

	t.Run("a transaction not asked to be pipelined sends each statement", func(t *testing.T) {
		before := db.RoundTrips()
		tx := begin(t, merchant)
		for range 3 {
			if err := claim(tx, fresh()); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if trips := db.RoundTrips() - before; trips != 5 {
			t.Errorf("BEGIN, three inserts and COMMIT took %d round trips; want 5", trips)
		}
	})

	t.Run("a transaction that wrote nothing", func(t *testing.T) {
		before := db.RoundTrips()
		for _, end := range []func(*ent.Tx) error{(*ent.Tx).Commit, (*ent.Tx).Rollback} {
			if err := end(begin(t, pipelined)); err != nil {
				t.Fatal(err)
			}
		}
		if trips := db.RoundTrips() - before; trips != 0 {
			t.Errorf("%d round trips; want none", trips)
		}
		if backend(t) != connection {
			t.Errorf("the connection was dropped")
		}
	})
}

// TestPipelinedCommitOutlivesItsContext: a commit whose held insert waits for another
// transaction's lock is not cut short when its context ends, so what it answers is what the
// database did: it commits once the lock is freed, and says so. Cut short, pgx would close the
// socket and answer an error, while the server, holding COMMIT behind the insert, committed.
func TestPipelinedCommitOutlivesItsContext(t *testing.T) {
	db := databasetest.Postgres(t)
	merchant := databasetest.AsMerchant()
	background := context.Background()

	// Another transaction holds the key's unique index entry.
	holder, err := db.SQL.Conn(background)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var holderPID int
	if err := holder.QueryRowContext(background, "SELECT pg_backend_pid()").Scan(&holderPID); err != nil {
		t.Fatal(err)
	}
	for _, statement := range []string{"BEGIN", `INSERT INTO idempotency_keys (id, principal, key, request_hash, expires_at, created_at)
		VALUES ('idk_holder', 'pipeline', 'contended', 'hash', now() + interval '1 hour', now())`} {
		if _, err := holder.ExecContext(background, statement); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithCancel(merchant)
	defer cancel()
	tx, err := db.Ent.Tx(database.Pipelined(ctx))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"alongside", "contended"} {
		if err := tx.IdempotencyKey.Create().SetPrincipal("pipeline").SetKey(key).SetRequestHash("hash").
			SetExpiresAt(time.Now().Add(time.Hour)).Exec(merchant); err != nil {
			t.Fatal(err)
		}
	}
	committed := make(chan error, 1)
	go func() { committed <- tx.Commit() }()

	// The commit's insert waits for the holder's lock; then its context ends.
	waiting := 0
	for deadline := time.Now().Add(10 * time.Second); waiting == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := db.SQL.QueryRowContext(background, "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
			holderPID).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if waiting == 0 {
		t.Fatal("the commit never waited for the holder's lock")
	}
	cancel()
	select {
	case err := <-committed:
		t.Fatalf("the commit answered %v while its insert still waited for the lock", err)
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := holder.ExecContext(background, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	err = <-committed
	stored, countErr := db.Ent.IdempotencyKey.Query().Where(idempotencykey.KeyIn("alongside", "contended")).Count(merchant)
	if countErr != nil {
		t.Fatal(countErr)
	}
	if err != nil || stored != 2 {
		t.Errorf("the commit answered %v with %d of its 2 rows stored; want both, and no error", err, stored)
	}
}
