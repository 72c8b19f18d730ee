package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// maxAnswer bounds what is read of a provider's answer: their objects are a few kilobytes.
const maxAnswer = 1 << 20

// Caller sends an adapter's requests to its provider.
type Caller struct {
	HTTP *http.Client
	// RetryWaits are the pauses before each retry of a request that failed in the network. A retry
	// is the same request with the same idempotency key, so the provider runs it at most once.
	RetryWaits []time.Duration
}

// Post sends payload to url with header (which holds the content type, the credentials and the
// idempotency key). A connection that was never made charged nothing: ErrUnavailable. A failure
// after the request may have left (a timeout, a reset) leaves the outcome unknown: another error.
func (c Caller) Post(ctx context.Context, url string, header http.Header, payload []byte) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		status, body, err := c.send(ctx, url, header, payload)
		if err == nil || ctx.Err() != nil || attempt == len(c.RetryWaits) {
			return status, body, classify(ctx, err)
		}
		select {
		case <-time.After(c.RetryWaits[attempt]):
		case <-ctx.Done():
			return 0, nil, classify(ctx, err)
		}
	}
}

// PostJSON is Post with body encoded as JSON.
func (c Caller) PostJSON(ctx context.Context, url string, header http.Header, body any) (int, []byte, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	header = header.Clone()
	header.Set("Content-Type", "application/json")
	return c.Post(ctx, url, header, payload)
}

func (c Caller) send(ctx context.Context, url string, header http.Header, payload []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	req.Header = header.Clone()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	return resp.StatusCode, body, err
}

func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var dnsErr *net.DNSError
	if ctx.Err() == nil && (errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr)) {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return fmt.Errorf("outcome unknown: %w", err)
}
