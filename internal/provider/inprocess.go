package provider

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
)

// InProcess is an HTTP transport that serves each request with Handler in this process, without a
// socket: how adapters reach the built-in sandboxes, over the same wire shapes as the real
// providers.
type InProcess struct {
	Handler http.Handler
}

// RoundTrip serves req. A request whose context ended before it was answered fails as a network
// call cut off would.
func (t InProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		req.Body = http.NoBody
	}
	w := &recorder{header: http.Header{}}
	t.Handler.ServeHTTP(w, req)
	req.Body.Close()
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.header.Set("Content-Length", strconv.Itoa(w.body.Len()))
	return &http.Response{
		Status: strconv.Itoa(w.status) + " " + http.StatusText(w.status), StatusCode: w.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(&w.body), ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// recorder keeps what a handler writes.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}
