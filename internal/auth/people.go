package auth

import (
	"context"
	"strings"

	"github.com/paygate/paygate/ent/apikey"
	"github.com/paygate/paygate/ent/user"
	"github.com/paygate/paygate/internal/tenant"
)

// EmailsOf answers who each of subjects is, by email: a user (usr_...) by theirs, an API key
// (key_...) by its user's. It answers people, not programs, and only of the people they may
// know: platform staff know everyone; a merchant's users, the people of the merchant they act
// for (platform staff among them when it is the platform's own); an API key, no one. A subject
// that is neither, or that the caller may not know, is left out. It reads in two queries at
// most, whatever the number.
func (s *Service) EmailsOf(ctx context.Context, subjects []string) (map[string]string, error) {
	p, err := principalOf(ctx)
	if err != nil || p.IsAPIKey() {
		return map[string]string{}, err
	}
	if p.Platform {
		ctx = tenant.System(ctx)
	}
	var users, keys []string
	for _, subject := range subjects {
		switch {
		case strings.HasPrefix(subject, "usr_"):
			users = append(users, subject)
		case strings.HasPrefix(subject, "key_"):
			keys = append(keys, subject)
		}
	}
	emails := map[string]string{}
	ownerOf := map[string]string{}
	if len(keys) > 0 {
		found, err := s.client.APIKey.Query().Where(apikey.IDIn(keys...)).Select(apikey.FieldID, apikey.FieldUserID).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, key := range found {
			ownerOf[key.ID] = key.UserID
			users = append(users, key.UserID)
		}
	}
	if len(users) > 0 {
		found, err := s.client.User.Query().Where(user.IDIn(users...)).Select(user.FieldID, user.FieldEmail).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, u := range found {
			emails[u.ID] = u.Email
		}
	}
	for key, owner := range ownerOf {
		if email, ok := emails[owner]; ok {
			emails[key] = email
		}
	}
	return emails, nil
}
