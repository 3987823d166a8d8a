package channeltest

import (
	"context"
	"sync"
)

// Gate is a cluster's channels.Gate for a channel's tests: Hold waits until Grant, and
// Units says which units were asked for.
type Gate struct {
	mu      sync.Mutex
	units   []string
	granted chan struct{}
	once    sync.Once
}

// NewGate returns a Gate that holds nothing until Grant.
func NewGate() *Gate { return &Gate{granted: make(chan struct{})} }

// Hold implements channels.Gate.
func (g *Gate) Hold(ctx context.Context, unit string) (context.Context, context.CancelFunc, error) {
	g.mu.Lock()
	g.units = append(g.units, unit)
	g.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-g.granted:
	}
	c, cancel := context.WithCancel(ctx)
	return c, cancel, nil
}

// Grant lets this node hold every unit from now on.
func (g *Gate) Grant() { g.once.Do(func() { close(g.granted) }) }

// Units returns the units asked for so far.
func (g *Gate) Units() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.units...)
}
