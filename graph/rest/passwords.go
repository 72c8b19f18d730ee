package rest

import (
	"net/http"

	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/web"
)

type changePasswordRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

type resetPasswordRequest struct {
	NewPassword string `json:"new_password"`
}

// ChangePassword is POST /api/v1/auth/password: {current_password, new_password}, the caller's
// own; their other sessions end.
func (h *Handlers) ChangePassword(w http.ResponseWriter, r *http.Request) {
	// An API key is refused before its body is read, as a route without its scope would be.
	if err := auth.RequireUserSession(r.Context()); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	var req changePasswordRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	switch {
	case req.CurrentPassword == "":
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "current_password", "current_password is required"), nil)
		return
	case req.NewPassword == "":
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "new_password", "new_password is required"), nil)
		return
	}
	changed, err := h.mutation.ChangePassword(r.Context(), model.ChangePasswordInput{CurrentPassword: req.CurrentPassword, NewPassword: req.NewPassword})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, changed)
}

// ResetPassword is POST /api/v1/users/{id}/password: {new_password}; the user's sessions end.
func (h *Handlers) ResetPassword(w http.ResponseWriter, r *http.Request) {
	var req resetPasswordRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if req.NewPassword == "" {
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "new_password", "new_password is required"), nil)
		return
	}
	changed, err := h.mutation.ResetPassword(r.Context(), r.PathValue("id"), model.ResetPasswordInput{NewPassword: req.NewPassword})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, changed)
}
