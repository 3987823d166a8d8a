package actors

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// The daily token budget. Every run's input and output tokens count against the session's
// budget for the day (in the agent's time zone), whatever started the run: a person, a
// heartbeat, a cron job. The check comes before a run, so the run that crosses the budget
// finishes; after it, until midnight:
//   - messages from people are recorded in the transcript (the model sees them tomorrow) and
//     their inbox entries removed, without an LLM call; the first of the day gets one notice,
//     the others no reply;
//   - heartbeats and cron events are dropped without an LLM call and logged as skipped.
// Nothing waits in the inbox for the budget to reset: a message is answered when it comes,
// or not at all.

// dailyBudget is the session's token budget per day; 0 means none.
func (s *Session) dailyBudget() int {
	if b := s.agent.Limits.DailyTokenBudget; b > 0 {
		return b
	}
	return s.deps.session().DailyTokenBudget
}

// budgetDay is the date of now in the agent's time zone.
func (s *Session) budgetDay(now time.Time) string {
	return now.In(s.agent.location()).Format(time.DateOnly)
}

// chargeBudget adds a finished run's tokens to today's count in info (hook in onTurnFinished).
func (s *Session) chargeBudget(info *persistence.SessionInfo, u messages.Usage, now time.Time) {
	if day := s.budgetDay(now); info.BudgetDay != day {
		info.BudgetDay, info.BudgetTokens, info.BudgetNotified = day, 0, false
	}
	info.BudgetTokens += u.InputTokens + u.OutputTokens
}

// skipOverBudget answers s.answering without a run when today's budget is used up (hook in
// maybeStartTurn) and reports whether it did. It records what it did in one transaction and
// goes on like a recorded run (turnRecorded). The session start routine after /new and the
// notes about messages the queue cap dropped wait for the next run.
func (s *Session) skipOverBudget(ctx actor.Context) bool {
	now := s.deps.now()
	if !s.overBudget(now) {
		return false
	}
	budget := s.dailyBudget()
	info := s.info
	if info.Created.IsZero() {
		info.Created = now
	}
	info.Updated = now
	var entries []messages.ChatMessage
	inboxSeqs := s.queue.takeDiscarded() // with messages /stop or the queue cap dropped
	var notify *messages.Inbound
	for i, in := range s.answering {
		if in.InboxSeq != 0 {
			inboxSeqs = append(inboxSeqs, in.InboxSeq)
		}
		if in.System {
			s.log.Info().Str("session", s.key).Str("source", in.Source).Int("budget", budget).
				Msg("skipped: the session's daily token budget is used up")
			continue
		}
		entries = append(entries, userEntry(in, s.deps.redactor()))
		notify = &s.answering[i]
	}
	var outbox []*messages.Outbound
	if notify != nil && !info.BudgetNotified {
		info.BudgetNotified = true
		outbox = append(outbox, &messages.Outbound{Channel: notify.Channel, Account: notify.Account, ChatID: notify.ChatID,
			ThreadID: notify.ThreadID, ReplyToID: notify.MessageID, SessionKey: s.key,
			Text: fmt.Sprintf("This conversation has used its daily budget of %s tokens. It resets at midnight (%s).",
				withCommas(budget), zoneName(s.agent.location(), now))})
	}
	key, self, root := s.key, ctx.Self(), ctx.ActorSystem().Root
	var seqs []uint64      // the history keeps every entry's seq (session_compact.go)
	attempts := s.attempts // never changed after the Session loaded it
	ctx.Send(s.storage, &storeWrite{Owner: s.key, Epoch: s.epoch,
		Apply: func(tx persistence.Tx) error {
			if len(entries) > 0 {
				var err error
				if seqs, err = tx.AppendMessages(key, entries...); err != nil {
					return err
				}
			}
			return settle(tx, key, inboxSeqs, outbox, info, attempts)
		},
		Done: func(err error) { root.Send(self, &turnRecorded{by: s, outbox: outbox, err: err, seqs: seqs}) },
	})
	s.info = info
	s.saving = true
	s.turnUser = entries // appended to history once recorded
	return true
}

// zoneName names a time zone for people: its IANA name, or for the server's local zone
// (which has none) its abbreviation at t.
func zoneName(loc *time.Location, t time.Time) string {
	if name := loc.String(); name != "Local" && name != "" {
		return name
	}
	abbr := t.In(loc).Format("MST")
	if strings.HasPrefix(abbr, "+") || strings.HasPrefix(abbr, "-") {
		return "UTC" + abbr
	}
	return abbr
}

// withCommas formats n with comma separators: 200000 → "200,000".
func withCommas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// overBudget reports whether today's budget is used up.
func (s *Session) overBudget(now time.Time) bool {
	budget := s.dailyBudget()
	return budget > 0 && s.info.BudgetDay == s.budgetDay(now) && s.info.BudgetTokens >= budget
}
