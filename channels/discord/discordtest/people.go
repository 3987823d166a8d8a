package discordtest

import (
	"testing"
	"time"
)

// Message is a message on the fake platform, sent by a person (Say) or by the bot (REST).
type Message struct {
	ID         string // set by Say
	ChannelID  string
	GuildID    string // empty for a direct message
	AuthorID   string
	AuthorName string // username; default "user-<AuthorID>"
	GlobalName string // display name, if any
	AuthorBot  bool
	Content    string
	Mentions   []string // user ids mentioned (put the <@id> tokens in Content yourself)
	ReplyTo    string   // id of the message this one replies to
	Time       time.Time
	Deleted    bool // the bot deleted it
	// Attachments are files sent with the message: "name" or "name|content/type".
	Attachments []string
}

// waitTimeout bounds how long Say waits for the bot's gateway session.
const waitTimeout = 10 * time.Second

// Say makes m arrive at the bot as MESSAGE_CREATE and returns its id. It waits until the
// bot's shard for m (shard 0 for a direct message) has identified once, then queues the
// message in that shard's session: if the socket is down,
// the message arrives when the bot resumes; if the bot has no session (it closed with 1000),
// the dispatch is lost, as on Discord, and only GET /channels/{id}/messages shows it.
func (s *Server) Say(t testing.TB, m Message) string {
	t.Helper()
	if !s.snowflakeOK(m.GuildID) {
		t.Fatalf("discordtest: guild id %q is not a snowflake: a sharded bot cannot be told its events (use GuildOnShard)", m.GuildID)
	}
	s.waitSession(t, m.GuildID)
	s.mu.Lock()
	m.ID = s.newID()
	if m.AuthorName == "" {
		m.AuthorName = "user-" + m.AuthorID
	}
	if m.Time.IsZero() {
		m.Time = time.Now().UTC().Truncate(time.Millisecond)
	}
	if _, ok := s.channels[m.ChannelID]; !ok {
		c := Channel{ID: m.ChannelID, Type: TypeDM}
		if m.GuildID != "" {
			c = Channel{ID: m.ChannelID, Type: TypeGuildText, GuildID: m.GuildID}
		}
		s.channels[c.ID] = c
	}
	s.messages[m.ID] = &m
	wire := s.wireLocked(&m)
	s.mu.Unlock()
	s.gw.dispatch("MESSAGE_CREATE", wire, m.GuildID)
	return m.ID
}

// UserSays makes user senderID send text to the bot in the direct-message channel chatID.
func (s *Server) UserSays(t *testing.T, chatID, senderID, text string) {
	t.Helper()
	s.Say(t, Message{ChannelID: chatID, AuthorID: senderID, Content: text})
}

// GuildMessage makes user userID post text in the guild text channel channelID and returns
// the message id.
func (s *Server) GuildMessage(t testing.TB, guildID, channelID, userID, text string) string {
	t.Helper()
	return s.Say(t, Message{GuildID: guildID, ChannelID: channelID, AuthorID: userID, Content: text})
}

// ThreadMessage makes user userID post text in thread threadID of the guild channel parentID
// (creating the thread if needed) and returns the message id.
func (s *Server) ThreadMessage(t testing.TB, guildID, parentID, threadID, userID, text string) string {
	t.Helper()
	s.AddChannel(Channel{ID: parentID, Type: TypeGuildText, GuildID: guildID})
	s.AddChannel(Channel{ID: threadID, Type: TypePublicThread, GuildID: guildID, ParentID: parentID})
	return s.Say(t, Message{GuildID: guildID, ChannelID: threadID, AuthorID: userID, Content: text})
}

// waitSession waits until a shard of the bot that receives guild's events ("" for DMs) has
// identified at least once.
func (s *Server) waitSession(t testing.TB, guild string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		if s.identifiedFor(guild) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("discordtest: the bot did not identify within %v", waitTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
