package bolt

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/reefgw/reef/persistence"
)

// kvPath checks a named bucket path and splits it into bucket names.
func kvPath(bucket string) ([][]byte, error) {
	parts := strings.Split(bucket, "/")
	if bucket == "" || slices.Contains(parts, "") {
		return nil, fmt.Errorf("bolt: bucket %q: empty name", bucket)
	}
	if slices.Contains(persistence.ReservedBuckets, parts[0]) {
		return nil, fmt.Errorf("bolt: bucket %q: %q is reserved", bucket, parts[0])
	}
	out := make([][]byte, len(parts))
	for i, p := range parts {
		out[i] = []byte(p)
	}
	return out, nil
}

// kvBucket returns the named bucket, or nil when it does not exist (create=false).
func (t *tx) kvBucket(bucket string, create bool) (*bbolt.Bucket, error) {
	path, err := kvPath(bucket)
	if err != nil {
		return nil, err
	}
	var b *bbolt.Bucket
	for i, name := range path {
		switch {
		case i == 0 && create:
			b, err = t.btx.CreateBucketIfNotExists(name)
		case i == 0:
			b = t.btx.Bucket(name)
		case create:
			b, err = b.CreateBucketIfNotExists(name)
		default:
			b = b.Bucket(name)
		}
		if err != nil {
			return nil, fmt.Errorf("bolt: bucket %q: %w", bucket, err)
		}
		if b == nil {
			return nil, nil
		}
	}
	return b, nil
}

// Get returns the value under key in bucket.
func (t *tx) Get(bucket, key string) ([]byte, bool, error) {
	if err := t.check("get"); err != nil {
		return nil, false, err
	}
	b, err := t.kvBucket(bucket, false)
	if err != nil || b == nil {
		return nil, false, err
	}
	v := b.Get([]byte(key))
	if v == nil {
		return nil, false, nil
	}
	return bytes.Clone(v), true, nil
}

// Scan calls fn for every key with prefix in bucket, in key order.
func (t *tx) Scan(bucket, prefix string, fn func(key string, value []byte) error) error {
	if err := t.check("scan"); err != nil {
		return err
	}
	b, err := t.kvBucket(bucket, false)
	if err != nil || b == nil {
		return err
	}
	c := b.Cursor()
	p := []byte(prefix)
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
		if v == nil {
			continue // a nested bucket
		}
		if err := fn(string(k), v); err != nil {
			return err
		}
	}
	return nil
}

// Put stores value under key in bucket.
func (t *tx) Put(bucket, key string, value []byte) error {
	if err := t.check("put"); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("bolt: put %s: %w", bucket, errEmptyKey)
	}
	b, err := t.kvBucket(bucket, true)
	if err != nil {
		return err
	}
	if err := b.Put([]byte(key), bytes.Clone(value)); err != nil {
		return fmt.Errorf("bolt: put %s/%s: %w", bucket, key, err)
	}
	return nil
}

// Delete removes key from bucket.
func (t *tx) Delete(bucket, key string) error {
	if err := t.check("delete"); err != nil {
		return err
	}
	b, err := t.kvBucket(bucket, false)
	if err != nil || b == nil {
		return err
	}
	if err := b.Delete([]byte(key)); err != nil {
		return fmt.Errorf("bolt: delete %s/%s: %w", bucket, key, err)
	}
	return nil
}
