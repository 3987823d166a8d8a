package actors

// What a run is given (its priority, output cap, history and user entries) and how its progress
// reaches the channel.

import (
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/agent"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers"
	"github.com/reefgw/reef/sessionkey"
)

// runPriority is the priority of a run's model calls toward the providers: a run that answers
// no person (heartbeats, cron jobs: only System messages) and every run of a sub-agent's
// session yield to people's conversations when the provider's limit binds.
func runPriority(key string, answering []messages.Inbound) providers.Priority {
	if strings.Contains(key, ":subagent:") {
		return providers.PriorityBackground
	}
	for _, in := range answering {
		if !in.System || in.Source == greetingSource {
			return providers.PriorityPeople
		}
	}
	if len(answering) == 0 {
		return providers.PriorityPeople
	}
	return providers.PriorityBackground
}

// outputCap is the output limit of a run's model calls: the model's, lowered by what the
// messages it answers ask for (messages.Inbound.MaxTokens).
func outputCap(model int, answering []messages.Inbound) int {
	for _, in := range answering {
		if in.MaxTokens > 0 && (model <= 0 || in.MaxTokens < model) {
			model = in.MaxTokens
		}
	}
	return model
}

// runHistory is what the run's model sees before its messages: the session's history, or, in
// a stateless session (sessionkey.IsStateless), the conversation its message brought.
func (s *Session) runHistory() []messages.ChatMessage {
	if !sessionkey.IsStateless(s.key) || len(s.history) > 0 {
		return s.history[:len(s.history):len(s.history)]
	}
	var out []messages.ChatMessage
	for _, in := range s.answering {
		for _, m := range in.Context {
			m.Content = s.deps.redactor().apply(m.Content)
			out = append(out, m)
		}
	}
	return out
}

// openingEntries are the system entries a run starts with before the user's messages: the
// session start routine after /new, and what the queue cap dropped.
func (s *Session) openingEntries() []messages.ChatMessage {
	var out []messages.ChatMessage
	now := s.deps.now()
	if s.info.Fresh {
		out = append(out, messages.ChatMessage{Role: messages.RoleSystem, Time: now,
			Content: s.deps.redactor().apply(agent.SessionStartNote(s.agent.Workspace, now.In(s.agent.location()), s.turnReach.Owner))})
		s.info.Fresh = false
	}
	if note := s.activeNote(); note != "" {
		out = append(out, messages.ChatMessage{Role: messages.RoleSystem, Time: now, Content: note})
	}
	if notes := s.queue.takeDropNotes(); len(notes) > 0 {
		out = append(out, messages.ChatMessage{Role: messages.RoleSystem, Time: now, Content: fmt.Sprintf(
			"%d messages the user sent during the previous run were dropped because the queue was full. What they said:\n%s",
			len(notes), strings.Join(notes, "\n"))})
	}
	return out
}

// userEntry is how an accepted message appears in the transcript, with secrets redacted (a user
// may paste one; neither the transcript nor the model gets it).
func userEntry(in messages.Inbound, red redactor) messages.ChatMessage {
	if in.System {
		return messages.ChatMessage{Role: messages.RoleSystem, Content: red.apply(in.Text), Time: in.Time}
	}
	if strings.TrimSpace(in.Text) == "" && len(in.ToolResults) > 0 { // results no call waits for (session_client.go)
		in.Text = resultsText(in.ToolResults)
	}
	m := messages.ChatMessage{Role: messages.RoleUser, Content: red.apply(agent.FormatInbound(in)), Time: in.Time}
	if len(in.Media) > 0 { // fetched by the run before its first model call (turn_media.go)
		m.Media = append([]messages.Media(nil), in.Media...)
		for i := range m.Media {
			m.Media[i].Via = channels.ID(in.Channel, in.Account)
		}
	}
	return m
}

// onTurnEvent forwards a run's progress to the channel and keeps the running tools for /status.
func (s *Session) onTurnEvent(ctx actor.Context, ev *messages.TurnEvent) {
	switch ev.Kind {
	case messages.ToolStarted:
		if s.tools == nil {
			s.tools = map[string]string{}
		}
		s.tools[ev.StepID] = ev.Label
	case messages.ToolFinished:
		delete(s.tools, ev.StepID)
	}
	s.toConnector(ctx, ev)
}

// toConnector sends a reply or a progress event to the Connector of the bot account its chat
// belongs to: a reply goes out through the account that received the message.
func (s *Session) toConnector(ctx actor.Context, msg any) {
	var channel string
	switch m := msg.(type) {
	case *messages.TurnEvent:
		if len(s.answering) > 0 && m.Channel == "" {
			last := s.answering[len(s.answering)-1]
			m.Channel, m.Account, m.ChatID, m.ThreadID = last.Channel, last.Account, last.ChatID, last.ThreadID
		}
		channel = channels.ID(m.Channel, m.Account)
	case *messages.Outbound:
		channel = channels.ID(m.Channel, m.Account)
		if m.OutboxSeq != 0 && s.deps.connector(channel) != nil {
			if s.unsent == nil {
				s.unsent = map[uint64]time.Time{}
			}
			s.unsent[m.OutboxSeq] = s.deps.now()
		}
	}
	if pid := s.deps.connector(channel); pid != nil {
		ctx.Send(pid, msg)
	}
}

func agentOf(key string) string {
	rest, ok := strings.CutPrefix(key, "agent:")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, ":")
	return id
}
