// Package playground serves GraphiQL for /query from files embedded in the binary: the page and
// its script are Paygate's, GraphiQL, React and ReactDOM are the npm registry's browser builds at
// pinned versions (refresh.sh), so the playground works without the internet and loads nothing
// from another origin.
package playground

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/vendored"
)

//go:embed assets
var assets embed.FS

// Prefix is where the page's scripts and styles are served.
const Prefix = "/playground/"

// ContentSecurityPolicy lets the page run its own scripts and styles and talk to its own origin,
// nothing else: no inline script, no eval, no other host.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page at / and its files under Prefix.
type Handler struct {
	// etags are the entity tags browsers revalidate the files by, by path under assets. The files
	// themselves are read from the binary as they are served, not copied onto the heap, where
	// their 1.5 MB would count toward what the garbage collector finds live.
	etags map[string]string
}

// New returns the handler, which reads the embedded files once per process, checking the
// vendored ones against their SHA256SUMS. It holds nothing that changes, so servers share it.
func New() (*Handler, error) { return load() }

var load = sync.OnceValues(func() (*Handler, error) {
	if err := vendored.Verify(assets, vendorDir, "internal/playground/refresh.sh"); err != nil {
		return nil, fmt.Errorf("playground: %w", err)
	}
	h := &Handler{etags: map[string]string{}}
	err := fs.WalkDir(assets, "assets", func(name string, entry fs.DirEntry, err error) error {
		if err != nil || entry.IsDir() {
			return err
		}
		content, err := assets.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(content)
		h.etags[strings.TrimPrefix(name, "assets/")] = `"` + hex.EncodeToString(sum[:16]) + `"`
		return nil
	})
	if err != nil {
		return nil, err
	}
	return h, nil
})

// Page serves the playground page.
func (h *Handler) Page(w http.ResponseWriter, r *http.Request) {
	h.serve(w, r, "index.html")
}

// Asset serves a file under Prefix: the page's script and style, and the vendored builds.
func (h *Handler) Asset(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, Prefix)
	if name == "index.html" || name == "vendor/"+vendored.SumsFile {
		http.NotFound(w, r)
		return
	}
	h.serve(w, r, name)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, name string) {
	etag, ok := h.etags[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	content, err := assets.Open("assets/" + name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer content.Close()
	w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
	w.Header().Set("ETag", etag)
	// Revalidated on each load (a 304 costs nothing), so a refreshed build is never served stale.
	w.Header().Set("Cache-Control", "no-cache")
	// ServeContent answers If-None-Match and ranges, and names the type from the extension.
	// An embedded file reads and seeks in the binary's own bytes.
	http.ServeContent(w, r, path.Base(name), time.Time{}, content.(io.ReadSeeker))
}

// vendorDir holds the vendored files, which refresh.sh writes.
const vendorDir = "assets/vendor"

// VendorSums reads the vendored files' SHA256SUMS: file name to hex sum.
func VendorSums() (map[string]string, error) { return vendored.Sums(assets, vendorDir) }
