package graph

import (
	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/auth"
)

func authPayload(s auth.Session) *model.AuthPayload {
	return &model.AuthPayload{
		AccessToken:  s.AccessToken,
		RefreshToken: s.RefreshToken,
		ExpiresIn:    s.ExpiresIn,
		TokenType:    "Bearer",
	}
}
