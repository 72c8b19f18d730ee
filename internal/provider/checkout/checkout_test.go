package checkout

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
)

func TestConformance(t *testing.T) {
	sandbox := NewSandbox()
	server := httptest.NewServer(sandbox)
	defer server.Close()
	c := &Client{BaseURL: server.URL, SecretKey: "sk_sbox_x", Caller: provider.Caller{HTTP: server.Client(), RetryWaits: []time.Duration{time.Millisecond}}}
	unauthenticated := *c
	unauthenticated.SecretKey = ""
	providertest.Run(t, providertest.Adapter{Client: c, Unauthenticated: &unauthenticated, Switches: &sandbox.SandboxSwitches,
		RawDeclines:    map[string]string{providertest.Declined: "20005", providertest.InsufficientFunds: "20051", providertest.ExpiredCard: "20054"},
		RefundsPending: true})
}
