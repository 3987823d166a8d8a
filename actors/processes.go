package actors

import (
	"context"
	"fmt"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Processes are the background processes exec starts (tools/exec.Processes, handed over by
// cmd/reef). They run outside the actor tree, owned by that one owner, which the Sessions
// reach here: /stop and /new kill a session's processes, a sub-agent's end kills its own,
// /status counts them. The gateway kills the rest at shutdown (cmd/reef, before the actors
// stop, so none reports its exit to a stopping Session).
type Processes interface {
	// KillSession kills the running processes of a session; stop says /stop asked (else the
	// session ended). It returns how many it killed and does not wait.
	KillSession(sessionKey string, stop bool) int
	// Running is how many processes of a session run.
	Running(sessionKey string) int
}

// killProcesses kills the session's background processes and returns how many.
func (s *Session) killProcesses(stop bool) int {
	if s.deps.Processes == nil {
		return 0
	}
	return s.deps.Processes.KillSession(s.key, stop)
}

// processLine is /status's line on background processes ("" for none).
func (s *Session) processLine() string {
	if s.deps.Processes == nil {
		return ""
	}
	if n := s.deps.Processes.Running(s.key); n > 0 {
		return fmt.Sprintf("Background processes: %d running (/stop kills them)", n)
	}
	return ""
}

// ProcessExit is a background process that ended by itself, as its session hears of it.
type ProcessExit struct {
	SessionKey string
	ID         string // the process id ("p3")
	Command    string
	Status     string // how it ended: "exit code 0", "timed out after 30m0s; ..."
	Runtime    string
	Output     string   // the end of its output: untrusted
	Tools      []string // the tools of the run that started it: the run answering gets no more
}

// ProcessExited puts a system event about a finished background process into its session's
// inbox, durably and once, and routes it: the agent runs on it like on a cron reminder, and its
// reply goes to the chat the session last answered.
func (rt *Runtime) ProcessExited(ctx context.Context, e ProcessExit) error {
	var info persistence.SessionInfo
	if err := rt.deps.Store.View(func(r persistence.Reader) error {
		var err error
		info, _, err = r.Session(e.SessionKey)
		return err
	}); err != nil {
		return fmt.Errorf("process exit: read session: %w", err)
	}
	text := fmt.Sprintf("[Background process %s ended: %s, after %s] This is not a message from the user. Command: %s\n"+
		"The end of its output:\n%s\nTell the user what they need to know, if anything; process log %s shows more.",
		e.ID, e.Status, e.Runtime, e.Command, agent.WrapUntrusted("process "+e.ID, e.Output), e.ID)
	in := messages.Inbound{System: true, Source: "process:" + e.ID, SessionKey: e.SessionKey, Time: rt.deps.now(),
		ChatType: messages.ChatDirect, Channel: info.Channel, Account: info.Account, ChatID: info.ChatID, ThreadID: info.ThreadID,
		Text: rt.deps.redactor().apply(text), Standing: &messages.Standing{Tools: append([]string{}, e.Tools...),
			Owner: !info.OwnerSeen.IsZero()}} // a chat the owner uses: only the owner's runs run there
	key := rt.processKey(e.SessionKey, e.ID) // reported: a crash now must not report it stopped
	return enqueue(ctx, rt.system.Root, rt.storage, rt.router, in, func(tx persistence.Tx) error { return tx.Delete(processBucket, key) })
}
