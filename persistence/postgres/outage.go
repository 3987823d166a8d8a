package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/reefgw/reef/persistence"
)

// A database that cannot be reached is an outage, not a failed write: Update and View wrap
// such failures in persistence.ErrUnavailable, and promise that nothing of a failed Update
// was kept, so the caller (the Storage actor) can hold the transaction and run it again when
// the database is back.
//
// The one case where that promise needs work is a connection that breaks while COMMIT is on
// its way: the server may have committed and only its answer was lost. Update then asks the
// database, on a new connection, what became of the transaction (pg_xact_status of the id it
// read before COMMIT): committed is a success, aborted an outage. While the database cannot
// be reached Update keeps asking, so a write whose fate is unknown is never reported failed
// (it would be run again: a reply stored twice) nor done (it may be lost).

// resolvePauseMax caps the pause between two questions about a commit's outcome.
const resolvePauseMax = 2 * time.Second

// unreachable reports whether err is the database being out of reach: no connection, a
// connection that broke, a server shutting down or not accepting connections yet.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P01..57P03: the server is shutting down,
		// crashed, or cannot accept connections yet (starting, recovering).
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

// lost reports whether err, met inside transaction ptx, means the connection is gone: the
// server rolled the transaction back (or will, when it notices).
func lost(ptx pgx.Tx, err error) bool {
	return unreachable(err) || ptx.Conn().IsClosed()
}

// unavailable wraps err, a failure to reach the database during op, in
// persistence.ErrUnavailable.
func unavailable(op string, err error) error {
	if errors.Is(err, persistence.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("postgres: %s: %w: %w", op, persistence.ErrUnavailable, err)
}

// xactID returns the id of ptx's transaction, or "" when it wrote nothing (then its outcome
// does not matter).
func xactID(ctx context.Context, ptx pgx.Tx) (string, error) {
	var id *string
	err := ptx.QueryRow(ctx, `SELECT pg_current_xact_id_if_assigned()::text`).Scan(&id)
	if err != nil || id == nil {
		return "", err
	}
	return *id, nil
}

// resolve finds out whether the transaction xid, whose COMMIT got no answer because the
// connection to backend pid broke (commitErr), committed: nil if it did, an ErrUnavailable
// error if it did not. It asks until the database answers; Close ends the wait with an error
// that is neither (the outcome is unknown: what the database holds decides at the next start).
func (s *Store) resolve(xid string, pid uint32, commitErr error) error {
	if xid == "" { // it wrote nothing
		return unavailable("commit", commitErr)
	}
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, resolvePauseMax) {
		status, err := s.xactStatus(xid, pid)
		if err != nil {
			s.noteReach(unavailable("commit", commitErr))
		}
		switch {
		case err != nil, status == "in progress": // unreachable still, or the old session not yet ended
		case status == "committed":
			return nil
		case status == "aborted":
			return unavailable("commit", commitErr)
		default: // NULL: too old to know, which minutes cannot make it
			return fmt.Errorf("postgres: commit: the outcome of transaction %s is unknown (%q): %w", xid, status, commitErr)
		}
		select {
		case <-time.After(pause):
		case <-s.quit:
			return fmt.Errorf("postgres: commit: the store closed before the outcome of transaction %s was known: %w", xid, commitErr)
		}
	}
}

// xactStatus asks the database about transaction xid. A transaction still in progress is
// one whose session has not noticed its connection broke (a network that drops packets
// rather than closing): its backend pid is ended, so that the question has an answer.
func (s *Store) xactStatus(xid string, pid uint32) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var status *string
	if err := s.pool.QueryRow(ctx, `SELECT pg_xact_status($1::xid8)`, xid).Scan(&status); err != nil {
		return "", err
	}
	if status == nil {
		return "", nil
	}
	if *status == "in progress" {
		x, _ := strconv.ParseUint(xid, 10, 64)
		_, _ = s.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE pid = $1 AND backend_xid::text = $2`, int32(pid), strconv.FormatUint(x&0xffffffff, 10))
	}
	return *status, nil
}

var _ persistence.Reachability = (*Store)(nil)

// Unreachable reports since when the database has not answered, and why (zero: it answers).
func (s *Store) Unreachable() (time.Time, error) {
	s.reachMu.Lock()
	defer s.reachMu.Unlock()
	return s.downSince, s.downErr
}

// noteReach records what an Update, a View or a question about a commit found: the database
// unreachable (err is ErrUnavailable) or answering (nil); other errors say nothing about it.
func (s *Store) noteReach(err error) {
	down := errors.Is(err, persistence.ErrUnavailable)
	if !down && err != nil {
		return
	}
	s.reachMu.Lock()
	defer s.reachMu.Unlock()
	switch {
	case down && s.downSince.IsZero():
		s.downSince, s.downErr = time.Now(), err
	case down:
		s.downErr = err
	default:
		s.downSince, s.downErr = time.Time{}, nil
	}
}
