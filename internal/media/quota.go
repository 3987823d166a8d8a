package media

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Quota bounds the files one sender may send within QuotaWindow; a zero field is no limit.
type Quota struct {
	Files int
	Bytes int64
}

// QuotaWindow is the sliding window a Quota counts in.
const QuotaWindow = time.Hour

// Meter counts the files each sender sent within the last QuotaWindow (in memory: a restart
// forgets). The Connector asks it before a message's files are stored; safe for concurrent use.
type Meter struct {
	mu   sync.Mutex
	used map[string]*usage
}

type usage struct {
	sent    []sent
	noticed time.Time // when the sender was last told they are over (zero: never)
}

type sent struct {
	at    time.Time
	bytes int64
}

// NewMeter returns an empty Meter.
func NewMeter() *Meter { return &Meter{used: map[string]*usage{}} }

// Take records files files of bytes bytes (as the platform announced them; 0 when unknown) for
// key when they fit in q, and reports whether they did. notify is true for the first refusal
// in a window: the sender is told once, not once per file.
func (m *Meter) Take(key string, q Quota, files int, bytes int64, now time.Time) (ok, notify bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.used[key]
	if u == nil {
		u = &usage{}
		m.used[key] = u
	}
	u.sent = slices.DeleteFunc(u.sent, func(s sent) bool { return now.Sub(s.at) >= QuotaWindow })
	var n int64
	for _, s := range u.sent {
		n += s.bytes
	}
	if q.Files > 0 && len(u.sent)+files > q.Files || q.Bytes > 0 && n+bytes > q.Bytes {
		notify = u.noticed.IsZero() || now.Sub(u.noticed) >= QuotaWindow
		if notify {
			u.noticed = now
		}
		return false, notify
	}
	for i := 0; i < files; i++ {
		b := int64(0)
		if i == 0 {
			b = bytes
		}
		u.sent = append(u.sent, sent{at: now, bytes: b})
	}
	m.sweep(now)
	return true, false
}

// sweep forgets senders with nothing in the window and no recent notice.
func (m *Meter) sweep(now time.Time) {
	if len(m.used) < 1024 {
		return
	}
	for k, u := range m.used {
		if (len(u.sent) == 0 || now.Sub(u.sent[len(u.sent)-1].at) >= QuotaWindow) && now.Sub(u.noticed) >= QuotaWindow {
			delete(m.used, k)
		}
	}
}

// InboxDir is the workspace folder the files people send are saved in.
const InboxDir = "inbox"

// InboxSize is the total size of the regular files under workspace's inbox/.
func InboxSize(workspace string) (int64, error) {
	files, err := inboxFiles(workspace)
	var n int64
	for _, f := range files {
		n += f.size
	}
	return n, err
}

type inboxFile struct {
	rel  string
	size int64
	mod  time.Time
}

func inboxFiles(workspace string) ([]inboxFile, error) {
	var out []inboxFile
	root := filepath.Join(workspace, InboxDir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(workspace, p)
		out = append(out, inboxFile{rel: filepath.ToSlash(rel), size: info.Size(), mod: info.ModTime()})
		return nil
	})
	return out, err
}

// PruneInbox removes the oldest files under workspace's inbox/ (by modification time) until
// the rest fit in max bytes, never one of keep (the files a run is about to use), and then the
// day folders left empty. It returns how many files it removed.
func PruneInbox(workspace string, max int64, keep []string) (int, error) {
	if max <= 0 {
		return 0, nil
	}
	files, err := inboxFiles(workspace)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, f := range files {
		total += f.size
	}
	slices.SortFunc(files, func(a, b inboxFile) int { return a.mod.Compare(b.mod) })
	removed := 0
	for _, f := range files {
		if total <= max {
			break
		}
		if slices.Contains(keep, f.rel) {
			continue
		}
		if err := os.Remove(filepath.Join(workspace, filepath.FromSlash(f.rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, err
		}
		total -= f.size
		removed++
		os.Remove(filepath.Join(workspace, filepath.FromSlash(path.Dir(f.rel)))) // only when empty
	}
	return removed, nil
}
