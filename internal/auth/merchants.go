package auth

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/merchant"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/tenant"
)

// A merchant is active or disabled; a disabled one's credentials stop working.
const (
	MerchantActive   = "active"
	MerchantDisabled = "disabled"
)

// MaxMerchantNameBytes bounds a merchant's name.
const MaxMerchantNameBytes = 100

// merchantName checks and trims a merchant's name.
func merchantName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", apierror.ForParam(apierror.MissingField, "name", "name is required")
	case len(name) > MaxMerchantNameBytes:
		return "", apierror.ForParam(apierror.InvalidRequest, "name", fmt.Sprintf("name must be at most %d bytes", MaxMerchantNameBytes))
	case strings.ContainsFunc(name, unicode.IsControl), !utf8.ValidString(name):
		return "", apierror.ForParam(apierror.InvalidRequest, "name", "name must be text without control characters")
	}
	return name, nil
}

// CreateMerchant makes a merchant, active, with no users yet: platform staff then act for it
// (Paygate-Merchant) to make its first admin.
func (s *Service) CreateMerchant(ctx context.Context, name string) (*ent.Merchant, error) {
	if err := Authorize(ctx, CreateMerchant); err != nil {
		return nil, err
	}
	name, err := merchantName(name)
	if err != nil {
		return nil, err
	}
	now := s.now()
	m, err := s.client.Merchant.Create().SetName(name).SetStatus(MerchantActive).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
	if err != nil {
		return nil, err
	}
	s.users.rememberMerchant(m)
	return m, nil
}

// MerchantPage is a page of merchants, and whether more lie beyond it in the direction it was
// read.
type MerchantPage struct {
	Merchants []*ent.Merchant
	HasMore   bool
}

// Merchants lists a page of merchants, oldest first (by id).
func (s *Service) Merchants(ctx context.Context, page ListPage) (MerchantPage, error) {
	if err := Authorize(ctx, ListMerchants); err != nil {
		return MerchantPage{}, err
	}
	p, err := page.check()
	if err != nil {
		return MerchantPage{}, err
	}
	merchants, err := s.client.Merchant.Query().Where(p.window).Order(p.order).Limit(p.limit()).All(ctx)
	if err != nil {
		return MerchantPage{}, err
	}
	merchants, more := pageOf(p, merchants)
	return MerchantPage{Merchants: merchants, HasMore: more}, nil
}

// MerchantCursorAt is the cursor of the merchant with id, which param (REST's starting_after or
// ending_before) pages from: a merchant that exists, or invalid_request.
func (s *Service) MerchantCursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := Authorize(ctx, ListMerchants); err != nil {
		return nil, err
	}
	listed, err := s.client.Merchant.Query().Where(merchant.ID(id)).Exist(ctx)
	if err != nil {
		return nil, err
	}
	if !listed {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no merchant has the id "+id)
	}
	return &ent.Cursor{ID: id}, nil
}

// MerchantChange is what UpdateMerchant changes; nil leaves a field as it is.
type MerchantChange struct {
	Name   *string
	Status *string
}

// UpdateMerchant renames a merchant, or disables (or enables) it. A disabled merchant's tokens
// and keys stop working here at once and on every other server within a second (each reads the
// merchants every second); its data is kept. Platform staff cannot disable their own merchant,
// which would lock them out.
func (s *Service) UpdateMerchant(ctx context.Context, id string, change MerchantChange) (*ent.Merchant, error) {
	if err := Authorize(ctx, UpdateMerchant); err != nil {
		return nil, err
	}
	update := s.client.Merchant.UpdateOneID(id).SetUpdatedAt(s.now())
	if change.Name != nil {
		name, err := merchantName(*change.Name)
		if err != nil {
			return nil, err
		}
		update.SetName(name)
	}
	if change.Status != nil {
		switch *change.Status {
		case MerchantActive:
		case MerchantDisabled:
			if p, _ := PrincipalFrom(ctx); p.Home == id {
				return nil, apierror.ForParam(apierror.InvalidState, "status", "platform staff cannot disable their own merchant")
			}
		default:
			return nil, apierror.ForParam(apierror.InvalidRequest, "status", "status must be active or disabled")
		}
		update.SetStatus(*change.Status)
	}
	m, err := update.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.NotFound, "id", "no merchant has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	s.users.rememberMerchant(m)
	return m, nil
}

// CreateUserOf adds a user to merchant (the default one when ""), for paygate user create, run
// with the database's own credentials. A server's first user, when an admin, is platform staff,
// as EnsureFirstAdmin makes them; platform staff belong to the default merchant.
func (s *Service) CreateUserOf(ctx context.Context, merchantID, email, password, role string, platform bool) (*ent.User, error) {
	if merchantID == "" {
		merchantID = tenant.DefaultMerchant
	}
	exists, err := s.client.Merchant.Query().Where(merchant.ID(merchantID)).Exist(ctx)
	switch {
	case err != nil:
		return nil, err
	case !exists:
		return nil, fmt.Errorf("no merchant has the id %s", merchantID)
	}
	first, err := s.NoUsers(ctx)
	if err != nil {
		return nil, err
	}
	platform = platform || first && role == "admin" && merchantID == tenant.DefaultMerchant
	if platform && merchantID != tenant.DefaultMerchant {
		return nil, fmt.Errorf("platform staff belong to the default merchant, %s", tenant.DefaultMerchant)
	}
	return s.createUser(tenant.For(ctx, merchantID), email, password, role, platform)
}
