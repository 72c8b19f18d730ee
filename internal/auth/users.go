package auth

import (
	"context"
	"slices"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/predicate"
	"github.com/paygate/paygate/ent/refreshtoken"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
)

// AddUser creates a user of the merchant the caller acts for, for someone who manages users.
// Only platform staff make more platform staff, in their own merchant.
func (s *Service) AddUser(ctx context.Context, email, password, role string, platform bool) (*ent.User, error) {
	if err := Authorize(ctx, CreateUser); err != nil {
		return nil, err
	}
	if p, _ := PrincipalFrom(ctx); platform && (!p.Platform || p.ActsForAnother()) {
		return nil, apierror.ForParam(apierror.Forbidden, "platform", "only platform staff make platform staff, in their own merchant")
	}
	u, err := s.createUser(ctx, email, password, role, platform)
	if ent.IsConstraintError(err) {
		return nil, apierror.ForParam(apierror.InvalidState, "email", "a user with this email exists")
	}
	return u, err
}

// UserPage is a page of users, and whether more lie beyond it in the direction it was read.
type UserPage struct {
	Users   []*ent.User
	HasMore bool
}

// Users lists a page of users, oldest first (by id).
func (s *Service) Users(ctx context.Context, page ListPage) (UserPage, error) {
	if err := Authorize(ctx, ListUsers); err != nil {
		return UserPage{}, err
	}
	p, err := page.check()
	if err != nil {
		return UserPage{}, err
	}
	users, err := s.client.User.Query().Where(p.window).Order(p.order).Limit(p.limit()).All(ctx)
	if err != nil {
		return UserPage{}, err
	}
	users, more := pageOf(p, users)
	return UserPage{Users: users, HasMore: more}, nil
}

// UserCursorAt is the cursor of the user with id, which param (REST's starting_after or
// ending_before) pages from: a user the caller lists, or invalid_request.
func (s *Service) UserCursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := Authorize(ctx, ListUsers); err != nil {
		return nil, err
	}
	listed, err := s.client.User.Query().Where(user.ID(id)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !listed {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no user has the id "+id)
	}
	return &ent.Cursor{ID: id}, nil
}

// UserChange is what UpdateUser changes; nil leaves a field as it is.
type UserChange struct {
	Role     *string
	Disabled *bool
}

// UpdateUser changes a user's role or disables (or enables) them. A change of role or a
// disabling revokes every token the user holds, at once on every server: their next request
// needs a new login, with the new role, which a disabled user cannot make. The last enabled
// admin can be neither demoted nor disabled; the admins are locked while that is checked, so two
// admins demoting each other at once cannot both succeed.
func (s *Service) UpdateUser(ctx context.Context, id string, change UserChange) (*ent.User, error) {
	if err := Authorize(ctx, UpdateUser); err != nil {
		return nil, err
	}
	if change.Role != nil && ScopesOf(*change.Role) == nil {
		return nil, apierror.ForParam(apierror.InvalidRequest, "role", "role must be admin, operator, developer or viewer")
	}
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return nil, err
	}
	u, err := tx.User.Query().Where(user.ID(id), lockUser).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, rollback(tx, apierror.ForParam(apierror.NotFound, "id", "no user has the id "+id))
	}
	if err != nil {
		return nil, rollback(tx, err)
	}
	if err := guardPlatformUser(ctx, u); err != nil {
		return nil, rollback(tx, err)
	}
	role, disabled := string(u.Role), u.Disabled
	if change.Role != nil {
		role = *change.Role
	}
	if change.Disabled != nil {
		disabled = *change.Disabled
	}
	if u.Role == user.RoleAdmin && !u.Disabled && (role != "admin" || disabled) {
		// The merchant keeps an admin, and the platform an admin of its staff.
		others := tx.User.Query().Where(user.RoleEQ(user.RoleAdmin), user.Disabled(false), user.IDNEQ(u.ID), lockUser)
		if u.Platform {
			others.Where(user.Platform(true))
		}
		left, err := others.IDs(ctx)
		if err != nil {
			return nil, rollback(tx, err)
		}
		if len(left) == 0 {
			return nil, rollback(tx, apierror.New(apierror.InvalidState, "the last admin can be neither demoted nor disabled: make another admin first"))
		}
	}
	updated, err := tx.User.UpdateOne(u).SetRole(user.Role(role)).SetDisabled(disabled).SetUpdatedAt(s.now()).Save(ctx)
	if err != nil {
		return nil, rollback(tx, err)
	}
	var inForce []func()
	if role != string(u.Role) || (disabled && !u.Disabled) {
		if inForce, err = s.endSessionsOf(ctx, tx, u.ID, ""); err != nil {
			return nil, rollback(tx, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	for _, remember := range inForce {
		remember()
	}
	s.users.remember(updated)
	return updated.Unwrap(), nil
}

// endSessionsOf revokes, within tx, every session of the user but except (a session to keep, or
// "" for none): their refresh tokens, and the sessions that may still have access tokens in
// force, those with a refresh token issued within an access token's lifetime (every access token
// is issued beside one). A new login starts a new session, which is not revoked. The functions
// returned put the revocations in force here.
func (s *Service) endSessionsOf(ctx context.Context, tx *ent.Tx, userID, except string) ([]func(), error) {
	now := s.now()
	others := []predicate.RefreshToken{refreshtoken.UserID(userID)}
	if except != "" {
		others = append(others, refreshtoken.FamilyNEQ(except))
	}
	others = slices.Clip(others) // each statement below appends its own predicates to a copy
	// Refreshes under way hold their tokens' rows: waiting for them first means the statements
	// below see the tokens they hand out, as a logout does.
	if _, err := tx.RefreshToken.Query().Where(append(others, refreshtoken.UsedAtIsNil(), database.ForUpdate)...).IDs(ctx); err != nil {
		return nil, err
	}
	live, err := tx.RefreshToken.Query().
		Where(append(others, refreshtoken.CreatedAtGT(now.Add(-AccessTokenLifetime-clockSkew)))...).
		Unique(true).Select(refreshtoken.FieldFamily).Strings(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := tx.RefreshToken.Update().Where(append(others, refreshtoken.RevokedAtIsNil())...).
		SetRevokedAt(now).Save(ctx); err != nil {
		return nil, err
	}
	inForce := make([]func(), 0, len(live))
	for _, family := range live {
		remember, err := s.revokeWithin(ctx, tx.Client(), family, now.Add(AccessTokenLifetime+clockSkew))
		if err != nil {
			return nil, err
		}
		inForce = append(inForce, remember)
	}
	return inForce, nil
}

// revokeWithin records through client (a transaction's) that subject is revoked until until, and
// returns what puts the revocation in force here once it is committed. A command, which keeps no
// copy of the revocations, writes the row alone: every server reads it within a second.
func (s *Service) revokeWithin(ctx context.Context, client *ent.Client, subject string, until time.Time) (inForce func(), err error) {
	if s.tokens != nil && s.tokens.Revocations != nil {
		return s.tokens.Revocations.revoke(ctx, client, subject, until)
	}
	return func() {}, client.Revocation.Create().SetSubject(subject).SetUntil(until).SetCreatedAt(s.now()).Exec(ctx)
}

// guardPlatformUser refuses a change to a platform user's account by anyone but platform staff: a
// merchant's admin manages that merchant's own people.
func guardPlatformUser(ctx context.Context, u *ent.User) error {
	if p, _ := PrincipalFrom(ctx); u.Platform && !p.Platform {
		return apierror.ForParam(apierror.Forbidden, "id", "only platform staff change a platform user's account")
	}
	return nil
}
