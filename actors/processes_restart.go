package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Background processes die with the gateway. A clean shutdown kills them on purpose and says
// nothing, but after a crash (SIGKILL, power loss, OOM) nobody would tell the agent or the
// user that the build, server or watcher it started is gone. So the running background
// processes are kept in processBucket while they run — written when one starts or goes to
// the background, removed when it ends (with the exit event, when it is reported) — and the
// next gateway turns every record a previous life left into a system event for its session:
// "the process … was stopped by a restart", in the transaction that removes the record.

const processBucket = "processes/running" // <session key>\n<gateway start, unix ns, 20 digits>\n<process id> → JSON processRecord

// processRecord is a running background process as stored.
type processRecord struct {
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	Tools   []string  `json:"tools,omitempty"`
}

// ProcessRun is a background process that started (or went to the background).
type ProcessRun struct {
	SessionKey, ID, Command string
	Started                 time.Time
	Tools                   []string
}

func (rt *Runtime) processKey(session, id string) string {
	return fmt.Sprintf("%s\n%020d\n%s", session, rt.deps.started.UnixNano(), id)
}

// ProcessStarted records a running background process. It does not wait for the commit.
func (rt *Runtime) ProcessStarted(p ProcessRun) {
	v, err := json.Marshal(processRecord{Command: p.Command, Started: p.Started, Tools: p.Tools})
	if err != nil {
		return
	}
	key, log := rt.processKey(p.SessionKey, p.ID), rt.deps.Log
	rt.system.Root.Send(rt.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error { return tx.Put(processBucket, key, v) },
		Done: func(err error) {
			if err != nil {
				log.Warn().Err(err).Str("process", p.ID).Msg("background process not recorded; a crash will not be reported for it")
			}
		},
	})
}

// ProcessEnded removes the record of a background process that ended. It does not wait.
func (rt *Runtime) ProcessEnded(session, id string) {
	key := rt.processKey(session, id)
	rt.system.Root.Send(rt.storage, &storeWrite{
		Apply: func(tx persistence.Tx) error { return tx.Delete(processBucket, key) },
		Done:  func(error) {},
	})
}

// ReportStoppedProcesses tells each session whose background processes a previous gateway
// left running (it stopped without ending them: a crash) that a restart stopped them: one
// system event per process, written with the removal of its record. It returns how many.
func (rt *Runtime) ReportStoppedProcesses(ctx context.Context) (int, error) {
	life := fmt.Sprintf("\n%020d\n", rt.deps.started.UnixNano())
	type left struct {
		key, session, id string
		rec              processRecord
	}
	var found []left
	err := rt.deps.Store.View(func(r persistence.Reader) error {
		return r.Scan(processBucket, "", func(k string, v []byte) error {
			if strings.Contains(k, life) {
				return nil // this gateway's own
			}
			session, rest, _ := strings.Cut(k, "\n")
			_, id, _ := strings.Cut(rest, "\n")
			var rec processRecord
			if json.Unmarshal(v, &rec) != nil || session == "" || id == "" {
				rec = processRecord{Command: "(unreadable record)"}
			}
			found = append(found, left{key: k, session: session, id: id, rec: rec})
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("stopped processes: %w", err)
	}
	n := 0
	for _, l := range found {
		if l.session == "" {
			continue
		}
		if err := rt.processStopped(ctx, l.key, l.session, l.id, l.rec); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// processStopped puts the event of one process a restart stopped into its session's inbox.
func (rt *Runtime) processStopped(ctx context.Context, key, session, id string, rec processRecord) error {
	info, err := rt.sessionInfo(session)
	if err != nil {
		return err
	}
	text := fmt.Sprintf("[Background process %s was stopped by a restart: reef stopped unexpectedly while it ran] "+
		"This is not a message from the user. Command: %s\nIt had run since %s; it was not started again and its output is gone. "+
		"Tell the user what they need to know, if anything.",
		id, rec.Command, rec.Started.UTC().Format("2006-01-02 15:04 MST"))
	in := messages.Inbound{System: true, Source: "process:" + id, SessionKey: session, Time: rt.deps.now(),
		ChatType: messages.ChatDirect, Channel: info.Channel, Account: info.Account, ChatID: info.ChatID, ThreadID: info.ThreadID,
		Text: rt.deps.redactor().apply(text), Standing: &messages.Standing{Tools: append([]string{}, rec.Tools...),
			Owner: !info.OwnerSeen.IsZero()}} // as ProcessExited: a chat the owner uses
	return enqueue(ctx, rt.system.Root, rt.storage, rt.router, in, func(tx persistence.Tx) error { return tx.Delete(processBucket, key) })
}

// sessionInfo reads a session's record.
func (rt *Runtime) sessionInfo(key string) (persistence.SessionInfo, error) {
	var info persistence.SessionInfo
	err := rt.deps.Store.View(func(r persistence.Reader) error {
		var err error
		info, _, err = r.Session(key)
		return err
	})
	if err != nil {
		return info, fmt.Errorf("read session %s: %w", key, err)
	}
	return info, nil
}
