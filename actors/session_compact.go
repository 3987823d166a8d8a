package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// sessionCompact is what a Session keeps for compaction.
type sessionCompact struct {
	seqs       []uint64 // the stored seq of each history entry; a summary's is its snapshot's seq
	hasSummary bool     // history[0] is a compaction summary
	fixed      int      // estimated tokens of the system prompt and tool specs, from the last run
	pending    []manualCompact
}

// manualCompact is a /compact waiting for the running turn to end.
type manualCompact struct {
	in           messages.Inbound
	instructions string
}

// snapshotWrite stores a run's compaction in the run's own transaction.
type snapshotWrite struct {
	summary string
	created time.Time
	covered int      // entries of history + the run's entries the summary stands for
	hist    []uint64 // seqs of the history the run started from
	seq     uint64   // the snapshot's seq, set in the transaction
	stored  bool
}

// loadHistory returns what the model sees of a session: the latest compaction summary (as a
// system entry) and every entry after it, with their seqs. After a reset snapshot (/new) the
// history starts after it, without a summary.
func loadHistory(r persistence.Reader, key string) (history []messages.ChatMessage, seqs []uint64, hasSummary bool, err error) {
	snap, ok, err := r.LatestSnapshot(key)
	if err != nil {
		return nil, nil, false, err
	}
	if ok && snap.Kind != persistence.SnapshotReset {
		history = append(history, agent.SummaryEntry(snap.Summary, snap.Created))
		seqs = append(seqs, snap.Seq)
		hasSummary = true
	}
	entries, err := r.Messages(key, snap.Seq)
	if err != nil {
		return nil, nil, false, err
	}
	for _, e := range entries {
		history = append(history, e.ChatMessage)
		seqs = append(seqs, e.Seq)
	}
	return history, seqs, hasSummary, nil
}

// snapshotFor prepares the storage of a finished run's compaction (nil when it made none) and
// notes the size of its system prompt.
func (s *Session) snapshotFor(msg *turnFinished) *snapshotWrite {
	rep := msg.compaction
	if rep.fixed > 0 {
		s.cmp.fixed = rep.fixed
	}
	if !rep.compacted {
		return nil
	}
	return &snapshotWrite{summary: rep.summary, created: rep.summaryAt, covered: rep.covered,
		hist: append([]uint64(nil), s.cmp.seqs...)}
}

// put stores the snapshot inside the transaction that appends the run's entries (their seqs
// are runSeqs), so a crash keeps both or neither.
func (w *snapshotWrite) put(tx persistence.Tx, key string, runSeqs []uint64) error {
	if w == nil {
		return nil
	}
	i := w.covered - 1
	switch {
	case i < 0:
		return fmt.Errorf("session: compaction covers no entry")
	case i < len(w.hist):
		w.seq = w.hist[i]
	case i-len(w.hist) < len(runSeqs):
		w.seq = runSeqs[i-len(w.hist)]
	default:
		return fmt.Errorf("session: compaction covers %d entries of %d", w.covered, len(w.hist)+len(runSeqs))
	}
	if w.seq == 0 { // an entry whose seq the Session does not know: store the run without the summary
		return nil
	}
	w.stored = true
	return tx.PutSnapshot(key, persistence.Snapshot{Seq: w.seq, Summary: w.summary, Created: w.created})
}

// appendHistory adds a recorded run's entries (stored under seqs) to the history; after a
// compaction (rec) the history becomes the new summary and the entries it does not stand for.
func (s *Session) appendHistory(entries []messages.ChatMessage, seqs []uint64, rec *snapshotWrite) {
	if len(seqs) != len(entries) {
		s.log.Error().Str("session", s.key).Int("entries", len(entries)).Int("seqs", len(seqs)).Msg("the store did not report the seqs of a run")
		seqs = make([]uint64, len(entries))
		rec = nil
	}
	if rec == nil || !rec.stored {
		s.history = append(s.history, entries...)
		s.cmp.seqs = append(s.cmp.seqs, seqs...)
		return
	}
	all := append(append(make([]messages.ChatMessage, 0, len(s.history)+len(entries)), s.history...), entries...)
	allSeqs := append(append(make([]uint64, 0, len(all)), s.cmp.seqs...), seqs...)
	s.history = append([]messages.ChatMessage{agent.SummaryEntry(rec.summary, rec.created)}, all[rec.covered:]...)
	s.cmp.seqs = append([]uint64{rec.seq}, allSeqs[rec.covered:]...)
	s.cmp.hasSummary = true
}

// compactNow runs /compact [instructions]: once no run is active, a Turn summarizes all but
// the most recent ~keepRecentTokens (with the instructions), and in's chat is told the result
// in one line. The snapshot and the removal of in's inbox entry share one transaction.
func (s *Session) compactNow(ctx actor.Context, in messages.Inbound, instructions string) {
	if s.overBudget(s.deps.now()) { // a summary is a model call like any other
		s.answer(ctx, in, "Not now: this conversation has used its daily token budget, and compacting needs the model. It resets at midnight.", nil)
		return
	}
	s.cmp.pending = append(s.cmp.pending, manualCompact{in: in, instructions: instructions})
	s.maybeStartTurn(ctx)
}

// startCompactTurn starts a Turn that only compacts, for the oldest waiting /compact, and
// reports whether it did.
func (s *Session) startCompactTurn(ctx actor.Context) bool {
	if len(s.cmp.pending) == 0 {
		return false
	}
	req := s.cmp.pending[0]
	s.cmp.pending = s.cmp.pending[1:]
	model, err := s.agent.model(s.info.Model)
	if err != nil {
		model, _ = s.agent.model("")
	}
	s.answering = []messages.Inbound{req.in}
	s.turnUser = nil
	s.turnSeq = turnSeqs.Add(1)
	s.turnTools = s.toolPolicy(req.in)
	s.turn = ctx.Spawn(TurnProps(&turnInput{
		seq:        s.turnSeq,
		epoch:      s.epoch,
		agent:      s.agent,
		deps:       s.deps,
		sessionKey: s.key,
		channel:    req.in.Channel,
		chatType:   string(req.in.ChatType),
		history:    s.history[:len(s.history):len(s.history)],
		tools:      s.toolPolicy(req.in),
		model:      model,
		compact:    compactInput{hasSummary: s.cmp.hasSummary, manual: true, instructions: req.instructions},
	}))
	ctx.Send(s.router, &sessionBusy{key: s.key})
	return true
}

// contextTokens estimates what the next request would hold: system prompt, tool specs and
// history (for /status).
func (s *Session) contextTokens() int {
	if s.cmp.fixed == 0 { // no run yet in this Session's life
		s.cmp.fixed = requestPrompt(&turnInput{agent: s.agent, deps: s.deps, sessionKey: s.key,
			channel: s.info.Channel, tools: s.agent.Policy}).fixed
	}
	return s.cmp.fixed + agent.EstimateMessages(s.history)
}
