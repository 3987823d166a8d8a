package media

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMeter: a sender's files count within an hour by number and announced bytes; the first
// refusal of a window says to notify, later ones do not; an hour later they fit again; other
// senders are not affected (#39 item 4).
func TestMeter(t *testing.T) {
	m := NewMeter()
	q := Quota{Files: 3, Bytes: 10 << 20}
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		if ok, _ := m.Take("g", q, 1, 1<<20, now); !ok {
			t.Fatalf("file %d refused", i)
		}
	}
	notices := 0
	for i := 0; i < 27; i++ {
		ok, notify := m.Take("g", q, 1, 1<<20, now.Add(time.Duration(i)*time.Second))
		if ok {
			t.Fatalf("file %d over the limit taken", 4+i)
		}
		if notify {
			notices++
		}
	}
	if notices != 1 {
		t.Errorf("%d notices for a flood, want 1", notices)
	}
	if ok, _ := m.Take("other", q, 1, 9<<20, now); !ok {
		t.Error("another sender was refused")
	}
	if ok, _ := m.Take("other", q, 1, 2<<20, now); ok {
		t.Error("bytes over the limit taken")
	}
	if ok, _ := m.Take("g", q, 1, 1<<20, now.Add(QuotaWindow)); !ok {
		t.Error("an hour later the sender is still refused")
	}
	if ok, _ := m.Take("free", Quota{}, 100, 1<<40, now); !ok {
		t.Error("the zero Quota limited")
	}
}

// TestPruneInbox: past the bound the oldest files go first, never one to keep, and empty day
// folders go with them.
func TestPruneInbox(t *testing.T) {
	ws := t.TempDir()
	base := time.Now().Add(-time.Hour)
	files := []string{"inbox/d1/a", "inbox/d1/b", "inbox/d2/c", "inbox/d2/d"}
	for i, f := range files {
		p := filepath.Join(ws, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, make([]byte, 100), 0o644)
		at := base.Add(time.Duration(i) * time.Minute)
		os.Chtimes(p, at, at)
	}
	n, err := PruneInbox(ws, 200, []string{"inbox/d1/a"})
	if err != nil || n != 2 {
		t.Fatalf("removed %d (%v), want 2", n, err)
	}
	for f, want := range map[string]bool{"inbox/d1/a": true, "inbox/d1/b": false, "inbox/d2/c": false, "inbox/d2/d": true} {
		if _, err := os.Stat(filepath.Join(ws, f)); (err == nil) != want {
			t.Errorf("%s exists %v, want %v", f, err == nil, want)
		}
	}
	if size, _ := InboxSize(ws); size != 200 {
		t.Errorf("inbox holds %d bytes, want 200", size)
	}
}
