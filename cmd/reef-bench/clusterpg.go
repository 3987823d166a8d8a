//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// The database side of the cluster scenario: a fresh schema per run, a counting TCP proxy
// between the nodes and PostgreSQL (bytes each way), the server's statements and commits
// (pg_stat_statements, pg_stat_database) and its processes' CPU time from /proc.

// pgProxy forwards loopback connections to PostgreSQL and counts the bytes each way.
type pgProxy struct {
	ln       net.Listener
	target   string
	toServer atomic.Int64 // bytes the nodes sent
	toClient atomic.Int64 // bytes PostgreSQL sent
	conns    atomic.Int64
	wg       sync.WaitGroup
	mu       sync.Mutex
	open     map[net.Conn]bool
}

// startPGProxy listens on a free loopback port and forwards to target (host:port).
func startPGProxy(target string) (*pgProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &pgProxy{ln: ln, target: target, open: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *pgProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.conns.Add(1)
		p.mu.Lock()
		p.open[c], p.open[s] = true, true
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(s, c, &p.toServer)
		go p.pipe(c, s, &p.toClient)
	}
}

// pipe copies from src to dst, counting into n; either side's end closes both.
func (p *pgProxy) pipe(dst, src net.Conn, n *atomic.Int64) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			n.Add(int64(k))
			if _, werr := dst.Write(buf[:k]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.open, dst)
	delete(p.open, src)
	p.mu.Unlock()
}

// Close stops listening, closes every forwarded connection and waits for the copiers.
func (p *pgProxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// benchSchema creates a new, empty schema on the database at base and returns base with its
// search_path set to it (the nodes' URL, before the proxy) and the schema's name.
func benchSchema(ctx context.Context, base string) (string, string, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	schema := "reefbench_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", "", fmt.Errorf("connect to -database-url: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", "", fmt.Errorf("create schema: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), schema, nil
}

// viaProxy returns dbURL with its host and port replaced by the proxy's.
func viaProxy(dbURL, proxy string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	u.Host = proxy
	return u.String(), nil
}

// pgHostPort returns the host:port of dbURL (default port 5432).
func pgHostPort(dbURL string) (string, error) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	if u.Host == "" || strings.Contains(u.Host, ",") {
		return "", errors.New("-database-url needs one host:port (the rig counts the bytes through a proxy)")
	}
	if u.Port() == "" {
		return u.Host + ":5432", nil
	}
	return u.Host, nil
}

// pgWatch is the rig's own connection to PostgreSQL (not through the proxy): it reads the
// server's counters and the cluster's tables. queries counts the statements it ran, so that
// they can be taken off the server's totals.
type pgWatch struct {
	conn       *pgx.Conn
	schema     string
	statements bool // pg_stat_statements is there
	postmaster int
	queries    atomic.Int64
	mu         sync.Mutex
}

func openPGWatch(ctx context.Context, dbURL, schema string) (*pgWatch, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	w := &pgWatch{conn: conn, schema: schema}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err == nil {
		var n int64
		w.statements = conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_statements").Scan(&n) == nil
	}
	var backend int
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err == nil {
		w.postmaster = parentPID(backend)
	}
	return w, nil
}

func (w *pgWatch) Close() { w.conn.Close(context.Background()) }

// dropSchema drops the run's schema.
func (w *pgWatch) dropSchema() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w.conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+w.schema+" CASCADE")
}

// pgCounters is a reading of the server's counters for the rig's database.
type pgCounters struct {
	at         time.Time
	calls      int64            // pg_stat_statements calls, this database
	byQuery    map[string]int64 // normalised statement → calls
	commits    int64            // pg_stat_database xact_commit
	rollbacks  int64
	inserted   int64
	updated    int64
	deleted    int64
	fetched    int64
	returned   int64
	wal        int64         // pg_current_wal_lsn in bytes (the whole server's)
	cpu        time.Duration // the postmaster's and its children's CPU, reaped ones included
	rigQueries int64         // statements the rig itself ran until this reading
}

// read takes a reading. The rig's own statements (this one included) are counted apart.
func (w *pgWatch) read(ctx context.Context) (pgCounters, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := pgCounters{at: time.Now(), byQuery: map[string]int64{}}
	if w.statements {
		w.queries.Add(1)
		rows, err := w.conn.Query(ctx, `SELECT query, calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`)
		if err != nil {
			return c, err
		}
		var q string
		var n int64
		if _, err := pgx.ForEachRow(rows, []any{&q, &n}, func() error { c.byQuery[q] += n; c.calls += n; return nil }); err != nil {
			return c, err
		}
	}
	w.queries.Add(1)
	err := w.conn.QueryRow(ctx, `SELECT xact_commit, xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_fetched, tup_returned
		FROM pg_stat_database WHERE datname = current_database()`).Scan(&c.commits, &c.rollbacks, &c.inserted, &c.updated, &c.deleted, &c.fetched, &c.returned)
	if err != nil {
		return c, err
	}
	w.queries.Add(1)
	if err := w.conn.QueryRow(ctx, "SELECT (pg_current_wal_lsn() - '0/0')::bigint").Scan(&c.wal); err != nil {
		return c, err
	}
	c.cpu = postgresCPU(w.postmaster)
	c.rigQueries = w.queries.Load()
	return c, nil
}

// holders reads who holds the live partition leases (partitions per node) and the named
// units of work (unit → node).
func (w *pgWatch) holders(ctx context.Context) (parts map[string]int, work map[string]string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	parts, work = map[string]int{}, map[string]string{}
	w.queries.Add(1)
	rows, err := w.conn.Query(ctx, "SELECT owner, count(*) FROM "+w.schema+".reef_leases WHERE expires > now() GROUP BY owner")
	if err != nil {
		return nil, nil, err
	}
	var owner string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&owner, &n}, func() error { parts[owner] = n; return nil }); err != nil {
		return nil, nil, err
	}
	w.queries.Add(1)
	rows, err = w.conn.Query(ctx, "SELECT name, owner FROM "+w.schema+".reef_work WHERE expires > now()")
	if err != nil {
		return parts, work, nil // no unit yet
	}
	var name string
	_, err = pgx.ForEachRow(rows, []any{&name, &owner}, func() error { work[name] = owner; return nil })
	return parts, work, err
}

// pgDelta is what the server did between two readings, the rig's own statements taken off.
type pgDelta struct {
	statements, commits, rollbacks       int64
	inserted, updated, deleted, returned int64
	wal                                  int64
	cpu                                  time.Duration
	byQuery                              map[string]int64
}

func (a pgCounters) to(b pgCounters) pgDelta {
	rig := b.rigQueries - a.rigQueries
	d := pgDelta{statements: b.calls - a.calls - rig, commits: b.commits - a.commits - rig,
		rollbacks: b.rollbacks - a.rollbacks, inserted: b.inserted - a.inserted, updated: b.updated - a.updated,
		deleted: b.deleted - a.deleted, returned: b.returned - a.returned, wal: b.wal - a.wal, cpu: b.cpu - a.cpu, byQuery: map[string]int64{}}
	for q, n := range b.byQuery {
		if k := n - a.byQuery[q]; k > 0 {
			d.byQuery[q] = k
		}
	}
	return d
}

// statementKinds groups the statements by what they do for the cluster.
func (d pgDelta) statementKinds() map[string]int64 {
	out := map[string]int64{}
	for q, n := range d.byQuery {
		l := strings.ToLower(q)
		var k string
		switch {
		case strings.Contains(l, "pg_stat_") || strings.Contains(l, "pg_backend_pid") || strings.Contains(l, "pg_database") ||
			strings.Contains(l, "group by owner") || strings.Contains(l, "pg_current_wal_lsn") || strings.HasPrefix(l, "select name, owner from"):
			k = "rig"
		case strings.Contains(l, "pg_notify") || strings.HasPrefix(l, "notify") || strings.HasPrefix(l, "listen"):
			k = "notify/listen"
		case strings.Contains(l, "reef_members"):
			k = "members (heartbeat, round)"
		case strings.Contains(l, "reef_leases"):
			k = "leases (fence, renewal, round)"
		case strings.Contains(l, "reef_work"):
			k = "work leases"
		case l == "begin" || strings.HasPrefix(l, "begin ") || l == "commit" || l == "rollback" || strings.HasPrefix(l, "set "):
			k = "transaction control"
		default:
			k = "store (sessions, inbox, transcript, outbox, kv, dedup)"
		}
		out[k] += n
	}
	return out
}

// topStatements returns the n statements called most, as "calls  text".
func (d pgDelta) topStatements(n int) []string {
	type qc struct {
		q string
		n int64
	}
	var all []qc
	for q, k := range d.byQuery {
		all = append(all, qc{q, k})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	var out []string
	for _, x := range all[:min(n, len(all))] {
		q := strings.Join(strings.Fields(x.q), " ")
		if len(q) > 140 {
			q = q[:140] + "…"
		}
		out = append(out, fmt.Sprintf("%8d  %s", x.n, q))
	}
	return out
}

// parentPID reads the parent of pid from /proc (0 when unknown).
func parentPID(pid int) int {
	f, err := statFields(pid)
	if err != nil || len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// statFields returns the fields of /proc/PID/stat after the command name.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, errors.New("short stat")
	}
	return strings.Fields(string(b[i+1:])), nil
}

// postgresCPU is the CPU time of the postmaster pid and of its children: its own utime and
// stime, its cutime and cstime (the children it reaped: backends that ended), and the utime
// and stime of the children alive now.
func postgresCPU(postmaster int) time.Duration {
	if postmaster <= 0 {
		return 0
	}
	ticks := func(f []string, from, to int) int64 {
		var t int64
		for i := from; i <= to && i < len(f); i++ {
			v, _ := strconv.ParseInt(f[i], 10, 64)
			t += v
		}
		return t
	}
	f, err := statFields(postmaster)
	if err != nil {
		return 0
	}
	// After the name: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14).
	total := ticks(f, 11, 14)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == postmaster {
			continue
		}
		cf, err := statFields(pid)
		if err != nil || len(cf) < 13 || cf[1] != strconv.Itoa(postmaster) {
			continue
		}
		total += ticks(cf, 11, 12)
	}
	return time.Duration(total) * clockTick
}
