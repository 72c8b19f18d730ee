package database

import (
	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
)

// ForUpdate is a query predicate that reads rows with their locks, held until the transaction
// ends: FOR UPDATE on PostgreSQL. SQLite has no row locks and needs none: Paygate's SQLite
// transactions take the database's write lock at BEGIN, so writers already run one at a time.
func ForUpdate(s *sql.Selector) {
	if s.Dialect() == dialect.Postgres {
		s.ForUpdate()
	}
}
