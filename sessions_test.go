package main

import (
	"context"
	"net/http"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/prefixid"
)

// testPassword is every test user's password here, hashed at bcrypt's least cost so tests log
// in fast: login reads the cost from the hash.
const testPassword = "a password for the tests"

// userWith makes a user with role who can log in with testPassword, and returns their email.
func (e *testEnv) userWith(role string) string {
	e.t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		e.t.Fatal(err)
	}
	email := prefixid.New(role) + "@example.com"
	if err := e.db.Ent.User.Create().SetEmail(email).SetPasswordHash(string(hash)).SetRole(user.Role(role)).Exec(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return email
}

// login starts a session through REST and returns its tokens.
func (e *testEnv) login(email string) (access, refresh string) {
	e.t.Helper()
	r := e.request(http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": email, "password": testPassword})
	if r.status != http.StatusOK {
		e.t.Fatalf("login: %d %s", r.status, r.raw)
	}
	return str(get(r.data(), "access_token")), str(get(r.data(), "refresh_token"))
}

// answers is the status and error code a token gets reading payments.
func (e *testEnv) answers(token string) (int, string) {
	e.t.Helper()
	r := e.request(http.MethodGet, "/api/v1/payments", token, nil)
	code, _ := r.errorCode()
	return r.status, code
}

// TestLogoutEndsTheSessionEverywhere: logging out revokes the session's access token at once on
// the server that was asked, within a second or two on another, and its refresh token; another
// session of the same user goes on.
func TestLogoutEndsTheSessionEverywhere(t *testing.T) {
	databasetest.ForEachPools(t, 2, func(t *testing.T, pools []*database.DB) {
		servers := newTestServers(t, pools)
		for _, s := range servers {
			s.app.start(t.Context())
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
