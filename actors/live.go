package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/channels"
	"github.com/reefgw/reef/routing"
	"github.com/reefgw/reef/streaming"
	"github.com/reefgw/reef/tools"
)

// Settings are the parts of Deps a live reload changes (reef.yaml edited, SIGHUP, `reef
// reload`). The tree reads them from one snapshot that Runtime.Reload swaps atomically:
// Connectors at each message (access) and each run they show (streaming), Sessions at each
// run (the agent, its models and tools, the session settings), the Timer when told
// (heartbeats). What a run already started with, it keeps until it ends.
type Settings struct {
	Agents     []*Agent // the first is the default agent
	Routes     *routing.Table
	Channels   map[string]channels.Channel // by channels.ID; one Connector each
	Access     map[string]*access.Rules
	ToolGrants map[string]*tools.GuestPolicy
	Streaming  map[string]streaming.Settings
	Session    SessionSettings
	Approvals  ApprovalSettings
	Media      MediaSettings
	Secrets    []string
	Timer      TimerSettings

	redact redactor // built from Secrets when the snapshot is made
}

// settingsOf is the snapshot of deps' own fields, with which the tree starts.
func settingsOf(d *Deps, timer TimerSettings) *Settings {
	return newSettings(Settings{Agents: d.Agents, Routes: d.Routes, Channels: d.Channels, Access: d.Access,
		ToolGrants: d.ToolGrants, Streaming: d.Streaming, Session: d.Session, Approvals: d.Approvals,
		Media: d.Media, Secrets: d.Secrets, Timer: timer})
}

func newSettings(s Settings) *Settings {
	s.redact = newRedactor(s.Secrets)
	return &s
}

// live is the current snapshot; before Start (actors spawned by tests) it is made from the
// fields once.
func (d *Deps) live() *Settings {
	if s := d.current.Load(); s != nil {
		return s
	}
	d.current.CompareAndSwap(nil, settingsOf(d, TimerSettings{}))
	return d.current.Load()
}

func (d *Deps) agents() []*Agent                    { return d.live().Agents }
func (d *Deps) rules(channel string) *access.Rules  { return d.live().Access[channel] }
func (d *Deps) session() SessionSettings            { return d.live().Session }
func (d *Deps) approvalSettings() ApprovalSettings  { return d.live().Approvals }
func (d *Deps) media() MediaSettings                { return d.live().Media }
func (d *Deps) channel(id string) channels.Channel  { return d.live().Channels[id] }
func (d *Deps) grants(id string) *tools.GuestPolicy { return d.live().ToolGrants[id] }

// connector is the Connector of the channel account id, nil when the current settings run
// none (never configured, or removed by a reload: its replies wait in the outbox).
func (d *Deps) connector(id string) *actor.PID {
	if d.gateway == nil || d.live().Channels[id] == nil {
		return nil
	}
	return connectorPID(d.gateway, id)
}

// settingsChanged tells a Connector, the Timer or the Router that Deps' settings changed:
// each re-reads what it keeps from them.
type settingsChanged struct{}

// onSettingsChanged takes the account's new streaming mode for the runs it shows next.
func (c *Connector) onSettingsChanged() { c.stream = c.deps.streaming(c.name) }

// refreshAgent takes the session's agent from the live settings before a run: a reload
// may have changed its model, tools or limits. An agent a reload removed keeps running the
// session's waiting messages as it was configured; new messages go to the agent the
// bindings name now.
func (s *Session) refreshAgent() {
	if a := s.deps.agent(s.agent.ID); a != nil {
		s.agent = a
	}
}
