package graph

import (
	"net/url"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// TestSchemaSaysWhatIsAlwaysThere: what Paygate always answers is non-null in the schema, so a
// client generated from it needs no null checks: every connection's edges and each edge's node,
// every list of objects and its items, and a payment's metadata.
func TestSchemaSaysWhatIsAlwaysThere(t *testing.T) {
	schema := schemaForTest()
	connections := 0
	for name, def := range schema.Types {
		if def.Kind != ast.Object || def.BuiltIn {
			continue
		}
		for _, field := range def.Fields {
			list := field.Type.Elem
			switch {
			case list != nil && schema.Types[list.Name()].Kind == ast.Object:
				if !field.Type.NonNull || !list.NonNull {
					t.Errorf("%s.%s is %s: a list of objects is never null, nor any of its items", name, field.Name, field.Type)
				}
				if field.Name == "edges" {
					connections++
				}
			case schema.Types[field.Type.Name()].Kind == ast.Object && field.Name == "node" && def.Fields.ForName("cursor") != nil:
				if !field.Type.NonNull {
					t.Errorf("%s.node is %s: an edge always has its node", name, field.Type)
				}
			}
		}
	}
	if connections < 6 {
		t.Errorf("%d connections' edges seen, want the 6 of payments, events, alerts, webhook events, endpoints and deliveries", connections)
	}
	if metadata := schema.Types["Payment"].Fields.ForName("metadata"); metadata == nil || metadata.Type.String() != "StringMap!" {
		t.Errorf("Payment.metadata is %v, want StringMap!", metadata.Type)
	}
}

// TestCustomScalarsSaySpecifiedBy: each scalar of Paygate's own points a client generator at a
// page that defines it, as @specifiedBy does.
func TestCustomScalarsSaySpecifiedBy(t *testing.T) {
	schema := schemaForTest()
	custom := 0
	for name, def := range schema.Types {
		if def.Kind != ast.Scalar || def.BuiltIn {
			continue
		}
		custom++
		specifiedBy := def.Directives.ForName("specifiedBy")
		if specifiedBy == nil {
			t.Errorf("scalar %s has no @specifiedBy", name)
			continue
		}
		if u, err := url.Parse(specifiedBy.Arguments.ForName("url").Value.Raw); err != nil || u.Scheme != "https" || u.Host == "" {
			t.Errorf("scalar %s is specified by %q, not an https URL", name, specifiedBy.Arguments.ForName("url").Value.Raw)
		}
	}
	if custom != 5 {
		t.Errorf("%d custom scalars, want Decimal, StringMap, Time, Cursor and JSON", custom)
	}
}
