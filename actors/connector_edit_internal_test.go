package actors

import (
	"strconv"
	"testing"
)

// TestSentLogForgetsIdleChats: the record of sent ids keeps a bounded number of chats (the
// soak's 5,000 chats each left a list behind for good); the chats written to last are kept.
func TestSentLogForgetsIdleChats(t *testing.T) {
	var l sentLog
	for i := range 5000 {
		chat := strconv.Itoa(i)
		l.note(chat, "", []string{chat + ":2"})
	}
	if n := len(l.byChat); n > 2*sentChats {
		t.Errorf("%d chats remembered, want at most %d", n, 2*sentChats)
	}
	if id, ok := l.resolve("4999", ""); !ok || id != "4999:2" {
		t.Errorf("the last chat's message: %q %v, want 4999:2", id, ok)
	}
	if _, ok := l.resolve("0", ""); ok {
		t.Error("the first chat, idle since 4,999 others, is still remembered")
	}
}

// TestJournalFloorsBounded: the newest message per chat the draft journal keeps in memory
// is bounded too.
func TestJournalFloorsBounded(t *testing.T) {
	j := &draftJournal{high: map[string]int64{}}
	for i := range 3 * maxChats {
		chat := strconv.Itoa(i)
		j.seen(chat, chat+":5")
	}
	if n := len(j.high); n > maxChats {
		t.Errorf("%d chats' floors in memory, want at most %d", n, maxChats)
	}
	if got := j.newest(strconv.Itoa(3*maxChats - 1)); got == "" {
		t.Error("the last chat seen has no floor")
	}
}
