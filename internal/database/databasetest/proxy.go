package databasetest

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/paygate/paygate/internal/database"
)

// Proxy relays TCP connections to PostgreSQL, on 127.0.0.1, and breaks them as a failover does:
// every connection cut and new ones refused (Down), or one exchange lost on its way in or out.
type Proxy struct {
	listener net.Listener
	target   string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	// loseAnswer and loseRequest are the markers of the next client messages whose answer, or
	// which themselves, are to be lost.
	loseAnswer, loseRequest []byte
	// lost counts the messages and answers lost so far.
	lost int
}

// PostgresThroughProxy is Postgres, connected through a Proxy that the test can break.
func PostgresThroughProxy(t testing.TB) (*database.DB, *Proxy) {
	t.Helper()
	u, err := url.Parse(postgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{listener: listener, target: u.Host, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(p.close)
	u.Host = listener.Addr().String()
	return open(t, u.String(), database.Options{}), p
}

// Down cuts every connection and refuses new ones until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
}

// Lost is how many messages or answers have been lost as LoseAnswerTo and LoseRequest asked: a test
// checks that what it meant to break was broken.
func (p *Proxy) Lost() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lost
}

// Up takes connections again.
func (p *Proxy) Up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// LoseAnswerTo has the next message a client sends that holds marker reach PostgreSQL, and its
// answer never reach the client: the connection is cut as the answer comes. What the message
// asked is done (a commit made) and the client cannot know it.
func (p *Proxy) LoseAnswerTo(marker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseAnswer = []byte(marker)
}

// LoseRequest has the next message a client sends that holds marker never reach PostgreSQL: the
// connection is cut instead.
func (p *Proxy) LoseRequest(marker string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseRequest = []byte(marker)
}

func (p *Proxy) accept() {
	for {
		client, err := p.listener.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		down := p.down
		if !down {
			p.conns[client], p.conns[server] = struct{}{}, struct{}{}
		}
		p.mu.Unlock()
		if down {
			client.Close()
			server.Close()
			continue
		}
		go p.relay(client, server)
	}
}

// relay copies both ways between client and server until either ends, losing what it is told to.
func (p *Proxy) relay(client, server net.Conn) {
	hangUp := func() {
		client.Close()
		server.Close()
		p.mu.Lock()
		delete(p.conns, client)
		delete(p.conns, server)
		p.mu.Unlock()
	}
	loseNextAnswer := make(chan struct{})
	go func() {
		defer hangUp()
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				select {
				case <-loseNextAnswer:
					return
				default:
				}
				if _, err := client.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	defer hangUp()
	losingAnswer := false // this connection's next answer is already to be lost
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			p.mu.Lock()
			loseRequest := p.loseRequest != nil && bytes.Contains(chunk, p.loseRequest)
			loseAnswer := !loseRequest && !losingAnswer && p.loseAnswer != nil && bytes.Contains(chunk, p.loseAnswer)
			if loseRequest {
				p.loseRequest = nil
				p.lost++
			}
			if loseAnswer {
				p.loseAnswer = nil
				p.lost++
				close(loseNextAnswer)
				losingAnswer = true
			}
			p.mu.Unlock()
			if loseRequest {
				return
			}
			if _, err := server.Write(chunk); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) close() {
	p.listener.Close()
	p.Down()
}
