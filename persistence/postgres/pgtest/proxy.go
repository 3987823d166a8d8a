package pgtest

import (
	"bytes"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of a PostgreSQL server, for tests of a database
// outage: Cut closes every connection through it and refuses new ones (they are accepted and
// closed at once, as a server that went away), Restore lets connections through again. It is
// faster and more deterministic than stopping the server, and the server's data stays.
type Proxy struct {
	ln     net.Listener
	target string
	commit atomic.Int32 // a CutAt armed for the next COMMIT

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// NewProxy starts a proxy to the server of dbURL and returns it with dbURL pointed at it. It
// stops when the test ends.
func NewProxy(t testing.TB, dbURL string) (*Proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pgtest: proxy: %v", err)
	}
	p := &Proxy{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

// Cut breaks every connection through the proxy and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

// Commit points of CutAt.
const (
	BeforeCommit = 1 // the COMMIT never reaches the server: it rolls the transaction back
	AfterCommit  = 2 // the server gets the COMMIT, its answer never reaches the client
)

// CutAt arms a Cut at the next COMMIT a client sends (as a simple query, as pgx's
// Tx.Commit does), at point BeforeCommit or AfterCommit: the client cannot tell which
// happened, since it sees its connection break either way.
func (p *Proxy) CutAt(point int) { p.commit.Store(int32(point)) }

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *Proxy) close() {
	p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

// serve pipes c to the server until either side ends or Cut closes both.
func (p *Proxy) serve(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(s) {
		c.Close()
		if s != nil {
			s.Close()
		}
		return
	}
	done := make(chan struct{}, 2)
	var mute atomic.Bool // set once a COMMIT went through that is to go unanswered
	go p.toServer(s, c, &mute, done)
	go func() { // server → client, silent once muted
		defer func() {
			c.Close()
			s.Close()
			done <- struct{}{}
		}()
		buf := make([]byte, 32<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 && !mute.Load() {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	<-done
	<-done
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, s)
	p.mu.Unlock()
}

// toServer is the client → server half of a connection: a copy that watches for the COMMIT
// a CutAt waits for.
func (p *Proxy) toServer(s, c net.Conn, mute *atomic.Bool, done chan<- struct{}) {
	defer func() {
		s.Close()
		c.Close()
		done <- struct{}{}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			point := p.commit.Load()
			isCommit := point != 0 && len(chunk) > 5 && chunk[0] == 'Q' && bytes.Contains(bytes.ToLower(chunk), []byte("commit"))
			if isCommit && point == BeforeCommit && p.commit.CompareAndSwap(point, 0) {
				p.Cut()
				return
			}
			after := isCommit && point == AfterCommit && p.commit.CompareAndSwap(point, 0)
			if after {
				mute.Store(true)
			}
			if _, werr := s.Write(chunk); werr != nil {
				return
			}
			if after {
				time.Sleep(100 * time.Millisecond) // the server commits before its connection goes
				p.Cut()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// track records an open connection; false while the proxy is cut.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = true
	return true
}
