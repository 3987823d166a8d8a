package message

import (
	"context"
	"encoding/json"
	"errors"
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
