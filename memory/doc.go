// Package memory is an agent's long-term memory index: the Markdown notes of its workspace
// (MEMORY.md and memory/**/*.md) cut into chunks, searched by keyword (BM25 over a CJK-aware
// tokenizer) and by meaning (cosine over embedding vectors), the two fused into one ranking.
//
// # Storage
//
// The index lives in reef's database (persistence.Store named buckets), one set per agent:
//
//	memory/<agent>/meta      "state": {version, model, dims}; a different model or version rebuilds
//	memory/<agent>/files     path → {size, mtime, hash, chunks}: what was indexed of each file;
//	                         sessions/<key> → {mtime, seq, tail}: of each conversation (sources: sessions)
//	memory/<agent>/chunks    path\x00nnnnnn → {path, lines, hash, text, terms}: terms are the
//	                         chunk's keyword postings (term → count)
//	memory/<agent>/vectors   path\x00nnnnnn → float32 little-endian: the chunk's embedding
//	memory/<agent>/embcache  model\x00hash → float32 little-endian: embeddings by content, so
//	                         unchanged text is never embedded twice, also across restarts
//
// A sync writes its changes in transactions of at most 256 notes (syncBatch), each note's
// record with its chunks, so the index is consistent after each: a sync that stops midway
// (a full disk, a kill) leaves some notes at their older version, and the next sync, which
// compares every note's size, mtime and hash, completes it. Memory so follows the batch, not
// the workspace (one transaction for 10,000 new notes was 190 MB). A record that does not
// decode or a chunk a file names that is missing is taken as damage: the agent's buckets are
// dropped and rebuilt from the files, never served.
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
// An Index is safe for concurrent use: one mutex orders syncs, searches read a snapshot.
// Writes go straight to the Store's Update (bbolt orders writers itself); they are rare
// and small next to the Storage actor's traffic, and the Storage actor's group commit is
// not needed for them. The index is only ever written by the process that holds the
// database: the gateway, or a CLI command when no gateway runs.
package memory
