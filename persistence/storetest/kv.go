package storetest

import (
	"errors"
	"testing"

	"github.com/reefgw/reef/persistence"
)

func testNamedBuckets(t *testing.T, s persistence.Store) {
	update(t, s, func(tx persistence.Tx) error {
		for _, kv := range [][2]string{{"b", "2"}, {"a", "1"}, {"a:x", "3"}, {"c", "4"}} {
			if err := tx.Put("cron/jobs", kv[0], []byte(kv[1])); err != nil {
				return err
			}
		}
		return tx.Put("pairing", "a", []byte("other bucket"))
	})
	var keys, values []string
	err := s.View(func(r persistence.Reader) error {
		v, ok, err := r.Get("cron/jobs", "b")
		if err != nil || !ok || string(v) != "2" {
			t.Errorf("Get(cron/jobs, b) = %q, %v, %v; want 2", v, ok, err)
		}
		if _, ok, _ := r.Get("cron/jobs", "zz"); ok {
			t.Error("Get of a missing key reports it exists")
		}
		if _, ok, err := r.Get("nothing/here", "a"); ok || err != nil {
			t.Errorf("Get in a missing bucket = %v, %v; want not found, no error", ok, err)
		}
		return r.Scan("cron/jobs", "a", func(k string, v []byte) error {
			keys, values = append(keys, k), append(values, string(v))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || keys[0] != "a" || keys[1] != "a:x" || values[1] != "3" {
		t.Errorf("Scan(prefix a) = %v %v, want [a a:x] [1 3]", keys, values)
	}
	stop := errors.New("stop")
	n := 0
	err = s.View(func(r persistence.Reader) error {
		return r.Scan("cron/jobs", "", func(string, []byte) error { n++; return stop })
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Scan stopping early: n=%d err=%v", n, err)
	}
	// rollback, delete, reserved names
	failed := errors.New("fail")
	if err := s.Update(func(tx persistence.Tx) error {
		tx.Put("cron/jobs", "new", []byte("x"))
		tx.Delete("cron/jobs", "a")
		return failed
	}); !errors.Is(err, failed) {
		t.Fatalf("Update = %v", err)
	}
	update(t, s, func(tx persistence.Tx) error { return tx.Delete("cron/jobs", "b") })
	s.View(func(r persistence.Reader) error {
		if _, ok, _ := r.Get("cron/jobs", "new"); ok {
			t.Error("a rolled-back Put is visible")
		}
		if _, ok, _ := r.Get("cron/jobs", "a"); !ok {
			t.Error("a rolled-back Delete removed the key")
		}
		if _, ok, _ := r.Get("cron/jobs", "b"); ok {
			t.Error("a deleted key is still there")
		}
		return nil
	})
	for _, bad := range []string{"sessions", "dedup/x", "", "a//b"} {
		if err := s.Update(func(tx persistence.Tx) error { return tx.Put(bad, "k", nil) }); err == nil {
			t.Errorf("Put in bucket %q succeeded, want an error", bad)
		}
	}
}
