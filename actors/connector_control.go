package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// The owner's controls of a channel's platform connection (the Control UI's Channels page):
// pause stops the connection (nothing is received; replies wait in the outbox and go out
// as before), resume and restart start it again at once — also after it failed for good.
// Replies in flight are not touched: only the receiving loop (runLoop) stops and starts.

// ChannelPaused is the State of a channel its owner paused.
const ChannelPaused = "paused"

// Channel control actions (Runtime.ControlChannel).
const (
	ChannelRestart = "restart"
	ChannelPause   = "pause"
	ChannelResume  = "resume"
)

// channelControl asks a Connector to pause, resume or restart its platform loop.
type channelControl struct {
	action string
	reply  chan<- error
}

// startLoop runs the platform loop in a goroutine under a context of its own, numbered so
// that the reports of a loop stopped by a pause or restart are told from the current one's.
func (c *Connector) startLoop(ctx actor.Context) {
	loopCtx, cancel := context.WithCancel(c.runCtx)
	c.loopGen++
	gen, self, root := c.loopGen, ctx.Self(), ctx.ActorSystem().Root
	c.loopCancel, c.looping, c.loopStopped = cancel, true, false
	deliver := c.deliverAllFunc(root, self)
	go func() {
		err := c.runLoop(loopCtx, deliver, func(err error, retryIn time.Duration) {
			root.Send(self, &runExited{err: err, retryIn: retryIn, gen: gen})
		})
		root.Send(self, &runExited{err: err, final: true, gen: gen})
	}()
}

func (c *Connector) onChannelControl(ctx actor.Context, msg *channelControl) {
	switch msg.action {
	case ChannelPause:
		if c.health.State == ChannelPaused {
			msg.reply <- nil
			return
		}
		c.stopLoop()
		c.restartWanted = false
		c.setState(ChannelPaused, "paused by the owner", 0)
		c.log.Info().Msg("channel paused by the owner")
		if c.looping { // answered when the loop has ended: nothing is received after that
			c.pauseWaits = append(c.pauseWaits, msg.reply)
			return
		}
	case ChannelResume, ChannelRestart:
		restarts := c.health.Restarts + 1
		c.startHealth()
		c.health.Restarts = restarts
		c.log.Info().Str("action", msg.action).Msg("channel restarted by the owner")
		if c.looping { // the old loop first reports its end: then the new one starts
			c.stopLoop()
			c.restartWanted = true
			break
		}
		c.startLoop(ctx)
	default:
		msg.reply <- fmt.Errorf("unknown channel action %q: use restart, pause or resume", msg.action)
		return
	}
	msg.reply <- nil
}

// stopLoop cancels the current loop; its final runExited comes later (looping stays true
// until then).
func (c *Connector) stopLoop() {
	if c.loopCancel != nil {
		c.loopCancel()
	}
	c.loopStopped = true
}

// staleExit reads a loop's report: it notes the loop's end, starts the loop a restart waits
// for, and reports whether msg is of a stopped loop (which the health must not show).
func (c *Connector) staleExit(ctx actor.Context, msg *runExited) bool {
	if msg.gen != c.loopGen {
		return true // cannot happen: a new loop starts only after the old one ended
	}
	if msg.final {
		c.looping = false
		for _, reply := range c.pauseWaits {
			reply <- nil
		}
		c.pauseWaits = nil
	}
	if !c.loopStopped {
		return false
	}
	if msg.final && c.restartWanted {
		c.restartWanted = false
		c.startLoop(ctx)
	}
	return true
}

// ControlChannel pauses, resumes or restarts the platform connection of channel account
// name (channels.ID), as the Control UI's Channels page does.
func (rt *Runtime) ControlChannel(ctx context.Context, name, action string) error {
	pid := rt.deps.connector(name)
	if pid == nil {
		return fmt.Errorf("no channel %q", name)
	}
	reply := make(chan error, 1)
	rt.system.Root.Send(pid, &channelControl{action: action, reply: reply})
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("channel %s: %w", name, ctx.Err())
	}
}
