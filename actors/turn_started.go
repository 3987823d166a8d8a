package actors

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools"
)

// Tool calls run at most once across a crash. Before a step's calls run, the Turn stores, in
// one Storage write, the run's entries since its previous such write: the results of the
// earlier steps and the assistant message that asks for the calls. The records live in the
// named bucket startedBucket under "<session key>\n<n>" and are deleted in the transaction
// that records the run (Session.onTurnFinished). A crash leaves them behind; the Session
// that reloads the conversation hands them to its first run, which starts from them instead
// of from scratch: a call that has no result is not run again but answered with
// interruptedNote, unless its tool is tools.Idempotent or tools.Resumable, which is run
// again; then the model goes on. A step whose calls are all idempotent is not written (no latency added).
const startedBucket = "runs/started"

// interruptedNote is the result of a call a crash interrupted.
const interruptedNote = "interrupted: reef restarted while this was running; it may or may not have finished"

// startedRecord is one record of startedBucket.
type startedRecord struct {
	Entries []messages.ChatMessage `json:"entries"`
}

// startedRecorded is the Turn's self-message: the step's calls are durably recorded as started.
type startedRecorded struct {
	step int
	err  error
}

func startedKey(sessionKey string, n int) string {
	return fmt.Sprintf("%s\n%08d", sessionKey, n)
}

// loadStarted returns the entries of an interrupted run of the session, in order, and how
// many records hold them.
func loadStarted(r persistence.Reader, key string) ([]messages.ChatMessage, int, error) {
	var entries []messages.ChatMessage
	n := 0
	err := r.Scan(startedBucket, key+"\n", func(_ string, v []byte) error {
		var rec startedRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("started record: %w", err)
		}
		entries = append(entries, rec.Entries...)
		n++
		return nil
	})
	return entries, n, err
}

// deleteStarted removes the session's started records: the run they belong to is recorded.
func deleteStarted(tx persistence.Tx, key string) error {
	var keys []string
	if err := tx.Scan(startedBucket, key+"\n", func(k string, _ []byte) error {
		keys = append(keys, strings.Clone(k))
		return nil
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := tx.Delete(startedBucket, k); err != nil {
			return err
		}
	}
	return nil
}

// mustRecord reports whether a step's calls must be recorded before they run: some call
// would reach a tool that is not idempotent. Never during the memory flush, whose entries
// are dropped.
func (t *Turn) mustRecord(calls []messages.ToolCall) bool {
	if t.in.storage == nil || t.cmp.flushing {
		return false
	}
	for _, c := range calls {
		tool, ok := t.in.agent.Tools.Get(c.Name)
		if !ok {
			continue // refused by precheck: nothing runs
		}
		if _, ok := tool.(tools.Idempotent); !ok {
			return true
		}
	}
	return false
}

// recordStarted writes the run's entries since the previous record; the calls are dispatched
// when the write is durable (onStartedRecorded).
func (t *Turn) recordStarted(ctx actor.Context) {
	rec := startedRecord{Entries: append([]messages.ChatMessage(nil), t.msgs[t.recorded:]...)}
	t.recorded = len(t.msgs)
	key := startedKey(t.in.sessionKey, t.in.resumeN+t.records)
	t.records++
	step, self, root := t.step, ctx.Self(), ctx.ActorSystem().Root
	value, err := json.Marshal(rec)
	if err != nil {
		ctx.Send(self, &startedRecorded{step: step, err: err})
		return
	}
	ctx.Send(t.in.storage, &storeWrite{Owner: t.in.sessionKey, Epoch: t.in.epoch,
		Apply: func(tx persistence.Tx) error { return tx.Put(startedBucket, key, value) },
		Done:  func(err error) { root.Send(self, &startedRecorded{step: step, err: err}) },
	})
}

func (t *Turn) onStartedRecorded(ctx actor.Context, msg *startedRecorded) {
	if msg.step != t.step || t.done {
		return
	}
	if msg.err != nil {
		t.log.Error().Err(msg.err).Str("session", t.in.sessionKey).Msg("could not record tool calls as started; not running them")
		for _, c := range t.pending {
			r := toolResult(c, "not run: reef could not save that this call started (storage error)", true)
			t.results[c.ID] = &r
		}
		t.maybeNextStep(ctx)
		return
	}
	t.runCalls(ctx)
}

// resume starts a run from the entries an interrupted run left: the calls of its last step
// that have no result are run again when their tool is idempotent and answered with
// interruptedNote otherwise. It reports false when there is nothing to resume.
func (t *Turn) resume(ctx actor.Context) bool {
	for _, m := range t.in.resume {
		if m.Role != messages.RoleUser { // steered messages are still in the inbox: this run's user messages
			t.msgs = append(t.msgs, m)
		}
	}
	t.recorded = len(t.msgs)
	if len(t.msgs) == 0 {
		return false
	}
	answered := map[string]bool{}
	var last []messages.ToolCall
	for _, m := range t.msgs {
		if m.Role == messages.RoleTool {
			answered[m.ToolCallID] = true
		}
		if m.Role == messages.RoleAssistant {
			last = m.ToolCalls
		}
	}
	var open []messages.ToolCall
	for _, c := range last {
		if !answered[c.ID] {
			open = append(open, c)
		}
	}
	if len(open) == 0 {
		t.startLLM(ctx)
		return true
	}
	t.pending = open
	for _, c := range open {
		tool, ok := t.in.agent.Tools.Get(c.Name)
		_, idem := tool.(tools.Idempotent)
		_, resumable := tool.(tools.Resumable)
		if ok && (idem || resumable) {
			continue // runCalls runs it again
		}
		if t.in.awaiting[c.ID] { // it waited for the owner's approval: it waits again (turn_approval.go)
			if t.resumedCalls == nil {
				t.resumedCalls = map[string]bool{}
			}
			t.resumedCalls[c.ID] = true
			continue
		}
		r := toolResult(c, interruptedNote, true)
		t.results[c.ID] = &r
		t.event(ctx, messages.ToolFinished, c.ID, c.Name+": interrupted by a restart", true)
	}
	t.log.Warn().Str("session", t.in.sessionKey).Int("calls", len(open)).Msg("resuming a run a restart interrupted")
	t.runCalls(ctx)
	return true
}

// dropStaleStarted deletes the started records of an interrupted run when the Session,
// freshly loaded, has no message left to run (its inbox entries became dead letters): no run
// resumes them, and the next run must not start from them.
func (s *Session) dropStaleStarted(ctx actor.Context) {
	if s.resumeN == 0 || len(s.queue.waiting) > 0 {
		return
	}
	key, log := s.key, s.log
	s.resume, s.resumeN = nil, 0
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error { return deleteStarted(tx, key) },
		Done: func(err error) {
			if err != nil {
				log.Error().Err(err).Str("session", key).Msg("could not delete stale started records")
			}
		},
	})
}
