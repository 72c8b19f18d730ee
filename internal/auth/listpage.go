package auth

import (
	"slices"

	"entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/paging"
)

// ListPage asks for a page of a list ordered by id (users, API keys, merchants) as a Relay page
// does: the first First items, or the last Last, of those whose ids lie after After and before
// Before ("" for no bound). Neither size asks for the first paging.DefaultPageSize.
type ListPage struct {
	First, Last   *int
	After, Before string
}

// idPage is a ListPage whose size is checked: size items read from the start of the window, or
// from its end when backwards.
type idPage struct {
	ListPage
	size      int
	backwards bool
}

// idColumn is the column every list of this kind is ordered and bounded by.
const idColumn = "id"

// check refuses a size out of bounds, or both sizes at once, naming the argument.
func (p ListPage) check() (idPage, error) {
	first, err := paging.CheckPage(p.First, p.Last)
	if err != nil {
		return idPage{}, err
	}
	if first != nil {
		return idPage{ListPage: p, size: *first}, nil
	}
	return idPage{ListPage: p, size: *p.Last, backwards: true}, nil
}

// window keeps the rows whose ids lie between After and Before.
func (p idPage) window(s *sql.Selector) {
	if p.After != "" {
		s.Where(sql.GT(s.C(idColumn), p.After))
	}
	if p.Before != "" {
		s.Where(sql.LT(s.C(idColumn), p.Before))
	}
}

// order reads the window from the end nearest the page: a page read backwards is the last rows
// before Before, so they are read in descending order.
func (p idPage) order(s *sql.Selector) {
	if p.backwards {
		ent.Desc(idColumn)(s)
		return
	}
	ent.Asc(idColumn)(s)
}

// limit is one row more than the page holds: that row says whether more lie beyond it.
func (p idPage) limit() int { return p.size + 1 }

// pageOf cuts rows read with p's limit and order to the page, in ascending order of id, and says
// whether more lie beyond it in the direction it was read.
func pageOf[T any](p idPage, rows []T) (page []T, more bool) {
	if more = len(rows) > p.size; more {
		rows = rows[:p.size]
	}
	if p.backwards {
		slices.Reverse(rows)
	}
	return rows, more
}
