package actors

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/internal/explain"
)

// A channel's state has one source: the Connector's ChannelHealth, which reef status, the
// Overview page, /readyz and reef_connector_up all read (Runtime.Health). A channel is
// connected only while its last call to the platform succeeded (channels.Reachable reports
// each success, channels.Unreachable each failure the channel retries itself); a channel that
// reports neither is connected while its Run runs.

// Channel states (ChannelHealth.State).
const (
	ChannelConnecting   = "connecting"   // Run started, no call has answered yet
	ChannelConnected    = "connected"    // the last call succeeded
	ChannelReconnecting = "reconnecting" // the last call failed; the next try is due at NextTry
	ChannelFailed       = "failed"       // stopped for good (refused credentials): fix and restart
)

// ChannelHealth is a connector's state as shown by status commands.
type ChannelHealth struct {
	Name      string
	State     string    // ChannelConnecting, ChannelConnected, ChannelReconnecting or ChannelFailed
	Connected bool      // State == ChannelConnected
	Since     time.Time // when State began
	NextTry   time.Time // reconnecting: when the next attempt starts (zero: trying now)
	Reason    string    // why it is not connected, in plain words (never an error chain)
	LastEvent time.Time
	Restarts  int
}

// Describe is the state in words: "connected", "connecting (for 3s)", "reconnecting (since
// 10:04:05, next try in 8s): cannot resolve api.telegram.org (DNS)", "failed: token refused
// (401)".
func (h ChannelHealth) Describe(now time.Time) string {
	s := h.Status(now)
	if h.Reason != "" && h.State != ChannelConnected {
		s += ": " + h.Reason
	}
	return s
}

// Status is Describe without the reason.
func (h ChannelHealth) Status(now time.Time) string {
	switch h.State {
	case ChannelConnected:
		return "connected"
	case ChannelConnecting:
		return fmt.Sprintf("connecting (for %s)", roundDur(now.Sub(h.Since)))
	case ChannelReconnecting:
		next := "trying now"
		if d := h.NextTry.Sub(now); !h.NextTry.IsZero() && d > 0 {
			next = "next try in " + roundDur(d)
		}
		return fmt.Sprintf("reconnecting (since %s, %s)", h.Since.Local().Format("15:04:05"), next)
	case ChannelFailed:
		return "failed"
	case ChannelPaused:
		return "paused"
	}
	if h.Connected { // from a gateway that knew no states
		return "connected"
	}
	return "down"
}

func roundDur(d time.Duration) string {
	if d < time.Second {
		return "<1s"
	}
	return d.Round(time.Second).String()
}

// healthRequest asks a Connector for its ChannelHealth.
type healthRequest struct{ reply chan<- ChannelHealth }

// unreachable is the Connector's self-message when the channel reported a failed call it
// retries itself (channels.Unreachable).
type unreachable struct {
	err     error
	retryIn time.Duration
}

// startHealth sets the state a started Run begins in: connecting when the channel reports
// its calls, else connected.
func (c *Connector) startHealth() {
	c.health = ChannelHealth{Name: c.name}
	if _, ok := c.ch.(channels.Reachable); ok {
		c.setState(ChannelConnecting, "", 0)
		return
	}
	c.setState(ChannelConnected, "", 0)
}

// setState moves the channel to state; reason says why it is not connected, retryIn when it
// tries again.
func (c *Connector) setState(state, reason string, retryIn time.Duration) {
	now := time.Now()
	if c.health.State != state {
		c.health.Since = now
	}
	c.health.State, c.health.Connected, c.health.Reason = state, state == ChannelConnected, reason
	c.health.NextTry = time.Time{}
	if retryIn > 0 {
		c.health.NextTry = now.Add(retryIn)
	}
}

func (c *Connector) onReachable() {
	if c.health.State != ChannelFailed && c.health.State != ChannelPaused {
		c.setState(ChannelConnected, "", 0)
	}
}

func (c *Connector) onUnreachable(msg *unreachable) {
	if c.health.State != ChannelFailed && c.health.State != ChannelPaused {
		c.setState(ChannelReconnecting, c.reason(msg.err), msg.retryIn)
	}
}

func (c *Connector) onRunExited(msg *runExited) {
	if msg.err == nil {
		return
	}
	if !msg.final {
		c.health.Restarts++
		c.setState(ChannelReconnecting, c.reason(msg.err), msg.retryIn)
		return
	}
	c.setState(ChannelFailed, c.reason(msg.err), 0)
	c.log.Error().Err(msg.err).Msg("channel stopped; fix the credentials and restart reef")
}

// reason says why a channel call failed, in plain words: "token refused (401)", "cannot
// resolve api.telegram.org (DNS)".
func (c *Connector) reason(err error) string {
	if errors.Is(err, channels.ErrAuth) {
		what := "token refused"
		if c.channel == "feishu" {
			what = "app id or secret refused"
		}
		var sc explain.StatusCoder
		if errors.As(err, &sc) {
			return fmt.Sprintf("%s (%d)", what, sc.HTTPStatus())
		}
		// no status: the platform's own words say what it refused (Discord's close codes:
		// "disallowed intents: enable the Message Content intent ...")
		if msg := explain.StripPrefixes(strings.Join(strings.Fields(err.Error()), " ")); !strings.HasSuffix(msg, channels.ErrAuth.Error()) {
			return msg
		}
		return what
	}
	return explain.Short(err, "")
}
