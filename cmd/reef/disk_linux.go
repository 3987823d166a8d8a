package main

import "golang.org/x/sys/unix"

// statDisk reads the file system of dir.
func statDisk(dir string) (diskSpace, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return diskSpace{}, false
	}
	bs := uint64(st.Bsize)
	return diskSpace{free: st.Bavail * bs, total: st.Blocks * bs, readOnly: st.Flags&unix.ST_RDONLY != 0}, true
}
