package main

import "fmt"

// diskSpace is what the file system holding the data directory reports.
type diskSpace struct {
	free, total uint64 // bytes available to reef's user, and in all
	readOnly    bool
}

// lowDiskShare is the share of free space under which doctor warns: a full disk makes every
// write fail, and a message reef cannot store is not acknowledged to the platform.
const lowDiskShare = 0.05

// checkDisk reports the space and mode of the data directory's file system: read-only is a
// problem (reef cannot store anything), under lowDiskShare free a warning.
func (d *doctor) checkDisk(dataDir string) {
	if sp, ok := statDisk(dataDir); ok { // not on every platform
		d.reportDisk(dataDir, sp)
	}
}

// reportDisk says what sp means for reef.
func (d *doctor) reportDisk(dataDir string, sp diskSpace) {
	switch {
	case sp.readOnly:
		d.fail("disk", "the file system of "+dataDir+" is read-only: reef can store nothing",
			"remount it read-write, or set REEF_HOME (or dataDir) to a writable place")
	case sp.total > 0 && float64(sp.free) < lowDiskShare*float64(sp.total):
		fmt.Fprintf(d.out, "! disk: only %s free of %s for %s: when it fills, messages are refused until space is freed\n    fix: free some space (old backups in $REEF_HOME/backups, logs)\n",
			size(sp.free), size(sp.total), dataDir)
	default:
		d.ok("disk", fmt.Sprintf("%s free of %s", size(sp.free), size(sp.total)))
	}
}

// size formats bytes for a person: 1.5 GB, 320 MB.
func size(b uint64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%d MB", b>>20)
	}
	return fmt.Sprintf("%d KB", b>>10)
}
