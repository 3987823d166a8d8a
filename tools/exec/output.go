package exec

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// capped is an io.Writer that keeps the first and the last bytes written, up to max in all,
// and counts what it drops in between.
type capped struct {
	mu      sync.Mutex
	headMax int
	tailMax int
	head    []byte
	tail    []byte // grows to twice tailMax, then keeps its last tailMax bytes
	total   int64
}

func newCapped(max int) *capped {
	h := max / 2
	return &capped{headMax: h, tailMax: max - h}
}

// Write keeps what fits; it never fails, so the command never sees a broken pipe.
func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	c.total += int64(n)
	if room := c.headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	if len(p) >= c.tailMax {
		c.tail = append(c.tail[:0], p[len(p)-c.tailMax:]...)
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*c.tailMax {
		k := copy(c.tail, c.tail[len(c.tail)-c.tailMax:])
		c.tail = c.tail[:k]
	}
	return n, nil
}

// String returns the output as valid UTF-8, with a marker where bytes were dropped.
func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if len(tail) > c.tailMax {
		tail = tail[len(tail)-c.tailMax:]
	}
	omitted := c.total - int64(len(c.head)) - int64(len(tail))
	if omitted == 0 {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	head := c.head
	// Cut on rune boundaries so the marker does not split a character.
	for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head[max(0, len(head)-utf8.UTFMax):]); i++ {
		head = head[:len(head)-1]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	omitted = c.total - int64(len(head)) - int64(len(tail))
	return strings.ToValidUTF8(fmt.Sprintf("%s\n[... %d bytes omitted ...]\n%s", head, omitted, tail), "\uFFFD")
}
