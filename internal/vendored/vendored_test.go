package vendored

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"testing/fstest"
)

func sumLine(name, content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:]) + "  " + name + "\n"
}

// TestVerify: a directory passes only when SHA256SUMS lists each of its files with its sum and
// nothing more; a failure says which script rewrites them.
func TestVerify(t *testing.T) {
	t.Parallel()
	listed := sumLine("a.js", "a") + sumLine("b.css", "b")
	for _, c := range []struct {
		name  string
		files fstest.MapFS
		fails string // what the error says; "" when it passes
	}{
		{"as listed", fstest.MapFS{"v/a.js": {Data: []byte("a")}, "v/b.css": {Data: []byte("b")}, "v/SHA256SUMS": {Data: []byte(listed)}}, ""},
		{"edited", fstest.MapFS{"v/a.js": {Data: []byte("A")}, "v/b.css": {Data: []byte("b")}, "v/SHA256SUMS": {Data: []byte(listed)}}, "v/a.js does not match SHA256SUMS"},
		{"unlisted", fstest.MapFS{"v/a.js": {Data: []byte("a")}, "v/b.css": {Data: []byte("b")}, "v/c.js": {Data: []byte("c")}, "v/SHA256SUMS": {Data: []byte(listed)}}, "v/c.js does not match SHA256SUMS"},
		{"missing", fstest.MapFS{"v/a.js": {Data: []byte("a")}, "v/SHA256SUMS": {Data: []byte(listed)}}, "v/SHA256SUMS lists missing files: b.css"},
		{"malformed", fstest.MapFS{"v/a.js": {Data: []byte("a")}, "v/SHA256SUMS": {Data: []byte("a.js\n")}}, `malformed v/SHA256SUMS line "a.js"`},
		{"no sums", fstest.MapFS{"v/a.js": {Data: []byte("a")}}, "SHA256SUMS"},
	} {
		err := Verify(c.files, "v", "refresh.sh")
		switch {
		case c.fails == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails) || !strings.HasSuffix(err.Error(), ": run refresh.sh")):
			t.Errorf("%s: %v, want an error saying %q and to run refresh.sh", c.name, err, c.fails)
		}
	}
}
