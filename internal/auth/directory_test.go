package auth

import (
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
)

// TestUserDirectory: the copy follows changes made anywhere, forgets users deleted from the
// database at its next full read, reads a user it does not hold yet, and keeps a change made here
// over an older one read.
func TestUserDirectory(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		clock := time.Now().UTC().Truncate(time.Microsecond)
		now := func() time.Time { return clock }
		directory := NewUserDirectory(db.Ent, now)
		newUser := func(email string, role user.Role) *ent.User {
			u, err := db.Ent.User.Create().SetEmail(email).SetPasswordHash("!").SetRole(role).SetUpdatedAt(clock).Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		kept, gone := newUser("kept@example.com", user.RoleViewer), newUser("gone@example.com", user.RoleAdmin)
		if err := directory.Load(ctx); err != nil {
			t.Fatal(err)
		}
		// Made after the last look: read on first use, paid for first; then known.
		late := newUser("late@example.com", user.RoleOperator)
		paid := 0
		pay := func() error { paid++; return nil }
		if s, err := directory.standing(ctx, late.ID, pay); err != nil || s.role != "operator" || paid != 1 {
			t.Errorf("a user made since the last look = %q, %v; paid %d, want 1", s.role, err, paid)
		}
		if _, err := directory.standing(ctx, late.ID, pay); err != nil || paid != 1 {
			t.Errorf("a user read once = %v; paid %d in all, want 1", err, paid)
		}
		// Changed elsewhere: read at the next look.
		clock = clock.Add(time.Second)
		if err := db.Ent.User.UpdateOne(kept).SetRole(user.RoleDeveloper).SetDisabled(true).SetUpdatedAt(clock).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := db.Ent.User.DeleteOne(gone).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if err := directory.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := directory.standing(ctx, kept.ID, nil); codeOf(err) != apierror.TokenRevoked {
			t.Errorf("a user disabled elsewhere = %v", err)
		}
		// A deletion leaves no row to read: the full read, a minute on, forgets the user.
		if s, err := directory.standing(ctx, gone.ID, nil); err != nil || s.role != "admin" {
			t.Errorf("before the full read, the deleted user = %q, %v", s.role, err)
		}
		clock = clock.Add(directoryFullReadEvery)
		// A change made here after the read began is newer than what the read finds.
		directory.remember(&ent.User{ID: late.ID, MerchantID: tenant.DefaultMerchant, Role: user.RoleViewer, UpdatedAt: clock.Add(time.Millisecond)})
		if err := directory.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := directory.standing(ctx, gone.ID, nil); codeOf(err) != apierror.TokenInvalid {
			t.Errorf("after the full read, the deleted user = %v", err)
		}
		if s, err := directory.standing(ctx, late.ID, nil); err != nil || s.role != "viewer" {
			t.Errorf("a change made here during a read = %q, %v", s.role, err)
		}
		if _, err := directory.standing(ctx, "usr_never", nil); codeOf(err) != apierror.TokenInvalid {
			t.Errorf("a user who never was = %v", err)
		}
	})
}
