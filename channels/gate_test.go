package channels_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reefgw/reef/channels"
)

// gate grants each Hold the context given by held (nil: blocks until ctx ends).
type gate struct {
	held  func(ctx context.Context) context.Context
	units []string
}

func (g *gate) Hold(ctx context.Context, unit string) (context.Context, context.CancelFunc, error) {
	g.units = append(g.units, unit)
	if g.held == nil {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}
	c, cancel := context.WithCancel(g.held(ctx))
	return c, cancel, nil
}

func TestGated(t *testing.T) {
	ran := 0
	loop := func(ctx context.Context) error { ran++; <-ctx.Done(); return nil }

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := channels.Gated(ctx, nil, "u", loop); err != nil || ran != 1 {
		t.Fatalf("no gate: err %v, ran %d; want the loop run at once", err, ran)
	}

	waiting := &gate{}
	if err := channels.Gated(ctx, waiting, "channel:telegram:default", loop); err != nil || ran != 1 {
		t.Fatalf("a gate held elsewhere: err %v, ran %d; want nil and no loop", err, ran)
	}
	if len(waiting.units) != 1 || waiting.units[0] != "channel:telegram:default" {
		t.Errorf("units asked = %q", waiting.units)
	}

	lost := &gate{held: func(context.Context) context.Context { // the lease is lost at once
		c, cancel := context.WithCancel(context.Background())
		cancel()
		return c
	}}
	if err := channels.Gated(context.Background(), lost, "u", loop); !errors.Is(err, channels.ErrWorkMoved) || ran != 2 {
		t.Fatalf("a lost lease: err %v, ran %d; want ErrWorkMoved after one loop", err, ran)
	}
	if got := channels.InboundWork("feishu", ""); got != "channel:feishu:default" {
		t.Errorf("InboundWork = %q", got)
	}
}
