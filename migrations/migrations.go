// Package migrations embeds the versioned SQL migrations of each dialect. The files are generated
// from the ent schema by generate.go (`go generate ./...`) and applied by golang-migrate.
package migrations

import "embed"

//go:generate go run -mod=mod generate.go

// FS holds postgres/*.sql and sqlite/*.sql.
//
//go:embed postgres/*.sql sqlite/*.sql
var FS embed.FS
