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
	// RetryWaits are the pauses before each retry of a request whose outcome is in doubt: lost in
	// the network, or answered 500, 502 or 504, which the providers document as indeterminate. A
	// retry is the same request with the same idempotency key, so the provider runs it at most
	// once and answers a retry of what it did with what it did.
	RetryWaits []time.Duration
}

// Answer is a provider's answer to a request.
type Answer struct {
	Status int
	Body   []byte
	// inDoubt is set when an earlier try of the request may have been acted on: then no answer
	// to a later one proves that nothing happened.
	inDoubt bool
}

// Refused is the error for an answer by which the provider said it did nothing (a 4xx, a 503):
// ErrUnavailable, so another provider may be tried, and an outage too when the provider is down
// or refuses us whatever we send; or, when an earlier try may have been acted on, an unknown
// outcome.
func (a Answer) Refused(what string) error {
	if a.inDoubt {
		return fmt.Errorf("outcome unknown: %s answered %d after an earlier try was lost", what, a.Status)
	}
	switch {
	case a.Status >= 500, a.Status == http.StatusUnauthorized, a.Status == http.StatusForbidden, a.Status == http.StatusTooManyRequests:
		// Down, or refusing every request of ours (credentials, rate): unusable for now.
		return a.Failed(what)
	}
	return fmt.Errorf("%w: %s answered %d", ErrUnavailable, what, a.Status)
}

// Failed is the error for an answer by which the provider said it failed to process the request
// and did nothing (a 503; Stripe's processing_error; Adyen's resultCode Error): an outage, so
// another provider may be tried and the failure counts against its circuit; or, when an earlier
// try may have been acted on, an unknown outcome.
func (a Answer) Failed(what string) error {
	if a.inDoubt {
		return fmt.Errorf("outcome unknown: %s answered %d after an earlier try was lost", what, a.Status)
	}
	return fmt.Errorf("%w (%w): %s answered %d", ErrUnavailable, ErrOutage, what, a.Status)
}

// Indeterminate reports whether the answer leaves the outcome unknown: a 5xx other than 503.
func (a Answer) Indeterminate() bool {
	return a.Status >= 500 && a.Status != http.StatusServiceUnavailable
}

// Post sends payload to url with header (which holds the content type, the credentials and the
// idempotency key). It returns the provider's answer, or an error when there is none: a
// connection that was never made charged nothing (ErrUnavailable) unless an earlier try may have
// been acted on; any other failure leaves the outcome unknown. Redirects are not followed: a
// request holding a card number goes to the configured address only.
func (c Caller) Post(ctx context.Context, url string, header http.Header, payload []byte) (Answer, error) {
	return c.exchange(ctx, http.MethodPost, url, header, payload)
}

// Get reads url with header (which holds the credentials). A read changes nothing at the
// provider, so it is retried like a request in doubt; an error means no answer could be had.
func (c Caller) Get(ctx context.Context, url string, header http.Header) (Answer, error) {
	return c.exchange(ctx, http.MethodGet, url, header, nil)
}

func (c Caller) exchange(ctx context.Context, method, url string, header http.Header, payload []byte) (Answer, error) {
	var inDoubt bool
	for attempt := 0; ; attempt++ {
		status, body, err := c.send(ctx, method, url, header, payload)
		answer := Answer{Status: status, Body: body, inDoubt: inDoubt}
		if err == nil && !answer.Indeterminate() {
			return answer, nil
		}
		inDoubt = inDoubt || err == nil || !neverSent(ctx, err)
		if ctx.Err() != nil || attempt == len(c.RetryWaits) {
			if err == nil {
				return answer, nil
			}
			return Answer{}, classify(err, inDoubt)
		}
		select {
		case <-time.After(c.RetryWaits[attempt]):
		case <-ctx.Done():
			return Answer{}, classify(ctx.Err(), true)
		}
	}
}

// PostJSON is Post with body encoded as JSON.
func (c Caller) PostJSON(ctx context.Context, url string, header http.Header, body any) (Answer, error) {
	payload, err := json.Marshal(body)
	if err != nil {
		return Answer{}, err
	}
	header = header.Clone()
	header.Set("Content-Type", "application/json")
	return c.Post(ctx, url, header, payload)
}

func (c Caller) send(ctx context.Context, method, url string, header http.Header, payload []byte) (int, []byte, error) {
	var content io.Reader
	if payload != nil {
		content = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, content)
	if err != nil {
		return 0, nil, err
	}
	req.Header = header.Clone()
	client := *c.HTTP
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	return resp.StatusCode, body, err
}

// neverSent reports whether err happened before the request could leave: the connection was
// refused, or the host is unknown.
func neverSent(ctx context.Context, err error) bool {
	var dnsErr *net.DNSError
	return ctx.Err() == nil && (errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dnsErr))
}

func classify(err error, inDoubt bool) error {
	if !inDoubt {
		return fmt.Errorf("%w (%w): %v", ErrUnavailable, ErrOutage, err)
	}
	return fmt.Errorf("outcome unknown: %w", err)
}
