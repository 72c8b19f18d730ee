package payment_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/paymentstatuschange"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/logtest"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// returnSeeing is the memory provider, keeping the return URL each charge was sent with and
// counting the questions about authentications.
type returnSeeing struct {
	providertest.Memory
	mu      sync.Mutex
	returns map[string]string
	asked   atomic.Int32
}

func (r *returnSeeing) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	r.mu.Lock()
	if r.returns == nil {
		r.returns = map[string]string{}
	}
	r.returns[req.PaymentID] = req.ReturnURL
	r.mu.Unlock()
	return r.Memory.Charge(ctx, req)
}

func (r *returnSeeing) Authenticated(ctx context.Context, req provider.AuthenticationRequest) (provider.ChargeResult, error) {
	r.asked.Add(1)
	return r.Memory.Authenticated(ctx, req)
}

// shopperReturns is the return address at https://paygate.example that payment services give
// their providers, keeping the secret each payment's carries, as its shopper's browser would.
type shopperReturns struct {
	mu      sync.Mutex
	secrets map[string]string
}

// returnsFor gives each of svcs the return address, and returns the secrets they hand out.
func returnsFor(svcs ...*payment.Service) *shopperReturns {
	r := &shopperReturns{secrets: map[string]string{}}
	for _, svc := range svcs {
		svc.ReturnAddress = func(id, secret string) string {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.secrets[id] = secret
			return "https://paygate.example/api/v1/payments/" + id + "/return?" + payment.ReturnQuery(secret)
		}
	}
	return r
}

// secret is the secret of payment id's return address, "" for none.
func (r *shopperReturns) secret(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.secrets[id]
}

// of is the query the browser of payment id's shopper comes back with: its secret, and extra.
func (r *shopperReturns) of(id string, extra url.Values) url.Values {
	back := url.Values{payment.ReturnSecretParam: {r.secret(id)}}
	for key, values := range extra {
		back[key] = values
	}
	return back
}

// newAuthenticatingService is the payment service over db, paying through the memory provider,
// whose shoppers come back to https://paygate.example.
func newAuthenticatingService(db *database.DB) (*payment.Service, *returnSeeing, *shopperReturns, *clock) {
	c := &clock{now: time.Now().UTC().Truncate(time.Microsecond)}
	memory := &returnSeeing{}
	svc := newClockedService(db, memory, c)
	return svc, memory, returnsFor(svc), c
}

func authenticationInput(number string) payment.CreateInput {
	in := validInput()
	in.Card.Number = number
	returnURL := "https://shop.example/orders/7?step=paid"
	in.ReturnURL = &returnURL
	return in
}

// TestShopperReturned: a card that asks for authentication makes a payment requires_action, sent
// to the provider with Paygate's return address, holding the provider's page until an hour from
// now; it cannot be refunded or captured meanwhile. The shopper's return settles it as the
// provider says (approved, held for a manual capture, or declined), once however often the
// browser comes back, and sends the browser on to the merchant's return_url with the payment's
// id and status, its own query kept. A return_url that is no web address is refused with nothing
// written.
func TestShopperReturned(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		svc, memory, returns, c := newAuthenticatingService(db)
		p, err := svc.Create(ctx, authenticationInput(provider.AuthenticateThenApprove))
		if err != nil {
			t.Fatal(err)
		}
		redirectURL, returnURL, waits := payment.NextAction(p)
		if p.Status != state.PaymentRequiresAction || !waits || !strings.HasPrefix(redirectURL, "https://memory.invalid/challenge/") ||
			returnURL == nil || *returnURL != "https://shop.example/orders/7?step=paid" ||
			p.AuthenticateBefore == nil || !p.AuthenticateBefore.Equal(c.Now().Add(payment.AuthenticationWindow)) {
			t.Fatalf("payment of a card that asks for authentication: %+v", p)
		}
		if sent := memory.returns[p.ID]; len(returns.secret(p.ID)) < 26 ||
			sent != "https://paygate.example/api/v1/payments/"+p.ID+"/return?return_secret="+returns.secret(p.ID) {
			t.Errorf("the provider was sent the return address %q", sent)
		}
		if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("refund of a payment waiting for its shopper: %v", err)
		}
		if _, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: p.ID}); !hasCode(err, apierror.InvalidState) {
			t.Errorf("capture of a payment waiting for its shopper: %v", err)
		}
		for range 2 {
			back, err := svc.ShopperReturned(context.Background(), p.ID, returns.of(p.ID, url.Values{"payment_intent": {"anything"}}))
			if err != nil || back.Status != state.PaymentSucceeded || back.AmountCaptured != back.Amount || back.NextActionURL != nil || back.AuthenticateBefore != nil {
				t.Fatalf("shopper back: %+v, %v", back, err)
			}
			if to := payment.ReturnTo(back); to != "https://shop.example/orders/7?step=paid&payment_id="+p.ID+"&status=succeeded" {
				t.Errorf("the browser is sent on to %s", to)
			}
		}
		if n := db.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(p.ID), paymentstatuschange.ToEQ(state.PaymentSucceeded)).CountX(databasetest.AsMerchant()); n != 1 {
			t.Errorf("%d moves to succeeded, want 1", n)
		}

		declined, err := svc.Create(ctx, authenticationInput(provider.AuthenticateThenDecline))
		if err != nil {
			t.Fatal(err)
		}
		if back, err := svc.ShopperReturned(context.Background(), declined.ID, returns.of(declined.ID, nil)); err != nil || back.Status != state.PaymentFailed ||
			back.FailureCode == nil || *back.FailureCode != "card_declined" {
			t.Errorf("declined after authentication: %+v, %v", back, err)
		}

		manual := authenticationInput(provider.AuthenticateThenApprove)
		manual.CaptureMethod = state.CaptureManual
		held, err := svc.Create(ctx, manual)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := svc.ShopperReturned(context.Background(), held.ID, returns.of(held.ID, nil)); err != nil || back.Status != state.PaymentRequiresCapture ||
			back.AmountCapturable != back.Amount || back.CaptureBefore == nil {
			t.Errorf("authorised after authentication: %+v, %v", back, err)
		}

		noReturn := authenticationInput(provider.AuthenticateThenApprove)
		noReturn.ReturnURL = nil
		if declined, err := svc.Create(ctx, noReturn); err != nil || declined.Status != state.PaymentFailed || *declined.FailureCode != "card_declined" {
			t.Errorf("a card that needs authentication, without a return_url: %+v, %v; want declined", declined, err)
		}
		if _, err := svc.ShopperReturned(context.Background(), "pay_none", nil); !hasCode(err, apierror.NotFound) {
			t.Errorf("return of an unknown payment: %v", err)
		}
		before := paymentCount(t, db)
		for _, bad := range []string{"javascript:alert(1)", "/orders/7", "https://user:pw@shop.example/", "https://shop.example/" + strings.Repeat("a", 2048)} {
			in := authenticationInput(provider.AuthenticateThenApprove)
			in.ReturnURL = &bad
			if _, err := svc.Create(ctx, in); !hasCode(err, apierror.InvalidRequest) {
				t.Errorf("return_url %.40q: %v, want invalid_request", bad, err)
			}
		}
		if after := paymentCount(t, db); after != before {
			t.Errorf("refused return_urls wrote %d payments", after-before)
		}
	})
}

// TestReturnWithoutItsSecret: each payment with a return_url gets a return secret of its own,
// kept only as its hash. The return of a payment waiting for its shopper (authenticated at the
// provider meanwhile) without that secret, with an empty, wrong or altered one, with its hash or
// with another payment's secret is refused as the return of an id that names no payment is, but
// for the id: nothing is written and the provider is not asked. So is the return of a payment
// without a return_url, which has no secret, and of one made before payments had secrets. An
// oversized secret is refused before any payment is looked for. With its secret the payment is
// settled.
func TestReturnWithoutItsSecret(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		svc, memory, returns, c := newAuthenticatingService(db)
		var made []*ent.Payment
		for _, in := range []payment.CreateInput{authenticationInput(provider.AuthenticateThenApprove),
			authenticationInput(provider.AuthenticateThenApprove), authenticationInput(provider.AuthenticateThenApprove), validInput()} {
			p, err := svc.Create(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			made = append(made, p)
		}
		waiting, other, old, plain := made[0], made[1], made[2], made[3]
		secret := returns.secret(waiting.ID)
		stored := db.Ent.Payment.GetX(databasetest.AsMerchant(), waiting.ID)
		if len(secret) < 26 || secret == returns.secret(other.ID) || stored.ReturnSecretHash == nil ||
			len(*stored.ReturnSecretHash) != 64 || strings.Contains(*stored.ReturnSecretHash, secret) {
			t.Fatalf("return secrets %q and %q, the first kept as %v", secret, returns.secret(other.ID), stored.ReturnSecretHash)
		}
		if returns.secret(plain.ID) != "" || db.Ent.Payment.GetX(databasetest.AsMerchant(), plain.ID).ReturnSecretHash != nil {
			t.Errorf("a payment without a return_url was given a return secret")
		}
		// A payment made before payments had secrets has none.
		if _, err := db.SQL.ExecContext(context.Background(), "UPDATE payments SET return_secret_hash = NULL WHERE id = $1", old.ID); err != nil {
			t.Fatal(err)
		}
		history := func(id string) int {
			return db.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(id)).CountX(databasetest.AsMerchant())
		}
		moves := history(waiting.ID)
		c.Advance(time.Minute) // whatever a refused return wrote would be written later

		_, unknown := svc.ShopperReturned(context.Background(), "pay_none", returns.of(waiting.ID, nil))
		refusedAsUnknown := func(name, id string, err error) {
			t.Helper()
			got, isAPI := errors.AsType[*apierror.Error](err)
			want, _ := errors.AsType[*apierror.Error](unknown)
			if !isAPI || want == nil || got.Code != apierror.NotFound || got.Code != want.Code || got.Param != want.Param ||
				strings.ReplaceAll(got.Message, id, "pay_none") != want.Message {
				t.Errorf("%s: %v, want %v but for the id", name, err, unknown)
			}
		}
		for name, query := range map[string]url.Values{
			"no query":          nil,
			"no secret":         {"payment_intent": {"anything"}},
			"an empty secret":   {payment.ReturnSecretParam: {""}},
			"a wrong secret":    {payment.ReturnSecretParam: {"AAAAAAAAAAAAAAAAAAAAAAAAAA"}},
			"a secret in lower": {payment.ReturnSecretParam: {strings.ToLower(secret)}},
			"a secret cut":      {payment.ReturnSecretParam: {secret[:len(secret)-1]}},
			"its hash":          {payment.ReturnSecretParam: {(*stored.ReturnSecretHash)[:64]}},
			"another's secret":  returns.of(other.ID, nil),
			"the secret second": {payment.ReturnSecretParam: {"AAAAAAAAAAAAAAAAAAAAAAAAAA", secret}},
		} {
			_, err := svc.ShopperReturned(context.Background(), waiting.ID, query)
			refusedAsUnknown(name, waiting.ID, err)
		}
		_, err := svc.ShopperReturned(context.Background(), plain.ID, url.Values{payment.ReturnSecretParam: {""}})
		refusedAsUnknown("a payment without a return_url", plain.ID, err)
		_, err = svc.ShopperReturned(context.Background(), old.ID, returns.of(old.ID, nil))
		refusedAsUnknown("a payment from before secrets, with the secret it was made with", old.ID, err)
		if _, err := svc.ShopperReturned(context.Background(), waiting.ID, url.Values{payment.ReturnSecretParam: {strings.Repeat("A", 65)}}); !hasCode(err, apierror.InvalidRequest) {
			t.Errorf("an oversized secret: %v, want invalid_request", err)
		}
		if after := db.Ent.Payment.GetX(databasetest.AsMerchant(), waiting.ID); after.Status != state.PaymentRequiresAction ||
			!after.UpdatedAt.Equal(stored.UpdatedAt) || history(waiting.ID) != moves {
			t.Errorf("refused returns changed the payment: %s, updated %v (was %v)", after.Status, after.UpdatedAt, stored.UpdatedAt)
		}
		if n := memory.asked.Load(); n != 0 {
			t.Errorf("refused returns asked the provider %d times", n)
		}

		back, err := svc.ShopperReturned(context.Background(), waiting.ID, returns.of(waiting.ID, nil))
		if err != nil || back.Status != state.PaymentSucceeded || memory.asked.Load() != 1 {
			t.Errorf("the return with its secret: %+v, %v (the provider asked %d times)", back, err, memory.asked.Load())
		}
	})
}

func paymentCount(t *testing.T, db *database.DB) int {
	t.Helper()
	n, err := db.Ent.Payment.Query().Count(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestReturnAndWebhookAtOnce: the shopper's browser coming back, several times, and the provider's
// webhook reporting the charge, all at once on two servers, settle the payment once.
func TestReturnAndWebhookAtOnce(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		var services []*payment.Service
		for _, pool := range pools {
			svc, _, _, _ := newAuthenticatingService(pool)
			services = append(services, svc)
		}
		returns := returnsFor(services...)
		p, err := services[0].Create(allowed(), authenticationInput(provider.AuthenticateThenApprove))
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			svc := services[i%len(services)]
			wg.Go(func() {
				if i%2 == 0 {
					_, errs[i] = svc.ShopperReturned(context.Background(), p.ID, returns.of(p.ID, nil))
					return
				}
				errs[i] = applyNotification(pools[i%len(pools)], svc,
					provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: p.ID, ProviderPaymentID: *p.ProviderPaymentID})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("news %d: %v", i, err)
			}
		}
		moves := pools[0].Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(p.ID)).AllX(databasetest.AsMerchant())
		succeeded := 0
		for _, m := range moves {
			if m.To == state.PaymentSucceeded {
				succeeded++
			}
		}
		if succeeded != 1 || len(moves) != 5 {
			t.Errorf("%d moves, %d to succeeded; want 5 and 1", len(moves), succeeded)
		}
	})
}

// applyNotification applies the memory provider's notification n through svc in a transaction
// of db, committed, as the webhook worker does.
func applyNotification(db *database.DB, svc *payment.Service, n provider.Notification) error {
	ctx := databasetest.AsMerchant()
	tx, err := db.Ent.Tx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := svc.ApplyNotification(ctx, tx, "memory", n); err != nil {
		return err
	}
	return tx.Commit()
}

// nothingHeld is the memory provider with nothing to cancel while its shopper is away, as Adyen
// and Checkout.com are, whose shopper authenticated (approved) or not.
type nothingHeld struct {
	providertest.Memory
	approved bool
}

func (n *nothingHeld) Cancel(context.Context, provider.CancelRequest) (provider.CancelResult, error) {
	return provider.CancelResult{}, provider.ErrNothingToCancel
}

func (n *nothingHeld) Authenticated(_ context.Context, req provider.AuthenticationRequest) (provider.ChargeResult, error) {
	if n.approved {
		return provider.ChargeResult{ProviderPaymentID: req.ProviderPaymentID, Approved: true}, nil
	}
	return provider.ChargeResult{ProviderPaymentID: req.ProviderPaymentID, RedirectURL: "https://memory.invalid/challenge"}, nil
}

// TestCancelWhileWaiting: a payment waiting for its shopper is canceled at a provider that can
// cancel it, and at one that holds nothing yet once it says the shopper has not authenticated;
// one whose shopper authenticated meanwhile is settled as the provider says, and the
// cancellation refused (409), its claim and reason dropped.
func TestCancelWhileWaiting(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		for _, tc := range []struct {
			name string
			p    provider.Provider
			want state.PaymentStatus
		}{
			{"cancels", &returnSeeing{}, state.PaymentCanceled},
			{"nothing held, still waiting", &nothingHeld{}, state.PaymentCanceled},
			{"nothing held, authenticated", &nothingHeld{approved: true}, state.PaymentSucceeded},
		} {
			c := &clock{now: time.Now().UTC().Truncate(time.Microsecond)}
			svc := newClockedService(db, tc.p, c)
			returnsFor(svc)
			p, err := svc.Create(allowed(), authenticationInput(provider.AuthenticateThenApprove))
			if err != nil || p.Status != state.PaymentRequiresAction {
				t.Fatalf("%s: %+v, %v", tc.name, p, err)
			}
			canceled, err := svc.Cancel(allowed(), payment.CancelInput{PaymentID: p.ID})
			got, _ := db.Ent.Payment.Get(databasetest.AsMerchant(), p.ID)
			switch {
			case got.Status != tc.want || got.PendingAction != nil || got.NextActionURL != nil:
				t.Errorf("%s: payment is %s (claim %v)", tc.name, got.Status, got.PendingAction)
			case tc.want == state.PaymentCanceled && (err != nil || canceled.Status != state.PaymentCanceled ||
				got.CancellationReason == nil || *got.CancellationReason != state.CanceledByCustomer):
				t.Errorf("%s: cancel = %+v, %v", tc.name, canceled, err)
			case tc.want == state.PaymentSucceeded && (!hasCode(err, apierror.InvalidState) || got.CancellationReason != nil):
				t.Errorf("%s: cancel overtaken = %v, reason %v; want invalid_state and no reason", tc.name, err, got.CancellationReason)
			}
		}
	})
}

// staleAuthenticator is the memory provider, taking captures to confirm later, whose answer to
// "what became of the authentication" waits until release is closed and then gives answer, as
// an answer the provider gave before the payment moved on would arrive late.
type staleAuthenticator struct {
	countingCapturer
	asked, release chan struct{}
	askedOnce      sync.Once
	answer         provider.ChargeResult
}

func (s *staleAuthenticator) Authenticated(_ context.Context, req provider.AuthenticationRequest) (provider.ChargeResult, error) {
	s.askedOnce.Do(func() { close(s.asked) })
	<-s.release
	answer := s.answer
	answer.ProviderPaymentID = req.ProviderPaymentID
	return answer, nil
}

// TestLateAuthenticationAnswerLeavesACaptureAlone: the shopper's return asks the provider while
// the payment waits; meanwhile the webhook authorises it
// and the merchant sends its capture. The provider's late answer, whatever it says, is about the
// authorisation recorded before: the capture stays under way, and the payment never waits for
// its shopper again, so the 3-D Secure loop is gone round once.
func TestLateAuthenticationAnswerLeavesACaptureAlone(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		for _, tc := range []struct {
			name   string
			answer provider.ChargeResult
			// person: the answer contradicts the capture under way, and is logged for a person.
			person bool
		}{
			{"still waiting", provider.ChargeResult{RedirectURL: "https://memory.invalid/challenge/again"}, false},
			{"approved", provider.ChargeResult{Approved: true}, false},
			{"declined", provider.ChargeResult{DeclineCode: "card_declined", DeclineMessage: "The card was declined."}, true},
			{"voided", provider.ChargeResult{Approved: true, Canceled: true}, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx := allowed()
				c := &clock{now: time.Now().UTC().Truncate(time.Microsecond)}
				p := &staleAuthenticator{countingCapturer: countingCapturer{pending: true}, asked: make(chan struct{}), release: make(chan struct{}), answer: tc.answer}
				// Released once the capture is sent, or when the test ends early, so that the
				// shopper's return never waits on a test that gave up.
				release := sync.OnceFunc(func() { close(p.release) })
				t.Cleanup(release)
				svc := newClockedService(db, p, c)
				logs := &logtest.Buffer{}
				svc.Logger = slog.New(slog.NewJSONHandler(logs, nil))
				returns := returnsFor(svc)
				in := authenticationInput(provider.AuthenticateThenApprove)
				in.CaptureMethod = state.CaptureManual
				waiting, err := svc.Create(ctx, in)
				if err != nil || waiting.Status != state.PaymentRequiresAction {
					t.Fatalf("%s: payment = %+v, %v", tc.name, waiting, err)
				}
				returned := make(chan error, 1)
				go func() {
					_, err := svc.ShopperReturned(context.Background(), waiting.ID, returns.of(waiting.ID, nil))
					returned <- err
				}()
				<-p.asked
				if err := applyNotification(db, svc, provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: waiting.ID, ProviderPaymentID: *waiting.ProviderPaymentID}); err != nil {
					t.Fatal(err)
				}
				if sent, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: waiting.ID}); err != nil || sent.Status != state.PaymentProcessing {
					t.Fatalf("%s: capture = %+v, %v; want processing", tc.name, sent, err)
				}
				release()
				if err := <-returned; err != nil {
					t.Errorf("%s: shopper back: %v", tc.name, err)
				}
				got := db.Ent.Payment.GetX(databasetest.AsMerchant(), waiting.ID)
				if got.Status != state.PaymentProcessing || got.PendingAction == nil || *got.PendingAction != "capture" || got.NextActionURL != nil {
					t.Errorf("%s: after the late answer the payment is %s (pending %v, next action %v); want its capture under way",
						tc.name, got.Status, got.PendingAction, got.NextActionURL)
				}
				waits := db.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(waiting.ID), paymentstatuschange.ToEQ(state.PaymentRequiresAction)).
					CountX(databasetest.AsMerchant())
				if waits != 1 {
					t.Errorf("%s: the payment waited for its shopper %d times, want 1", tc.name, waits)
				}
				if person := strings.Contains(logs.String(), `"msg":"payment needs a person"`); person != tc.person {
					t.Errorf("%s: logged for a person: %v, want %v: %s", tc.name, person, tc.person, logs.String())
				}
			})
		}
	})
}
