// Package ent holds the generated data access code; the model lives in ent/schema.
package ent

//go:generate sh -c "cd .. && go run -mod=mod ./ent/entc.go"
