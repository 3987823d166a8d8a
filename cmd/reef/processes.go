package main

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/tools/exec"
)

// processNotifier reports a background process that ended by itself to its session, as a
// system event the agent answers (actors.Runtime.ProcessExited). It runs on the process's
// watching goroutine, which it holds until the event is stored.
func processNotifier(rt *actors.Runtime, log zerolog.Logger) func(exec.Exited) {
	return func(e exec.Exited) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := rt.ProcessExited(ctx, actors.ProcessExit{SessionKey: e.SessionKey, ID: e.ID, Command: e.Command,
			Status: e.Status, Runtime: e.Runtime.Round(time.Second).String(), Output: e.Tail, Tools: e.Tools})
		if err != nil {
			log.Error().Err(err).Str("session", e.SessionKey).Str("process", e.ID).Msg("could not report a background process's end")
		}
	}
}
