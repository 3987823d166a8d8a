package persistence

import (
	"encoding/json"
	"fmt"
	"time"
)

// ShownBucket holds what a person saw in a chat that the transcript does not: slash-command
// exchanges ("/status" and its answer), which are never fed to the model. A page that
// redraws a conversation from the store (the WebChat history) reads them alongside the
// transcript. Keys are "<session key>\x00<unix nanos, 20 digits>".
const ShownBucket = "shown"

// Shown is one command exchange as the person saw it.
type Shown struct {
	Command string    `json:"command"` // what they typed
	Answer  string    `json:"answer"`  // reef's answer
	Time    time.Time `json:"time"`
}

// PutShown records an exchange of the session key.
func PutShown(tx Tx, key string, s Shown) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return tx.Put(ShownBucket, fmt.Sprintf("%s\x00%020d", key, s.Time.UnixNano()), b)
}

// ShownOf returns the session's recorded exchanges, oldest first.
func ShownOf(r Reader, key string) ([]Shown, error) {
	var out []Shown
	err := r.Scan(ShownBucket, key+"\x00", func(_ string, v []byte) error {
		var s Shown
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("shown record of %s: %w", key, err)
		}
		out = append(out, s)
		return nil
	})
	return out, err
}
