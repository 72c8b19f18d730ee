package providertest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/prefixid"
	"github.com/paygate/paygate/internal/provider"
)

// ServeSandbox serves the sandbox that build makes for the address it is served at (the address
// of its pages too) over HTTP for the test, and returns that address and a caller for it that
// retries once.
func ServeSandbox(t *testing.T, build func(pages string) http.Handler) (string, provider.Caller) {
	t.Helper()
	server := httptest.NewUnstartedServer(nil)
	server.Config.Handler = build("http://" + server.Listener.Addr().String())
	server.Start()
	t.Cleanup(server.Close)
	return server.URL, provider.Caller{HTTP: server.Client(), RetryWaits: []time.Duration{time.Millisecond}}
}

// authenticator is the adapter as a provider.Authenticator.
func authenticator(t *testing.T, c provider.Provider) provider.Authenticator {
	t.Helper()
	a, ok := c.(provider.Authenticator)
	if !ok {
		t.Fatalf("%T is no provider.Authenticator", c)
	}
	return a
}

// Shopper is the shopper's browser on a sandbox's challenge page: it reads the page, submits its
// form with outcome, and returns where the page sent it (the 303's Location), unfollowed.
func Shopper(t *testing.T, page, outcome string) *url.URL {
	t.Helper()
	resp, err := http.Get(page)
	if err != nil {
		t.Fatalf("opening the challenge page: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(body), `<form method="post">`) || !strings.Contains(string(body), `name="outcome"`) {
		t.Fatalf("challenge page = %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = browser.PostForm(page, url.Values{"outcome": {outcome}})
	if err != nil {
		t.Fatalf("submitting the challenge: %v", err)
	}
	resp.Body.Close()
	location, err := resp.Location()
	if resp.StatusCode != http.StatusSeeOther || err != nil {
		t.Fatalf("submitting the challenge = %d, location %v", resp.StatusCode, err)
	}
	return location
}

// authentication checks 3-D Secure. A card that asks for it is answered with the page to send
// the shopper to, undecided, alike when sent again, and when looked up or asked about before the
// shopper came back. The page's form sends the browser back to the return URL (its own query
// kept), after which the provider says what became of the charge: approved once completed (and
// held, for a manual capture), declined when failed or for a card declined after it. What the
// browser brought back for one charge never decides another, a decided challenge is gone, and an
// answer lost leaves the charge unknown, found awaiting the shopper.
func authentication(t *testing.T, a Adapter) {
	ctx := context.Background()
	auth := authenticator(t, a.Client)
	reconciler, lookups := a.Client.(provider.Reconciler)
	start := func(t *testing.T, number string, manual bool) (provider.ChargeRequest, provider.ChargeResult) {
		t.Helper()
		req := Charge(t, number, 2500)
		req.CaptureManually = manual
		req.ReturnURL = "http://127.0.0.1:9/api/v1/payments/" + req.PaymentID + "/return?from=test"
		result, err := a.Client.Charge(ctx, req)
		if err != nil || !result.AwaitsShopper() || result.Approved || result.DeclineCode != "" {
			t.Fatalf("charge of a card that asks for authentication = %+v, %v; want a page for the shopper", result, err)
		}
		if again, err := a.Client.Charge(ctx, req); err != nil || again != result {
			t.Errorf("the same charge again = %+v, %v; want %+v", again, err, result)
		}
		return req, result
	}
	for _, tc := range []struct {
		name, number, outcome string
		manual, approved      bool
	}{
		{"completed", provider.AuthenticateThenApprove, "complete", false, true},
		{"completed_manual_capture", provider.AuthenticateThenApprove, "complete", true, true},
		{"failed", provider.AuthenticateThenApprove, "fail", false, false},
		{"declined_after", provider.AuthenticateThenDecline, "complete", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, waiting := start(t, tc.number, tc.manual)
			if lookups {
				if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err != nil || !ok || !found.AwaitsShopper() {
					t.Errorf("look-up of a charge awaiting the shopper = %+v, %v, %v", found, ok, err)
				}
			}
			ask := provider.AuthenticationRequest{PaymentID: req.PaymentID, ProviderPaymentID: waiting.ProviderPaymentID}
			if early, err := auth.Authenticated(ctx, ask); err == nil && !early.AwaitsShopper() {
				t.Errorf("asked before the shopper came back = %+v; want undecided", early)
			}
			back := Shopper(t, waiting.RedirectURL, tc.outcome)
			if back.Scheme+"://"+back.Host+back.Path != "http://127.0.0.1:9/api/v1/payments/"+req.PaymentID+"/return" || back.Query().Get("from") != "test" {
				t.Fatalf("the challenge sent the browser to %s, want the return URL %s", back, req.ReturnURL)
			}
			ask.Returned = back.Query()
			final, err := auth.Authenticated(ctx, ask)
			switch {
			case err != nil:
				t.Fatalf("asked once the shopper came back: %v", err)
			case final.AwaitsShopper() || final.Approved != tc.approved || final.ProviderPaymentID == "":
				t.Fatalf("asked once the shopper came back = %+v; want approved %v", final, tc.approved)
			case !tc.approved && final.DeclineCode != "card_declined":
				t.Errorf("decline code = %q, want card_declined", final.DeclineCode)
			case tc.manual && (final.Captured != 0 || final.Canceled):
				t.Errorf("an authorisation after authentication = %+v, want held", final)
			}
			if lookups {
				if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err != nil || !ok || found.Approved != tc.approved || found.AwaitsShopper() {
					t.Errorf("look-up once decided = %+v, %v, %v; want approved %v", found, ok, err, tc.approved)
				}
			}
			if resp, err := http.Get(waiting.RedirectURL); err != nil || resp.StatusCode != http.StatusNotFound {
				t.Errorf("the challenge page once decided = %v, %v; want 404", resp, err)
			} else {
				resp.Body.Close()
			}
			if tc.approved && !tc.manual {
				if _, err := a.Client.Refund(ctx, provider.RefundRequest{RefundID: prefixid.New("re"), ProviderPaymentID: final.ProviderPaymentID,
					Amount: money.Amount{Minor: 1000, Currency: "EUR"}}); err != nil {
					t.Errorf("a refund of a charge approved after authentication = %v", err)
				}
			}
		})
	}
	t.Run("returned_for_another", func(t *testing.T) {
		// What the browser brought back from one charge's page, sent with another charge, never
		// decides that other charge.
		_, completed := start(t, provider.AuthenticateThenApprove, false)
		back := Shopper(t, completed.RedirectURL, "complete")
		other, waiting := start(t, provider.AuthenticateThenApprove, false)
		// With the provider's id of the charge and without (an answer lost: the browser's query
		// is then all there is to go by).
		for _, providerPaymentID := range []string{waiting.ProviderPaymentID, ""} {
			result, err := auth.Authenticated(ctx, provider.AuthenticationRequest{PaymentID: other.PaymentID,
				ProviderPaymentID: providerPaymentID, Returned: back.Query()})
			if err == nil && !result.AwaitsShopper() {
				t.Errorf("asked with another charge's return (provider id %q) = %+v; want undecided or an error", providerPaymentID, result)
			}
		}
	})
	t.Run("not_asked", func(t *testing.T) {
		// Without a return address no authentication is asked for (nobody could come back from
		// it): a card that needs one is declined, never failed over.
		result, err := a.Client.Charge(ctx, Charge(t, provider.AuthenticateThenApprove, 2500))
		if err != nil || result.AwaitsShopper() || result.Approved || result.DeclineCode != "card_declined" {
			t.Errorf("charge of a card that needs authentication, without a return address = %+v, %v; want declined", result, err)
		}
		if plain, err := a.Client.Charge(ctx, Charge(t, Approved, 2500)); err != nil || !plain.Approved {
			t.Errorf("charge of a card that needs none, without a return address = %+v, %v; want approved", plain, err)
		}
	})
	t.Run("answer_lost", func(t *testing.T) {
		req := Charge(t, provider.AuthenticateThenApprove, 2500)
		req.ReturnURL = "http://127.0.0.1:9/api/v1/payments/" + req.PaymentID + "/return"
		a.Switches.LoseAnswers.Store(true)
		_, err := a.Client.Charge(ctx, req)
		a.Switches.LoseAnswers.Store(false)
		if !Unknown(err) {
			t.Fatalf("a charge whose answer was lost = %v, want an unknown outcome", err)
		}
		if lookups {
			if found, ok, err := reconciler.LookupCharge(ctx, req.PaymentID); err != nil || !ok || !found.AwaitsShopper() {
				t.Errorf("look-up of a charge awaiting the shopper whose answer was lost = %+v, %v, %v", found, ok, err)
			}
		}
	})
}
