package rest

import (
	"net/http"

	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/web"
)

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

type refreshRequest struct {
	RefreshToken string `json:"refresh_token"`
}

// tokens is the original document's login response shape.
type tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    int    `json:"expires_in"`
	TokenType    string `json:"token_type"`
}

func tokensOf(p *model.AuthPayload) tokens {
	return tokens{AccessToken: p.AccessToken, RefreshToken: p.RefreshToken, ExpiresIn: p.ExpiresIn, TokenType: p.TokenType}
}

// Login is POST /api/v1/auth/login.
func (h *Handlers) Login(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	switch {
	case req.Email == "":
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "email", "email is required"), nil)
		return
	case req.Password == "":
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "password", "password is required"), nil)
		return
	}
	payload, err := h.mutation.Login(r.Context(), model.LoginInput{Email: req.Email, Password: req.Password})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, tokensOf(payload))
}

// Refresh is POST /api/v1/auth/refresh.
func (h *Handlers) Refresh(w http.ResponseWriter, r *http.Request) {
	var req refreshRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if req.RefreshToken == "" {
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "refresh_token", "refresh_token is required"), nil)
		return
	}
	payload, err := h.mutation.RefreshToken(r.Context(), req.RefreshToken)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, tokensOf(payload))
}

type logoutRequest struct {
	RefreshToken *string `json:"refresh_token"`
}

type revokeRequest struct {
	Token string `json:"token"`
}

// Logout is POST /api/v1/auth/logout: the bearer's session ends, and refresh_token's if given.
func (h *Handlers) Logout(w http.ResponseWriter, r *http.Request) {
	var req logoutRequest
	if err := decodeOptional(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	revoked, err := h.mutation.Logout(r.Context(), req.RefreshToken)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, revoked)
}

// RevokeToken is POST /api/v1/auth/revoke.
func (h *Handlers) RevokeToken(w http.ResponseWriter, r *http.Request) {
	var req revokeRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if req.Token == "" {
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "token", "token is required"), nil)
		return
	}
	revoked, err := h.mutation.RevokeToken(r.Context(), req.Token)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, revoked)
}
