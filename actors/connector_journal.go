package actors

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
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
// The journal also notes the id of every message the Connector sends ("+ <id>"), for the
// sweep of stray drafts (sweepStrays): where a platform numbers a chat's messages in order
// (Telegram), a message of reef's above a draft's "after" that the journal does not know can
// only be one whose send a kill cut off before its id was noted. newest gives a draft its
// "after" when it is recorded: the highest id noted in its chat.
//
// The journal is read when the Connector starts, and kept to the lines whose draft record
// still waits for its id, every id noted in a chat where such a draft waits, and each other
// chat's newest id; it is compacted the same way when it grows past journalMax. A damaged
// line (a power loss) is ignored.

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
	high  map[string]int64  // chat → the highest message number noted or seen (ids "<chat>:<n>")
	// blind: there was no journal when the Connector started (a first start, or one deleted
	// while reef was stopped): what reef sent before is unknown, so no sweep runs.
	blind bool
	store persistence.Store
	log   zerolog.Logger
}

// openDraftJournal opens the journal at path, keeping what it holds for drafts that still wait
// for their id.
func openDraftJournal(path string, store persistence.Store, log zerolog.Logger) (*draftJournal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	j := &draftJournal{path: path, store: store, log: log, high: map[string]int64{}}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := os.Stat(path); os.IsNotExist(err) {
		j.blind = true
	}
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
	var sent []string // ids of messages sent, in order
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, id, ok := strings.Cut(sc.Text(), " ")
		switch {
		case !ok || id == "" || strings.ContainsAny(id, " \n"):
		case key == "+":
			sent = append(sent, id)
		case key != "":
			noted[key] = id
			sent = append(sent, id)
		}
	}
	waiting := map[string]bool{}   // keys of drafts recorded without an id
	sweepable := map[string]bool{} // chats where such a draft waits
	err = j.store.View(func(r persistence.Reader) error {
		return r.Scan(draftBucket, "", func(_ string, v []byte) error {
			if d := parseDraft(string(v)); d.id == "" && d.key != "" {
				waiting[d.key], sweepable[d.chat] = true, true
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	kept := map[string]string{}
	var buf bytes.Buffer
	for key, id := range noted {
		if waiting[key] {
			kept[key] = id
			buf.WriteString(key + " " + id + "\n")
		}
	}
	newest := map[string]string{} // chat → its newest id, for the chats with no draft waiting
	for _, id := range sent {
		chat, n, ok := messageNumberIn(id)
		if !ok {
			continue
		}
		if sweepable[chat] {
			buf.WriteString("+ " + id + "\n")
		} else if n > j.high[chat] {
			newest[chat] = id
		}
		j.high[chat] = max(j.high[chat], n)
	}
	for _, id := range newest {
		buf.WriteString("+ " + id + "\n")
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
	if key == "" || key == "+" {
		return
	}
	j.write(key, id)
}

// sent appends the ids of messages the Connector sent, in one write.
func (j *draftJournal) sent(ids []string) {
	j.write("+", ids...)
}

// write appends one line per id, key first.
func (j *draftJournal) write(key string, ids ...string) {
	if j == nil || len(ids) == 0 {
		return
	}
	var b strings.Builder
	for _, id := range ids {
		if id == "" || strings.ContainsAny(id, " \n") {
			continue
		}
		b.WriteString(key + " " + id + "\n")
	}
	if b.Len() == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	for _, id := range ids {
		if chat, n, ok := messageNumberIn(id); ok && n > j.high[chat] {
			j.high[chat] = n
		}
	}
	n, err := j.f.WriteString(b.String())
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

// newest returns the highest message id noted or seen in chat ("" none, or not a platform
// that numbers a chat's messages).
func (j *draftJournal) newest(chat string) string {
	if j == nil {
		return ""
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if n, ok := j.high[chat]; ok {
		return chat + ":" + strconv.FormatInt(n, 10)
	}
	return ""
}

// seen notes a message that exists in chat (one reef received): a draft sent later has a
// higher id, so it may serve as a draft's "after" (kept in memory only: it is not reef's).
func (j *draftJournal) seen(chat, id string) {
	c, n, ok := messageNumberIn(id)
	if j == nil || !ok || c != chat {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, known := j.high[chat]; !known && len(j.high) >= maxChats {
		clear(j.high) // a bound, not a policy: a chat without a floor is not swept
	}
	j.high[chat] = max(j.high[chat], n)
}

// maxChats bounds the chats whose newest message the journal keeps in memory.
const maxChats = 4096

// sentIn returns the numbers of the messages noted as reef's in chat between lo and hi
// (both excluded), reading the journal: the last run's lines kept for this chat and this
// run's. ok is false when the journal cannot be read, or did not exist at the start.
func (j *draftJournal) sentIn(chat string, lo, hi int64) (map[int64]bool, bool) {
	if j == nil {
		return nil, false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.blind {
		return nil, false
	}
	data, err := os.ReadFile(j.path)
	if err != nil {
		return nil, false
	}
	out := map[int64]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		_, id, _ := strings.Cut(sc.Text(), " ")
		if c, n, ok := messageNumberIn(id); ok && c == chat && n > lo && n < hi {
			out[n] = true
		}
	}
	return out, true
}

// messageNumberIn splits a Telegram message id "<chat>:<n>" (n counts the chat's messages).
func messageNumberIn(id string) (chat string, n int64, ok bool) {
	i := strings.LastIndexByte(id, ':')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	return id[:i], n, err == nil && n > 0
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
