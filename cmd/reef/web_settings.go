package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/web"
	"github.com/reefgw/reef/redact"
	"github.com/reefgw/reef/streaming"
)

// The Config page's form of the common settings: each agent's model and heartbeat, each
// provider's key as a ${NAME} reference, each bot account's streaming mode and access, exec
// approvals. A field the owner changed becomes a configs.Edit of reef.yaml; the result goes
// through the editor's check and save.

// settingsForm fills the form with the running values; data is reef.yaml as written (the
// keys' ${NAME} references are read from it, never the values).
func settingsForm(cfg *configs.Config, data []byte) web.ConfigForm {
	f := web.ConfigForm{Approvals: orDefault(cfg.Tools.Exec.Approvals, "owner"), DMPolicies: []string{"pairing", "allowlist", "open", "disabled"},
		ApprovalModes: []string{"off", "owner", "always"}}
	for _, m := range streaming.Modes {
		f.StreamingModes = append(f.StreamingModes, string(m))
	}
	for i, a := range cfg.Agents {
		f.Agents = append(f.Agents, web.AgentSetting{Index: i, ID: a.ID, Model: a.Model, Every: orDefault(a.Heartbeat.Every, "30m")})
	}
	for _, name := range sortedKeys(cfg.Providers) {
		raw, _ := configs.RawValue(data, "providers", name, "apiKey")
		p := web.ProviderSetting{Name: name}
		if configs.IsEnvRef(raw) {
			p.APIKey = raw
		} else if raw != "" {
			p.Literal = true
		}
		f.Providers = append(f.Providers, p)
	}
	for _, a := range cfg.Channels.Accounts() {
		acc := a.Access()
		f.Accounts = append(f.Accounts, web.AccountSetting{ID: accountID(a), Streaming: string(a.Streaming().Mode),
			DMPolicy: orDefault(acc.DMPolicy, "pairing"), AllowFrom: strings.Join(acc.AllowFrom, ", ")})
	}
	return f
}

func (b *webBackend) EditSettings(_ context.Context, fields map[string]string, save bool) (web.ConfigEdit, error) {
	l, err := b.editor()
	if err != nil {
		return web.ConfigEdit{}, err
	}
	data, err := os.ReadFile(l.file())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return web.ConfigEdit{}, err
	}
	cfg := l.current()
	red := redact.New(cfg.Secrets()...)
	edits, problems := settingsEdits(cfg, data, fields)
	if len(problems) > 0 {
		return web.ConfigEdit{Path: l.file(), YAML: red.String(string(data)), Problems: problems, Form: settingsForm(cfg, data)}, nil
	}
	text, err := configs.ApplyEdits(data, edits)
	if err != nil {
		return web.ConfigEdit{}, err
	}
	out, err := editConfig(l, string(text), save)
	out.YAML = red.String(out.YAML)
	out.Form = settingsForm(l.current(), text)
	return out, err
}

// settingsEdits turns the form's fields into edits of reef.yaml: only the values that differ
// from the running ones, so that defaults and inherited values stay unwritten.
func settingsEdits(cfg *configs.Config, data []byte, fields map[string]string) ([]configs.Edit, []string) {
	var edits []configs.Edit
	var problems []string
	set := func(value string, path ...string) { edits = append(edits, configs.Edit{Path: path, Value: value}) }
	_, hasAgents := configs.RawValue(data, "agents", "0", "id")
	for i, a := range cfg.Agents {
		n := strconv.Itoa(i)
		model, every := fields["agent."+n+".model"], fields["agent."+n+".heartbeat"]
		changedModel := model != "" && model != a.Model
		changedEvery := every != "" && every != orDefault(a.Heartbeat.Every, "30m")
		if (changedModel || changedEvery) && !hasAgents {
			set(a.ID, "agents", n, "id") // the agent came from the defaults: write it down
			if !changedModel {
				set(a.Model, "agents", n, "model")
			}
		}
		if changedModel {
			set(model, "agents", n, "model")
		}
		if changedEvery {
			set(every, "agents", n, "heartbeat", "every")
		}
	}
	for _, name := range sortedKeys(cfg.Providers) {
		key := strings.TrimSpace(fields["provider."+name+".apiKey"])
		raw, _ := configs.RawValue(data, "providers", name, "apiKey")
		switch {
		case key == "" || key == raw:
		case !configs.IsEnvRef(key):
			problems = append(problems, fmt.Sprintf("providers.%s.apiKey: write a ${NAME} reference to the environment "+
				"(for example ${%s_API_KEY}), never the key itself", name, strings.ToUpper(name)))
		default:
			set(key, "providers", name, "apiKey")
		}
	}
	for _, a := range cfg.Channels.Accounts() {
		id := accountID(a)
		path := []string{"channels", a.Channel}
		if a.Account != "" {
			path = append(path, "accounts", a.Account)
		}
		at := func(keys ...string) []string { return append(slices.Clone(path), keys...) }
		acc := a.Access()
		if m := fields["account."+id+".streaming"]; m != "" && m != string(a.Streaming().Mode) {
			set(m, at("streaming", "mode")...)
		}
		if p := fields["account."+id+".dmPolicy"]; p != "" && p != orDefault(acc.DMPolicy, "pairing") {
			set(p, at("dmPolicy")...)
		}
		if v, ok := fields["account."+id+".allowFrom"]; ok {
			if ids := splitIDs(v); !slices.Equal(ids, acc.AllowFrom) && !(len(ids) == 0 && len(acc.AllowFrom) == 0) {
				edits = append(edits, configs.Edit{Path: at("allowFrom"), Value: ids})
			}
		}
	}
	if a := fields["approvals"]; a != "" && a != orDefault(cfg.Tools.Exec.Approvals, "owner") {
		set(a, "tools", "exec", "approvals")
	}
	return edits, problems
}

// splitIDs splits "1, 2 3" into ids.
func splitIDs(s string) []string {
	ids := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
	if ids == nil {
		return []string{}
	}
	return ids
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
