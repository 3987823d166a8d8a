package actors

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence"
)

// The draft journal closes the window between a draft's send and the commit of its id. A
// draft is recorded (without an id) before it is sent; when the platform answers, its id is
// appended to a small file beside the database at once — a write(2), no fsync — and only
// then committed with the draft's record, which waits for the group commit's fsync. A
// SIGKILL (not a power loss) keeps what was written, so a kill in that wait no longer leaves
// a draft nobody knows: after the restart loadDraft finds the id of a record without one in
// what the journal held, and the draft is reused or deleted like any other.
//
// The journal is read when the Connector starts, and kept to the lines whose draft record
// still waits for its id; it is compacted the same way when it grows past journalMax. A
// damaged line (a power loss) is ignored.

// journalMax is the size past which the journal is compacted.
const journalMax = 256 << 10

// draftJournal is one Connector's journal; its send goroutines note, loadDraft looks up. A nil
// journal (no data directory: tests, `reef chat` without one) notes nothing.
type draftJournal struct {
	mu    sync.Mutex
	path  string
	f     *os.File
	size  int64
	found map[string]string // draft key → platform id, from the journal of the last run
	store persistence.Store
	log   zerolog.Logger
}

// openDraftJournal opens the journal at path, keeping what it holds for drafts that still wait
// for their id.
func openDraftJournal(path string, store persistence.Store, log zerolog.Logger) (*draftJournal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	j := &draftJournal{path: path, store: store, log: log}
	j.mu.Lock()
	defer j.mu.Unlock()
	lines, err := j.compact()
	if err != nil {
		return nil, err
	}
	j.found = lines
	return j, nil
}

// compact rewrites the journal with the lines whose draft record has no id yet, and returns
// them (key → id); j.mu is held.
func (j *draftJournal) compact() (map[string]string, error) {
	data, err := os.ReadFile(j.path)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	noted := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, id, ok := strings.Cut(sc.Text(), " ")
		if ok && key != "" && id != "" && !strings.ContainsAny(id, " \n") {
			noted[key] = id
		}
	}
	waiting := map[string]bool{} // keys of drafts recorded without an id
	if len(noted) > 0 {
		err = j.store.View(func(r persistence.Reader) error {
			return r.Scan(draftBucket, "", func(_ string, v []byte) error {
				if d := parseDraft(string(v)); d.id == "" && d.key != "" {
					waiting[d.key] = true
				}
				return nil
			})
		})
		if err != nil {
			return nil, err
		}
	}
	kept := map[string]string{}
	var buf bytes.Buffer
	for key, id := range noted {
		if waiting[key] {
			kept[key] = id
			buf.WriteString(key + " " + id + "\n")
		}
	}
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
	tmp := j.path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return nil, err
	}
	if j.f, err = os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, err
	}
	j.size = int64(buf.Len())
	return kept, nil
}

// note appends a draft's id, in one write.
func (j *draftJournal) note(key, id string) {
	if j == nil || key == "" || id == "" || strings.ContainsAny(id, " \n") {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	n, err := j.f.WriteString(key + " " + id + "\n")
	j.size += int64(n)
	if err != nil {
		j.log.Warn().Err(err).Msg("draft journal: write")
	}
	if j.size > journalMax {
		if _, err := j.compact(); err != nil {
			j.log.Warn().Err(err).Msg("draft journal: compact")
		}
	}
}

// lookup returns the id the last run's journal noted for a draft key.
func (j *draftJournal) lookup(key string) (string, bool) {
	if j == nil {
		return "", false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	id, ok := j.found[key]
	return id, ok
}

// close closes the journal's file.
func (j *draftJournal) close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

// openJournal opens the Connector's draft journal, if reef keeps them and the platform has
// drafts (it can edit).
func (c *Connector) openJournal() {
	if _, ok := c.editor(); !ok || c.deps.Journals == "" {
		return
	}
	name := strings.NewReplacer("/", "_", ":", "_").Replace(c.name)
	j, err := openDraftJournal(filepath.Join(c.deps.Journals, "drafts-"+name), c.deps.Store, c.log)
	if err != nil {
		c.log.Warn().Err(err).Msg("draft journal not opened; a kill may leave a draft behind")
		return
	}
	c.journal = j
}
