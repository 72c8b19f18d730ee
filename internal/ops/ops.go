// Package ops serves the operations page at /ops: payments as they happen, one payment's detail,
// the providers' health, open alerts and the webhook logs. The page is built on the public GraphQL
// API at /query alone (queries, mutations, and subscriptions over the graphql-transport-ws
// protocol), so it is also the example of a dashboard on Paygate. Its page, script and style are
// embedded and hand-written (no framework, no build step); its one library, uPlot for the charts,
// is the npm registry's browser build at a pinned version (refresh.sh), embedded too: it loads
// nothing from another origin.
// It carries no credential of its own; whoever opens it signs in with theirs, and so it is served
// in production too.
package ops

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
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

// Path is the page's address; the page is served at Prefix too.
const Path = "/ops"

// Prefix is where the page's script and style are served.
const Prefix = Path + "/"

// ContentSecurityPolicy lets the page run its own script and style and talk to its own origin
// (fetch to /query, and the WebSocket to /query, which 'self' covers), nothing else: no inline
// script or style, no eval, no other host, no form posted anywhere, no framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// contentTypes names each served file's type, whatever the system's MIME tables say.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	// LICENSE.uplot, uPlot's license, served beside it.
	".uplot": "text/plain; charset=utf-8",
}

// file is an embedded file with the entity tag browsers revalidate it by.
type file struct {
	content []byte
	etag    string
}

// pageFile is the page's file; it is served at Path and Prefix, not under its name.
const pageFile = "index.html"

// vendorDir holds the vendored files, which refresh.sh writes.
const vendorDir = "assets/vendor"

// VendorSums reads the vendored files' SHA256SUMS: file name to hex sum.
func VendorSums() (map[string]string, error) { return vendored.Sums(assets, vendorDir) }

// files reads the embedded files once per process, checking the vendored ones against their
// SHA256SUMS. They are compiled in, so this fails only on a broken build or a hand-edited vendored
// file, which every test of the page would show.
var files = sync.OnceValues(func() (map[string]file, error) {
	if err := vendored.Verify(assets, vendorDir, "internal/ops/refresh.sh"); err != nil {
		return nil, fmt.Errorf("ops: %w", err)
	}
	byName := map[string]file{}
	err := fs.WalkDir(assets, "assets", func(name string, entry fs.DirEntry, err error) error {
		// The sums are for checking the build, not for serving.
		if err != nil || entry.IsDir() || name == vendorDir+"/"+vendored.SumsFile {
			return err
		}
		content, err := assets.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(content)
		byName[strings.TrimPrefix(name, "assets/")] = file{content: content, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ops: reading the embedded page: %w", err)
	}
	return byName, nil
})

// Handler serves the page at Path and Prefix, and its script, style and vendored files under Prefix.
type Handler struct {
	files    map[string]file
	notFound http.HandlerFunc
}

// New returns the handler; a path under Prefix that names no file is answered by notFound. It
// holds nothing that changes, so servers may share it.
func New(notFound http.HandlerFunc) (*Handler, error) {
	byName, err := files()
	if err != nil {
		return nil, err
	}
	return &Handler{files: byName, notFound: notFound}, nil
}

// ServeHTTP serves GET (and HEAD) of the page and its files; the routes say which methods reach it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := pageFile
	if r.URL.Path != Path && r.URL.Path != Prefix {
		name = strings.TrimPrefix(r.URL.Path, Prefix)
		if name == pageFile {
			name = "" // one address for the page
		}
	}
	f, ok := h.files[name]
	if !ok {
		h.notFound(w, r)
		return
	}
	header := w.Header()
	header.Set("Content-Security-Policy", ContentSecurityPolicy)
	header.Set("X-Content-Type-Options", "nosniff")
	header.Set("Content-Type", contentTypes[path.Ext(name)])
	header.Set("ETag", f.etag)
	// Revalidated on each load (a 304 costs nothing), so a new build is never served stale.
	header.Set("Cache-Control", "no-cache")
	// ServeContent answers If-None-Match and ranges; the type is already set.
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.content))
}
