package actors

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reefgw/reef/providers"
)

// TestFailureTextResponseTooLarge: a response cut at its byte bound says so, not "something
// went wrong" (#39.5).
func TestFailureTextResponseTooLarge(t *testing.T) {
	err := fmt.Errorf("anthropic: %w: more than 16777216 bytes", providers.ErrResponseTooLarge)
	if got := failureText(err, false); !strings.Contains(got, "too large") {
		t.Errorf("got %q, want it to say the answer was too large", got)
	}
}
