package payment

import (
	"context"
	"os"
	"testing"

	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/tenant"
)

// TestReadByIDKeepsOnlyAStatementOfItsStandIns: a read whose statement holds an argument besides
// the id and the merchant (here its modifier's) keeps nothing, and each read is ent's, made with
// its own arguments.
func TestReadByIDKeepsOnlyAStatementOfItsStandIns(t *testing.T) {
	if os.Getenv("PAYGATE_TEST_DATABASE_URL") == "" {
		t.Skip("statements are kept on PostgreSQL alone: set PAYGATE_TEST_DATABASE_URL")
	}
	db := databasetest.Postgres(t)
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Subject: "usr_test", UserID: "usr_test", Role: "admin",
		Scopes: auth.ScopesOf("admin"), Merchant: tenant.DefaultMerchant, Home: tenant.DefaultMerchant})
	p, err := db.Ent.Payment.Create().SetAmount(2500).SetCurrency("USD").SetStatus("succeeded").SetPaymentMethod("credit_card").
		SetCustomerEmail("ann@example.com").SetCustomerName("Ann").SetCardBrand("visa").SetCardLast4("4242").
		SetCardExpMonth(12).SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("memory").Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		currency string
		found    bool
	}{{"USD", true}, {"EUR", false}} {
		read := &byIDRead{client: db.Ent, modify: func(s *sql.Selector) { s.Where(sql.EQ(s.C("currency"), c.currency)) }}
		for range 2 {
			nodes, kept, err := read.read(ctx, p.ID)
			if kept || err != nil || nodes != nil {
				t.Fatalf("a statement with an argument of its modifier's: %v kept, %v, %v", kept, nodes, err)
			}
		}
		if kept := read.kept[merchantScope].Load(); kept == nil || kept.statement != nil {
			t.Errorf("kept for a merchant's scope: %+v; want nothing", kept)
		}
		svc := &Service{client: db.Ent}
		got, err := svc.getOne(ctx, p.ID, read)
		if (err == nil) != c.found || (c.found && got.ID != p.ID) {
			t.Errorf("reading the USD payment where its currency is %s: %v, %v; found: want %v", c.currency, got, err, c.found)
		}
	}
}
