package provider

import (
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// SandboxSwitches make a provider sandbox misbehave, so that failover and timeouts can be shown.
type SandboxSwitches struct {
	// Outage makes the sandbox answer every request 503: it is down and does nothing.
	Outage atomic.Bool
	// Fault makes it answer every request 500, which a client cannot tell from a failure after
	// the work was done.
	Fault atomic.Bool
	// Latency delays every answer (nanoseconds).
	Latency atomic.Int64
}

// Delay waits out the latency before r is answered. It reports false when the client went away
// first, and there is no one left to answer.
func (s *SandboxSwitches) Delay(r *http.Request) bool {
	latency := time.Duration(s.Latency.Load())
	if latency <= 0 {
		return true
	}
	select {
	case <-time.After(latency):
		return true
	case <-r.Context().Done():
		return false
	}
}

// SandboxAnswers is how a provider sandbox keeps its answers by idempotency key, as the real
// providers do: a repeated key with the same request gets the first answer again, and with
// another request is refused. Answers of 5xx are not kept, so a retry runs again.
type SandboxAnswers struct {
	mu      sync.Mutex
	answers map[string]SandboxAnswer
}

// SandboxAnswer is a kept answer and the request it answered.
type SandboxAnswer struct {
	Request string
	Status  int
	Body    []byte
}

// Answer returns the answer to request under key: the kept one, or what run answers (run holds
// the sandbox's lock, so requests are answered one at a time). reused reports a key sent with
// another request, which nothing answers.
func (s *SandboxAnswers) Answer(key, request string, run func() (status int, body []byte)) (answer SandboxAnswer, replayed, reused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if earlier, ok := s.answers[key]; ok && key != "" {
		return earlier, earlier.Request == request, earlier.Request != request
	}
	answer.Request = request
	answer.Status, answer.Body = run()
	if key != "" && answer.Status < 500 {
		if s.answers == nil {
			s.answers = map[string]SandboxAnswer{}
		}
		s.answers[key] = answer
	}
	return answer, false, false
}

// EncodeJSON is a sandbox's answer of v with status.
func EncodeJSON(status int, v any) (int, []byte) {
	body, err := json.Marshal(v)
	if err != nil {
		return http.StatusInternalServerError, nil
	}
	return status, body
}

// WriteAnswer writes a sandbox's JSON answer.
func WriteAnswer(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// WriteJSON writes v as a sandbox's JSON answer.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	status, body := EncodeJSON(status, v)
	WriteAnswer(w, status, body)
}
