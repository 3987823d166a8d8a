package bolt_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/bolt"
)

// rssFileKB reads RssFile (resident file-backed pages: the binary and mapped files).
func rssFileKB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

// value is the value of key i: 4 KiB, different for every key.
func value(i int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%08d", i)), 512)
}

// TestReleaseMappedGivesBackPages: reading the whole database maps its pages into the
// process; ReleaseMapped takes them out of the resident set, and the data reads back intact.
func TestReleaseMappedGivesBackPages(t *testing.T) {
	s, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 4096 // 16 MiB of values
	for start := 0; start < n; start += 512 {
		if err := s.Update(func(tx persistence.Tx) error {
			for i := start; i < start+512; i++ {
				if err := tx.Put("big", fmt.Sprintf("k%05d", i), value(i)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func() {
		t.Helper()
		if err := s.View(func(r persistence.Reader) error {
			for i := range n {
				v, ok, err := r.Get("big", fmt.Sprintf("k%05d", i))
				if err != nil || !ok || !bytes.Equal(v, value(i)) {
					return fmt.Errorf("k%05d: found %v, err %v, value intact %v", i, ok, err, bytes.Equal(v, value(i)))
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	readAll()
	mapped := rssFileKB(t)
	if err := s.ReleaseMapped(); err != nil {
		t.Fatal(err)
	}
	released := rssFileKB(t)
	if mapped-released < 8<<10 { // of the 16 MiB read
		t.Errorf("RssFile went from %d kB to %d kB: want at least 8 MiB given back", mapped, released)
	}
	readAll()
}

// TestReleaseMappedWhileWriting: releasing while other goroutines write (growing and
// remapping the file) and read loses nothing.
func TestReleaseMappedWhileWriting(t *testing.T) {
	s, err := bolt.Open(filepath.Join(t.TempDir(), "reef.db"), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const writers, each = 4, 100
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				k := w*each + i
				if err := s.Update(func(tx persistence.Tx) error {
					return tx.Put("big", fmt.Sprintf("k%05d", k), value(k))
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	for releases := 0; ; releases++ {
		select {
		case <-done:
			t.Logf("%d releases during the writes", releases)
			err := s.View(func(r persistence.Reader) error {
				for k := range writers * each {
					v, ok, err := r.Get("big", fmt.Sprintf("k%05d", k))
					if err != nil || !ok || !bytes.Equal(v, value(k)) {
						return fmt.Errorf("k%05d lost or damaged (found %v, err %v)", k, ok, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
			if err := s.ReleaseMapped(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
