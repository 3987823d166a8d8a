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

// processTracker keeps the running background processes in the store (actors.Runtime), so
// that the gateway after a crash tells their sessions that a restart stopped them.
type processTracker struct{ rt *actors.Runtime }

func (p processTracker) Started(r exec.Running) {
	p.rt.ProcessStarted(actors.ProcessRun{SessionKey: r.SessionKey, ID: r.ID, Command: r.Command, Started: r.Started, Tools: r.Tools})
}

func (p processTracker) Ended(session, id string) { p.rt.ProcessEnded(session, id) }

// reportStopped tells the sessions whose background processes a crash of the previous
// gateway stopped (actors.Runtime.ReportStoppedProcesses).
func reportStopped(rt *actors.Runtime, log zerolog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := rt.ReportStoppedProcesses(ctx)
	if err != nil {
		log.Error().Err(err).Msg("could not report the background processes a restart stopped")
	}
	if n > 0 {
		log.Warn().Int("processes", n).Msg("background processes were stopped by a restart; their sessions are told")
	}
}
