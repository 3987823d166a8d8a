package configs

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
)

// Change is one setting that differs between two configurations, named by its key path
// (never by its value: values may be secrets).
type Change struct {
	Key string
	// What happened: "changed", "added" or "removed" (a channel account, an agent).
	What string
	// Restart: a running gateway cannot apply it; it takes effect at the next start.
	Restart bool
}

// String is the change as a log or status line shows it: "channels.telegram.accounts.work
// added", "dataDir changed (needs a restart)".
func (c Change) String() string {
	s := c.Key + " " + c.What
	if c.Restart {
		s += " (needs a restart)"
	}
	return s
}

// restartKeys are the settings a running gateway keeps until it restarts: where its state
// lives, its listeners, its logger, what runs beside the actor tree (memory index, backups,
// background processes) and how long messages wait for a model that is down.
var restartKeys = []string{
	"dataDir", "storage", "gateway", "log", "backup", "memory",
	"tools.exec.background", "llm.outageWaitMinutes",
}

// Diff lists what differs from old to next, the settings a reload applies first, then those
// that need a restart, each in key order. Channel accounts and agents are listed one by one.
func Diff(old, next *Config) []Change {
	var out []Change
	ov, nv := reflect.ValueOf(old).Elem(), reflect.ValueOf(next).Elem()
	for i := 0; i < ov.NumField(); i++ {
		key := yamlName(ov.Type().Field(i))
		switch key {
		case "":
			continue
		case "channels":
			out = append(out, diffAccounts(old.Channels.Accounts(), next.Channels.Accounts())...)
			if !reflect.DeepEqual(old.Channels.Terminal, next.Channels.Terminal) {
				out = append(out, Change{Key: "channels.terminal", What: "changed"})
			}
			continue
		case "agents":
			out = append(out, diffAgents(old.Agents, next.Agents)...)
			continue
		}
		out = append(out, diffValue(key, ov.Field(i), nv.Field(i))...)
	}
	slices.SortStableFunc(out, func(a, b Change) int {
		if a.Restart != b.Restart {
			if a.Restart {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}

// diffValue compares one section, going one level down into the sections that hold a key
// needing a restart beside live ones (tools, llm).
func diffValue(key string, a, b reflect.Value) []Change {
	if reflect.DeepEqual(a.Interface(), b.Interface()) {
		return nil
	}
	if slices.Contains(restartKeys, key) {
		return []Change{{Key: key, What: "changed", Restart: true}}
	}
	if a.Kind() == reflect.Struct && hasRestartBelow(key) {
		var out []Change
		for i := 0; i < a.NumField(); i++ {
			if sub := yamlName(a.Type().Field(i)); sub != "" {
				out = append(out, diffValue(key+"."+sub, a.Field(i), b.Field(i))...)
			}
		}
		return out
	}
	return []Change{{Key: key, What: "changed"}}
}

func hasRestartBelow(key string) bool {
	for _, k := range restartKeys {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// diffAccounts lists the bot accounts added, removed or changed.
func diffAccounts(old, next []ChannelAccount) []Change {
	byPath := func(as []ChannelAccount) map[string]ChannelAccount {
		m := map[string]ChannelAccount{}
		for _, a := range as {
			m[a.Path] = a
		}
		return m
	}
	om, nm := byPath(old), byPath(next)
	var out []Change
	for path, a := range om {
		b, ok := nm[path]
		switch {
		case !ok:
			out = append(out, Change{Key: path, What: "removed"})
		case !reflect.DeepEqual(a, b):
			out = append(out, Change{Key: path, What: "changed"})
		}
	}
	for path := range nm {
		if _, ok := om[path]; !ok {
			out = append(out, Change{Key: path, What: "added"})
		}
	}
	return out
}

// diffAgents lists the agents added, removed or changed, by id.
func diffAgents(old, next []AgentConfig) []Change {
	key := func(id string) string { return joinMapKey("agents", id) }
	om := map[string]AgentConfig{}
	for _, a := range old {
		om[a.ID] = a
	}
	var out []Change
	seen := map[string]bool{}
	for i, b := range next {
		seen[b.ID] = true
		a, ok := om[b.ID]
		switch {
		case !ok:
			out = append(out, Change{Key: key(b.ID), What: "added"})
		case !reflect.DeepEqual(a, b):
			out = append(out, Change{Key: key(b.ID), What: "changed"})
		case i == 0 && old[0].ID != b.ID:
			out = append(out, Change{Key: key(b.ID), What: "made the default"})
		}
	}
	for _, a := range old {
		if !seen[a.ID] {
			out = append(out, Change{Key: key(a.ID), What: "removed"})
		}
	}
	return out
}

// liveAccountKeys are an account's keys a running Connector takes without reconnecting.
var liveAccountKeys = map[string]bool{
	"dmPolicy": true, "allowFrom": true, "groups": true, "requireMention": true,
	"tools": true, "groupTools": true, "toolsBySender": true, "streaming": true,
}

// SameConnection reports whether two accounts connect to their platform the same way (the
// same credentials, endpoints and modes), so that a reload keeps the running connection and
// only takes the new access, guest tools and streaming settings.
func SameConnection(a, b ChannelAccount) bool {
	if a.Channel != b.Channel || a.Account != b.Account {
		return false
	}
	return reflect.DeepEqual(connection(a), connection(b))
}

// connection is the account's platform block without its liveAccountKeys.
func connection(a ChannelAccount) any {
	var v reflect.Value
	switch {
	case a.Telegram != nil:
		v = reflect.ValueOf(*a.Telegram)
	case a.Discord != nil:
		v = reflect.ValueOf(*a.Discord)
	case a.Feishu != nil:
		v = reflect.ValueOf(*a.Feishu)
	default:
		return nil
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	for i := 0; i < c.NumField(); i++ {
		if liveAccountKeys[yamlName(c.Type().Field(i))] {
			c.Field(i).Set(reflect.Zero(c.Field(i).Type()))
		}
	}
	return c.Interface()
}
