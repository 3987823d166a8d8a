package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestReportDisk(t *testing.T) {
	const gb = 1 << 30
	tests := []struct {
		name     string
		sp       diskSpace
		want     string // the line's start
		problems int
	}{
		{"plenty", diskSpace{free: 40 * gb, total: 100 * gb}, "✓ disk: 40.0 GB free of 100.0 GB", 0},
		{"at the edge", diskSpace{free: 5 * gb, total: 100 * gb}, "✓ disk:", 0},
		{"nearly full", diskSpace{free: 4 * gb, total: 100 * gb}, "! disk: only 4.0 GB free of 100.0 GB", 0},
		{"full", diskSpace{free: 0, total: 100 * gb}, "! disk: only 0 KB free", 0},
		{"read-only", diskSpace{free: 40 * gb, total: 100 * gb, readOnly: true}, "✗ disk: the file system of /d is read-only", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			d := &doctor{out: &out}
			d.reportDisk("/d", tt.sp)
			if !strings.HasPrefix(out.String(), tt.want) || d.problems != tt.problems {
				t.Errorf("got %q with %d problems, want it to start %q with %d", out.String(), d.problems, tt.want, tt.problems)
			}
		})
	}
}

// TestStatDisk reads the real file system of a temp directory: writable, with space.
func TestStatDisk(t *testing.T) {
	sp, ok := statDisk(t.TempDir())
	if !ok {
		t.Skip("no disk statistics on this platform")
	}
	if sp.readOnly || sp.total == 0 || sp.free > sp.total {
		t.Errorf("statDisk(temp dir) = %+v, want a writable file system with free <= total > 0", sp)
	}
}
