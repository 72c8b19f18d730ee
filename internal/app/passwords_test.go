package app

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent/refreshtoken"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
)

const changePasswordMutation = `mutation($in: ChangePasswordInput!) { changePassword(input: $in) { changed } }`

// changePassword is POST /api/v1/auth/password as the holder of token.
func (e *testEnv) changePassword(token, current, next string) response {
	e.t.Helper()
	return e.request(http.MethodPost, "/api/v1/auth/password", token, map[string]any{"current_password": current, "new_password": next})
}

// loginWith logs email in with password and returns the status and the session's tokens.
func (e *testEnv) loginWith(email, password string) (status int, access, refresh string) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": password})
	return r.status, str(get(r.data(), "access_token")), str(get(r.data(), "refresh_token"))
}

// refreshes is the status and error code a refresh token gets.
func (e *testEnv) refreshes(refresh string) (int, string) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": refresh})
	code, _ := r.errorCode()
	return r.status, code
}

// TestChangePasswordEndsTheOtherSessions: a user changes their own password, over REST on one
// server: the old password no longer logs in and the new one does; every other session's access
// token stops at once on that server and within a second or two on the other, its refresh token at
// once on both; the session that asked goes on, refresh included. Over GraphQL the same.
func TestChangePasswordEndsTheOtherSessions(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		for _, s := range servers {
			s.app.Start(t.Context())
		}
		email := servers[0].userWith("viewer")
		mine, myRefresh := servers[0].login(email)
		other, otherRefresh := servers[1].login(email)
		for i, s := range servers {
			for _, token := range []string{mine, other} {
				if status, _ := s.answers(token); status != http.StatusOK {
					t.Fatalf("server %d before the change: %d", i, status)
				}
			}
		}

		const second = "a second password, long enough"
		r := servers[0].changePassword(mine, testPassword, second)
		if r.status != http.StatusOK || strings.TrimSpace(r.raw) != `{"success":true,"data":{"changed":true}}` {
			t.Fatalf("change: %d %s", r.status, r.raw)
		}
		if status, code := servers[0].answers(other); status != http.StatusUnauthorized || code != "token_revoked" {
			t.Errorf("the other session's access token on the server asked: %d %s", status, code)
		}
		for i, s := range servers {
			if status, code := s.refreshes(otherRefresh); status != http.StatusUnauthorized || code != "token_revoked" {
				t.Errorf("the other session's refresh token on server %d: %d %s", i, status, code)
			}
		}
		waitFor(t, "the other session's end on the other server", func() bool {
			_, code := servers[1].answers(other)
			return code == "token_revoked"
		})
		for i, s := range servers {
			if status, _ := s.answers(mine); status != http.StatusOK {
				t.Errorf("the session that changed the password, on server %d: %d", i, status)
			}
		}
		if status, _, _ := servers[1].loginWith(email, testPassword); status != http.StatusUnauthorized {
			t.Errorf("login with the old password: %d", status)
		}
		if status, _, _ := servers[1].loginWith(email, second); status != http.StatusOK {
			t.Errorf("login with the new password: %d", status)
		}
		r = servers[1].request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": myRefresh})
		if r.status != http.StatusOK {
			t.Fatalf("the session that changed the password refreshing: %d %s", r.status, r.raw)
		}
		mine = str(get(r.data(), "access_token"))

		// Over GraphQL, on the other server, from the refreshed session: a login made since ends.
		_, since, _ := servers[0].loginWith(email, second)
		data := servers[1].mustGraphQL(mine, changePasswordMutation, map[string]any{"in": map[string]any{"currentPassword": second, "newPassword": "a third password, over GraphQL"}})
		if get(data, "changePassword", "changed") != true {
			t.Fatalf("changePassword: %v", data)
		}
		if _, code := servers[1].answers(since); code != "token_revoked" {
			t.Errorf("a session started before the GraphQL change: %s", code)
		}
		if status, _ := servers[1].answers(mine); status != http.StatusOK {
			t.Errorf("the session that changed the password over GraphQL: %d", status)
		}
		if status, _, _ := servers[0].loginWith(email, "a third password, over GraphQL"); status != http.StatusOK {
			t.Errorf("login with the password set over GraphQL: %d", status)
		}
	})
}

// TestChangePasswordIsGuarded: the current password is required and checked (401
// invalid_credentials), each attempt spending the account's logins from the address, so guesses
// are throttled as logins are and share their budget; an API key, which has no password, is
// refused 403 whatever it sends; the new password is held to the policy (400 naming the field on
// both surfaces); one changePassword per GraphQL request.
func TestChangePasswordIsGuarded(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		email := env.userWith("developer")
		token, _ := env.login(email)

		// The policy, checked before the current password.
		for _, tc := range []struct{ name, password string }{
			{"too short", "eleven char"},
			{"73 bytes", strings.Repeat("x", 61) + "0123456789yz"},
			{"common", "password123456"},
			{"common, another case", "PASSWORD123456"},
			{"a run of keys", "qwertyuiopas"},
			{"the email", email},
			{"the product", "paygate-2024!"},
		} {
			r := env.changePassword(token, testPassword, tc.password)
			if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != "new_password" ||
				strings.Contains(r.raw, tc.password) {
				t.Errorf("%s: %d %s", tc.name, r.status, r.raw)
			}
			_, errs := env.graphql(token, changePasswordMutation, map[string]any{"in": map[string]any{"currentPassword": testPassword, "newPassword": tc.password}})
			if len(errs) != 1 || errs[0].code() != "invalid_request" || errs[0].Extensions["param"] != "newPassword" || strings.Contains(errs[0].Message, tc.password) {
				t.Errorf("%s over GraphQL: %+v", tc.name, errs)
			}
		}
		for _, tc := range []struct {
			body        map[string]any
			code, param string
		}{
			{map[string]any{"new_password": "a good new password"}, "missing_field", "current_password"},
			{map[string]any{"current_password": testPassword}, "missing_field", "new_password"},
			{map[string]any{"current_password": testPassword, "new_password": testPassword}, "invalid_request", "new_password"},
			{map[string]any{"current_password": testPassword, "new_password": "a good new password", "confirm": true}, "invalid_request", "confirm"},
		} {
			r := env.request(http.MethodPost, "/api/v1/auth/password", token, tc.body)
			if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != tc.code || param != tc.param {
				t.Errorf("%v: %d %s", tc.body, r.status, r.raw)
			}
		}
		_, errs := env.graphql(token, `mutation { a: changePassword(input: {currentPassword: "one guess", newPassword: "a good new password"}) { changed }
			b: changePassword(input: {currentPassword: "two guesses", newPassword: "a good new password"}) { changed } }`, nil)
		if len(errs) != 1 || errs[0].code() != "invalid_request" {
			t.Errorf("two changePassword in one request: %+v", errs)
		}

		// An API key has no password: refused before its body is read; so is no credential.
		key := env.apiKey(token, "payments:read")
		for _, body := range []any{map[string]any{"current_password": testPassword, "new_password": "a good new password"}, `{"unknown": true}`} {
			r := env.request(http.MethodPost, "/api/v1/auth/password", key, body)
			if code, _ := r.errorCode(); r.status != http.StatusForbidden || code != "forbidden" || !strings.Contains(r.raw, "API key has no password") {
				t.Errorf("an API key changing a password, %v: %d %s", body, r.status, r.raw)
			}
		}
		_, errs = env.graphql(key, changePasswordMutation, map[string]any{"in": map[string]any{"currentPassword": testPassword, "newPassword": "a good new password"}})
		if len(errs) != 1 || errs[0].code() != "forbidden" {
			t.Errorf("an API key over GraphQL: %+v", errs)
		}
		if r := env.changePassword("", testPassword, "a good new password"); r.status != http.StatusUnauthorized {
			t.Errorf("no credential: %d %s", r.status, r.raw)
		}

		// Wrong current passwords: 401, then throttled with the account's logins from this address.
		setRateLimits(t, []*testEnv{env}, 100, 200, 3)
		throttled := env.userWith("viewer")
		session, _ := env.login(throttled) // the first of three
		for i := range 2 {
			r := env.changePassword(session, "not the password at all", "a good new password")
			if code, param := r.errorCode(); r.status != http.StatusUnauthorized || code != "invalid_credentials" || param != "current_password" {
				t.Errorf("wrong current password %d: %d %s", i+1, r.status, r.raw)
			}
		}
		r := env.changePassword(session, testPassword, "a good new password")
		if code, _ := r.errorCode(); r.status != http.StatusTooManyRequests || code != "rate_limited" || r.header.Get("Retry-After") == "" {
			t.Errorf("the right current password once throttled: %d %s", r.status, r.raw)
		}
		if status, _, _ := env.loginWith(throttled, testPassword); status != http.StatusTooManyRequests {
			t.Errorf("a login of the account once its password changes are spent: %d", status)
		}
		_, errs = env.graphql(session, changePasswordMutation, map[string]any{"in": map[string]any{"currentPassword": testPassword, "newPassword": "a good new password"}})
		if len(errs) != 1 || errs[0].code() != "rate_limited" {
			t.Errorf("changePassword once throttled: %+v", errs)
		}
		if status, _ := env.answers(session); status != http.StatusOK {
			t.Errorf("the session after refused changes: %d", status)
		}

		// A password of 72 bytes is taken.
		long := strings.Repeat("x", 60) + "0123456789yz"
		if r := env.changePassword(token, testPassword, long); r.status != http.StatusOK {
			t.Fatalf("a password of 72 bytes: %d %s", r.status, r.raw)
		}
		if status, _, _ := env.loginWith(email, long); status != http.StatusOK {
			t.Errorf("login with the password of 72 bytes: %d", status)
		}
		for _, password := range []string{testPassword, long, "password123456", "not the password at all", "a good new password"} {
			if strings.Contains(env.logs.String(), password) {
				t.Errorf("the log shows the password %q", password)
			}
		}
	})
}

// TestResetPasswordEndsTheUsersSessions: an admin sets another user's password, over REST and
// GraphQL: every session of that user ends, their API keys go on, the admin's session goes on;
// without users:manage it is refused 403; an unknown user is 404; the policy holds.
func TestResetPasswordEndsTheUsersSessions(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		admin, _ := env.login(env.userWith("admin"))
		operator, _ := env.login(env.userWith("operator"))
		email := env.userWith("developer")
		id := db.Ent.User.Query().Where(user.Email(email)).OnlyX(databasetest.AsMerchant()).ID
		first, firstRefresh := env.login(email)
		second, secondRefresh := env.login(email)
		key := env.apiKey(first, "payments:read")
		path := "/api/v1/users/" + id + "/password"

		for _, tc := range []struct{ name, password string }{
			{"too short", "eleven char"},
			{"73 bytes", strings.Repeat("x", 61) + "0123456789yz"},
			{"common", "password123456"},
			{"a run of keys", "qwertyuiopas"},
		} {
			r := env.request(http.MethodPost, path, admin, map[string]any{"new_password": tc.password})
			if code, param := r.errorCode(); r.status != http.StatusBadRequest || code != "invalid_request" || param != "new_password" {
				t.Errorf("%s: %d %s", tc.name, r.status, r.raw)
			}
		}
		if r := env.request(http.MethodPost, path, operator, map[string]any{"new_password": "an operator's try at it"}); r.status != http.StatusForbidden {
			t.Errorf("an operator resetting a password: %d %s", r.status, r.raw)
		}
		_, errs := env.graphql(operator, `mutation($id: ID!) { resetPassword(id: $id, input: {newPassword: "an operator's try at it"}) { changed } }`, map[string]any{"id": id})
		if len(errs) != 1 || errs[0].code() != "forbidden" {
			t.Errorf("an operator resetting over GraphQL: %+v", errs)
		}
		if r := env.request(http.MethodPost, "/api/v1/users/usr_none/password", admin, map[string]any{"new_password": "a good new password"}); r.status != http.StatusNotFound {
			t.Errorf("an unknown user: %d %s", r.status, r.raw)
		}
		for _, token := range []string{first, second} {
			if status, _ := env.answers(token); status != http.StatusOK {
				t.Fatalf("refused resets ended a session: %d", status)
			}
		}

		const reset = "set by the admin, 72 bytes long: " + "abcdefghij-abcdefghij-abcdefghij-abcdef"
		r := env.request(http.MethodPost, path, admin, map[string]any{"new_password": reset})
		if len(reset) != 72 || r.status != http.StatusOK || strings.TrimSpace(r.raw) != `{"success":true,"data":{"changed":true}}` {
			t.Fatalf("reset (%d bytes): %d %s", len(reset), r.status, r.raw)
		}
		for _, token := range []string{first, second} {
			if _, code := env.answers(token); code != "token_revoked" {
				t.Errorf("a session of the user after the reset: %s", code)
			}
		}
		for _, refresh := range []string{firstRefresh, secondRefresh} {
			if status, _ := env.refreshes(refresh); status != http.StatusUnauthorized {
				t.Errorf("a refresh token of the user after the reset: %d", status)
			}
		}
		if status, _ := env.answers(key); status != http.StatusOK {
			t.Errorf("the user's API key after the reset: %d", status)
		}
		if status, _ := env.answers(admin); status != http.StatusOK {
			t.Errorf("the admin's session after the reset: %d", status)
		}
		if status, _, _ := env.loginWith(email, testPassword); status != http.StatusUnauthorized {
			t.Errorf("login with the old password: %d", status)
		}
		status, since, _ := env.loginWith(email, reset)
		if status != http.StatusOK {
			t.Errorf("login with the password reset: %d", status)
		}

		data := env.mustGraphQL(admin, `mutation($id: ID!) { resetPassword(id: $id, input: {newPassword: "reset again, over GraphQL"}) { changed } }`, map[string]any{"id": id})
		if get(data, "resetPassword", "changed") != true {
			t.Fatalf("resetPassword: %v", data)
		}
		if _, code := env.answers(since); code != "token_revoked" {
			t.Errorf("a session after the GraphQL reset: %s", code)
		}
		if status, _, _ := env.loginWith(email, "reset again, over GraphQL"); status != http.StatusOK {
			t.Errorf("login with the password reset over GraphQL: %d", status)
		}
	})
}

// TestLoginRacingAPasswordChangeLeavesNoOldSession: a login with the old password at the moment
// the password changes, as a thief who knew it would try: whichever comes first, no session the
// old password started is left working.
func TestLoginRacingAPasswordChangeLeavesNoOldSession(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		email := env.userWith("viewer")
		keeper, _ := env.login(email)
		current := testPassword
		for i := range 3 {
			next := current + " " + string(rune('a'+i))
			logins := make(chan response, 1)
			// Each login starts a little later into the change, so that across the rounds it
			// checks the old password before, during and after the change's transaction.
			go func() {
				time.Sleep(time.Duration(i) * 200 * time.Millisecond)
				logins <- env.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": current})
			}()
			if r := env.changePassword(keeper, current, next); r.status != http.StatusOK {
				t.Fatalf("change %d: %d %s", i+1, r.status, r.raw)
			}
			if r := <-logins; r.status == http.StatusOK {
				if _, code := env.answers(str(get(r.data(), "access_token"))); code != "token_revoked" {
					t.Errorf("change %d: a login with the old password left a working access token (%s)", i+1, code)
				}
				if status, _ := env.refreshes(str(get(r.data(), "refresh_token"))); status != http.StatusUnauthorized {
					t.Errorf("change %d: a login with the old password left a working refresh token", i+1)
				}
			}
			current = next
		}
	})
}

// TestResetPasswordBesideARefresh: a refresh under way holds its token's row and then adds the
// next token, which refers to the user; a reset of the user's password under way at that moment
// holds the user's row and waits for the token's. Neither may wait for the other (PostgreSQL would
// end one as a deadlock): both finish, and the refresh's new token is revoked with the rest.
func TestResetPasswordBesideARefresh(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		ctx := databasetest.AsMerchant()
		admin, _ := env.login(env.userWith("admin"))
		email := env.userWith("viewer")
		_, refresh := env.login(email)
		token, err := db.Ent.RefreshToken.Query().Where(refreshtoken.TokenHash(hashOf(refresh))).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The refresh, by hand: claim the token, then (once the reset waits) add the next one.
		tx, err := db.Ent.Tx(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.RefreshToken.UpdateOneID(token.ID).SetUsedAt(time.Now()).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		reset := make(chan response, 1)
		go func() {
			reset <- env.request(http.MethodPost, "/api/v1/users/"+token.UserID+"/password", admin, map[string]any{"new_password": "reset beside a refresh"})
		}()
		// The reset hashes the password, then holds the user and waits for the token.
		if db.Dialect == dialect.Postgres {
			waitFor(t, "the reset to hold the user's row", func() bool {
				probe, err := db.Ent.Tx(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer probe.Rollback()
				_, err = probe.User.Query().Where(user.ID(token.UserID), func(s *entsql.Selector) { s.ForUpdate(entsql.WithLockAction(entsql.NoWait)) }).Only(ctx)
				return err != nil
			})
		}
		time.Sleep(200 * time.Millisecond)
		next := prefixid.New("rt")
		if err := tx.RefreshToken.Create().SetTokenHash(hashOf(next)).SetFamily(token.Family).SetUserID(token.UserID).
			SetExpiresAt(time.Now().Add(time.Hour)).Exec(ctx); err != nil {
			t.Fatalf("the refresh adding its next token: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatalf("the refresh committing: %v", err)
		}
		if r := <-reset; r.status != http.StatusOK {
			t.Fatalf("the reset beside a refresh: %d %s", r.status, r.raw)
		}
		if status, _ := env.refreshes(next); status != http.StatusUnauthorized {
			t.Errorf("the token the refresh added, after the reset: %d", status)
		}
	})
}

func hashOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
