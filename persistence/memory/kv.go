package memory

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/reefgw/reef/persistence"
)

func checkBucket(bucket string) error {
	parts := strings.Split(bucket, "/")
	if bucket == "" || slices.Contains(parts, "") {
		return fmt.Errorf("memory: bucket %q: empty name", bucket)
	}
	if slices.Contains(persistence.ReservedBuckets, parts[0]) {
		return fmt.Errorf("memory: bucket %q: %q is reserved", bucket, parts[0])
	}
	return nil
}

// Get returns the value under key in bucket.
func (r *reader) Get(bucket, key string) ([]byte, bool, error) {
	if err := r.check("get"); err != nil {
		return nil, false, err
	}
	if err := checkBucket(bucket); err != nil {
		return nil, false, err
	}
	v, ok := r.s.kv[bucket][key]
	return bytes.Clone(v), ok, nil
}

// Scan calls fn for every key with prefix in bucket, in key order.
func (r *reader) Scan(bucket, prefix string, fn func(key string, value []byte) error) error {
	if err := r.check("scan"); err != nil {
		return err
	}
	if err := checkBucket(bucket); err != nil {
		return err
	}
	b := r.s.kv[bucket]
	keys := make([]string, 0, len(b))
	for k := range b {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := fn(k, bytes.Clone(b[k])); err != nil {
			return err
		}
	}
	return nil
}

// Put stores value under key in bucket, undoably.
func (t *tx) Put(bucket, key string, value []byte) error {
	if err := t.check("put"); err != nil {
		return err
	}
	if err := checkBucket(bucket); err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("memory: put %s: %w", bucket, errEmptyKey)
	}
	b, ok := t.s.kv[bucket]
	if !ok {
		b = map[string][]byte{}
		t.s.kv[bucket] = b
		t.undo = append(t.undo, func() { delete(t.s.kv, bucket) })
	}
	old, existed := b[key]
	b[key] = bytes.Clone(value)
	t.undo = append(t.undo, func() {
		if existed {
			b[key] = old
		} else {
			delete(b, key)
		}
	})
	return nil
}

// Delete removes key from bucket, undoably.
func (t *tx) Delete(bucket, key string) error {
	if err := t.check("delete"); err != nil {
		return err
	}
	if err := checkBucket(bucket); err != nil {
		return err
	}
	b := t.s.kv[bucket]
	old, existed := b[key]
	if !existed {
		return nil
	}
	delete(b, key)
	t.undo = append(t.undo, func() { b[key] = old })
	return nil
}
