package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/channels"
)

// reactRequest asks a Connector to set the bot's reaction on a message (the message tool's
// react action). It is not recorded: a reaction lost to a crash is not sent again.
type reactRequest struct {
	chatID, messageID, emoji string
	reply                    chan error // buffered
}

// reactTimeout bounds one reaction call to the platform.
const reactTimeout = 30 * time.Second

// onReact sets the reaction in a goroutine of its own, or answers that the platform cannot.
func (c *Connector) onReact(ctx actor.Context, msg *reactRequest) {
	r, ok := c.ch.(channels.Reactor)
	if !ok {
		msg.reply <- fmt.Errorf("reactions are not supported on %s", c.channel)
		return
	}
	runCtx := c.runCtx
	c.sends.Add(1)
	go func() {
		defer c.sends.Done()
		defer func() {
			if p := recover(); p != nil {
				c.log.Error().Str("panic", fmt.Sprint(p)).Msg("react panicked")
				msg.reply <- fmt.Errorf("react failed: %v", p)
			}
		}()
		callCtx, cancel := context.WithTimeout(runCtx, reactTimeout)
		defer cancel()
		if err := r.React(callCtx, msg.chatID, msg.messageID, msg.emoji); err != nil {
			c.log.Warn().Err(err).Str("chat", msg.chatID).Msg("react")
			msg.reply <- fmt.Errorf("the reaction was not set: %w", err)
			return
		}
		msg.reply <- nil
	}()
}
