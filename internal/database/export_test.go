package database

// PgxRowsQueries is how many queries the pool of pgx's own rows has run (each takes a connection
// of it once); 0 where there is no such pool.
func PgxRowsQueries(db *DB) int64 {
	if db.pgxRows == nil {
		return 0
	}
	return db.pgxRows.Stat().AcquireCount()
}
