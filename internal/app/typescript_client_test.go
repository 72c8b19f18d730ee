package app

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/provider"
)

// typescriptClient is the client shipped in clients/typescript.
var typescriptClient = filepath.Join("..", "..", "clients", "typescript")

// typescriptGenerated are the files npm run generate writes in typescriptClient, which are
// committed for integrators to copy.
var typescriptGenerated = []string{"src/gql/gql.ts", "src/gql/graphql.ts", "src/gql/index.ts", "src/rest/openapi.ts"}

// TestTypeScriptClientInputsAreTheServers: the schema and the document the TypeScript client is
// generated from are the ones the server serves (go generate writes them).
func TestTypeScriptClientInputsAreTheServers(t *testing.T) {
	t.Parallel()
	var schema bytes.Buffer
	WriteGraphQLSchema(&schema)
	for file, served := range map[string][]byte{"schema.graphql": schema.Bytes(), "openapi.json": OpenAPIDocument()} {
		if committed, err := os.ReadFile(filepath.Join(typescriptClient, file)); err != nil || !bytes.Equal(committed, served) {
			t.Errorf("clients/typescript/%s is not what the server serves (%v): run go generate ./graph", file, err)
		}
	}
}

// TestTypeScriptClient: the TypeScript client shipped with Paygate is what its generators make of
// the schema and the document the server serves (go generate writes those two), it compiles under
// tsc --strict, and its example, run in node against a real server on each database, logs in,
// pays, pages the payments, refunds and subscribes over GraphQL (Apollo Client, graphql-ws) and
// REST (openapi-fetch).
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	node := nodeFor(t, "build the TypeScript client")
	npmCI(t, typescriptClient)
	inClient := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), name, args...)
		cmd.Dir = typescriptClient
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s in clients/typescript: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	committed := map[string][]byte{}
	for _, file := range typescriptGenerated {
		content, err := os.ReadFile(filepath.Join(typescriptClient, file))
		if err != nil {
			t.Fatal(err)
		}
		committed[file] = content
	}
	inClient("npm", "run", "generate")
	for _, file := range typescriptGenerated {
		path := filepath.Join(typescriptClient, file)
		if fresh, err := os.ReadFile(path); err != nil || !bytes.Equal(fresh, committed[file]) {
			t.Errorf("clients/typescript/%s is not what npm run generate makes of the schema and the document: run it and commit the result", file)
			os.WriteFile(path, committed[file], 0o644) // leave the tree as it was
		}
	}
	inClient("npm", "run", "build") // tsc, strict

	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		env.app.Start(t.Context())
		email := env.loginUser("admin", true)
		admin := env.tokenFor("admin")
		for range 4 { // more than two pages of two, with the example's own payment
			if r := env.request(http.MethodPost, "/api/v1/payments", admin, paymentBody("12.50", "EUR", "4242424242424242")); r.status != http.StatusCreated {
				t.Fatalf("payment: %d %s", r.status, r.raw)
			}
		}
		example := exec.CommandContext(t.Context(), node, filepath.Join("dist", "example.js"))
		example.Dir = typescriptClient
		example.Env = append(os.Environ(), "PAYGATE_URL="+env.url, "PAYGATE_EMAIL="+email, "PAYGATE_PASSWORD="+testPassword,
			"PAYGATE_CARD="+provider.ApprovedCard, "PAYGATE_DECLINED_CARD=4000000000000002")
		out, err := example.CombinedOutput()
		if err != nil {
			t.Fatalf("the example failed: %v\n%s", err, out)
		}
		t.Logf("the example:\n%s", out)
		for _, step := range []string{"graphql: payments page 3 (5 in all)", "PARTIALLY_REFUNDED, refunded 10.00", "graphql: subscription heard",
			"graphql: over-refund refused with refund_exceeds_payment", "order_id=ord_1001", "= 2500 minor units", "= 1250 minor units",
			"rest: HTTP 402 card_declined", "\ndone\n"} {
			if !strings.Contains(string(out), step) {
				t.Errorf("the example did not say %q", step)
			}
		}
	})
}
