package provider

import (
	"context"
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

// Do sends the request newRequest builds (again for each retry) and returns the answer's status
// and body. A connection that was never made charged nothing: ErrUnavailable. A failure after the
// request may have left (a timeout, a reset) leaves the outcome unknown: another error.
func (c Caller) Do(ctx context.Context, newRequest func() (*http.Request, error)) (int, []byte, error) {
	for attempt := 0; ; attempt++ {
		status, body, err := c.send(newRequest)
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

func (c Caller) send(newRequest func() (*http.Request, error)) (int, []byte, error) {
	req, err := newRequest()
	if err != nil {
		return 0, nil, err
	}
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
