package memory

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// event encodes one inotify event as the kernel does.
func event(wd int32, mask uint32, name string) []byte {
	n := 0
	if name != "" {
		n = (len(name) + 1 + 15) / 16 * 16 // NUL-terminated, padded
	}
	b := make([]byte, unix.SizeofInotifyEvent+n)
	binary.NativeEndian.PutUint32(b[0:], uint32(wd))
	binary.NativeEndian.PutUint32(b[4:], mask)
	binary.NativeEndian.PutUint32(b[12:], uint32(n))
	copy(b[unix.SizeofInotifyEvent:], name)
	return b
}

// TestInotifyParse: events name the memory files changed; an overflow of the kernel's queue
// asks for a full scan, a folder that comes or goes for new watches.
func TestInotifyParse(t *testing.T) {
	w := &inotifyWatcher{dirs: map[int32]string{1: "", 2: "memory", 3: "memory/2026"}}
	var buf []byte
	for _, e := range [][]byte{
		event(1, unix.IN_MODIFY, "MEMORY.md"),
		event(1, unix.IN_MODIFY, "AGENTS.md"),
		event(2, unix.IN_CLOSE_WRITE, "a.md"),
		event(3, unix.IN_MOVED_TO, "b.md"),
		event(3, unix.IN_CREATE, "c.txt"),
		event(9, unix.IN_MODIFY, "unknown.md"),
	} {
		buf = append(buf, e...)
	}
	paths, all, rewatch := w.parse(buf)
	if want := []string{"MEMORY.md", "memory/a.md", "memory/2026/b.md"}; len(paths) != 3 || paths[0] != want[0] || paths[1] != want[1] || paths[2] != want[2] || all || rewatch {
		t.Fatalf("got %v all=%v rewatch=%v, want %v", paths, all, rewatch, want)
	}
	if _, all, _ := w.parse(event(-1, unix.IN_Q_OVERFLOW, "")); !all {
		t.Error("an overflow does not ask for a full scan")
	}
	for _, e := range [][]byte{
		event(2, unix.IN_CREATE|unix.IN_ISDIR, "new"),
		event(1, unix.IN_MOVED_TO|unix.IN_ISDIR, "memory"),
		event(3, unix.IN_DELETE_SELF, ""),
	} {
		if _, _, rewatch := w.parse(e); !rewatch {
			t.Errorf("event %v does not set the watches up again", e[:8])
		}
	}
	if _, _, rewatch := w.parse(event(1, unix.IN_CREATE|unix.IN_ISDIR, "skills")); rewatch {
		t.Error("a folder outside memory/ sets the watches up again")
	}
	if _, _, _ = w.parse(event(3, unix.IN_IGNORED, "")); w.dirs[3] != "" || len(w.dirs) != 2 {
		t.Errorf("an ignored watch is kept: %v", w.dirs)
	}
}
