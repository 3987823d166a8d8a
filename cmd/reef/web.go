package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"gopkg.in/yaml.v3"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/channels/slack"
	"github.com/reefgw/reef/channels/webchat"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/openaiapi"
	"github.com/reefgw/reef/internal/web"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/redact"
	"github.com/reefgw/reef/schedule"
)

// The gateway's web face (internal/web): this file resolves its token, adds the WebChat
// channel, and implements web.Backend with the code paths of the CLI commands.

// gatewayToken makes sure cfg has the gateway token: the configured one, else the one kept
// in the data directory, generated on first start and logged once. It runs before the
// runtime starts, so the token is among cfg.Secrets() and redacted from transcripts.
func gatewayToken(cfg *configs.Config, log zerolog.Logger) error {
	h := &cfg.Gateway.HTTP
	if h.Off() || h.Token != "" {
		return nil
	}
	token, created, err := web.LoadOrCreateToken(cfg.DataDir)
	if err != nil {
		return err
	}
	h.Token = token
	if created {
		log.Warn().Str("token", token).Str("file", cfg.DataDir+"/"+web.TokenFile).
			Msg("generated the gateway token for the web UI (shown once here; `reef status` shows it again)")
	}
	return nil
}

// addWebChat adds the WebChat channel to set when the listener is on. Every conversation's
// sender (its chat id) is the owner: whoever holds the gateway token (access.WebChatChannel).
// Uploads wait under the data directory, within the media limits.
func addWebChat(cfg *configs.Config, set channelSet) *webchat.Channel {
	if cfg.Gateway.HTTP.Off() {
		return nil
	}
	ch := webchat.New(webchat.Config{UploadDir: webchatUploads(cfg), MaxFile: mediaLimits(cfg).For})
	set.add(webchat.Name, ch, configs.AccessConfig{DMPolicy: "allowlist", AllowFrom: []string{"*"}})
	return ch
}

// startWeb starts the listener; stop closes it. The OpenAI-compatible API (api's channel) and
// /metrics are mounted behind its auth.
func startWeb(cfg *configs.Config, configPath string, rt *running, set channelSet, chat *webchat.Channel, api *openaiapi.Channel, log zerolog.Logger) (stop func(), err error) {
	if cfg.Gateway.HTTP.Off() {
		return func() {}, nil
	}
	b := &webBackend{cfg: cfg, configPath: configPath, rt: rt, started: time.Now(), channels: configuredChannels(cfg)}
	srv, err := web.New(web.Config{
		Listen: cfg.Gateway.HTTP.Listen, Token: cfg.Gateway.HTTP.Token, Version: version,
		Backend: b, Chat: chat, Events: rt.events, Secrets: cfg.Secrets(),
		Ready: func() error {
			if sh := rt.StorageHealth(); !sh.Up {
				return errors.New(storageLine(sh)) // storage_status.go
			}
			if err := rt.store.View(func(persistence.Reader) error { return nil }); err != nil {
				return fmt.Errorf("storage: %w", err)
			}
			return channelsReady(rt.Health(), len(rt.Settings().Channels)) // a reload may add or remove some
		},
	}, log)
	if err != nil {
		return nil, err
	}
	if api != nil {
		apiHandler, metricsHandler := webHandlers(cfg, rt, api, log)
		srv.MountOpen("/v1/", apiHandler) // checks the gateway token or an API key itself, Bearer only: no cookie, no CSRF form
		srv.Mount("GET /metrics", metricsHandler)
	}
	for _, ch := range set.chans { // Slack apps whose events come to this listener
		if sb, ok := ch.(*slack.Bot); ok {
			if path, h := sb.WebEndpoint(); h != nil {
				srv.MountOpen("POST "+path, h)
			}
		}
	}
	addr, err := srv.Start()
	if err != nil {
		return nil, err
	}
	rt.webURL = "http://" + addr + "/"
	log.Info().Str("url", rt.webURL).Msg("web UI listening")
	return func() { srv.Close() }, nil
}

// channelsReady is /readyz's verdict on the channels: every configured channel started
// and connected (its last call to the platform succeeded).
func channelsReady(hs []actors.ChannelHealth, configured int) error {
	if len(hs) < configured {
		return fmt.Errorf("%d of %d channels started", len(hs), configured)
	}
	var down []string
	now := time.Now()
	for _, h := range hs {
		if !h.Connected {
			down = append(down, h.Name+" "+h.Describe(now))
		}
	}
	if len(down) > 0 {
		return errors.New("not connected: " + strings.Join(down, "; "))
	}
	return nil
}

// printWeb is reef status's line about the web UI: where, and the token to log in with.
func printWeb(w io.Writer, cfg *configs.Config, st Status) {
	h := cfg.Gateway.HTTP
	if h.Off() {
		return
	}
	where := "http://" + h.Listen + "/"
	if st.Web != "" {
		where = st.Web
	}
	token := "$REEF_GATEWAY_TOKEN"
	switch {
	case os.Getenv("REEF_GATEWAY_TOKEN") != "":
	case h.Token != "":
		token = "gateway.http.token in the config"
	default:
		if token = web.ReadToken(cfg.DataDir); token == "" {
			token = "generated at the gateway's first start"
		}
	}
	fmt.Fprintf(w, "web UI: %s (token: %s)\n", where, token)
}

// webBackend is web.Backend over a running gateway.
type webBackend struct {
	cfg        *configs.Config
	configPath string
	rt         *running
	started    time.Time
	channels   []string
}

var _ web.Backend = (*webBackend)(nil)

// config is the configuration the gateway runs now (a reload changes it).
func (b *webBackend) config() *configs.Config {
	if b.rt != nil && b.rt.reload != nil {
		return b.rt.reload.current()
	}
	return b.cfg
}

func (b *webBackend) sessions() storeSessions {
	return storeSessions{store: b.rt.store, live: gatewayLive(b.rt.Runtime)}
}

func (b *webBackend) Overview(context.Context) (web.Overview, error) {
	st, err := readStatus(b.rt.store, liveChannelNames(b.rt, b.channels))
	if err != nil {
		return web.Overview{}, err
	}
	o := web.Overview{Version: version, Started: b.started, LiveSessions: b.rt.LiveSessions(), Sessions: st.Sessions,
		DeadLetters: len(st.DeadLetters), TokensToday: map[string]int{}, Reload: reloadOutcome(b.rt)}
	for _, h := range b.rt.Health() {
		o.Channels = append(o.Channels, web.ChannelRow{Name: h.Name, Connected: h.Connected, State: h.Status(time.Now()),
			LastMessage: h.LastEvent, Restarts: h.Restarts, Reason: h.Reason})
	}
	today := time.Now().Format("2006-01-02")
	err = b.rt.store.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		for _, in := range infos {
			if in.BudgetDay == today {
				o.TokensToday[in.AgentID] += in.BudgetTokens
			}
		}
		return err
	})
	return o, err
}

func (b *webBackend) Sessions(_ context.Context, query string) ([]web.SessionRow, error) {
	list, err := b.sessions().list(sessionFilter{})
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(query)
	var out []web.SessionRow
	for _, r := range list.Sessions {
		if q != "" && !strings.Contains(strings.ToLower(r.Key+" "+r.Channel+" "+r.AgentID), q) {
			continue
		}
		out = append(out, web.SessionRow{SessionInfo: r.SessionInfo, Live: r.Live != nil && *r.Live, Parent: r.Parent})
	}
	return out, b.sessionSummaries(out) // title, preview, cost (web_console.go)
}

func (b *webBackend) Conversation(_ context.Context, key string) (web.Conversation, error) {
	src := b.sessions()
	d, err := src.show(key, 0)
	if err != nil {
		return web.Conversation{}, notFound(err)
	}
	tr, err := src.export(d.Info.Key)
	if err != nil {
		return web.Conversation{}, notFound(err)
	}
	for i := range tr.Entries { // what the person wrote, without the metadata the model saw
		if e := &tr.Entries[i]; e.Role == messages.RoleUser {
			e.Content = splitInbound(e.Content).text
		}
	}
	var shown []persistence.Shown
	if err := b.rt.store.View(func(r persistence.Reader) (err error) {
		shown, err = persistence.ShownOf(r, tr.Info.Key)
		return err
	}); err != nil {
		return web.Conversation{}, err
	}
	return web.Conversation{Info: tr.Info, Live: d.Live != nil && *d.Live, Entries: tr.Entries, Snapshots: tr.Snapshots,
		Parent: d.Parent, Children: d.Children, Shown: shown}, nil
}

func (b *webBackend) Export(_ context.Context, key, format string, w io.Writer) error {
	tr, err := b.sessions().export(key)
	if err != nil {
		return notFound(err)
	}
	if format == "md" {
		return writeMarkdown(w, tr)
	}
	return writeJSONL(w, tr)
}

// notFound marks an unknown or ambiguous session key as web.ErrNotFound.
func notFound(err error) error {
	var ke *keyError
	if errors.As(err, &ke) {
		return fmt.Errorf("%w: %s", web.ErrNotFound, ke.msg)
	}
	return err
}

func (b *webBackend) CronJobs(ctx context.Context) ([]schedule.Job, error) {
	out, err := b.rt.Cron(ctx, "list", json.RawMessage(`{}`))
	if err != nil {
		return nil, err
	}
	var jobs []schedule.Job
	return jobs, json.Unmarshal(out, &jobs)
}

func (b *webBackend) Cron(ctx context.Context, action, id string) error {
	verb := map[string]string{"remove": "rm"}[action]
	if verb == "" {
		verb = action
	}
	act, args, err := cronArgs([]string{verb, id})
	if err != nil {
		return fmt.Errorf("%w: %v", web.ErrBadInput, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := b.rt.Cron(ctx, act, args); err != nil {
		return fmt.Errorf("%w: %v", web.ErrBadInput, err)
	}
	return nil
}

func (b *webBackend) Pairings(context.Context) ([]access.Pairing, error) {
	st, err := readStatus(b.rt.store, liveChannelNames(b.rt, b.channels))
	return st.Pairing, err
}

func (b *webBackend) Pairing(ctx context.Context, action, channel, code string) error {
	err := b.rt.Write(ctx, func(tx persistence.Tx) error {
		_, err := decidePairing(tx, action, channel, code)
		return err
	})
	if errors.Is(err, access.ErrNoPairing) {
		return fmt.Errorf("%w: %v", web.ErrNotFound, err)
	}
	return err
}

func (b *webBackend) Config(context.Context) (web.ConfigView, error) {
	cfg := b.config()                              // after a reload, what runs now
	raw, err := yaml.Marshal(effectiveConfig(cfg)) // defaults applied: what reef uses
	if err != nil {
		return web.ConfigView{}, err
	}
	red := redact.New(cfg.Secrets()...)
	var out bytes.Buffer
	d := &doctor{out: &out}
	for _, note := range cfg.Notes() {
		fmt.Fprintf(d.out, "  ! %s\n", note)
	}
	d.checkDisk(cfg.DataDir)
	d.checkFileModes(configFile(b.configPath), cfg.DataDir)
	for _, a := range cfg.Agents {
		d.checkWorkspace(a)
	}
	d.checkSandbox(cfg)
	d.checkWebSearch(cfg)
	d.checkChannels(cfg, configFile(b.configPath))
	d.checkGuestTools(cfg)
	return web.ConfigView{YAML: red.String(string(raw)), Checks: parseChecks(red.String(out.String()))}, nil
}

// ProbeProviders runs reef doctor's provider check (probeProviders) on every configured
// provider, used by an agent or not.
func (b *webBackend) ProbeProviders(ctx context.Context) ([]web.ProviderProbe, error) {
	names := make([]string, 0, len(b.cfg.Providers))
	for name := range b.cfg.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	red := redact.New(b.cfg.Secrets()...)
	out := make([]web.ProviderProbe, 0, len(names))
	for _, pr := range probeProviders(ctx, b.cfg, names, webProbeTimeout) {
		p := web.ProviderProbe{Name: pr.name, Type: pr.pc.Type, BaseURL: red.String(pr.pc.BaseURL), State: pr.state.String(),
			OK: pr.state == probeReachable, Latency: pr.latency}
		switch {
		case pr.state == probeAuthRefused:
			// The server's words may echo the key (OpenAI's do): the verdict is enough.
			p.Reason = "the API key was rejected: check providers." + pr.name + ".apiKey" + envNote(pr.name, "API_KEY")
		case pr.err != nil:
			p.Reason = red.String(pr.err.Error())
		}
		out = append(out, p)
	}
	return out, nil
}

// webProbeTimeout bounds each provider's check from the Config page: a person is waiting.
const webProbeTimeout = 8 * time.Second

// parseChecks reads the doctor's lines: "✓ what: detail", "✗ what: problem" with "fix:"
// lines below, "  ! note"; other lines continue the one before.
func parseChecks(text string) []web.Check {
	var out []web.Check
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "✓ "), strings.HasPrefix(line, "✗ "):
			what, detail, _ := strings.Cut(line[len("✓ "):], ": ")
			out = append(out, web.Check{OK: strings.HasPrefix(line, "✓"), What: what, Detail: detail})
		case strings.HasPrefix(trim, "! "):
			out = append(out, web.Check{Warning: true, What: "note", Detail: strings.TrimPrefix(trim, "! ")})
		case strings.HasPrefix(trim, "fix: ") && len(out) > 0:
			out[len(out)-1].Fix = strings.TrimPrefix(trim, "fix: ")
		case trim != "" && len(out) > 0:
			last := &out[len(out)-1]
			if last.Fix != "" {
				last.Fix += " " + trim
			} else {
				last.Detail += " " + trim
			}
		}
	}
	return out
}
