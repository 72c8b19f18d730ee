package database_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	entgo "entgo.io/ent"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// TestLeanPaymentReadsReadWhatEntReads: the payments the short read path gives are those ent's
// general path gives for the same query, every field and every added column, for a payment by id,
// the first of an ordered query, a page after an offset and a Relay page, in a transaction too;
// the tenant rule holds on it; and queries it does not serve (loading edges, counting, following
// an edge, selecting fields) take ent's path.
func TestLeanPaymentReadsReadWhatEntReads(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		when := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.UTC)
		rule := "eur"
		var ids []string
		for i := range 4 {
			create := db.Ent.Payment.Create().
				SetCreatedAt(when.Add(time.Duration(i) * time.Minute)).SetUpdatedAt(when.Add(time.Hour)).
				SetAmount(int64(1000 + i)).SetCurrency("EUR").SetStatus(state.PaymentSucceeded).SetPaymentMethod("credit_card").
				SetCustomerEmail("a@example.com").SetCustomerName("Ann").SetCardBrand("visa").SetCardLast4("4242").
				SetCardExpMonth(12).SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe")
			if i%2 == 1 {
				create.SetProviderPaymentID("pi_1").SetDescription("tea").SetMetadata(map[string]string{"order": "7"}).
					SetRouting(&state.RoutingDecision{Rule: &rule, Attempts: []state.RoutingAttempt{{Provider: "stripe", Outcome: "approved", LatencyMS: 12}}}).
					SetDisputedAt(when).SetDisputeReason("fraudulent").SetReturnURL("https://shop.example/back").
					SetReturnSecretHash("5e0a2b")
			}
			p, err := create.Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		elsewhere, err := db.Ent.Payment.Create().SetMerchantID("mer_elsewhere").
			SetAmount(5).SetCurrency("EUR").SetStatus(state.PaymentSucceeded).SetPaymentMethod("credit_card").
			SetCustomerEmail("b@example.com").SetCardBrand("visa").SetCardLast4("4242").SetCardExpMonth(12).
			SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe").Save(tenant.System(context.Background()))
		if err != nil {
			t.Fatal(err)
		}

		// Innermost, it is reached only when the query takes ent's own path.
		general := 0
		db.Ent.Payment.Intercept(ent.InterceptFunc(func(next ent.Querier) ent.Querier {
			return ent.QuerierFunc(func(ctx context.Context, q ent.Query) (ent.Value, error) {
				general++
				return next.Query(ctx, q)
			})
		}))
		// A column added by a modifier, different in every row.
		extra := func(s *entsql.Selector) { s.AppendSelectExprAs(entsql.Expr(s.C(payment.FieldAmount)+" * 2"), "extra") }
		queries := map[string]func() *ent.PaymentQuery{
			"by id": func() *ent.PaymentQuery { return db.Ent.Payment.Query().Where(payment.ID(ids[1])) },
			"by id, modified": func() *ent.PaymentQuery {
				q := db.Ent.Payment.Query().Where(payment.ID(ids[3]))
				q.Modify(extra)
				return q
			},
			"ordered, offset": func() *ent.PaymentQuery {
				return db.Ent.Payment.Query().Order(payment.ByCreatedAt(entsql.OrderDesc())).Offset(1).Limit(2)
			},
			"everyone's": func() *ent.PaymentQuery { return db.Ent.Payment.Query().Order(payment.ByID()) },
			"no limit":   func() *ent.PaymentQuery { return db.Ent.Payment.Query().Order(payment.ByID()).Limit(0).Offset(0) },
			"everyone's, modified": func() *ent.PaymentQuery {
				q := db.Ent.Payment.Query().Order(payment.ByCreatedAt())
				q.Modify(extra)
				return q
			},
		}
		for name, query := range queries {
			before := general
			lean, err := query().All(ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if general != before {
				t.Errorf("%s: took ent's general path", name)
			}
			// Unique(false) changes nothing in the statement, but is a query the short path leaves to ent.
			want, err := query().Unique(false).All(ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if general != before+1 {
				t.Errorf("%s, Unique(false): did not take ent's general path", name)
			}
			if len(lean) == 0 || len(lean) != len(want) {
				t.Fatalf("%s: %d payments, ent reads %d", name, len(lean), len(want))
			}
			for i := range lean {
				sameAsEnt(t, name, lean[i], want[i])
			}
			// A payment read so is bound to the client, as ent's are: its edges can be queried.
			if _, err := lean[0].QueryRefunds().All(ctx); err != nil {
				t.Errorf("%s: the refunds of a payment read: %v", name, err)
			}
		}

		// In a transaction the read sees what the transaction wrote.
		tx, err := db.Ent.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Payment.UpdateOneID(ids[0]).SetDescription("in the transaction").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		before := general
		inTx, err := tx.Payment.Query().Where(payment.ID(ids[0])).Only(ctx)
		if err != nil || inTx.Description == nil || *inTx.Description != "in the transaction" || general != before {
			t.Errorf("a payment read in a transaction: %v, %v (through ent's path: %v)", inTx, err, general != before)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}

		first, err := db.Ent.Payment.Query().Order(payment.ByCreatedAt(entsql.OrderDesc())).First(ctx)
		if err != nil || first.ID != ids[3] {
			t.Errorf("First: %v, %v; want the newest, %s", first, err, ids[3])
		}
		if _, err := db.Ent.Payment.Query().Where(payment.ID(elsewhere.ID)).Only(ctx); !ent.IsNotFound(err) {
			t.Errorf("another merchant's payment read by id: %v, want not found", err)
		}
		all, err := db.Ent.Payment.Query().All(ctx)
		if err != nil || len(all) != len(ids) {
			t.Errorf("the merchant's payments: %d, %v; want its %d alone", len(all), err, len(ids))
		}
		before = general
		pageSize, third := 2, ent.Cursor{ID: ids[2], Value: when.Add(2 * time.Minute)}
		page, err := db.Ent.Payment.Query().Paginate(ctx, &third, &pageSize, nil, nil,
			ent.WithPaymentOrder(&ent.PaymentOrder{Direction: "DESC", Field: ent.PaymentOrderFieldCreatedAt}))
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Edges) != 2 || page.Edges[0].Node.ID != ids[1] || page.Edges[1].Node.ID != ids[0] {
			t.Errorf("the page after the third payment, newest first: %+v", page.Edges)
		}
		// Outside a GraphQL request the page counts the payments too, through ent's path.
		if general != before+1 {
			t.Errorf("a Relay page: %d queries through ent's general path, want its count alone", general-before)
		}

		before = general
		withRefunds, err := db.Ent.Payment.Query().Where(payment.ID(ids[1])).WithRefunds().Only(ctx)
		if err != nil || withRefunds.Edges.Refunds == nil {
			t.Errorf("a payment with its refunds: %v, %v", withRefunds, err)
		}
		if count, err := db.Ent.Payment.Query().Count(ctx); err != nil || count != len(ids) {
			t.Errorf("count: %d, %v", count, err)
		}
		if _, err := db.Ent.PaymentStatusChange.Create().SetPaymentID(ids[1]).SetTo(state.PaymentSucceeded).SetAt(when).Save(ctx); err != nil {
			t.Fatal(err)
		}
		followed, err := db.Ent.PaymentStatusChange.Query().QueryPayment().All(ctx)
		if err != nil || len(followed) != 1 || followed[0].ID != ids[1] {
			t.Errorf("the payment of a status change: %v, %v; want %s alone", followed, err, ids[1])
		}
		selecting := db.Ent.Payment.Query().Where(payment.ID(ids[1]))
		selecting.Select(payment.FieldAmount)
		if selected, err := selecting.All(ctx); err != nil || len(selected) != 1 || selected[0].Amount != 1001 || selected[0].CustomerEmail != "" {
			t.Errorf("a payment's amount alone: %v, %v", selected, err)
		}
		// A query counted in another query's context, after it was read on its own: ent keeps the
		// operation it was first run for, which is not the one it runs now.
		reused := db.Ent.Payment.Query()
		if _, err := reused.All(ctx); err != nil {
			t.Fatal(err)
		}
		if count, err := reused.Count(entgo.NewQueryContext(ctx, &entgo.QueryContext{Op: entgo.OpQueryAll})); err != nil || count != len(ids) {
			t.Errorf("a query counted in another's context: %d, %v", count, err)
		}
		if general != before+5 {
			t.Errorf("loading edges, counting, following an edge and selecting fields: %d of 5 went through ent's path", general-before)
		}
	})
}

// sameAsEnt fails the test unless got has every field and added column of want.
func sameAsEnt(t *testing.T, query string, got, want *ent.Payment) {
	t.Helper()
	gotJSON, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("%s:\n got %s\nwant %s", query, gotJSON, wantJSON)
	}
	gotExtra, gotErr := got.Value("extra")
	wantExtra, wantErr := want.Value("extra")
	if gotExtra != wantExtra || (gotErr == nil) != (wantErr == nil) {
		t.Errorf("%s: added column %v (%v), ent reads %v (%v)", query, gotExtra, gotErr, wantExtra, wantErr)
	}
}

// newPayment makes a payment of the default merchant whose customer and metadata name it by i.
func newPayment(t *testing.T, db *database.DB, i int) *ent.Payment {
	t.Helper()
	p, err := db.Ent.Payment.Create().SetAmount(int64(1000 + i)).SetCurrency("EUR").SetStatus(state.PaymentSucceeded).
		SetPaymentMethod("credit_card").SetCustomerEmail(fmt.Sprintf("c%d@example.com", i)).SetCardBrand("visa").
		SetCardLast4("4242").SetCardExpMonth(12).SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe").
		SetMetadata(map[string]string{"i": fmt.Sprint(i)}).Save(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A column a modifier adds has the same value read natively, outside a transaction, as read
// through database/sql in one: NULL among them, which pgx will not put in a string.
func TestNativeReadsGiveAddedColumnsAsDatabaseSQLDoes(t *testing.T) {
	db := databasetest.Postgres(t)
	ctx := databasetest.AsMerchant()
	id := newPayment(t, db, 1).ID // its description is NULL
	tx, err := db.Ent.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for name, expr := range map[string]string{
		"a NULL varchar": `"payments"."description"`,
		"NULL text":      `NULL::text`,
		"NULL json":      `NULL::json`,
		"json":           `json_build_array("payments"."amount")`,
		"numeric":        `"payments"."amount"::numeric`,
		"int4":           `"payments"."amount"::int4`,
		"float":          `"payments"."amount"::float8 / 8`,
		"uuid":           `'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid`,
		"bool":           `"payments"."amount" > 5`,
		"time":           `"payments"."created_at"`,
	} {
		added := func(s *entsql.Selector) { s.AppendSelectExprAs(entsql.Expr(expr), "added") }
		native, err := db.Ent.Payment.Query().Where(payment.ID(id)).Modify(added).Only(ctx)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		inTx, err := tx.Payment.Query().Where(payment.ID(id)).Modify(added).Only(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := native.Value("added")
		want, _ := inTx.Value("added")
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read natively %T %#v, in a transaction %T %#v", name, got, got, want, want)
		}
	}
}

// Reads at once keep their scan destinations for the next one: none sees another's values.
func TestConcurrentLeanReadsKeepTheirOwnValues(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		var payments []*ent.Payment
		for i := range 8 {
			payments = append(payments, newPayment(t, db, i))
		}
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for reader := range 16 {
			wg.Go(func() {
				var read []*ent.Payment
				for k := range 40 {
					i := (reader + k) % len(payments)
					q := db.Ent.Payment.Query().Where(payment.ID(payments[i].ID))
					q.Modify(func(s *entsql.Selector) {
						s.AppendSelectExprAs(entsql.Expr(s.C(payment.FieldCustomerEmail)), "email")
					})
					p, err := q.Only(ctx)
					if err != nil {
						errs <- err
						return
					}
					read = append(read, p)
				}
				// Checked once every read is done, when a destination shared by mistake would
				// have been written over by the reads after it.
				for k, p := range read {
					i := (reader + k) % len(payments)
					email, _ := p.Value("email")
					if p.ID != payments[i].ID || p.CustomerEmail != payments[i].CustomerEmail || email != p.CustomerEmail ||
						p.Metadata["i"] != fmt.Sprint(i) {
						errs <- fmt.Errorf("read %d of payment %d: %s %s %v %v", k, i, p.ID, p.CustomerEmail, email, p.Metadata)
						return
					}
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

// TestLeanReadsReadThePaymentUnderAJoin: a modifier that joins another table, whose columns share
// the payment's names, and makes the statement DISTINCT reads on the short path the payment ent's
// own path reads (Unique(false) sends the query there): the short path selects the payment's
// columns by their qualified names, never "*".
func TestLeanReadsReadThePaymentUnderAJoin(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		p, err := db.Ent.Payment.Create().SetCreatedAt(when).SetUpdatedAt(when).
			SetAmount(1000).SetCurrency("EUR").SetStatus(state.PaymentSucceeded).SetPaymentMethod("credit_card").
			SetCustomerEmail("a@example.com").SetCardBrand("visa").SetCardLast4("4242").
			SetCardExpMonth(12).SetCardExpYear(2030).SetCardFingerprint("f").SetProvider("stripe").Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Ent.Refund.Create().SetPaymentID(p.ID).SetAmount(100).SetCurrency("EUR").
			SetStatus(state.RefundSucceeded).Save(ctx); err != nil {
			t.Fatal(err)
		}
		withRefunds := func(s *entsql.Selector) {
			refunds := entsql.Table(refund.Table)
			s.Distinct().LeftJoin(refunds).On(s.C(payment.FieldID), refunds.C(refund.FieldPaymentID))
		}
		short := db.Ent.Payment.Query().Where(payment.ID(p.ID))
		short.Modify(withRefunds)
		lean, err := short.All(ctx)
		general := db.Ent.Payment.Query().Where(payment.ID(p.ID)).Unique(false)
		general.Modify(withRefunds)
		want, wantErr := general.All(ctx)
		if wantErr != nil || len(want) != 1 || want[0].ID != p.ID {
			t.Fatalf("ent's path read %v, %v; want the payment %s", want, wantErr, p.ID)
		}
		if err != nil || len(lean) != 1 || lean[0].ID != p.ID || lean[0].Amount != p.Amount || lean[0].CreatedAt != want[0].CreatedAt {
			t.Errorf("the short path read %+v, %v; want the payment %s as ent's path reads it", lean, err, p.ID)
		}
	})
}
