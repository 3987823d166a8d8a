package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/providers/fake"
	"github.com/reefgw/reef/providers/openai/openaitest"
)

// probeConfig configures three OpenAI-wire providers, all used by the agent: "good" (the fake
// model, taking the key), "refused" (a fake that wants another key and echoes the one it got
// in its 401, as OpenAI does) and "closed" (a port nobody listens on).
func probeConfig(t *testing.T) *configs.Config {
	t.Helper()
	goodScript := fake.NewScript()
	goodScript.Models = []string{"test-model"}
	good := openaitest.NewServer(goodScript)
	t.Cleanup(good.Close)
	refusingScript := fake.NewScript()
	refusingScript.APIKey = "sk-the-right-one-0123456789"
	refusing := openaitest.NewServer(refusingScript)
	t.Cleanup(refusing.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	return &configs.Config{
		Providers: map[string]configs.ProviderConfig{
			"good":    {Type: "openai", BaseURL: good.URL(), APIKey: canary},
			"refused": {Type: "openai", BaseURL: refusing.URL(), APIKey: canary},
			"closed":  {Type: "openai", BaseURL: closed, APIKey: canary},
		},
		Agents: []configs.AgentConfig{{ID: "main", Model: "good/test-model", Fallbacks: []string{"refused/test-model", "closed/test-model"}}},
	}
}

// TestConfigPageProbesProviders: the web backend's "check providers" reports each provider
// reachable, auth refused or unreachable with a reason and a latency, never the key.
func TestConfigPageProbesProviders(t *testing.T) {
	cfg := probeConfig(t)
	b := &webBackend{cfg: cfg}
	probes, err := b.ProbeProviders(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"closed": "unreachable", "good": "reachable", "refused": "auth refused"}
	if len(probes) != len(want) {
		t.Fatalf("%d probes, want %d: %+v", len(probes), len(want), probes)
	}
	for i, p := range probes {
		if i > 0 && probes[i-1].Name > p.Name {
			t.Errorf("probes not in name order: %+v", probes)
		}
		if p.State != want[p.Name] || p.OK != (p.State == "reachable") {
			t.Errorf("%s: state %q ok %v, want %q", p.Name, p.State, p.OK, want[p.Name])
		}
		if p.Latency <= 0 && p.Name == "good" {
			t.Errorf("%s: no latency", p.Name)
		}
		if p.BaseURL != cfg.Providers[p.Name].BaseURL || p.Type != "openai" {
			t.Errorf("%s: endpoint %q type %q", p.Name, p.BaseURL, p.Type)
		}
		if strings.Contains(p.Reason, canary) || strings.Contains(p.BaseURL, canary) {
			t.Errorf("%s: the API key in %+v", p.Name, p)
		}
		switch p.Name {
		case "good":
			if p.Reason != "" {
				t.Errorf("good: reason %q", p.Reason)
			}
		case "refused":
			if !strings.Contains(p.Reason, "API key was rejected") || !strings.Contains(p.Reason, "providers.refused.apiKey") {
				t.Errorf("refused: reason %q", p.Reason)
			}
		case "closed":
			if !strings.Contains(p.Reason, "closed") || !strings.Contains(p.Reason, "connect") {
				t.Errorf("closed: reason %q does not say why", p.Reason)
			}
		}
	}
}

// TestDoctorProbesWithTheSameCode: reef doctor's provider lines come from the same probe.
func TestDoctorProbesWithTheSameCode(t *testing.T) {
	cfg := probeConfig(t)
	var out bytes.Buffer
	d := &doctor{out: &out}
	d.checkProviders(cfg)
	got := out.String()
	for _, want := range []string{"✗ provider closed: ", "✓ provider good: reachable at http://127.0.0.1:", "✓ model good/test-model: offered",
		"✗ provider refused: the API key was rejected"} {
		if !strings.Contains(got, want) {
			t.Errorf("doctor lacks %q:\n%s", want, got)
		}
	}
	if d.problems != 2 || strings.Contains(got, canary) {
		t.Errorf("doctor: %d problems (want 2), or the key in:\n%s", d.problems, got)
	}
}
