package auth

import (
	"context"
	"runtime"

	"golang.org/x/crypto/bcrypt"

	"github.com/paygate/paygate/internal/apierror"
)

// hashSlots bounds the passwords hashed at once to the cores: a flood of logins, each a bcrypt,
// queues here instead of taking every core from the requests beside it.
var hashSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// withHashSlot runs hash once a slot is free, or refuses when ctx ends first.
func withHashSlot(ctx context.Context, hash func()) error {
	select {
	case hashSlots <- struct{}{}:
	case <-ctx.Done():
		return apierror.New(apierror.ServiceUnavailable, "too many passwords are being checked at once: try again")
	}
	defer func() { <-hashSlots }()
	hash()
	return nil
}

// passwordMatches reports whether password is the one hash was made of.
func passwordMatches(ctx context.Context, hash []byte, password string) (bool, error) {
	var matches bool
	err := withHashSlot(ctx, func() { matches = bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil })
	return matches, err
}

// hashPassword returns the hash a password is kept as, at bcrypt cost cost.
func hashPassword(ctx context.Context, password string, cost int) ([]byte, error) {
	var hash []byte
	var hashErr error
	if err := withHashSlot(ctx, func() { hash, hashErr = bcrypt.GenerateFromPassword([]byte(password), cost) }); err != nil {
		return nil, err
	}
	return hash, hashErr
}
