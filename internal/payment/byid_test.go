package payment_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	entgo "entgo.io/ent"
	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/payment"
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

// TestReadsByIDKeepTheirStatement: reading a payment by id, with its history or without, gives
// what ent's own query gives, to its merchant and to the system's scope, each read after the first
// running the statement kept for its kind of scope on PostgreSQL (ent's path elsewhere); another
// merchant finds nothing, and a context that says neither whose nor the system's is refused.
func TestReadsByIDKeepTheirStatement(t *testing.T) {
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
			merchantKept, systemKept := payment.KeptStatements(svc)
			if want := name == "postgres"; merchantKept != want || systemKept != want {
				t.Errorf("statements kept for a merchant's scope: %v, for the system's: %v; want %v", merchantKept, systemKept, want)
			}
		})
	}
}

type onlyCurrencyKey struct{}

// TestReadsByIDFollowAnotherInterceptor: with an interceptor on payment queries other than the
// tenant filter, one whose predicate depends on more than the scope, no statement is kept, or the
// one kept before it was registered is dropped, and every read by id is ent's, the interceptor's
// predicate in it.
func TestReadsByIDFollowAnotherInterceptor(t *testing.T) {
	for name, open := range byIDDatabases() {
		for _, registeredLater := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, registered after the first reads: %v", name, registeredLater), func(t *testing.T) {
				db := open(t)
				if !registeredLater {
					interceptCurrency(db)
				}
				svc := newService(db, providertest.Memory{}, 99999999)
				owner := merchantAdmin(tenant.DefaultMerchant)
				p, err := svc.Create(owner, validInput())
				if err != nil {
					t.Fatal(err)
				}
				readers := []func(context.Context, string) (*ent.Payment, error){svc.Get, svc.GetWithHistory}
				for _, read := range readers {
					if _, err := read(owner, p.ID); err != nil {
						t.Fatal(err)
					}
				}
				if registeredLater {
					if merchantKept, _ := payment.KeptStatements(svc); merchantKept != (name == "postgres") {
						t.Fatalf("statement kept after the first reads: %v", merchantKept)
					}
					interceptCurrency(db)
				}
				for _, read := range readers {
					if got, err := read(context.WithValue(owner, onlyCurrencyKey{}, "EUR"), p.ID); !hasCode(err, apierror.NotFound) {
						t.Errorf("a %s payment read where only EUR ones are seen: %v, %v; want not found", p.Currency, got, err)
					}
				}
				if merchantKept, _ := payment.KeptStatements(svc); merchantKept {
					t.Error("a statement is kept past an interceptor that is not the tenant filter")
				}
			})
		}
	}
}

// interceptCurrency registers on db's payment queries an interceptor that holds a query made in a
// context carrying onlyCurrencyKey to that currency: a predicate that depends on more than the
// scope.
func interceptCurrency(db *database.DB) {
	db.Ent.Payment.Intercept(entgo.TraverseFunc(func(ctx context.Context, q entgo.Query) error {
		if currency, ok := ctx.Value(onlyCurrencyKey{}).(string); ok {
			q.(*ent.PaymentQuery).Where(func(s *sql.Selector) { s.Where(sql.EQ(s.C("currency"), currency)) })
		}
		return nil
	}))
}

// TestConcurrentFirstReadsByIDFindTheirOwn: merchants and the system reading at once, the first
// reads among them keeping the statements, each find what their scope holds and nothing else.
func TestConcurrentFirstReadsByIDFindTheirOwn(t *testing.T) {
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
