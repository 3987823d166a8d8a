package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/slack/slacktest"
	"github.com/reefgw/reef/messages"
)

// stored is a reply as the Connector hands a stored one to Send.
func stored(chat, replyTo, text string, seq uint64) messages.Outbound {
	return messages.Outbound{ChatID: chat, ReplyToID: replyTo, Text: text, SessionKey: "slack:D1:U1", OutboxSeq: seq}
}

// TestResentReplyFoundNotPostedAgain: a reply posted before a kill (its row not marked sent)
// comes again after the restart marked Resent; Send finds it by its metadata and posts
// nothing. A reply sent for the first time is never looked up (the lookups are Tier 3).
func TestResentReplyFoundNotPostedAgain(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	ctx := context.Background()
	asked := srv.Post(slacktest.UserMessage{Channel: "D1", User: "U1", Text: "hi"})
	out := stored("D1", asked, "the answer", 7)
	ids, err := b.Send(ctx, out)
	if err != nil || len(ids) != 1 {
		t.Fatalf("Send = %v, %v", ids, err)
	}
	if n := srv.Calls("conversations.history"); n != 0 {
		t.Errorf("a first send looked %d times", n)
	}
	srv.Post(slacktest.UserMessage{Channel: "D1", User: "U1", Text: "and another thing"})
	out.Resent = true
	again, err := b.Send(ctx, out)
	if err != nil || len(again) != 1 || again[0] != ids[0] {
		t.Fatalf("resend = %v, %v; want the message already there, %v", again, err, ids)
	}
	if n := srv.Calls("chat.postMessage"); n != 1 {
		t.Errorf("chat.postMessage called %d times, want 1", n)
	}
	if got := srv.Sent("D1"); len(got) != 1 {
		t.Errorf("the DM shows %q", got)
	}
	// another row of the same session is not taken for it
	other, err := b.Send(ctx, messages.Outbound{ChatID: "D1", ReplyToID: asked, Text: "the answer", SessionKey: out.SessionKey, OutboxSeq: 8, Resent: true})
	if err != nil || len(other) != 1 || other[0] == ids[0] {
		t.Errorf("row 8 = %v, %v: want a message of its own", other, err)
	}
}

// TestResentInThreadAndChunks: in a thread the lookup reads conversations.replies; of a reply
// in several messages, only the chunks not found are posted.
func TestResentInThreadAndChunks(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	ctx := context.Background()
	top := srv.Post(slacktest.UserMessage{Channel: "C1", User: "U1", Text: "<@UBOT> go"})
	text := strings.Repeat("word ", 2000) // three chunks
	out := stored("C1", top, text, 3)
	out.ThreadID = top
	ids, err := b.Send(ctx, out)
	if err != nil || len(ids) < 2 {
		t.Fatalf("Send = %v, %v", ids, err)
	}
	n := len(ids)
	// delete the bot's last chunk: as if the send before the kill got only that far
	last := srv.Messages("C1")
	var lastTS string
	for _, m := range last {
		if m.Bot {
			lastTS = m.TS
		}
	}
	if err := b.Delete(ctx, "C1", lastTS); err != nil {
		t.Fatal(err)
	}
	out.Resent = true
	again, err := b.Send(ctx, out)
	if err != nil || len(again) != n {
		t.Fatalf("resend = %v, %v", again, err)
	}
	for i := range n - 1 {
		if again[i] != ids[i] {
			t.Errorf("chunk %d: %s, want the one already there (%s)", i, again[i], ids[i])
		}
	}
	if again[n-1] == ids[n-1] {
		t.Error("the missing chunk was not posted again")
	}
	if c := srv.Calls("conversations.replies"); c != 1 {
		t.Errorf("conversations.replies called %d times", c)
	}
	if got := srv.Sent("C1"); len(got) != n {
		t.Errorf("the thread shows %d messages, want %d", len(got), n)
	}
}

// TestLostAnswerLookedUpBeforeRetry: chat.postMessage is carried out but its answer lost (a
// timeout): the retry of the same reply looks first and finds it.
func TestLostAnswerLookedUpBeforeRetry(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	ctx := context.Background()
	asked := srv.Post(slacktest.UserMessage{Channel: "D1", User: "U1", Text: "hi"})
	out := stored("D1", asked, "lost on the way back", 1)
	srv.LoseAnswers("chat.postMessage", 1)
	if _, err := b.Send(ctx, out); err == nil {
		t.Fatal("Send of a lost answer reported success")
	}
	ids, err := b.Send(ctx, out)
	if err != nil || len(ids) != 1 {
		t.Fatalf("retry = %v, %v", ids, err)
	}
	if got := srv.Sent("D1"); len(got) != 1 {
		t.Errorf("the DM shows %q, want the reply once", got)
	}
	if n := srv.Calls("conversations.history"); n != 1 {
		t.Errorf("conversations.history called %d times, want 1", n)
	}
}

// slackCall calls the fake's Web API with the bot token.
func slackCall(t *testing.T, srv *slacktest.Server, method string, v url.Values) map[string]any {
	t.Helper()
	v.Set("token", srv.Config().BotToken)
	resp, err := http.PostForm(srv.APIURL+method, v)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if resp.StatusCode == http.StatusTooManyRequests {
		return map[string]any{"status": 429, "retry_after": resp.Header.Get("Retry-After")}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body
}

// TestFakeMetadataAsSlack: the fake keeps metadata as Slack does: refused when malformed or
// too large, returned by conversations.history only with include_all_metadata, which is
// Tier 3 (429 with Retry-After past 50 a minute).
func TestFakeMetadataAsSlack(t *testing.T) {
	srv := slacktest.New(t, slacktest.Config{})
	post := func(md string) map[string]any {
		return slackCall(t, srv, "chat.postMessage", url.Values{"channel": {"D1"}, "text": {"x"}, "metadata": {md}})
	}
	for md, want := range map[string]string{
		`{"event_type":"reef reply","event_payload":{}}`:                               "invalid_metadata_schema",
		`{"event_type":"reef_reply","event_payload":"row"}`:                            "invalid_metadata_schema",
		`{"event_type":"reef_reply"`:                                                   "invalid_metadata_format",
		`{"event_type":"r","event_payload":{"x":"` + strings.Repeat("a", 9000) + `"}}`: "metadata_too_large",
	} {
		if got := post(md); got["ok"] != false || got["error"] != want {
			t.Errorf("metadata %.40s: %v, want %s", md, got, want)
		}
	}
	if got := post(`{"event_type":"reef_reply","event_payload":{"row":"r1","part":0}}`); got["ok"] != true {
		t.Fatalf("valid metadata refused: %v", got)
	}
	plain := slackCall(t, srv, "conversations.history", url.Values{"channel": {"D1"}})
	full := slackCall(t, srv, "conversations.history", url.Values{"channel": {"D1"}, "include_all_metadata": {"1"}})
	msg := func(body map[string]any) map[string]any {
		list, _ := body["messages"].([]any)
		if len(list) != 1 {
			t.Fatalf("history: %v", body)
		}
		return list[0].(map[string]any)
	}
	if _, ok := msg(plain)["metadata"]; ok {
		t.Error("metadata returned without include_all_metadata")
	}
	md, _ := msg(full)["metadata"].(map[string]any)
	if md["event_type"] != "reef_reply" || md["event_payload"].(map[string]any)["row"] != "r1" {
		t.Errorf("metadata = %v", msg(full)["metadata"])
	}
	limited := false
	for range 60 {
		if got := slackCall(t, srv, "conversations.history", url.Values{"channel": {"D1"}}); got["status"] == 429 {
			limited = got["retry_after"] != ""
			break
		}
	}
	if !limited {
		t.Error("conversations.history was not limited to Tier 3")
	}
	_ = slack.MetadataEventType
}

// TestResentReplyToACommand: a reply to a slash command or a button press answers an id that
// is no message ts; the lookup then reads the newest messages (Slack refuses such an oldest).
func TestResentReplyToACommand(t *testing.T) {
	b, srv := newBot(t, slacktest.Config{})
	ctx := context.Background()
	out := stored("D1", "cmd-trig-1", "status: idle", 4)
	ids, err := b.Send(ctx, out)
	if err != nil || len(ids) != 1 {
		t.Fatalf("Send = %v, %v", ids, err)
	}
	out.Resent = true
	again, err := b.Send(ctx, out)
	if err != nil || len(again) != 1 || again[0] != ids[0] {
		t.Fatalf("resend = %v, %v; want %v", again, err, ids)
	}
	if got := srv.Sent("D1"); len(got) != 1 {
		t.Errorf("the DM shows %q", got)
	}
}
