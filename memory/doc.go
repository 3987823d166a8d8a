// Package memory is an agent's long-term memory index: the Markdown notes of its workspace
// (MEMORY.md and memory/**/*.md) cut into chunks, searched by keyword (BM25 over a CJK-aware
// tokenizer) and by meaning (cosine over embedding vectors), the two fused into one ranking.
//
// # Storage
//
// The index lives in reef's database (persistence.Store named buckets), one set per agent:
//
//	memory/<agent>/meta      "state": {version, model, dims, gen}; a different model or version rebuilds
//	memory/<agent>/files     path → {size, mtime, hash, chunks}: what was indexed of each file;
//	                         sessions/<key> → {mtime, seq, tail}: of each conversation (sources: sessions)
//	memory/<agent>/chunks    path\x00nnnnnn → {id, path, lines, hash, text}: id is the
//	                         chunk's document number
//	memory/<agent>/docs      id (4 bytes, big-endian) → length, day, has-vector, chunk key
//	memory/<agent>/post      block (4 bytes) term → the term's postings among documents
//	                         block×1024 to block×1024+1023: varint id deltas and term counts
//	memory/<agent>/vectors   id (4 bytes) → float32 little-endian: the chunk's embedding
//	memory/<agent>/embcache  model\x00hash → float32 little-endian: embeddings by content, so
//	                         unchanged text is never embedded twice, also across restarts
//
// A search reads what it needs where it lies, in one read transaction: the postings of its
// terms, the vectors, the records of the documents in the running and of the results. With
// bbolt these are slices of the mapped file (page cache the kernel reclaims), decoded and
// dropped; the process keeps only the mirror (mirror.go): per document number its length and
// a vector bit, about five bytes a chunk. Nothing is loaded at start but the mirror; an
// index of another version (format 1 kept postings in memory) is dropped and built again at
// the first search, in transactions of 2,048 records, the embedding cache kept.
//
// Every write adds one to the state's gen and first checks that the store's gen is the one
// the mirror read; a search checks it too. Several nodes of a cluster write one index
// (PostgreSQL, Shared): a node whose mirror is stale reads it again and starts its sync over
// (PostgreSQL's serializable transactions make two writers of one gen conflict), so two
// nodes never give one document number to two chunks.
//
// A sync writes its changes in transactions of at most 256 notes (syncBatch), each note's
// record with its chunks, so the index is consistent after each: a sync that stops midway
// (a full disk, a kill) leaves some notes at their older version, and the next sync, which
// compares every note's size, mtime and hash, completes it. Memory so follows the batch, not
// the workspace (one transaction for 10,000 new notes was 190 MB). A record that does not
// decode, a chunk a file names that is missing, counts of documents, chunks and files that
// differ at load, or a posting or vector of no document found by a search, is taken as
// damage: the agent's buckets are dropped and rebuilt from the files, never served.
//
// # Keeping up with the workspace
//
// Index.Sync runs before every search, so edits made outside reef are seen. It learns what
// changed from an inotify watcher on the workspace folder and every folder of memory/
// (watch_linux.go): the watcher's descriptor is non-blocking and drained by the sync itself,
// so there is no goroutine, and every write made before the sync began is in its queue. It
// re-reads only the notes named and re-chunks only those whose content hash changed. A full
// stat scan (every note's size and mtime against the index) runs at the first sync, when the
// queue overflowed or a folder came or went, every 5 minutes as a safety net, and, without a
// watcher (another system, the kernel's limits reached, NoWatch), at most every ScanEvery.
// The file tools call Index.Touch after a write, which re-indexes that one file at once.
// Index.Close releases the watcher.
//
// # Conversations
//
// With Config.Sessions the agent's own transcripts are indexed as well (sessions.go), read
// from the Store: one chunk or more per turn (a person's message and the answer, no tool
// output), under the path sessions/<key>. A transcript whose info was updated since is read
// from its last indexed turn on, and only that turn and the later ones are cut again; the
// store is looked at for new turns at most every Config.SessionsEvery.
//
// # Concurrency
//
// An Index is safe for concurrent use: one mutex orders syncs and searches.
// Writes go straight to the Store's Update (bbolt orders writers itself); they are rare
// and small next to the Storage actor's traffic, and the Storage actor's group commit is
// not needed for them. The index is written by the process that holds the database (the
// gateway, or a CLI command when no gateway runs), or by each node of a cluster on one
// PostgreSQL database (see gen above).
package memory
