package configs

import (
	"fmt"
	"net"
	"strings"
)

// DefaultHTTPListen is where the gateway's web face listens by default: loopback only.
const DefaultHTTPListen = "127.0.0.1:18789"

// GatewayConfig holds the gateway's own settings (docs/web.md).
type GatewayConfig struct {
	HTTP GatewayHTTPConfig `yaml:"http"`
}

// GatewayHTTPConfig is the gateway's one HTTP listener: Control UI, WebChat and the APIs.
type GatewayHTTPConfig struct {
	// Listen is host:port, or "off"; default ${REEF_GATEWAY_LISTEN}, else 127.0.0.1:18789.
	Listen string `yaml:"listen"`
	// Token is what every page and API call must present; default ${REEF_GATEWAY_TOKEN}, and
	// when that is unset too the gateway generates one and keeps it in the data directory.
	Token string `yaml:"token"`
	// APIKeys are keys of the OpenAI-compatible API, each reaching some agents and only its
	// own sessions (apikeys.go, docs/api.md#api-keys).
	APIKeys []APIKeyConfig `yaml:"apiKeys"`
}

// Off reports whether the listener is disabled.
func (h GatewayHTTPConfig) Off() bool { return strings.EqualFold(strings.TrimSpace(h.Listen), "off") }

// Loopback reports whether Listen binds only loopback addresses (127.0.0.0/8, ::1,
// localhost). An empty host ("":18789) binds every address: not loopback.
func (h GatewayHTTPConfig) Loopback() bool {
	host, _, err := net.SplitHostPort(h.Listen)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c *Config) validateGateway(v *validator) {
	h := c.Gateway.HTTP
	if h.Off() {
		return
	}
	if _, _, err := net.SplitHostPort(h.Listen); err != nil {
		v.addf("gateway.http.listen: %q is not host:port: write it like %s, or off", h.Listen, DefaultHTTPListen)
		return
	}
	if !h.Loopback() && h.Token == "" {
		v.addf("gateway.http.listen: %s is reachable from other machines, and no token is set: "+
			"set REEF_GATEWAY_TOKEN (or gateway.http.token) to a long random string, or listen on %s", h.Listen, DefaultHTTPListen)
	}
	if h.Token != "" && len(h.Token) < 16 {
		v.addf("gateway.http.token: too short (%d characters): use at least 16 random characters", len(h.Token))
	}
	c.validateAPIKeys(v)
}

// defaultGateway fills the gateway block's defaults.
func (c *Config) defaultGateway(env func(string) string) {
	h := &c.Gateway.HTTP
	h.Listen = orDefault(strings.TrimSpace(h.Listen), orDefault(env("REEF_GATEWAY_LISTEN"), DefaultHTTPListen))
	if h.Token == "" {
		h.Token = env("REEF_GATEWAY_TOKEN")
	}
}

// String is for messages: the listen address or "off".
func (h GatewayHTTPConfig) String() string {
	if h.Off() {
		return "off"
	}
	return fmt.Sprint(h.Listen)
}
