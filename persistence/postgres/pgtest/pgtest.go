// Package pgtest gives tests a fresh PostgreSQL schema of their own on the database named by
// REEF_TEST_DATABASE_URL (`.ci/postgres.sh start` prints one; `.ci/run` sets it). Without it
// the tests that need PostgreSQL skip, unless REEF_REQUIRE_POSTGRES is set (as in CI): then
// they fail.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// URL returns a connection URL whose search_path is a new, empty schema that is dropped when
// the test ends, so tests never see each other's tables.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("REEF_TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("REEF_REQUIRE_POSTGRES") != "" {
			t.Fatal("REEF_REQUIRE_POSTGRES is set but REEF_TEST_DATABASE_URL is not: start one with .ci/postgres.sh start DIR")
		}
		t.Skip("no PostgreSQL: set REEF_TEST_DATABASE_URL (eval $(.ci/postgres.sh start /tmp/pg))")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("pgtest: connect: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema: %v", err)
		}
	})
	return WithSearchPath(t, base, schema)
}

// WithSearchPath returns base with its search_path set to schema.
func WithSearchPath(t testing.TB, base, schema string) string {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: REEF_TEST_DATABASE_URL is not a URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
