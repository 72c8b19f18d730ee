package graph

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vikstrous/dataloadgen"

	"github.com/paygate/paygate/internal/auth"
)

// peopleKey holds a root field's batch of people to name by email.
type peopleKey struct{}

// batchPeople gives each root field a loader of people's emails: the alerts or status changes of
// a page that name someone are answered by one read of them all (batched by dataloadgen, for a
// millisecond), not one per row.
func batchPeople(service *auth.Service) graphql.RootFieldMiddleware {
	return func(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
		// Made at the first email asked: most root fields name nobody.
		loader := sync.OnceValue(func() *dataloadgen.Loader[string, string] {
			return dataloadgen.NewMappedLoader(service.EmailsOf, dataloadgen.WithWait(time.Millisecond))
		})
		return next(context.WithValue(ctx, peopleKey{}, loader))
	}
}

// emailOf is the email of who subject is (a user, or an API key's user), through the root
// field's batch; nil for no one (Paygate itself, a provider), or someone the caller may not know.
// A subscription's events have no batch (gqlgen runs no root-field middleware for them): each
// names its one person in a read of its own.
func (r *Resolver) emailOf(ctx context.Context, subject *string) (*string, error) {
	if subject == nil {
		return nil, nil
	}
	loader, batched := ctx.Value(peopleKey{}).(func() *dataloadgen.Loader[string, string])
	if !batched {
		emails, err := r.AuthService.EmailsOf(ctx, []string{*subject})
		if email, ok := emails[*subject]; ok && err == nil {
			return &email, nil
		}
		return nil, err
	}
	email, err := loader().Load(ctx, *subject)
	if errors.Is(err, dataloadgen.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &email, nil
}
