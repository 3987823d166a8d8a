package postgres

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reefgw/reef/persistence"
)

// scanPage is how many rows Scan reads per statement: fn runs between pages, so it may use
// the transaction itself (pgx cannot run a statement while another's rows are open), and a
// large bucket (a memory index) is never held in memory whole.
const scanPage = 256

// checkBucket checks a named bucket path as bolt does: names separated by "/", none empty,
// the first not reserved.
func checkBucket(bucket string) error {
	parts := strings.Split(bucket, "/")
	if bucket == "" || slices.Contains(parts, "") {
		return fmt.Errorf("postgres: bucket %q: empty name", bucket)
	}
	if slices.Contains(persistence.ReservedBuckets, parts[0]) {
		return fmt.Errorf("postgres: bucket %q: %q is reserved", bucket, parts[0])
	}
	return nil
}

// Get returns the value under key in bucket.
func (t *tx) Get(bucket, key string) ([]byte, bool, error) {
	if err := t.check("get"); err != nil {
		return nil, false, err
	}
	if err := checkBucket(bucket); err != nil {
		return nil, false, err
	}
	var v []byte
	err := t.q.QueryRow(t.ctx, `SELECT value FROM reef_kv WHERE bucket = $1 AND key = $2`, []byte(bucket), []byte(key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("postgres: get %s/%s: %w", bucket, key, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, true, nil
}

// Scan calls fn for every key with prefix in bucket, in byte order of the keys, reading
// scanPage rows at a time.
func (t *tx) Scan(bucket, prefix string, fn func(key string, value []byte) error) error {
	if err := t.check("scan"); err != nil {
		return err
	}
	if err := checkBucket(bucket); err != nil {
		return err
	}
	type row struct {
		key   []byte
		value []byte
	}
	end := prefixEnd([]byte(prefix))
	from, first := []byte(prefix), true
	for {
		sql := `SELECT key, value FROM reef_kv WHERE bucket = $1 AND key > $2`
		if first {
			sql = `SELECT key, value FROM reef_kv WHERE bucket = $1 AND key >= $2`
		}
		args := []any{[]byte(bucket), from, int64(scanPage)}
		if end != nil {
			sql += ` AND key < $4`
			args = append(args, end)
		}
		rows, err := t.q.Query(t.ctx, sql+` ORDER BY key LIMIT $3`, args...)
		if err != nil {
			return fmt.Errorf("postgres: scan %s: %w", bucket, err)
		}
		page, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var out row
			err := r.Scan(&out.key, &out.value)
			return out, err
		})
		if err != nil {
			return fmt.Errorf("postgres: scan %s: %w", bucket, err)
		}
		for _, r := range page {
			if err := fn(string(r.key), r.value); err != nil {
				return err
			}
		}
		if len(page) < scanPage {
			return nil
		}
		from, first = page[len(page)-1].key, false
	}
}

// Put stores value under key in bucket.
func (t *tx) Put(bucket, key string, value []byte) error {
	if err := t.checkWrite("put"); err != nil {
		return err
	}
	if err := checkBucket(bucket); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("postgres: put %s: %w", bucket, errEmptyKey)
	}
	if value == nil {
		value = []byte{} // bbolt keeps nil as empty too; the column is NOT NULL
	}
	_, err := t.q.Exec(t.ctx, `INSERT INTO reef_kv (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`, []byte(bucket), []byte(key), value)
	if err != nil {
		return fmt.Errorf("postgres: put %s/%s: %w", bucket, key, err)
	}
	return nil
}

// Delete removes key from bucket.
func (t *tx) Delete(bucket, key string) error {
	if err := t.checkWrite("delete"); err != nil {
		return err
	}
	if err := checkBucket(bucket); err != nil {
		return err
	}
	_, err := t.q.Exec(t.ctx, `DELETE FROM reef_kv WHERE bucket = $1 AND key = $2`, []byte(bucket), []byte(key))
	if err != nil {
		return fmt.Errorf("postgres: delete %s/%s: %w", bucket, key, err)
	}
	return nil
}

// prefixEnd returns the smallest key greater than every key with prefix p, or nil when there
// is none (p is empty or all 0xff).
func prefixEnd(p []byte) []byte {
	end := slices.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
