package auth

import (
	"cmp"
	"context"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/tenant"
)

// A new password ends sessions by revoking each of them, as a change of role does
// (endSessionsOf). Every access token Paygate issues belongs to a session, its login's family of
// refresh tokens, and names it (sid), so revoking the session revokes its access tokens: every
// refresh token of the user is marked revoked in the database, where every server reads it at
// each refresh, and every session that may still hold an access token (one with a refresh token
// issued within an access token's lifetime) gets a row in the revocations, which every server
// keeps in memory and reads again every second. The session to keep is simply left out of both.
// A per-user "tokens valid after" marker would need a new column read on every refresh, a
// second kind of revocation in every server's copy, and an exception besides to spare the
// caller's own session, whose tokens were issued before the change too; revoking the sessions
// needs none of them, and costs a row per session active in the last 15 minutes.
//
// The new hash is written, and the sessions revoked, in one transaction that holds the user's
// row (lockUser): a login checks, under the same lock, that the hash it compared is still the
// user's before it starts a session, so a login racing the change with the old password either
// starts its session before the change, which then revokes it, or is refused. A command
// (paygate user set-password) keeps no copy of the revocations: it writes their rows, which every
// running server reads within a second.

// RequireUserSession returns nil when the request's principal is a user with an access token, and
// otherwise the error to answer with: 401 without valid credentials, 403 for an API key, which has
// no password to change. The REST route asks it before reading the request body.
func RequireUserSession(ctx context.Context) error {
	p, err := principalOf(ctx)
	if err != nil {
		return err
	}
	if p.IsAPIKey() {
		return apierror.New(apierror.Forbidden, "an API key has no password to change: change the password of its user with an access token from their login")
	}
	return nil
}

// ChangePassword changes the caller's own password, given the current one, and ends every other
// session of theirs, at once on this server and within a second on the others: the session the
// request is made in goes on. A wrong current password is invalid_credentials, and each attempt
// spends one of the logins the account may try from the request's address, as a login does.
func (s *Service) ChangePassword(ctx context.Context, currentPassword, newPassword string) error {
	if err := Authorize(ctx, ChangePassword); err != nil {
		return err
	}
	if err := RequireUserSession(ctx); err != nil {
		return err
	}
	p, _ := PrincipalFrom(ctx)
	switch {
	case currentPassword == "":
		return apierror.ForParam(apierror.MissingField, "current_password", "current_password is required")
	case newPassword == "":
		return apierror.ForParam(apierror.MissingField, "new_password", "new_password is required")
	}
	if err := checkPasswordLength("current_password", currentPassword); err != nil {
		return err
	}
	// One's own user, whichever merchant one acts for.
	ctx = tenant.System(ctx)
	u, err := s.client.User.Get(ctx, p.UserID)
	if err != nil {
		return err // the user was authenticated a moment ago: gone since, it is an internal error
	}
	if err := CheckPassword(newPassword, u.Email, "new_password"); err != nil {
		return err
	}
	if newPassword == currentPassword {
		return apierror.ForParam(apierror.InvalidRequest, "new_password", "new_password is the same as current_password")
	}
	if s.Throttle != nil {
		if err := s.Throttle(ctx, normalizeEmail(u.Email)); err != nil {
			return err
		}
	}
	if matches, err := s.passwordMatches(ctx, []byte(u.PasswordHash), currentPassword); err != nil || !matches {
		return cmp.Or(err, error(apierror.ForParam(apierror.InvalidCredentials, "current_password", "current_password is wrong")))
	}
	// A token issued outside a login has no session: then every session of the user is another.
	_, err = s.replacePassword(ctx, u.ID, u.PasswordHash, newPassword, p.Session)
	return err
}

// ResetPassword sets another user's password, for someone who manages users, and ends every
// session of that user, at once on this server and within a second on the others. Their API keys
// go on working: a key is no session, and is revoked on its own.
func (s *Service) ResetPassword(ctx context.Context, id, newPassword string) (*ent.User, error) {
	if err := Authorize(ctx, ResetPassword); err != nil {
		return nil, err
	}
	if newPassword == "" {
		return nil, apierror.ForParam(apierror.MissingField, "new_password", "new_password is required")
	}
	u, err := s.client.User.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no user has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	if err := guardPlatformUser(ctx, u); err != nil {
		return nil, err
	}
	if err := CheckPassword(newPassword, u.Email, "new_password"); err != nil {
		return nil, err
	}
	return s.replacePassword(ctx, u.ID, "", newPassword, "")
}

// SetPassword sets the password of the user with email and ends every session of theirs, for
// paygate user set-password: an operator locked out, with the database at hand. It authorises
// nobody, as the command runs with the database's own credentials.
func (s *Service) SetPassword(ctx context.Context, email, password string) (*ent.User, error) {
	ctx = tenant.System(ctx)
	email = normalizeEmail(email)
	u, err := s.client.User.Query().Where(user.EmailEQ(email)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "email", "no user has the email "+email)
	}
	if err != nil {
		return nil, err
	}
	if err := CheckPassword(password, u.Email, "password"); err != nil {
		return nil, err
	}
	return s.replacePassword(ctx, u.ID, "", password, "")
}

// replacePassword hashes password and makes it the user's, provided the user's hash is still
// expectedHash (when one is given: the hash the caller's current password was checked against),
// and ends every session of theirs but keep ("" for none), all in one transaction holding the
// user's row.
func (s *Service) replacePassword(ctx context.Context, userID, expectedHash, password, keep string) (*ent.User, error) {
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return nil, err
	}
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return nil, err
	}
	u, err := tx.User.Query().Where(user.ID(userID), lockUser).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, rollback(tx, apierror.ForParam(apierror.NotFound, "id", "no user has the id "+userID))
	}
	if err != nil {
		return nil, rollback(tx, err)
	}
	if expectedHash != "" && u.PasswordHash != expectedHash {
		// Changed meanwhile by another request: the password checked is no longer current.
		return nil, rollback(tx, apierror.ForParam(apierror.InvalidCredentials, "current_password", "current_password is wrong"))
	}
	updated, err := tx.User.UpdateOne(u).SetPasswordHash(string(hash)).SetUpdatedAt(s.now()).Save(ctx)
	if err != nil {
		return nil, rollback(tx, err)
	}
	inForce, err := s.endSessionsOf(ctx, tx, userID, keep)
	if err != nil {
		return nil, rollback(tx, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	for _, remember := range inForce {
		remember()
	}
	if s.users != nil {
		s.users.remember(updated)
	}
	return updated.Unwrap(), nil
}

// lockUser is the lock a transaction reads a user's row with to change what credentials are
// checked against (password, role, standing): on PostgreSQL FOR NO KEY UPDATE, which serialises
// such changes and the logins checking them, but unlike FOR UPDATE lets another transaction add a
// row referring to the user, whose foreign key takes FOR KEY SHARE on it. A refresh holds its
// token's row and then adds the next token, while a change holding the user waits for that
// token's row (endSessionsOf): under FOR UPDATE each would wait for the other, and PostgreSQL would
// end one as a deadlock. SQLite has no row locks and needs none (database.ForUpdate).
func lockUser(s *sql.Selector) {
	if s.Dialect() == dialect.Postgres {
		s.For(sql.LockNoKeyUpdate)
	}
}
