package provider

import "sync"

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
