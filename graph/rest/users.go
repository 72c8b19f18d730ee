package rest

import (
	"net/http"
	"strconv"
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

// ListUsers is GET /api/v1/users?limit=&starting_after=: oldest first.
func (h *Handlers) ListUsers(w http.ResponseWriter, r *http.Request) {
	limit, after, err := readListPage(r)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	page, err := h.query.Users(r.Context(), &limit, &after)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	list := make([]userJSON, len(page.Users))
	for i, u := range page.Users {
		list[i] = userOf(u)
	}
	web.WriteList(w, list, page.HasMore)
}

// readListPage reads the paging of a short list ordered by id (users, API keys): limit, 20 by
// default, and starting_after, the id of the item the page follows.
func readListPage(r *http.Request) (limit int, after string, err error) {
	limit = 20
	if text := r.URL.Query().Get("limit"); text != "" {
		if limit, err = strconv.Atoi(text); err != nil {
			return 0, "", apierror.ForParam(apierror.InvalidRequest, "limit", "limit must be a whole number")
		}
	}
	return limit, r.URL.Query().Get("starting_after"), nil
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
