// Command paygate-load drives create, get and list payments against a running Paygate over REST
// and GraphQL, and against the bare yardstick handler over the same database, then prints each
// one's throughput, p50 and p99, and Paygate's resident memory.
//
//	go build -o /tmp/paygate . && PAYGATE_DATABASE_URL=postgres://... /tmp/paygate &
//	go run ./cmd/paygate-load -database-url postgres://... -email admin@example.com -password ... -pid $!
//
// It makes payments with the sandbox's test card and, through the bare handler, payments
// recorded as failed: run it against a Paygate and a database set up for measuring, never one
// that holds real payments.
//
// paygate-load logins -email E -password P measures a real user's login alone and during a flood
// of logins with made-up accounts from another local address, as the login throttles see it.
//
// paygate-load stand-in serves a Stripe API that approves every charge and keeps nothing, for
// Paygate (PAYGATE_STRIPE_BASE_URL) and the bare handler (-stripe) to charge through alike;
// paygate-load sandbox serves Stripe's sandbox on a database of its own instead.
//
// The bare handler runs in this process unless -bare names one already serving
// (paygate-load bare -database-url ... -listen 127.0.0.1:8081), which keeps it from sharing a
// process with the load it is measured under.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/loadtest"
	"github.com/paygate/paygate/internal/provider/stripe"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "paygate-load:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) > 0 && args[0] == "bare" {
		return serveBare(ctx, args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "sandbox" {
		return serveSandbox(ctx, args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "stand-in" {
		return serveStandIn(ctx, args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "logins" {
		return floodLogins(ctx, args[1:], stdout)
	}
	flags := flag.NewFlagSet("paygate-load", flag.ContinueOnError)
	paygateURL := flags.String("paygate", "http://127.0.0.1:8080", "the running Paygate")
	token := flags.String("token", "", "a bearer token with payments:read and payments:write (or give -email and -password)")
	email := flags.String("email", "", "log in as this user")
	password := flags.String("password", "", "the user's password")
	databaseURL := flags.String("database-url", "", "Paygate's database: analysed after the creates, and the bare handler's unless -bare is given")
	bareURL := flags.String("bare", "", "a bare handler already serving (paygate-load bare), instead of one in this process")
	pid := flags.Int("pid", 0, "Paygate's process id, to read its resident memory and CPU time per request (Linux)")
	barePID := flags.Int("bare-pid", 0, "the process id of the bare handler given by -bare, to read its CPU time per request (Linux)")
	concurrency := flags.Int("concurrency", 32, "concurrent clients")
	duration := flags.Duration("duration", 5*time.Second, "how long each run lasts")
	rounds := flags.Int("rounds", 3, "how many times each target is run, in turn with the others")
	keyed := flags.Bool("keyed", true, "send every create with a new Idempotency-Key")
	operations := flags.String("ops", "create,get,list", "the operations to run, in order")
	stripeURL := flags.String("stripe", "", "a Stripe API (paygate-load sandbox) the bare handler in this process charges through, as Paygate does")
	subscribers := flags.Int("subscribers", 0, "idle GraphQL subscriptions (over WebSockets) held open on Paygate during the runs")
	only := flags.String("targets", "bare,rest,graphql", "the targets to run: a profile taken during the run then shows one surface alone")
	if err := flags.Parse(args); err != nil {
		return err
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		MaxIdleConns: *concurrency * 3, MaxIdleConnsPerHost: *concurrency, IdleConnTimeout: time.Minute,
	}}
	if *token == "" {
		if *email == "" {
			return errors.New("give -token, or -email and -password")
		}
		var err error
		if *token, err = logIn(ctx, client, *paygateURL, *email, *password); err != nil {
			return err
		}
	}
	if *barePID != 0 && *bareURL == "" {
		return errors.New("-bare-pid is the process of the bare handler -bare names; without -bare it runs in this process")
	}
	var analyze func(ctx context.Context) error
	if *databaseURL != "" {
		db, err := database.Open(*databaseURL, database.Options{})
		if err != nil {
			return err
		}
		defer db.Close()
		// As pgbench does before it measures: the planner is to see the table the creates made.
		// Without it a list reads every payment of the merchant and sorts them, until autovacuum
		// gets round to the table.
		analyze = func(ctx context.Context) error {
			_, err := db.SQL.ExecContext(ctx, "ANALYZE")
			return err
		}
		if *bareURL == "" {
			listener, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			server := &http.Server{Handler: loadtest.Bare(db.SQL, db.Dialect, *stripeURL)}
			go server.Serve(listener)
			defer server.Close()
			*bareURL = "http://" + listener.Addr().String()
		}
	}
	if *bareURL == "" {
		return errors.New("give -database-url (Paygate's database) or -bare")
	}

	var targets []loadtest.Target
	for _, t := range []loadtest.Target{
		{Surface: loadtest.SurfaceBare, BaseURL: *bareURL, PID: *barePID},
		{Surface: loadtest.SurfaceREST, BaseURL: *paygateURL, Token: *token, PID: *pid},
		{Surface: loadtest.SurfaceGraphQL, BaseURL: *paygateURL, Token: *token, PID: *pid},
	} {
		if slices.ContainsFunc(strings.Split(*only, ","), func(name string) bool { return strings.TrimSpace(name) == string(t.Surface) }) {
			targets = append(targets, t)
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("-targets %q names none of bare, rest and graphql", *only)
	}
	if *subscribers > 0 {
		before := memoryOf(*pid)
		closeSubscribers, err := loadtest.OpenSubscribers(ctx, client, *paygateURL, *token, *subscribers)
		if err != nil {
			return err
		}
		defer closeSubscribers()
		fmt.Fprintf(stdout, "%d idle subscriptions open; paygate resident memory %s before, %s with them\n", *subscribers, before, memoryOf(*pid))
	}
	cfg := loadtest.Config{Concurrency: *concurrency, Duration: *duration, Keyed: *keyed, Client: client, BeforeReads: analyze}
	fmt.Fprintf(stdout, "%d clients, %d rounds of %s per target, keyed creates: %v\n", cfg.Concurrency, *rounds, cfg.Duration, cfg.Keyed)
	results, err := loadtest.Compare(ctx, cfg, targets, strings.Split(*operations, ","), *rounds)
	if err != nil {
		return err
	}
	loadtest.Report(stdout, results)
	if *pid != 0 {
		now, peak, err := loadtest.ResidentMemory(*pid)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "paygate resident memory: %d MB now, %d MB at peak\n", now>>20, peak>>20)
	}
	for _, r := range results {
		if r.Errors > 0 {
			return fmt.Errorf("%s over %s: %d of %d requests failed; the figures above do not measure what they claim", r.Operation, r.Surface, r.Errors, r.Requests)
		}
	}
	return nil
}

// memoryOf says the resident memory of process pid, when it is known.
func memoryOf(pid int) string {
	if pid == 0 {
		return "(unknown: give -pid)"
	}
	now, _, err := loadtest.ResidentMemory(pid)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return fmt.Sprintf("%d MB", now>>20)
}

// logIn returns an access token for the user.
func logIn(ctx context.Context, client *http.Client, baseURL, email, password string) (string, error) {
	status, token, err := loadtest.LogIn(ctx, client, baseURL, email, password)
	if err != nil {
		return "", err
	}
	if token == "" {
		return "", fmt.Errorf("logging in as %s: %d %s", email, status, http.StatusText(status))
	}
	return token, nil
}

// floodLogins measures a real user's login alone and during a flood of logins with made-up
// accounts from another address.
func floodLogins(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("paygate-load logins", flag.ContinueOnError)
	paygateURL := flags.String("paygate", "http://127.0.0.1:8080", "the running Paygate, on this machine")
	email := flags.String("email", "", "the real user")
	password := flags.String("password", "", "the real user's password")
	workers := flags.Int("workers", 8, "concurrent clients of the flood")
	duration := flags.Duration("duration", 10*time.Second, "how long the flood lasts")
	logins := flags.Int("logins", 8, "real logins alone, and as many during the flood, each from an address of its own (127.0.0.10 on)")
	after := flags.Duration("after", 0, "how long into the flood the real logins begin (default: a fifth of -duration)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *email == "" || *logins < 1 || *logins > 100 {
		return errors.New("give -email and -password of a real user, and -logins from 1 to 100")
	}
	real := make([]string, 2**logins)
	for i := range real {
		real[i] = fmt.Sprintf("127.0.0.%d", 10+i)
	}
	flood := loadtest.LoginFlood{BaseURL: *paygateURL, Email: *email, Password: *password, Workers: *workers, Duration: *duration,
		After: *after, FloodFrom: "127.0.0.1", RealFrom: real}
	fmt.Fprintf(stdout, "%d workers flooding logins from 127.0.0.1 for %s; the real user logs in from 127.0.0.10 on\n", *workers, *duration)
	result, err := flood.Run(ctx)
	if err != nil {
		return err
	}
	loadtest.ReportLogins(stdout, result)
	return nil
}

// serveBare serves the bare handler until interrupted.
func serveBare(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("paygate-load bare", flag.ContinueOnError)
	databaseURL := flags.String("database-url", "", "Paygate's database")
	listen := flags.String("listen", "127.0.0.1:8081", "the address to serve on")
	stripeURL := flags.String("stripe", "", "a Stripe API (paygate-load sandbox) to charge each payment through, as Paygate does")
	if err := flags.Parse(args); err != nil {
		return err
	}
	db, err := database.Open(*databaseURL, database.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	return serveUntilDone(ctx, *listen, "bare handler", loadtest.Bare(db.SQL, db.Dialect, *stripeURL), stdout)
}

// serveSandbox serves Stripe's built-in sandbox over HTTP on its own database until interrupted:
// a provider in a process of its own, for Paygate and the bare handler to charge through alike.
func serveSandbox(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("paygate-load sandbox", flag.ContinueOnError)
	databaseURL := flags.String("database-url", "", "the sandbox's own database (migrated like Paygate's)")
	listen := flags.String("listen", "127.0.0.1:8082", "the address to serve on")
	if err := flags.Parse(args); err != nil {
		return err
	}
	db, err := database.Open(*databaseURL, database.Options{MaxConns: 64})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	return serveUntilDone(ctx, *listen, "Stripe sandbox", stripe.Registration.NewSandbox(db.Ent, stripe.Registration.SandboxSettings(nil), time.Now, "http://"+*listen), stdout)
}

// serveStandIn serves a Stripe stand-in that approves every charge and keeps nothing until
// interrupted: the provider's round trip without the provider's work on the same cores.
func serveStandIn(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("paygate-load stand-in", flag.ContinueOnError)
	listen := flags.String("listen", "127.0.0.1:8082", "the address to serve on")
	if err := flags.Parse(args); err != nil {
		return err
	}
	return serveUntilDone(ctx, *listen, "Stripe stand-in", loadtest.StripeStandIn(), stdout)
}

func serveUntilDone(ctx context.Context, listen, what string, h http.Handler, stdout io.Writer) error {
	server := &http.Server{Addr: listen, Handler: h}
	go func() {
		<-ctx.Done()
		server.Close()
	}()
	fmt.Fprintf(stdout, "%s on http://%s\n", what, listen)
	if err := server.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
