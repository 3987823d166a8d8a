package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// The gateway's wiring of the API and the metrics: a completion through the real runtime
// and the fake model over HTTP, then /metrics counting it (message in and out on the API's
// channel, the run, the model call and its tokens, the session stored).
func TestWebHandlers(t *testing.T) {
	srv := openaitest.NewServer(fake.NewScript(fake.Reply{Text: "hi there", Usage: messages.Usage{InputTokens: 40, OutputTokens: 2}}))
	defer srv.Close()
	home := t.TempDir()
	cfg := &configs.Config{
		Providers: map[string]configs.ProviderConfig{"local": {Type: "openai", BaseURL: srv.URL(), APIKey: "sk-test"}},
		Agents:    []configs.AgentConfig{{ID: "main", Name: "Reef", Model: "local/fake-model"}},
	}
	configs.ApplyDefaults(cfg, func(k string) string {
		if k == "REEF_HOME" {
			return home
		}
		return ""
	})
	log := zerolog.Nop()
	set := channelSet{chans: map[string]channels.Channel{}}
	ch := addAPIChannel(&set, log)
	rt, err := startRuntime(cfg, log, set)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.stop()
	api, met := webHandlers(cfg, rt, ch, log)
	mux := http.NewServeMux()
	mux.Handle("/v1/", api)
	mux.Handle("GET /metrics", met)
	web := httptest.NewServer(mux)
	defer web.Close()

	resp, err := http.Post(web.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"reef/main","user":"ci","messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var c struct {
		Choices []struct{ Message struct{ Content string } }
		Usage   struct {
			Total int `json:"total_tokens"`
		}
	}
	if err := json.Unmarshal(body, &c); err != nil || resp.StatusCode != 200 || len(c.Choices) != 1 ||
		c.Choices[0].Message.Content != "hi there" || c.Usage.Total != 42 {
		t.Fatalf("completion: %d %s", resp.StatusCode, body)
	}

	want := []string{
		`reef_messages_in_total{channel="openai"} 1`,
		`reef_messages_out_total{channel="openai"} 1`,
		`reef_runs_total{outcome="ok"} 1`,
		`reef_model_call_duration_seconds_count{provider="local",model="fake-model"} 1`,
		`reef_model_tokens_total{provider="local",model="fake-model",kind="input"} 40`,
		`reef_model_tokens_total{provider="local",model="fake-model",kind="output"} 2`,
		`reef_queue_depth 0`,
		`reef_outbox_backlog 0`,
		`reef_sessions_stored 1`,
		`reef_connector_up{channel="openai"} 1`,
	}
	var text string
	// The run's end reaches the metrics through the event bus, and the outbox row is deleted
	// after the reply was handed over: poll until every line is there.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(web.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text = string(b)
		missing := ""
		for _, w := range want {
			if !strings.Contains(text, w+"\n") {
				missing = w
				break
			}
		}
		if missing == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q:\n%s", missing, text)
		}
		time.Sleep(20 * time.Millisecond) // bounded polling of the scrape
	}
	if strings.Contains(text, "sk-test") {
		t.Error("/metrics shows the provider's key")
	}
}
