package rest

import (
	"net/http"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/web"
)

type createUserRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	Role     string `json:"role"`
	Platform *bool  `json:"platform"`
}

type updateUserRequest struct {
	Role     *string `json:"role"`
	Disabled *bool   `json:"disabled"`
}

type userJSON struct {
	ID         string    `json:"id"`
	Object     string    `json:"object"`
	Email      string    `json:"email"`
	Role       string    `json:"role"`
	Disabled   bool      `json:"disabled"`
	MerchantID string    `json:"merchant_id"`
	Platform   bool      `json:"platform"`
	CreatedAt  time.Time `json:"created_at"`
}

func userOf(u *ent.User) userJSON {
	return userJSON{ID: u.ID, Object: "user", Email: u.Email, Role: string(u.Role), Disabled: u.Disabled,
		MerchantID: u.MerchantID, Platform: u.Platform, CreatedAt: u.CreatedAt.UTC()}
}

// CreateUser is POST /api/v1/users.
func (h *Handlers) CreateUser(w http.ResponseWriter, r *http.Request) {
	var req createUserRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	for param, value := range map[string]string{"email": req.Email, "password": req.Password, "role": req.Role} {
		if value == "" {
			web.WriteError(w, r, apierror.ForParam(apierror.MissingField, param, param+" is required"), nil)
			return
		}
	}
	u, err := h.mutation.CreateUser(r.Context(), model.CreateUserInput{Email: req.Email, Password: req.Password, Role: req.Role, Platform: req.Platform})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusCreated, userOf(u))
}

// ListUsers is GET /api/v1/users?limit=&starting_after=&ending_before=: oldest first (by id).
func (h *Handlers) ListUsers(w http.ResponseWriter, r *http.Request) {
	p, err := readListPage(r, h.userCursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	after, before := p.ids()
	users, err := h.query.Users(r.Context(), p.first, after, p.last, before)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	list := make([]userJSON, len(users.Users))
	for i, u := range users.Users {
		list[i] = userOf(u)
	}
	web.WriteList(w, list, users.HasMore)
}

// UpdateUser is PATCH /api/v1/users/{id}: {role?, disabled?}.
func (h *Handlers) UpdateUser(w http.ResponseWriter, r *http.Request) {
	var req updateUserRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	u, err := h.mutation.UpdateUser(r.Context(), r.PathValue("id"), auth.UserChange{Role: req.Role, Disabled: req.Disabled})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, userOf(u))
}
