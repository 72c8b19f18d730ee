// Package settingsstore keeps the runtime configuration document in the database, one row per
// version (table config_versions): versions are only ever added, the newest is in force and the
// ones before it are the audit history. Each server holds the document in force in memory, where
// every payment reads it for nothing, and polls the database for a newer version, so a change made
// through any server is in force on all of them within one poll.
package settingsstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/configversion"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/settings"
)

// Pages of history are bounded: a document may be large.
const (
	DefaultHistoryPage = 20
	MaxHistoryPage     = 100
)

// SystemAuthor is who wrote the default document, stored as version 1 with the first change.
const SystemAuthor = "system"

// Store is the runtime configuration: the document in force in memory, its versions in the
// database.
type Store struct {
	client    *ent.Client
	providers []string
	initial   settings.Document
	now       func() time.Time
	current   atomic.Pointer[settings.Document]
}

// New returns the store over client, for a Paygate with the named providers. Until Load finds a
// stored version, the document in force is initial, as version 1.
func New(client *ent.Client, providers []string, initial settings.Document, now func() time.Time) *Store {
	s := &Store{client: client, providers: providers, initial: initial, now: now}
	s.current.Store(&initial)
	return s
}

// Current is the document in force on this server. It reads memory alone, without a lock, so
// every payment may ask. Its maps and slices are shared: read them, never change them.
func (s *Store) Current() settings.Document { return *s.current.Load() }

// install puts doc in force unless a version as new is already: a poll that read an older
// version must not undo a change this server has just made.
func (s *Store) install(doc settings.Document) {
	for {
		in := s.current.Load()
		if in.Version >= doc.Version || s.current.CompareAndSwap(in, &doc) {
			return
		}
	}
}

// Load puts the newest stored version in force; with none stored, the default stays.
func (s *Store) Load(ctx context.Context) error {
	row, err := s.client.ConfigVersion.Query().Order(configversion.ByID(entsql.OrderDesc())).First(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the runtime configuration: %w", err)
	}
	s.install(documentOf(row))
	return nil
}

// Refresh loads the newest version when it is newer than the one in force. Asking for the newest
// version number alone reads one entry of the primary key's index, so polling costs little.
func (s *Store) Refresh(ctx context.Context) error {
	newest, err := newestVersion(ctx, s.client.ConfigVersion)
	if err != nil {
		return err
	}
	if newest <= s.Current().Version {
		return nil
	}
	return s.Load(ctx)
}

// newestVersion is the number of the newest stored version, 0 when none is.
func newestVersion(ctx context.Context, versions *ent.ConfigVersionClient) (int, error) {
	id, err := versions.Query().Order(configversion.ByID(entsql.OrderDesc())).FirstID(ctx)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	return id, err
}

// Update stores doc, the whole document edited from the version doc.Version, as the next version
// written by by, and puts it in force on this server at once (the others load it at their next
// poll). A document that is not valid is refused naming the field at fault; one edited from a
// version that is no longer in force is refused with invalid_state, so a change is never made
// over another unseen. Either way nothing is stored. The first change also stores the default it
// was made from as version 1, so the history shows what came before it. The document's
// updated_at and updated_by are the store's to say: what the client sent of them is ignored.
func (s *Store) Update(ctx context.Context, doc settings.Document, by string) (settings.Document, error) {
	if doc.Version < 1 {
		return settings.Document{}, apierror.ForParam(apierror.InvalidRequest, "version", "version must be the version the document was read at")
	}
	if err := doc.Validate(s.providers); err != nil {
		return settings.Document{}, err
	}
	if doc.Routing.Rules == nil {
		doc.Routing.Rules = []settings.Rule{} // shown as [], as sent when none are
	}
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return settings.Document{}, err
	}
	defer tx.Rollback()
	newest, err := newestVersion(ctx, tx.ConfigVersion)
	if err != nil {
		return settings.Document{}, err
	}
	inForce := max(newest, 1) // with none stored, the default is version 1
	if doc.Version != inForce {
		return settings.Document{}, stale(doc.Version, inForce)
	}
	at := s.now()
	if newest == 0 {
		if err := insert(ctx, tx, s.initial, SystemAuthor, at); err != nil {
			return settings.Document{}, versionTaken(err, doc.Version)
		}
	}
	doc.Version = inForce + 1
	if err := insert(ctx, tx, doc, by, at); err != nil {
		return settings.Document{}, versionTaken(err, doc.Version-1)
	}
	if err := tx.Commit(); err != nil {
		return settings.Document{}, versionTaken(err, doc.Version-1)
	}
	doc.UpdatedAt, doc.UpdatedBy = &at, by
	s.install(doc)
	return doc, nil
}

// insert adds doc as its version. The version number is the primary key, so of two changes made
// from one version, the second to insert fails here.
func insert(ctx context.Context, tx *ent.Tx, doc settings.Document, by string, at time.Time) error {
	doc.UpdatedAt, doc.UpdatedBy = nil, "" // the row says who and when
	return tx.ConfigVersion.Create().SetID(doc.Version).SetDocument(doc).SetChangedBy(by).SetCreatedAt(at).Exec(ctx)
}

// versionTaken turns the failure to insert the version after read, because another change took
// its number first, into the refusal of a stale version.
func versionTaken(err error, read int) error {
	if ent.IsConstraintError(err) {
		return stale(read, read+1)
	}
	return err
}

func stale(read, inForce int) error {
	return apierror.New(apierror.InvalidState, fmt.Sprintf(
		"the document was read at version %d, but version %d is in force: read it again and make the change to that version", read, inForce))
}

// Change is one stored version: who wrote it and when, the document, and the document it
// replaced (nil for the first version).
type Change struct {
	Version   int
	ChangedBy string
	ChangedAt time.Time
	Document  settings.Document
	Previous  *settings.Document
}

// History returns stored versions newest first: first of them (DefaultHistoryPage when nil, at
// most MaxHistoryPage), older than version before when it is given. Nothing is stored, and the
// history is empty, until the first change.
func (s *Store) History(ctx context.Context, first, before *int) ([]Change, error) {
	limit := DefaultHistoryPage
	if first != nil {
		if *first < 1 || *first > MaxHistoryPage {
			return nil, apierror.ForParam(apierror.InvalidRequest, "first", fmt.Sprintf("first must be from 1 to %d", MaxHistoryPage))
		}
		limit = *first
	}
	query := s.client.ConfigVersion.Query().Order(configversion.ByID(entsql.OrderDesc()))
	if before != nil {
		if *before < 1 || *before > settings.MaxVersion {
			return nil, apierror.ForParam(apierror.InvalidRequest, "before", fmt.Sprintf("before must be a version number, from 1 to %d", settings.MaxVersion))
		}
		query.Where(configversion.IDLT(*before))
	}
	// One row more than the page: the document the page's oldest version replaced.
	rows, err := query.Limit(limit + 1).All(ctx)
	if err != nil {
		return nil, err
	}
	changes := make([]Change, 0, min(len(rows), limit))
	for i, row := range rows[:min(len(rows), limit)] {
		change := Change{Version: row.ID, ChangedBy: row.ChangedBy, ChangedAt: row.CreatedAt.UTC(), Document: documentOf(row)}
		// Versions are numbered without gaps, each from the one before it.
		if i+1 < len(rows) && rows[i+1].ID == row.ID-1 {
			previous := documentOf(rows[i+1])
			change.Previous = &previous
		}
		changes = append(changes, change)
	}
	return changes, nil
}

// documentOf is a stored version's document, with its version, time and author from the row.
func documentOf(row *ent.ConfigVersion) settings.Document {
	doc := row.Document
	if doc.Alerts == (settings.AlertThresholds{}) {
		doc.Alerts = settings.DefaultAlerts // written before alerts had thresholds
	}
	if doc.Capture == (settings.Capture{}) {
		doc.Capture = settings.DefaultCapture // written before payments were captured later
	}
	at := row.CreatedAt.UTC()
	doc.Version, doc.UpdatedAt, doc.UpdatedBy = row.ID, &at, row.ChangedBy
	return doc
}
