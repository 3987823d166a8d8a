package message

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/reefgw/reef/tools"
)

type runtime struct {
	sent []string
	err  error
}

func (r *runtime) Cron(context.Context, string, string, string, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}

func (r *runtime) Message(_ context.Context, key, text string) error {
	r.sent = append(r.sent, key+": "+text)
	return r.err
}

func TestMessage(t *testing.T) {
	rt := &runtime{}
	env := tools.Env{SessionKey: "s1", Runtime: rt}
	res, err := New().Run(context.Background(), tools.Call{Args: []byte(`{"text":" hi there "}`), Env: env})
	if err != nil || res.Content != "sent" || len(rt.sent) != 1 || rt.sent[0] != "s1: hi there" {
		t.Fatalf("run = %+v, %v; sent %q", res, err, rt.sent)
	}
	for _, c := range []struct {
		args string
		env  tools.Env
		want string
	}{
		{`{"text":"   "}`, env, "text is required"},
		{`{"text":"` + strings.Repeat("x", MaxText+1) + `"}`, env, "too long"},
		{`{"text":"hi"}`, tools.Env{}, "not available"},
		{`{"text":`, env, ""},
	} {
		if _, err := New().Run(context.Background(), tools.Call{Args: []byte(c.args), Env: c.env}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("args %.40s: err = %v, want %q", c.args, err, c.want)
		}
	}
	rt.err = errors.New("storage down")
	if _, err := New().Run(context.Background(), tools.Call{Args: []byte(`{"text":"hi"}`), Env: env}); err == nil {
		t.Error("a failed send was reported as sent")
	}
}

// messenger is a runtime that also takes OpenClaw-shaped requests.
type messenger struct {
	runtime
	reqs []tools.MessageRequest
	ids  []string
}

func (m *messenger) SendMessage(_ context.Context, _ string, req tools.MessageRequest) (tools.MessageResult, error) {
	m.reqs = append(m.reqs, req)
	return tools.MessageResult{MessageIDs: m.ids}, m.err
}

func TestMessageOpenClawShape(t *testing.T) {
	for _, c := range []struct {
		args  string
		want  tools.MessageRequest // zero: a plain send through Message
		plain string
	}{
		{`{"action":"send","message":"hi"}`, tools.MessageRequest{Text: "hi"}, ""},
		{`{"action":"reply","message":"yes"}`, tools.MessageRequest{Text: "yes", Reply: true}, ""},
		{`{"action":"send","message":"x","replyTo":"42:7"}`, tools.MessageRequest{Text: "x", ReplyTo: "42:7"}, ""},
		{`{"action":"send","target":"-100123","message":"heads up"}`, tools.MessageRequest{Text: "heads up", Target: "-100123"}, ""},
		{`{"text":"both","message":"ignored"}`, tools.MessageRequest{Text: "both"}, ""},
		{`{"action":"edit","messageId":"1:2","message":" new text "}`, tools.MessageRequest{Edit: true, Text: "new text", MessageID: "1:2"}, ""},
		{`{"action":"edit","text":"fixed"}`, tools.MessageRequest{Edit: true, Text: "fixed"}, ""},
		{`{"action":"delete","messageId":"77"}`, tools.MessageRequest{Delete: true, MessageID: "77"}, ""},
		{`{"action":"delete"}`, tools.MessageRequest{Delete: true}, ""},
		{`{"action":"react","emoji":"👍","messageId":"1:2"}`, tools.MessageRequest{React: true, Emoji: "👍", MessageID: "1:2"}, ""},
		{`{"action":"react","emoji":"👍"}`, tools.MessageRequest{React: true, Emoji: "👍"}, ""},
	} {
		m := &messenger{}
		_, err := New().Run(context.Background(), tools.Call{Args: []byte(c.args), Env: tools.Env{SessionKey: "s1", Runtime: m}})
		if err != nil {
			t.Errorf("%s: %v", c.args, err)
			continue
		}
		if c.plain != "" {
			if len(m.sent) != 1 || m.sent[0] != c.plain || len(m.reqs) != 0 {
				t.Errorf("%s: sent %q and %+v, want %q only", c.args, m.sent, m.reqs, c.plain)
			}
			continue
		}
		if len(m.reqs) != 1 || !reflect.DeepEqual(m.reqs[0], c.want) || len(m.sent) != 0 {
			t.Errorf("%s: requests %+v, plain %q; want %+v", c.args, m.reqs, m.sent, c.want)
		}
	}
	env := tools.Env{SessionKey: "s1", Channel: "telegram", Runtime: &messenger{}}
	for _, c := range []struct{ args, want string }{
		{`{"action":"react"}`, "emoji is required"},
		{`{"action":"edit","messageId":"1:2"}`, "edit needs the new text"},
		{`{"action":"edit","message":"x","media":"a.png"}`, "media"},
		{`{"action":"poll","message":"x"}`, "unknown action"},
		{`{"action":"send","media":"chart.png","message":"x"}`, "media"},
		{`{"action":"send"}`, "text is required"},
		{`{"action":"send","message":"x","extra":1}`, ""},
	} {
		if _, err := New().Run(context.Background(), tools.Call{Args: []byte(c.args), Env: env}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.args, err, c.want)
		}
	}
	// a runtime without Messenger: plain sends still work, targets are refused.
	rt := &runtime{}
	if _, err := New().Run(context.Background(), tools.Call{Args: []byte(`{"target":"9","message":"x"}`), Env: tools.Env{SessionKey: "s1", Runtime: rt}}); err == nil || len(rt.sent) != 0 {
		t.Errorf("target without a Messenger: err %v, sent %q", err, rt.sent)
	}
}

// TestMessageIDs: a send, an edit and a delete name the platform message they acted on, and
// without a Messenger edit and delete are refused.
func TestMessageIDs(t *testing.T) {
	m := &messenger{ids: []string{"5:42"}}
	env := tools.Env{SessionKey: "s1", Channel: "telegram", Runtime: m}
	for args, want := range map[string]string{
		`{"text":"hi"}`:                                   "sent (messageId 5:42)",
		`{"action":"edit","message":"hi!"}`:               "edited (messageId 5:42)",
		`{"action":"delete","messageId":"42"}`:            "deleted (messageId 5:42)",
		`{"action":"send","target":"9","message":"psst"}`: "sent to 9 (messageId 5:42)",
	} {
		res, err := New().Run(context.Background(), tools.Call{Args: []byte(args), Env: env})
		if err != nil || res.Content != want {
			t.Errorf("%s: %q, %v; want %q", args, res.Content, err, want)
		}
	}
	plain := tools.Env{SessionKey: "s1", Channel: "terminal", Runtime: &runtime{}}
	if _, err := New().Run(context.Background(), tools.Call{Args: []byte(`{"action":"delete"}`), Env: plain}); err == nil || !strings.Contains(err.Error(), "not supported on terminal") {
		t.Errorf("delete without a Messenger: %v", err)
	}
}
