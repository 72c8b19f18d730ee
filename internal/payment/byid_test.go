package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/tenant"
)

// byIDDatabases are the databases a read by id is tested on.
func byIDDatabases() map[string]func(testing.TB) *database.DB {
	databases := map[string]func(testing.TB) *database.DB{"sqlite": databasetest.SQLite}
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") != "" {
		databases["postgres"] = databasetest.Postgres
	}
	return databases
}

// merchantAdmin is the context of an admin of merchant.
func merchantAdmin(merchant string) context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{Subject: "usr_" + merchant, UserID: "usr_" + merchant,
		Role: "admin", Scopes: auth.ScopesOf("admin"), Merchant: merchant, Home: merchant})
}

// asJSON is every field of a payment, as ent tags them.
func asJSON(t *testing.T, p *ent.Payment) string {
	text, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// TestReadsByIDHoldTheMerchantRule: reading a payment by id, with its history or without, gives
// what ent's own query gives, to its merchant and to the system's scope; another merchant finds
// nothing, and a context that says neither whose nor the system's is refused. The read is written
// out, not built by ent's query, so the merchant rule in it is its own.
func TestReadsByIDHoldTheMerchantRule(t *testing.T) {
	for name, open := range byIDDatabases() {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			svc := newService(db, providertest.Memory{}, 99999999)
			owner, other := merchantAdmin(tenant.DefaultMerchant), merchantAdmin("mer_other")
			system := tenant.System(owner)
			mine, err := svc.Create(owner, validInput())
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := svc.Create(other, validInput())
			if err != nil {
				t.Fatal(err)
			}
			readers := map[string]func(context.Context, string) (*ent.Payment, error){"Get": svc.Get, "GetWithHistory": svc.GetWithHistory}
			for readerName, read := range readers {
				for round := range 2 {
					for _, c := range []struct {
						who   string
						ctx   context.Context
						id    string
						found bool
					}{
						{"its merchant", owner, mine.ID, true},
						{"the other merchant, its own", other, theirs.ID, true},
						{"the system", system, theirs.ID, true},
						{"another merchant", other, mine.ID, false},
						{"another merchant, the other way", owner, theirs.ID, false},
						{"the system, an unknown id", system, "pay_unknown", false},
					} {
						got, err := read(c.ctx, c.id)
						if !c.found {
							if !hasCode(err, apierror.NotFound) {
								t.Errorf("%s, round %d: %s reading %s: %v, %v; want not found", readerName, round, c.who, c.id, got, err)
							}
							continue
						}
						if err != nil {
							t.Fatalf("%s, round %d: %s reading %s: %v", readerName, round, c.who, c.id, err)
						}
						want, err := db.Ent.Payment.Get(c.ctx, c.id)
						if err != nil {
							t.Fatal(err)
						}
						if asJSON(t, got) != asJSON(t, want) {
							t.Errorf("%s, round %d: %s read %s; ent reads %s", readerName, round, c.who, asJSON(t, got), asJSON(t, want))
						}
					}
				}
				nobody := auth.WithPrincipal(context.Background(), auth.Principal{Subject: "usr_nobody", UserID: "usr_nobody",
					Role: "admin", Scopes: auth.ScopesOf("admin")})
				if _, err := read(nobody, mine.ID); !errors.Is(err, tenant.ErrNoMerchant) {
					t.Errorf("%s in a context naming no merchant: %v; want %v", readerName, err, tenant.ErrNoMerchant)
				}
			}
		})
	}
}

// TestConcurrentReadsByIDFindTheirOwn: merchants and the system reading at once each find what
// their scope holds and nothing else.
func TestConcurrentReadsByIDFindTheirOwn(t *testing.T) {
	for name, open := range byIDDatabases() {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			svc := newService(db, providertest.Memory{}, 99999999)
			const merchants = 8
			ids := make([]string, merchants)
			for i := range merchants {
				p, err := svc.Create(merchantAdmin(fmt.Sprintf("mer_concurrent%02d", i)), validInput())
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = p.ID
			}
			errs := make(chan error, 3*merchants)
			var wg sync.WaitGroup
			for i := range merchants {
				wg.Go(func() {
					ctx := merchantAdmin(fmt.Sprintf("mer_concurrent%02d", i))
					if p, err := svc.GetWithHistory(ctx, ids[i]); err != nil || p.ID != ids[i] {
						errs <- fmt.Errorf("merchant %d reading its own payment: %v, %v", i, p, err)
					}
					next := ids[(i+1)%merchants]
					if _, err := svc.GetWithHistory(ctx, next); !hasCode(err, apierror.NotFound) {
						errs <- fmt.Errorf("merchant %d reading another's payment: %v; want not found", i, err)
					}
				})
				wg.Go(func() {
					if p, err := svc.GetWithHistory(tenant.System(merchantAdmin(tenant.DefaultMerchant)), ids[i]); err != nil || p.ID != ids[i] {
						errs <- fmt.Errorf("the system reading merchant %d's payment: %v, %v", i, p, err)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
