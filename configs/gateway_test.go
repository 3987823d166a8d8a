package configs

import (
	"strings"
	"testing"
)

func TestGatewayListenRules(t *testing.T) {
	for _, tt := range []struct {
		listen, token string
		want          string // "" = valid
	}{
		{"127.0.0.1:18789", "", ""},
		{"[::1]:0", "", ""},
		{"localhost:8080", "", ""},
		{"off", "", ""},
		{"0.0.0.0:18789", "", "set REEF_GATEWAY_TOKEN"},
		{":18789", "", "set REEF_GATEWAY_TOKEN"},
		{"192.168.1.5:80", "", "reachable from other machines"},
		{"0.0.0.0:18789", "a-long-enough-token-123", ""},
		{"127.0.0.1:1", "short", "too short"},
		{"no-port", "", "not host:port"},
	} {
		c := &Config{Gateway: GatewayConfig{HTTP: GatewayHTTPConfig{Listen: tt.listen, Token: tt.token}}}
		var v validator
		c.validateGateway(&v)
		var msgs []string
		for _, p := range v.problems {
			msgs = append(msgs, p.Error())
		}
		got := strings.Join(msgs, "\n")
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("listen %q token %q: got %q, want %q", tt.listen, tt.token, got, tt.want)
		}
	}
}

func TestGatewayDefaults(t *testing.T) {
	c := &Config{}
	c.defaultGateway(func(k string) string {
		if k == "REEF_GATEWAY_TOKEN" {
			return "from-the-environment"
		}
		return ""
	})
	if c.Gateway.HTTP.Listen != DefaultHTTPListen || c.Gateway.HTTP.Token != "from-the-environment" {
		t.Errorf("defaults: %+v", c.Gateway.HTTP)
	}
}
