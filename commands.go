package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/app"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/clock"
	"github.com/paygate/paygate/internal/config"
)

const overview = `Paygate: a payment API over GraphQL and REST.

Usage:
  paygate [serve]                                      run the server (the default)
  paygate migrate                                      apply the database migrations and exit
  paygate user create --email E --password P --role R  add a user
  paygate user set-password --email E --password P     set a user's password and end their sessions
  paygate apikey create --name N --scopes a,b          make an API key, printed once
  paygate schema graphql | openapi                     print the GraphQL schema or the OpenAPI document
  paygate help [command]                               this help, or a command's or a group's (user, apikey, schema)

Every command reads its configuration from the environment; its help lists the variables it reads.
`

// command is one of the binary's commands.
type command struct {
	usage, about string
	// env is the groups of variables the command reads, for its help to name.
	env []config.Group
	// flags defines the command's flags on fs and returns what runs it, once they are parsed.
	flags func(fs *flag.FlagSet) func(ctx context.Context, cfg config.Config, out commandOutput) error
}

// commandOutput is where a command writes: its result to stdout, logs and notes to stderr; and
// stdin, what it reads when told to (a password given as -).
type commandOutput struct {
	stdout, stderr io.Writer
	stdin          io.Reader
}

var commands = map[string]command{
	"serve": {
		usage: "paygate [serve]",
		about: "Runs the server until it is interrupted (SIGINT, SIGTERM), then finishes the requests in flight and the background work under way.",
		env:   config.Groups(),
		flags: func(*flag.FlagSet) func(context.Context, config.Config, commandOutput) error {
			return func(ctx context.Context, cfg config.Config, out commandOutput) error {
				logger, stopLogging := app.NewServerLogger(out.stdout, cfg.LogLevel)
				defer stopLogging()
				return serve(ctx, cfg, logger)
			}
		},
	},
	"migrate": {
		usage: "paygate migrate",
		about: "Applies the database migrations Paygate embeds and exits; the server applies them at start too.",
		env:   []config.Group{config.GroupDatabase, config.GroupLog}, // openDatabase, newLogger
		flags: func(*flag.FlagSet) func(context.Context, config.Config, commandOutput) error {
			return func(ctx context.Context, cfg config.Config, out commandOutput) error {
				db, err := app.OpenDatabase(ctx, cfg)
				if err != nil {
					return err
				}
				defer db.Close()
				app.NewLogger(out.stdout, cfg.LogLevel).Info("migrations applied")
				return nil
			}
		},
	},
	"user create": {
		usage: "paygate user create --email E --password P --role R",
		about: "Adds a user who logs in with the email and password: the first admin of a production deployment, say.",
		env:   []config.Group{config.GroupDatabase}, // openDatabase
		flags: userCreate,
	},
	"user set-password": {
		usage: "paygate user set-password --email E --password P",
		about: "Sets a user's password and ends every session of theirs (their API keys go on): for someone locked out. " +
			"With --password - the password is the first line of stdin, so it appears in neither the shell's history nor the list of processes.",
		env:   []config.Group{config.GroupDatabase}, // openDatabase
		flags: userSetPassword,
	},
	"apikey create": {
		usage: "paygate apikey create --name N --scopes a,b [--user EMAIL] [--expires-at TIME]",
		about: "Makes an API key for a deployment's programs, before anyone has logged in to make one, and prints it: it is shown this once.",
		env:   []config.Group{config.GroupDatabase, config.GroupSecrets}, // openDatabase, LoadSecrets, Production
		flags: apiKeyCreate,
	},
	"schema graphql": {
		usage: "paygate schema graphql",
		about: "Prints the GraphQL schema served at /query, in SDL, for client generators (clients/typescript is built from it).",
		flags: printSchema(func(w io.Writer) error {
			app.WriteGraphQLSchema(w)
			return nil
		}),
	},
	"schema openapi": {
		usage: "paygate schema openapi",
		about: "Prints the OpenAPI document served at /api/v1/openapi.json, for client generators (clients/typescript is built from it).",
		flags: printSchema(func(w io.Writer) error {
			_, err := w.Write(app.OpenAPIDocument())
			return err
		}),
	},
}

// printSchema is a command that prints one of the API's descriptions, as the server serves it.
func printSchema(write func(io.Writer) error) func(*flag.FlagSet) func(context.Context, config.Config, commandOutput) error {
	return func(*flag.FlagSet) func(context.Context, config.Config, commandOutput) error {
		return func(_ context.Context, _ config.Config, out commandOutput) error { return write(out.stdout) }
	}
}

// run is the whole program, reading os.Stdin; tests call it as main does, or runWithInput to give
// a command its stdin.
func run(ctx context.Context, args []string, environ []string, stdout, stderr io.Writer) error {
	return runWithInput(ctx, args, environ, os.Stdin, stdout, stderr)
}

func runWithInput(ctx context.Context, args []string, environ []string, stdin io.Reader, stdout, stderr io.Writer) error {
	name, args := commandOf(args)
	help := name == "help"
	if help && len(args) > 0 {
		name, args = commandOf(args)
	}
	if name == "help" {
		name = "" // paygate help
	}
	if name == "" {
		fmt.Fprint(stdout, overview)
		return nil
	}
	if group := groupOf(name); group != nil {
		if help || len(args) == 0 || isHelp(args[0]) {
			fmt.Fprint(stdout, groupHelp(name, group))
			return nil
		}
		return unknownIn(name+" "+args[0], name, group)
	}
	cmd, ok := commands[name]
	if !ok {
		if first, _, ok := strings.Cut(name, " "); ok && groupOf(first) != nil {
			return unknownIn(name, first, groupOf(first))
		}
		return fmt.Errorf("unknown command %q; paygate help lists the commands", strings.TrimSpace(name))
	}
	if help {
		args = []string{"-h"}
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned, help is written below
	runCommand := cmd.flags(fs)
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, helpOf(cmd, fs))
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w (see paygate %s --help)", name, err, name)
	case fs.NArg() > 0:
		return fmt.Errorf("%s takes no argument %q (see paygate %s --help)", name, fs.Arg(0), name)
	}
	cfg, err := config.Load(environ, app.Providers)
	if err != nil {
		return err
	}
	return runCommand(ctx, cfg, commandOutput{stdout: stdout, stderr: stderr, stdin: stdin})
}

// commandOf splits a command line into its command (two words for a group's, such as user
// create) and the rest; "" is a request for the overview.
func commandOf(args []string) (string, []string) {
	switch {
	case len(args) == 0 || strings.HasPrefix(args[0], "-") && !isHelp(args[0]):
		return "serve", args
	case isHelp(args[0]):
		return "", nil
	case groupOf(args[0]) != nil && len(args) > 1 && !strings.HasPrefix(args[1], "-"):
		return args[0] + " " + args[1], args[2:]
	}
	return args[0], args[1:]
}

// groupOf is the names of the commands in a group, such as user create in user, sorted; nil
// for a name that is no group.
func groupOf(group string) []string {
	var names []string
	for name := range commands {
		if first, _, ok := strings.Cut(name, " "); ok && first == group {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// groupHelp lists a group's commands: each one's usage and what it does.
func groupHelp(group string, names []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: paygate %s COMMAND\n\nCommands:\n", group)
	for _, name := range names {
		fmt.Fprintf(&b, "  %s\n      %s\n", commands[name].usage, commands[name].about)
	}
	fmt.Fprintf(&b, "\npaygate help %s COMMAND tells more of one: its flags and the environment it reads.\n", group)
	return b.String()
}

// unknownIn is the error of a command line that names a group but none of its commands.
func unknownIn(line, group string, names []string) error {
	return fmt.Errorf("unknown command %q; the %s commands are: %s (see paygate help %s)", line, group, strings.Join(names, ", "), group)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// helpOf is a command's help: what it does, its flags, and the variables of the environment it
// reads.
func helpOf(cmd command, fs *flag.FlagSet) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Usage: %s\n\n%s\n", cmd.usage, cmd.about)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		b.WriteString("\nFlags:\n")
		fs.SetOutput(&b)
		fs.PrintDefaults()
	}
	vars := config.Variables(cmd.env...)
	if slices.Contains(cmd.env, config.GroupServer) {
		vars = append(vars, config.ProviderVariables(app.Providers)...)
	}
	b.WriteString("\nEnvironment:\n" + config.Describe(vars...))
	return b.String()
}

func userCreate(fs *flag.FlagSet) func(context.Context, config.Config, commandOutput) error {
	email := fs.String("email", "", "the user's email (required)")
	password := fs.String("password", "", "the user's password, 12 characters to 72 bytes and not easy to guess (required)")
	role := fs.String("role", "", "admin, operator, developer or viewer (required)")
	merchant := fs.String("merchant", "", "the merchant (mer_...) the user belongs to (default: the default merchant)")
	platform := fs.Bool("platform", false, "make the user platform staff, of the default merchant (the first admin of a server is anyway)")
	return func(ctx context.Context, cfg config.Config, out commandOutput) error {
		for flagName, value := range map[string]string{"email": *email, "password": *password, "role": *role} {
			if value == "" {
				return fmt.Errorf("user create: --%s is required (see paygate user create --help)", flagName)
			}
		}
		db, err := app.OpenDatabase(ctx, cfg)
		if err != nil {
			return err
		}
		defer db.Close()
		users := auth.NewService(db.Ent, nil, nil, nil, clock.System)
		users.Cost = cfg.PasswordCost
		u, err := users.CreateUserOf(ctx, *merchant, *email, *password, *role, *platform)
		if ent.IsConstraintError(err) {
			return fmt.Errorf("user create: a user with the email %s exists already; an admin changes their role or enables them with PATCH /api/v1/users/{id}", *email)
		}
		if err != nil {
			return fmt.Errorf("user create: %w", err)
		}
		staff := ""
		if u.Platform {
			staff = ", platform staff"
		}
		fmt.Fprintf(out.stdout, "created user %s (%s, %s, of merchant %s%s)\n", u.ID, u.Email, u.Role, u.MerchantID, staff)
		return nil
	}
}

func userSetPassword(fs *flag.FlagSet) func(context.Context, config.Config, commandOutput) error {
	email := fs.String("email", "", "the user's email (required)")
	password := fs.String("password", "", "the new password, 12 characters to 72 bytes and not easy to guess, or - to read it from the first line of stdin (required)")
	return func(ctx context.Context, cfg config.Config, out commandOutput) error {
		if *email == "" || *password == "" {
			return fmt.Errorf("user set-password: --email and --password are required (see paygate user set-password --help)")
		}
		if *password == "-" {
			read, err := readPassword(out)
			if err != nil {
				return fmt.Errorf("user set-password: %w", err)
			}
			*password = read
		}
		db, err := app.OpenDatabase(ctx, cfg)
		if err != nil {
			return err
		}
		defer db.Close()
		users := auth.NewService(db.Ent, nil, nil, nil, clock.System)
		users.Cost = cfg.PasswordCost
		u, err := users.SetPassword(ctx, *email, *password)
		if err != nil {
			return fmt.Errorf("user set-password: %w", err)
		}
		fmt.Fprintf(out.stdout, "set the password of user %s (%s); every session of theirs is ended\n", u.ID, u.Email)
		if u.Disabled {
			fmt.Fprintf(out.stderr, "the user is disabled and cannot log in: an admin enables them with PATCH /api/v1/users/%s {\"disabled\": false}\n", u.ID)
		}
		return nil
	}
}

// maxPasswordLine bounds what readPassword reads: far more than any password the policy takes.
const maxPasswordLine = 4096

// readPassword reads a password from the first line of stdin, without its line ending.
func readPassword(out commandOutput) (string, error) {
	if f, ok := out.stdin.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
			fmt.Fprintln(out.stderr, "the password, then Enter (it shows as it is typed; pipe it in to keep it off the screen):")
		}
	}
	line, err := bufio.NewReader(io.LimitReader(out.stdin, maxPasswordLine)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading the password from stdin: %w", err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", errors.New("--password - read no password from stdin: give it on the first line")
	}
	return line, nil
}

func apiKeyCreate(fs *flag.FlagSet) func(context.Context, config.Config, commandOutput) error {
	name := fs.String("name", "", "what the key is for, e.g. checkout-service (required)")
	scopes := fs.String("scopes", "", "comma-separated scopes, at most those of the key's user, e.g. payments:read,payments:write (required)")
	owner := fs.String("user", "", "email of the user the key acts for (default: the first admin)")
	expiresAt := fs.String("expires-at", "", "when the key stops working, RFC 3339, e.g. 2027-01-31T00:00:00Z (default: never)")
	return func(ctx context.Context, cfg config.Config, out commandOutput) error {
		req := auth.APIKeyRequest{Name: *name}
		for scope := range strings.SplitSeq(*scopes, ",") {
			if scope = strings.TrimSpace(scope); scope != "" {
				req.Scopes = append(req.Scopes, scope)
			}
		}
		if *expiresAt != "" {
			at, err := time.Parse(time.RFC3339, *expiresAt)
			if err != nil {
				return fmt.Errorf("apikey create: --expires-at must be a time like 2027-01-31T00:00:00Z")
			}
			req.ExpiresAt = &at
		}
		secrets, err := cfg.LoadSecrets()
		if err != nil {
			return err
		}
		db, err := app.OpenDatabase(ctx, cfg)
		if err != nil {
			return err
		}
		defer db.Close()
		keys := auth.NewAPIKeys(db.Ent, secrets.APIKeySecret, cfg.Production(), clock.System)
		created, user, err := auth.NewService(db.Ent, nil, keys, nil, clock.System).CreateFirstAPIKey(ctx, *owner, req)
		if err != nil {
			return fmt.Errorf("apikey create: %w", err)
		}
		fmt.Fprintf(out.stderr, "created API key %s (%s) for %s with scopes %s; it is shown once:\n",
			created.APIKey.ID, created.APIKey.Name, user.Email, strings.Join(created.APIKey.Scopes, ","))
		fmt.Fprintln(out.stdout, created.Key)
		return nil
	}
}
