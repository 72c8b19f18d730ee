package loadtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paygate/paygate/internal/prefixid"
)

// LoginFlood is a measure of what a flood of logins with made-up accounts, each a password to
// hash were it not throttled, does to a real user's login from elsewhere.
type LoginFlood struct {
	BaseURL string
	// Email and Password are the real user's.
	Email, Password string
	// Workers send the flood, from FloodFrom, for Duration.
	Workers   int
	Duration  time.Duration
	FloodFrom string
	// After is how long into the flood the real logins begin (0: a fifth of Duration).
	After time.Duration
	// RealFrom are the addresses the real logins come from, one login each: half before the
	// flood, half during it. Each address and the account log in far less often than their
	// throttles allow, as a real user does.
	RealFrom []string
}

// LoginFloodResult is what a LoginFlood measured.
type LoginFloodResult struct {
	// Idle and Flooded are the real logins' times, sorted, without the flood and during it.
	Idle, Flooded []time.Duration
	// FloodedLogins are the real logins during the flood, in the order they were made, with
	// when each began: the first seconds of a flood can differ from the rest.
	FloodedLogins []TimedLogin
	// FloodAnswers counts the flood's answers by status.
	FloodAnswers  map[int]int
	FloodRequests int
	FloodElapsed  time.Duration
}

// TimedLogin is a real login made during the flood: how long into it, and how long it took.
type TimedLogin struct {
	Began, Took time.Duration
}

// Run measures: the real logins alone, then the flood, and the real logins once it is at full
// force. It fails when a real login does not succeed: a throttled or refused one measures nothing.
func (f LoginFlood) Run(ctx context.Context) (LoginFloodResult, error) {
	half := len(f.RealFrom) / 2
	if half == 0 || f.Workers < 1 {
		return LoginFloodResult{}, fmt.Errorf("give at least two real addresses and one worker")
	}
	var result LoginFloodResult
	idle, err := f.realLogins(ctx, f.RealFrom[:half], time.Now())
	if err != nil {
		return result, err
	}
	floodCtx, stopFlood := context.WithTimeout(ctx, f.Duration)
	defer stopFlood()
	flooder := clientFrom(f.FloodFrom, f.Workers)
	answers := make([]map[int]int, f.Workers)
	var wg sync.WaitGroup
	started := time.Now()
	for i := range f.Workers {
		answers[i] = map[int]int{}
		wg.Go(func() {
			for floodCtx.Err() == nil {
				status, _, err := LogIn(floodCtx, flooder, f.BaseURL, prefixid.New("flood")+"@example.com", "not anyone's password")
				answers[i][status]++
				if err != nil && floodCtx.Err() == nil {
					time.Sleep(10 * time.Millisecond) // a server not answering is not hammered in a loop
				}
			}
		})
	}
	// The flood at full force first: by default its address's throttle spent, the server busy
	// answering it.
	after := f.After
	if after == 0 {
		after = f.Duration / 5
	}
	select {
	case <-time.After(after):
	case <-ctx.Done():
	}
	flooded, err := f.realLogins(ctx, f.RealFrom[half:], started)
	wg.Wait()
	result.FloodElapsed = time.Since(started)
	if err != nil {
		return result, err
	}
	result.FloodedLogins, result.FloodAnswers = flooded, map[int]int{}
	result.Idle, result.Flooded = sortedTimes(idle), sortedTimes(flooded)
	for _, counts := range answers {
		for status, n := range counts {
			if status != 0 { // 0: cut by the flood's end
				result.FloodAnswers[status] += n
				result.FloodRequests += n
			}
		}
	}
	return result, nil
}

// realLogins logs the real user in once from each address, one after another, and returns each
// login's time, and when it began since since.
func (f LoginFlood) realLogins(ctx context.Context, from []string, since time.Time) ([]TimedLogin, error) {
	logins := make([]TimedLogin, 0, len(from))
	for _, addr := range from {
		start := time.Now()
		status, _, err := LogIn(ctx, clientFrom(addr, 1), f.BaseURL, f.Email, f.Password)
		if err != nil || status != http.StatusOK {
			return nil, fmt.Errorf("the real login from %s answered %d, %v: it must succeed to be measured", addr, status, err)
		}
		logins = append(logins, TimedLogin{Began: start.Sub(since), Took: time.Since(start)})
	}
	return logins, nil
}

// sortedTimes are the logins' times, sorted.
func sortedTimes(logins []TimedLogin) []time.Duration {
	times := make([]time.Duration, len(logins))
	for i, login := range logins {
		times[i] = login.Took
	}
	slices.Sort(times)
	return times
}

// clientFrom is a client whose connections come from the local address addr (any address of
// 127.0.0.0/8 is this machine's): the server sees each as a client of its own.
func clientFrom(addr string, conns int) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 5 * time.Second}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{
		DialContext: dialer.DialContext, MaxIdleConns: conns, MaxIdleConnsPerHost: conns,
	}}
}

// LogIn posts a login and answers its status and, when it succeeded, the access token.
func LogIn(ctx context.Context, client *http.Client, baseURL, email, password string) (status int, accessToken string, err error) {
	body, _ := json.Marshal(map[string]string{"email": email, "password": password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/api/v1/auth/login", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var answer struct {
		Data struct {
			AccessToken string `json:"access_token"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&answer) // an answer that is not a login's has no token
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, answer.Data.AccessToken, nil
}

// ReportLogins writes the real logins' times with and without the flood, and what the flood
// got.
func ReportLogins(w io.Writer, r LoginFloodResult) {
	median := func(d []time.Duration) time.Duration { return d[len(d)/2] }
	fmt.Fprintf(w, "real login alone:      median %v, slowest %v (%d logins)\n", median(r.Idle).Round(time.Millisecond), r.Idle[len(r.Idle)-1].Round(time.Millisecond), len(r.Idle))
	fmt.Fprintf(w, "real login in a flood: median %v, slowest %v (%d logins) = %.2fx alone\n", median(r.Flooded).Round(time.Millisecond),
		r.Flooded[len(r.Flooded)-1].Round(time.Millisecond), len(r.Flooded), float64(median(r.Flooded))/float64(median(r.Idle)))
	each := make([]string, len(r.FloodedLogins))
	for i, login := range r.FloodedLogins {
		each[i] = fmt.Sprintf("%v in %v", login.Began.Round(10*time.Millisecond), login.Took.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  each, by when it began in the flood: %s\n", strings.Join(each, ", "))
	statuses := make([]int, 0, len(r.FloodAnswers))
	for status := range r.FloodAnswers {
		statuses = append(statuses, status)
	}
	slices.Sort(statuses)
	parts := make([]string, len(statuses))
	for i, status := range statuses {
		parts[i] = fmt.Sprintf("%d × %d", r.FloodAnswers[status], status)
	}
	fmt.Fprintf(w, "the flood: %d logins in %v (%.0f/s): %s\n", r.FloodRequests, r.FloodElapsed.Round(time.Millisecond),
		float64(r.FloodRequests)/r.FloodElapsed.Seconds(), strings.Join(parts, ", "))
}
