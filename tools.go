//go:build tools

// tools.go pins the code generators `go generate ./...` runs, so go.mod keeps their versions.
package main

import (
	_ "entgo.io/contrib/entgql"
	_ "github.com/99designs/gqlgen"
)
