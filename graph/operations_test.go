package graph

import (
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/auth"
)

// TestSchemaScopesAreTheOperations: the @hasScope directive on each root field names the scope
// its operation has in the one table of operations, and every operation is a root field, so the
// schema says what the services enforce.
func TestSchemaScopesAreTheOperations(t *testing.T) {
	schema := schemaForTest()
	rootFields := map[string]string{}
	for _, root := range []string{"Query", "Mutation", "Subscription"} {
		for _, field := range schema.Types[root].Fields {
			scope := ""
			if hasScope := field.Directives.ForName("hasScope"); hasScope != nil {
				scope = hasScope.Arguments.ForName("scope").Value.Raw
			}
			rootFields[field.Name] = scope
		}
	}
	for _, op := range auth.Operations {
		if op.HTTPOnly {
			continue
		}
		scope, ok := rootFields[op.Name]
		if !ok {
			t.Errorf("operation %s is no root field of the schema", op.Name)
		} else if scope != op.Scope {
			t.Errorf("%s: the schema asks for scope %q, the operation %q", op.Name, scope, op.Scope)
		}
	}
	// node and nodes read objects of any type, each authorised by its type's operation.
	perType := map[string]bool{"node": true, "nodes": true}
	for name := range rootFields {
		if _, ok := auth.OperationNamed(name); !ok && !perType[name] && !strings.HasPrefix(name, "__") {
			t.Errorf("root field %s is no operation: nothing says who may ask it", name)
		}
	}
}
