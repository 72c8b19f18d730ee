package outbound

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	events "github.com/paygate/paygate/internal/event"
)

// standardDelivery is one delivery for the TypeScript verifier: the secret it is checked under,
// its Standard Webhooks headers and its body.
type standardDelivery struct {
	Secret  string            `json:"secret"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

func deliveryOf(secret string, header http.Header, body []byte) standardDelivery {
	headers := map[string]string{}
	for _, name := range []string{standardwebhooks.HeaderWebhookID, standardwebhooks.HeaderWebhookTimestamp, standardwebhooks.HeaderWebhookSignature} {
		headers[name] = header.Get(name)
	}
	return standardDelivery{Secret: secret, Headers: headers, Body: string(body)}
}

// TestDeliveriesVerifyInTypeScript: a test event as it reached an endpoint, and an event the
// deliveries' worker took to an endpoint whose secret was rotated (signed by both), verify with the
// Standard Webhooks TypeScript library and with Svix's (testdata/standardwebhooks, their versions
// pinned by package-lock.json) as they do with the Go library; a changed body, another secret and
// a timestamp 10 minutes old are refused by all three.
func TestDeliveriesVerifyInTypeScript(t *testing.T) {
	node, nodeErr := exec.LookPath("node")
	npm, npmErr := exec.LookPath("npm")
	if nodeErr != nil || npmErr != nil {
		t.Skip("node and npm are needed to verify deliveries with the TypeScript library (.ci/run installs them)")
	}
	dir := filepath.Join("testdata", "standardwebhooks")
	install := exec.CommandContext(t.Context(), npm, "ci", "--prefer-offline", "--no-audit", "--no-fund")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}

	server, got := endpoint(t, http.StatusOK, "ok")
	sender := testSender(NewSender(false, 0), nil)
	if _, err := sender.Send(asRole("usr_1", "operator"), TestWebhookRequest{URL: server.URL, Secret: merchantSecret}); err != nil {
		t.Fatal(err)
	}
	sent := <-got

	// An event as the deliveries' worker took it to an endpoint whose secret was just rotated:
	// signed by the rotated secret beside its successor.
	db := databasetest.SQLite(t)
	h := newHarness(t, []*database.DB{db}, NewSender(false, 0))
	m := newMerchant(t, nil)
	endpoints := &Endpoints{Client: db.Ent, Dialect: db.Dialect, Now: time.Now}
	made, rotated, err := endpoints.Create(asRole("usr_1", "admin"), EndpointInput{URL: m.server.URL, Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	_, successor, err := endpoints.RotateSecret(asRole("usr_1", "admin"), made.ID)
	if err != nil {
		t.Fatal(err)
	}
	h.event(events.RefundSucceeded)
	h.round(0)
	if len(m.received()) != 1 {
		t.Fatalf("the endpoint got %d deliveries", len(m.received()))
	}
	worker := m.received()[0]
	body := worker.body
	both := worker.header
	stale, err := SignedHeaders("evt_stale", time.Now().Add(-10*time.Minute), body, merchantSecret)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		delivery standardDelivery
		verifies bool
	}{
		{"as sent", deliveryOf(merchantSecret, sent.header, sent.body), true},
		{"body changed", deliveryOf(merchantSecret, sent.header, bytes.Replace(sent.body, []byte("10.00"), []byte("1000.00"), 1)), false},
		{"another secret", deliveryOf(NewSigningSecret(), sent.header, sent.body), false},
		{"a delivery under the rotated secret", deliveryOf(rotated, both, body), true},
		{"under its successor", deliveryOf(successor, both, body), true},
		{"a delivery changed", deliveryOf(successor, both, bytes.Replace(body, []byte("refund.succeeded"), []byte("refund.failed"), 1)), false},
		{"10 minutes old", deliveryOf(merchantSecret, stale, body), false},
	}
	var input bytes.Buffer
	for _, tc := range cases {
		line, err := json.Marshal(tc.delivery)
		if err != nil {
			t.Fatal(err)
		}
		input.Write(append(line, '\n'))
		// The Go library agrees, so the two are checked against each other.
		verifier, err := standardwebhooks.NewWebhook(tc.delivery.Secret)
		if err != nil {
			t.Fatal(err)
		}
		header := http.Header{}
		for name, value := range tc.delivery.Headers {
			header.Set(name, value)
		}
		if err := verifier.Verify([]byte(tc.delivery.Body), header); (err == nil) != tc.verifies {
			t.Errorf("%s: the Go library says %v, want verified %v", tc.name, err, tc.verifies)
		}
	}
	verify := exec.CommandContext(t.Context(), node, "verify.mjs")
	verify.Dir, verify.Stdin = dir, &input
	out, err := verify.Output()
	if err != nil {
		t.Fatalf("node verify.mjs: %v\n%s", err, out)
	}
	verdicts := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(verdicts) != len(cases) {
		t.Fatalf("the TypeScript library gave %d verdicts for %d deliveries: %q", len(verdicts), len(cases), out)
	}
	for i, tc := range cases {
		if verified, refused := verdicts[i] == "ok", strings.HasPrefix(verdicts[i], "refused: "); verified != tc.verifies || refused == tc.verifies {
			t.Errorf("%s: the TypeScript libraries say %q, want verified %v", tc.name, verdicts[i], tc.verifies)
		}
	}
	if !slices.Contains(verdicts, "ok") {
		t.Error("nothing verified")
	}
}
