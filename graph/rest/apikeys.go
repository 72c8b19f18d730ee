package rest

import (
	"net/http"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/web"
)

type createAPIKeyRequest struct {
	Name      string   `json:"name"`
	Scopes    []string `json:"scopes"`
	ExpiresAt *string  `json:"expires_at"`
}

type apiKeyJSON struct {
	ID     string   `json:"id"`
	Object string   `json:"object"`
	Name   string   `json:"name"`
	Prefix string   `json:"prefix"`
	Scopes []string `json:"scopes"`
	UserID string   `json:"user_id"`
	// ParentID is the key that made this one, when a key did.
	ParentID *string `json:"parent_id"`
	// Key is in the answer that makes the key, and in no other.
	Key        string     `json:"key,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

func apiKeyOf(k *ent.APIKey) apiKeyJSON {
	return apiKeyJSON{ID: k.ID, Object: "api_key", Name: k.Name, Prefix: k.Prefix, Scopes: k.Scopes, UserID: k.UserID, ParentID: k.ParentID,
		CreatedAt: k.CreatedAt.UTC(), ExpiresAt: utc(k.ExpiresAt), LastUsedAt: utc(k.LastUsedAt), RevokedAt: utc(k.RevokedAt)}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	in := t.UTC()
	return &in
}

// CreateAPIKey is POST /api/v1/api-keys: {name, scopes, expires_at?}.
func (h *Handlers) CreateAPIKey(w http.ResponseWriter, r *http.Request) {
	var req createAPIKeyRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	switch {
	case req.Name == "":
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "name", "name is required"), nil)
		return
	case req.Scopes == nil:
		web.WriteError(w, r, apierror.ForParam(apierror.MissingField, "scopes", "scopes is required"), nil)
		return
	}
	create := auth.APIKeyRequest{Name: req.Name, Scopes: req.Scopes}
	if req.ExpiresAt != nil {
		if err := checkTimeText("expires_at", *req.ExpiresAt); err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
		at, err := time.Parse(time.RFC3339, *req.ExpiresAt)
		if err != nil {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "expires_at", "expires_at must be a time like 2027-01-31T00:00:00Z"), nil)
			return
		}
		create.ExpiresAt = &at
	}
	created, err := h.mutation.CreateAPIKey(r.Context(), create)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	answer := apiKeyOf(created.APIKey)
	answer.Key = created.Key
	web.WriteJSON(w, http.StatusCreated, answer)
}

// ListAPIKeys is GET /api/v1/api-keys?limit=&starting_after=&ending_before=: oldest first (by
// id), never the keys themselves.
func (h *Handlers) ListAPIKeys(w http.ResponseWriter, r *http.Request) {
	p, err := readListPage(r, h.apiKeyCursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	after, before := p.ids()
	keys, err := h.query.APIKeys(r.Context(), p.first, after, p.last, before)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	list := make([]apiKeyJSON, len(keys.Keys))
	for i, k := range keys.Keys {
		list[i] = apiKeyOf(k)
	}
	web.WriteList(w, list, keys.HasMore)
}

// RevokeAPIKey is DELETE /api/v1/api-keys/{id}: the key, revoked.
func (h *Handlers) RevokeAPIKey(w http.ResponseWriter, r *http.Request) {
	key, err := h.mutation.RevokeAPIKey(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, apiKeyOf(key))
}
