package app

import (
	"net/http"
	"testing"

	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// testPassword is every test user's password here, hashed at bcrypt's least cost so tests log
// in fast: login reads the cost from the hash.
const testPassword = "a password for the tests"

// TestLogoutEndsTheSessionEverywhere: logging out revokes the session's access token at once on
// the server that was asked, within a second or two on another, and its refresh token; another
// session of the same user goes on.
func TestLogoutEndsTheSessionEverywhere(t *testing.T) {
	t.Parallel()
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		for _, s := range servers {
			s.app.Start(t.Context())
		}
		email := servers[0].userWith("viewer")
		access, refresh := servers[0].login(email)
		other, _ := servers[1].login(email)
		for i, s := range servers {
			if status, _ := s.answers(access); status != http.StatusOK {
				t.Fatalf("server %d before logout: %d", i, status)
			}
		}
		r := servers[0].request(http.MethodPost, "/api/v1/auth/logout", access, nil)
		if r.status != http.StatusOK || r.data()["revoked"] != true {
			t.Fatalf("logout: %d %s", r.status, r.raw)
		}
		if status, code := servers[0].answers(access); status != http.StatusUnauthorized || code != "token_revoked" {
			t.Errorf("on the server asked, after logout: %d %s", status, code)
		}
		waitFor(t, "the logout on the other server", func() bool {
			_, code := servers[1].answers(access)
			return code == "token_revoked"
		})
		r = servers[1].request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": refresh})
		if code, _ := r.errorCode(); r.status != http.StatusUnauthorized || code != "token_revoked" {
			t.Errorf("refresh after logout: %d %s", r.status, r.raw)
		}

		if status, _ := servers[1].answers(other); status != http.StatusOK {
			t.Errorf("the user's other session answered %d after one logged out", status)
		}

		// Through GraphQL, naming the refresh token of another of the user's sessions: both end.
		first, _ := servers[1].login(email)
		second, secondRefresh := servers[1].login(email)
		data := servers[1].mustGraphQL(first, `mutation($rt: String) { logout(refreshToken: $rt) { revoked } }`, map[string]any{"rt": secondRefresh})
		if get(data, "logout", "revoked") != true {
			t.Fatalf("logout over GraphQL: %v", data)
		}
		for _, token := range []string{first, second} {
			if _, code := servers[1].answers(token); code != "token_revoked" {
				t.Errorf("a session logged out over GraphQL: %s", code)
			}
		}
		// Another user's refresh token is not the caller's to end: refused, and nothing ends.
		stranger, strangerRefresh := servers[1].login(servers[1].userWith("viewer"))
		mine, _ := servers[1].login(email)
		_, errs := servers[1].graphql(mine, `mutation($rt: String) { logout(refreshToken: $rt) { revoked } }`, map[string]any{"rt": strangerRefresh})
		if len(errs) != 1 || errs[0].code() != "forbidden" {
			t.Errorf("logout naming another user's refresh token: %+v", errs)
		}
		for _, token := range []string{stranger, mine} {
			if status, _ := servers[1].answers(token); status != http.StatusOK {
				t.Errorf("a refused logout ended a session: %d", status)
			}
		}
	})
}

// TestRevokeToken: a token's owner or an admin revokes it, nobody else; revoking an access token
// ends that token, a refresh token its whole session; a refresh token used again revokes the
// session's access tokens too; a refresh token is no access token.
func TestRevokeToken(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, databasetest.SQLite(t))
	ownerEmail := env.userWith("viewer")
	access, refresh := env.login(ownerEmail)
	otherAccess, _ := env.login(ownerEmail)
	stranger, _ := env.login(env.userWith("operator"))
	admin, _ := env.login(env.userWith("admin"))

	revoke := func(token, target string) response {
		return env.request(http.MethodPost, "/api/v1/auth/revoke", token, map[string]any{"token": target})
	}
	if r := revoke(stranger, access); r.status != http.StatusForbidden {
		t.Errorf("a stranger revoking an access token: %d %s", r.status, r.raw)
	}
	if r := revoke(stranger, refresh); r.status != http.StatusForbidden {
		t.Errorf("a stranger revoking a refresh token: %d %s", r.status, r.raw)
	}
	if r := revoke("", access); r.status != http.StatusUnauthorized {
		t.Errorf("revoking without a token: %d %s", r.status, r.raw)
	}
	for _, garbage := range []string{"not a token", "rt_unknown", stranger[:len(stranger)-2] + "xx"} {
		if r := revoke(admin, garbage); r.status != http.StatusBadRequest {
			t.Errorf("revoking %q: %d %s", garbage, r.status, r.raw)
		}
	}
	if status, _ := env.answers(access); status != http.StatusOK {
		t.Fatalf("refused revocations revoked the token: %d", status)
	}

	// The owner revokes one access token: that one ends, the session's refresh goes on.
	if r := revoke(otherAccess, access); r.status != http.StatusOK || r.data()["revoked"] != true {
		t.Fatalf("the owner revoking: %d %s", r.status, r.raw)
	}
	if _, code := env.answers(access); code != "token_revoked" {
		t.Errorf("a revoked access token: %s", code)
	}
	if status, _ := env.answers(otherAccess); status != http.StatusOK {
		t.Errorf("the owner's other access token: %d", status)
	}
	r := env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": refresh})
	if r.status != http.StatusOK {
		t.Fatalf("refresh of the session whose access token alone was revoked: %d %s", r.status, r.raw)
	}
	renewed, renewedRefresh := str(get(r.data(), "access_token")), str(get(r.data(), "refresh_token"))

	// Used again, the spent refresh token revokes its whole session, access tokens included.
	r = env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": refresh})
	if code, _ := r.errorCode(); code != "refresh_token_reused" {
		t.Errorf("a refresh token used twice: %d %s", r.status, r.raw)
	}
	if _, code := env.answers(renewed); code != "token_revoked" {
		t.Errorf("an access token of a session whose refresh token was reused: %s", code)
	}
	if r := env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": renewedRefresh}); r.status != http.StatusUnauthorized {
		t.Errorf("the session's newest refresh token after the reuse: %d", r.status)
	}

	// An admin revokes another's refresh token: that session ends; a refresh token is no access
	// token.
	sessionAccess, sessionRefresh := env.login(ownerEmail)
	if status, code := env.answers(sessionRefresh); status != http.StatusUnauthorized || code != "token_invalid" {
		t.Errorf("a refresh token as an access token: %d %s", status, code)
	}
	data := env.mustGraphQL(admin, `mutation($t: String!) { revokeToken(token: $t) { revoked } }`, map[string]any{"t": sessionRefresh})
	if get(data, "revokeToken", "revoked") != true {
		t.Fatalf("an admin revoking over GraphQL: %v", data)
	}
	if _, code := env.answers(sessionAccess); code != "token_revoked" {
		t.Errorf("the access token of a session an admin revoked: %s", code)
	}
}

// TestUsersAreManaged: an admin creates, lists, re-roles and disables users over REST and GraphQL;
// a change of role or a disabling revokes the user's tokens at once (a new login gets the new
// role; a disabled user cannot log in); the last admin can be neither demoted nor disabled; a
// taken email is a clear 409; without users:manage, 403.
func TestUsersAreManaged(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		adminEmail := env.userWith("admin")
		admin, _ := env.login(adminEmail)

		r := env.request(http.MethodPost, "/api/v1/users", admin, map[string]any{"email": "Dev@Example.com", "password": testPassword, "role": "developer"})
		if r.status != http.StatusCreated || r.data()["email"] != "dev@example.com" || r.data()["role"] != "developer" || r.data()["disabled"] != false {
			t.Fatalf("create: %d %s", r.status, r.raw)
		}
		if _, ok := r.data()["password"]; ok {
			t.Fatalf("the answer shows a password: %s", r.raw)
		}
		devID := str(r.data()["id"])
		if r := env.request(http.MethodPost, "/api/v1/users", admin, map[string]any{"email": "dev@example.com", "password": testPassword, "role": "viewer"}); r.status != http.StatusConflict {
			t.Errorf("a taken email: %d %s", r.status, r.raw)
		}
		devToken, devRefresh := env.login("dev@example.com")
		if r := env.request(http.MethodGet, "/api/v1/users", devToken, nil); r.status != http.StatusForbidden {
			t.Errorf("a developer listing users: %d", r.status)
		}
		r = env.request(http.MethodGet, "/api/v1/users?limit=1", admin, nil)
		if list, _ := r.body["data"].([]any); r.status != http.StatusOK || len(list) != 1 || r.body["has_more"] != true {
			t.Errorf("a page of one user: %d %s", r.status, r.raw)
		}

		// A new role: the user's tokens stop at once; a new login carries the new role.
		r = env.request(http.MethodPatch, "/api/v1/users/"+devID, admin, map[string]any{"role": "viewer"})
		if r.status != http.StatusOK || r.data()["role"] != "viewer" {
			t.Fatalf("change of role: %d %s", r.status, r.raw)
		}
		if _, code := env.answers(devToken); code != "token_revoked" {
			t.Errorf("the old role's token after a change of role: %s", code)
		}
		if r := env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": devRefresh}); r.status != http.StatusUnauthorized {
			t.Errorf("the old role's refresh token: %d", r.status)
		}
		viewerToken, _ := env.login("dev@example.com")
		if status, _ := env.answers(viewerToken); status != http.StatusOK {
			t.Errorf("a new login after the change of role: %d", status)
		}
		if r := env.request(http.MethodPost, "/api/v1/payments", viewerToken, paymentBody("1.00", "USD", "4242424242424242")); r.status != http.StatusForbidden {
			t.Errorf("a viewer taking a payment with the new login: %d", r.status)
		}

		// Disabled, over GraphQL: tokens stop, and no login.
		data := env.mustGraphQL(admin, `mutation($id: ID!) { updateUser(id: $id, input: {disabled: true}) { disabled } }`, map[string]any{"id": devID})
		if get(data, "updateUser", "disabled") != true {
			t.Fatalf("disable: %v", data)
		}
		if _, code := env.answers(viewerToken); code != "token_revoked" {
			t.Errorf("a disabled user's token: %s", code)
		}
		if r := env.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": "dev@example.com", "password": testPassword}); r.status != http.StatusUnauthorized {
			t.Errorf("a disabled user's login: %d", r.status)
		}

		// The last admin stays an admin; with a second admin, the first may step down.
		adminID := db.Ent.User.Query().Where(user.Email(adminEmail)).OnlyX(databasetest.AsMerchant()).ID
		for _, change := range []map[string]any{{"role": "operator"}, {"disabled": true}} {
			r := env.request(http.MethodPatch, "/api/v1/users/"+adminID, admin, change)
			if code, _ := r.errorCode(); r.status != http.StatusConflict || code != "invalid_state" {
				t.Errorf("the last admin %v: %d %s", change, r.status, r.raw)
			}
		}
		// The admin is the platform's staff: the platform keeps an admin of its staff.
		data = env.mustGraphQL(admin, `mutation { createUser(input: {email: "second@example.com", password: "another long password", role: "admin", platform: true}) { id role platform } }`, nil)
		if get(data, "createUser", "role") != "admin" || get(data, "createUser", "platform") != true {
			t.Fatalf("a second admin: %v", data)
		}
		if r := env.request(http.MethodPatch, "/api/v1/users/"+adminID, admin, map[string]any{"role": "operator"}); r.status != http.StatusOK {
			t.Errorf("an admin stepping down beside another: %d %s", r.status, r.raw)
		}
		data = env.mustGraphQL(env.tokenFor("admin"), `{ users(first: 100) { hasMore users { email role disabled } } }`, nil)
		if users, _ := get(data, "users", "users").([]any); len(users) != 4 || get(data, "users", "hasMore") != false {
			t.Errorf("users over GraphQL: %v", data)
		}
	})
}

// TestAdminsDemotingEachOtherLeaveOne: two admins demoting each other at once: one succeeds, the
// other is refused (as the last admin, or as no admin any more, its token revoked with its role),
// and one admin is left.
func TestAdminsDemotingEachOtherLeaveOne(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		emails := []string{env.userWith("admin"), env.userWith("admin")}
		tokens := make([]string, 2)
		ids := make([]string, 2)
		for i, email := range emails {
			tokens[i], _ = env.login(email)
			ids[i] = db.Ent.User.Query().Where(user.Email(email)).OnlyX(databasetest.AsMerchant()).ID
		}
		statuses := make(chan int, 2)
		for i := range 2 {
			go func() {
				r := env.request(http.MethodPatch, "/api/v1/users/"+ids[1-i], tokens[i], map[string]any{"role": "viewer"})
				statuses <- r.status
			}()
		}
		a, b := <-statuses, <-statuses
		admins := db.Ent.User.Query().Where(user.RoleEQ(user.RoleAdmin), user.Disabled(false)).CountX(databasetest.AsMerchant())
		if admins != 1 || (a == http.StatusOK) == (b == http.StatusOK) {
			t.Errorf("answers %d and %d leave %d admins, want one demotion and one admin", a, b, admins)
		}
	})
}

// TestLogoutRacingARefreshEndsTheSession: a logout and a refresh of the same session at once, as
// a browser tab refreshing while another logs out: whichever comes first, the session ends, and
// no refresh token the refresh may have handed out works after.
func TestLogoutRacingARefreshEndsTheSession(t *testing.T) {
	t.Parallel()
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		env := newTestEnv(t, db)
		email := env.userWith("viewer")
		for range 20 {
			access, refresh := env.login(email)
			refreshed := make(chan response, 1)
			go func() {
				refreshed <- env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": refresh})
			}()
			if r := env.request(http.MethodPost, "/api/v1/auth/logout", access, nil); r.status != http.StatusOK {
				t.Fatalf("logout: %d %s", r.status, r.raw)
			}
			r := <-refreshed
			if r.status != http.StatusOK {
				continue // the logout came first
			}
			again := env.request(http.MethodPost, "/api/v1/auth/refresh", "", map[string]any{"refresh_token": str(get(r.data(), "refresh_token"))})
			if again.status == http.StatusOK {
				t.Fatalf("the refresh token handed out beside a logout still works")
			}
			if _, code := env.answers(str(get(r.data(), "access_token"))); code != "token_revoked" {
				t.Errorf("the access token handed out beside a logout: %s", code)
			}
		}
	})
}
