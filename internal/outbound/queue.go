package outbound

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// WebhookConfig says where a provider sandbox sends its webhooks, and how.
type WebhookConfig struct {
	// URL is where Paygate takes the provider's webhooks: its base URL + /webhooks/{provider}.
	// With none, the sandbox sends nothing.
	URL string

	// The rest tune the delivery; each has a default.

	// Sender makes each try (default: NewSender(false, 0)): a receiver that hangs is a failed
	// try, and a redirect is never followed, as the providers count it a failure.
	Sender *Sender
	// RetryWaits are the pauses before each retry of a webhook not delivered (default 1 s, 10 s,
	// 1 min, 10 min); after the last, it is given up.
	RetryWaits []time.Duration
	// MaxInFlight bounds the webhooks being delivered or waiting for a retry (default 1000): one
	// more is dropped, so a receiver that is down cannot make the sandbox grow without bound.
	MaxInFlight int
	// Now is the clock the signatures are timed by (default time.Now).
	Now func() time.Time
	// After waits before a retry (default time.After): tests pass one that need not sleep.
	After  func(time.Duration) <-chan time.Time
	Logger *slog.Logger
}

// WebhookSigner signs a webhook's body for a try at time at: it returns the headers that carry
// the signature (none where the provider signs inside the body, as Adyen does).
type WebhookSigner func(body []byte, at time.Time) http.Header

// WebhookSender delivers a sandbox's webhooks to Paygate in the background, as a provider does:
// each is POSTed, signed afresh for each try, and tried again after a failure (an answer other
// than 2xx, or none) until it is delivered, its retries run out, or the sender's context ends.
// A nil sender sends nothing.
type WebhookSender struct {
	ctx    context.Context
	url    string
	sign   WebhookSigner
	sender *Sender
	waits  []time.Duration
	now    func() time.Time
	after  func(time.Duration) <-chan time.Time
	logger *slog.Logger
	// slots holds one token per delivery under way.
	slots    chan struct{}
	underWay sync.WaitGroup
}

// NewWebhookSender returns a sender of webhooks to config.URL signed by sign, whose deliveries
// end with ctx; or nil, which sends nothing, when config has no URL.
func NewWebhookSender(ctx context.Context, config WebhookConfig, sign WebhookSigner) (*WebhookSender, error) {
	if config.URL == "" {
		return nil, nil
	}
	target, err := url.Parse(config.URL)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, errors.New("webhook URL must be an absolute http(s) URL")
	}
	if sign == nil {
		return nil, errors.New("webhooks need a signer")
	}
	s := &WebhookSender{ctx: ctx, url: config.URL, sign: sign, sender: config.Sender, waits: config.RetryWaits,
		now: config.Now, after: config.After, logger: config.Logger}
	if s.sender == nil {
		s.sender = NewSender(false, 0)
	}
	if len(s.waits) == 0 {
		s.waits = []time.Duration{time.Second, 10 * time.Second, time.Minute, 10 * time.Minute}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.after == nil {
		s.after = time.After
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	maxInFlight := config.MaxInFlight
	if maxInFlight <= 0 {
		maxInFlight = 1000
	}
	s.slots = make(chan struct{}, maxInFlight)
	return s, nil
}

// Send delivers body, the event eventID, in the background, and never waits. It reports whether
// the webhook was taken: not by a nil sender, after the sender's context ended, or while
// MaxInFlight deliveries are under way (then it is dropped, and logged).
func (s *WebhookSender) Send(eventID string, body []byte) bool {
	if s == nil || s.ctx.Err() != nil {
		return false
	}
	select {
	case s.slots <- struct{}{}:
	default:
		s.logger.Warn("webhook dropped: too many deliveries under way", "url", s.url, "event", eventID, "max_in_flight", cap(s.slots))
		return false
	}
	s.underWay.Add(1)
	go func() {
		defer s.underWay.Done()
		defer func() { <-s.slots }()
		s.deliver(eventID, body)
	}()
	return true
}

// Wait returns once the deliveries under way have ended: delivered, given up, or stopped by the
// sender's context. Webhooks sent while it waits may or may not be waited for.
func (s *WebhookSender) Wait() {
	if s != nil {
		s.underWay.Wait()
	}
}

func (s *WebhookSender) deliver(eventID string, body []byte) {
	for retry := 0; ; retry++ {
		err := s.try(body)
		if err == nil {
			return
		}
		if s.ctx.Err() != nil {
			return
		}
		if retry == len(s.waits) {
			s.logger.Warn("webhook given up", "url", s.url, "event", eventID, "tries", retry+1, "error", err)
			return
		}
		select {
		case <-s.after(s.waits[retry]):
		case <-s.ctx.Done():
			return
		}
	}
}

// try POSTs body once, signed now.
func (s *WebhookSender) try(body []byte) error {
	attempt, err := s.sender.Try(s.ctx, s.url, body, s.sign(body, s.now()))
	if err != nil {
		return err
	}
	if !attempt.Delivered() {
		return errors.New(attempt.String())
	}
	return nil
}
