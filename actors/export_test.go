package actors

// StorageStats returns how many commits Storage made and how many writes they carried.
func StorageStats() (commits, writes, nanos int64) {
	return storageStats.commits.Load(), storageStats.writes.Load(), storageStats.nanos.Load()
}
