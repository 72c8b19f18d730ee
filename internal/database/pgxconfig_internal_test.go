package database

import "testing"

// TestPgxConfigKeepsNoUnusedDescriptionCache: in the default mode, which prepares statements and
// keeps them, a connection makes no cache of descriptions; a DSN asking for the mode that uses
// one keeps it.
func TestPgxConfigKeepsNoUnusedDescriptionCache(t *testing.T) {
	config, err := pgxConfig("postgres://postgres@127.0.0.1:5432/test", false)
	if err != nil {
		t.Fatal(err)
	}
	if config.DescriptionCacheCapacity != 0 || config.StatementCacheCapacity != 512 {
		t.Errorf("default mode: description cache %d, statement cache %d; want 0 and pgx's 512",
			config.DescriptionCacheCapacity, config.StatementCacheCapacity)
	}
	config, err = pgxConfig("postgres://postgres@127.0.0.1:5432/test?default_query_exec_mode=cache_describe", false)
	if err != nil {
		t.Fatal(err)
	}
	if config.DescriptionCacheCapacity != 512 {
		t.Errorf("cache_describe mode: description cache %d, want pgx's 512", config.DescriptionCacheCapacity)
	}
	if _, err := pgxConfig("postgres://postgres@127.0.0.1:5432/test?statement_cache_capacity=many", false); err == nil {
		t.Error("a DSN pgx cannot read was accepted")
	}
}
