package openclaw

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is the part of openclaw.json the importer reads. Fields whose shape varies between
// OpenClaw versions (a model as a string or {primary, fallbacks}, a secret as a string or a
// SecretRef, groups as a list or a map) stay raw and are read by helpers.
type File struct {
	Env      map[string]json.RawMessage `json:"env"`
	Models   ModelsBlock                `json:"models"`
	Agents   AgentsBlock                `json:"agents"`
	Channels map[string]json.RawMessage `json:"channels"`
	Bindings []Binding                  `json:"bindings"`
	Session  SessionBlock               `json:"session"`
	Messages struct {
		Queue struct {
			Mode       string `json:"mode"`
			DebounceMs int    `json:"debounceMs"`
			Cap        int    `json:"cap"`
			Drop       string `json:"drop"`
		} `json:"queue"`
	} `json:"messages"`
	Tools struct {
		Allow []string `json:"allow"`
		Deny  []string `json:"deny"`
		Web   struct {
			Search webTool `json:"search"`
			Fetch  webTool `json:"fetch"`
		} `json:"web"`
	} `json:"tools"`
	Cron struct {
		Store             string `json:"store"`
		MaxConcurrentRuns int    `json:"maxConcurrentRuns"`
	} `json:"cron"`

	keys     []string                              // top-level keys as written
	sections map[string]map[string]json.RawMessage // the top-level objects' keys and values
}

// webTool is tools.web.search or tools.web.fetch.
type webTool struct {
	Enabled  *bool           `json:"enabled"`
	Provider string          `json:"provider"`
	APIKey   json.RawMessage `json:"apiKey"`
}

// ModelsBlock is models: the custom providers.
type ModelsBlock struct {
	Providers map[string]ProviderEntry `json:"providers"`
}

// ProviderEntry is one models.providers entry.
type ProviderEntry struct {
	BaseURL string          `json:"baseUrl"`
	APIKey  json.RawMessage `json:"apiKey"`
	API     string          `json:"api"`
	Models  []struct {
		ID            string `json:"id"`
		ContextWindow int    `json:"contextWindow"`
		MaxTokens     int    `json:"maxTokens"`
	} `json:"models"`
}

// AgentsBlock is agents: defaults plus the agents, as a list (agents.list) or, in newer
// versions, a map by id (agents.entries).
type AgentsBlock struct {
	Defaults Agent            `json:"defaults"`
	List     []Agent          `json:"list"`
	Entries  map[string]Agent `json:"entries"`
	raw      map[string]json.RawMessage
	order    []string // entries' ids in file order
}

// Agent is one agent (or agents.defaults).
type Agent struct {
	ID           string          `json:"id"`
	Default      bool            `json:"default"`
	Name         string          `json:"name"`
	Workspace    string          `json:"workspace"`
	Model        json.RawMessage `json:"model"`
	SystemPrompt string          `json:"systemPrompt"`
	Skills       json.RawMessage `json:"skills"`
	Identity     struct {
		Name string `json:"name"`
	} `json:"identity"`
	Tools struct {
		Profile string   `json:"profile"`
		Allow   []string `json:"allow"`
		Deny    []string `json:"deny"`
	} `json:"tools"`
	Heartbeat *struct {
		Every       string `json:"every"`
		Target      string `json:"target"`
		ActiveHours *struct {
			Start    string `json:"start"`
			End      string `json:"end"`
			Timezone string `json:"timezone"`
			TZ       string `json:"tz"`
		} `json:"activeHours"`
	} `json:"heartbeat"`
	MemorySearch *memorySearch `json:"memorySearch"`
	Subagents    struct {
		AllowAgents         []string `json:"allowAgents"`
		MaxConcurrent       int      `json:"maxConcurrent"`
		MaxSpawnDepth       int      `json:"maxSpawnDepth"`
		MaxChildrenPerAgent int      `json:"maxChildrenPerAgent"`
		RunTimeoutSeconds   int      `json:"runTimeoutSeconds"`
		ArchiveAfterMinutes int      `json:"archiveAfterMinutes"`
	} `json:"subagents"`
	TimeoutSeconds int `json:"timeoutSeconds"`

	keys []string
}

// memorySearch is agents.defaults.memorySearch (or an agent's): OpenClaw's settings of the
// memory index.
type memorySearch struct {
	Enabled  *bool    `json:"enabled"`
	Provider string   `json:"provider"`
	Model    string   `json:"model"`
	Sources  []string `json:"sources"`
	keys     []string
}

func (ms *memorySearch) UnmarshalJSON(raw []byte) error {
	type plain memorySearch
	var p plain
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(raw, &obj)
	*ms = memorySearch(p)
	ms.keys = sortedKeys(obj)
	return nil
}

// Binding is one bindings entry.
type Binding struct {
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
	Match   struct {
		Channel   string `json:"channel"`
		AccountID string `json:"accountId"`
		Peer      *struct {
			Kind string          `json:"kind"`
			ID   json.RawMessage `json:"id"`
		} `json:"peer"`
		GuildID string `json:"guildId"`
		TeamID  string `json:"teamId"`
	} `json:"match"`
}

// SessionBlock is session.
type SessionBlock struct {
	DMScope string `json:"dmScope"`
}

// Install is an OpenClaw state directory as read from disk.
type Install struct {
	Dir        string // the state directory (~/.openclaw)
	ConfigPath string // its openclaw.json
	Config     File
	Jobs       []CronJob // cron/jobs.json
	JobsPath   string
}

// CronJob is one job of cron/jobs.json. Its shape is reef's cron tool's, which followed
// OpenClaw's.
type CronJob struct {
	ID             string          `json:"id"`
	JobID          string          `json:"jobId"`
	AgentID        string          `json:"agentId"`
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Enabled        *bool           `json:"enabled"`
	DeleteAfterRun *bool           `json:"deleteAfterRun"`
	Schedule       json.RawMessage `json:"schedule"`
	SessionTarget  string          `json:"sessionTarget"`
	WakeMode       string          `json:"wakeMode"`
	Payload        json.RawMessage `json:"payload"`
	Delivery       *struct {
		Mode    string `json:"mode"`
		Channel string `json:"channel"`
		To      string `json:"to"`
	} `json:"delivery"`
}

// maxConfigBytes bounds what the importer reads of openclaw.json and jobs.json.
const maxConfigBytes = 8 << 20

// Read loads an OpenClaw state directory: openclaw.json (or the file given as dir) and its
// cron jobs. It never writes there.
func Read(dir string) (*Install, error) {
	in := &Install{Dir: dir, ConfigPath: filepath.Join(dir, "openclaw.json")}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		in.Dir, in.ConfigPath = filepath.Dir(dir), dir
	}
	data, err := readCapped(in.ConfigPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("openclaw: no openclaw.json in %s: give the OpenClaw state directory with --from", in.Dir)
		}
		return nil, fmt.Errorf("openclaw: %w", err)
	}
	if err := decodeConfig(data, &in.Config); err != nil {
		return nil, fmt.Errorf("openclaw: %s: %w", in.ConfigPath, err)
	}
	in.JobsPath = filepath.Join(in.Dir, "cron", "jobs.json")
	if s := in.Config.Cron.Store; s != "" {
		in.JobsPath = expandHome(s, in.Dir)
	}
	if data, err := readCapped(in.JobsPath); err == nil {
		jobs, err := decodeJobs(data)
		if err != nil {
			return nil, fmt.Errorf("openclaw: %s: %w", in.JobsPath, err)
		}
		in.Jobs = jobs
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("openclaw: %w", err)
	}
	return in, nil
}

func readCapped(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxConfigBytes {
		return nil, fmt.Errorf("%s is larger than %d MB", path, maxConfigBytes>>20)
	}
	return os.ReadFile(path)
}

// decodeConfig decodes openclaw.json, keeping the keys as written for the report.
func decodeConfig(data []byte, f *File) error {
	js, err := JSON5ToJSON(data)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(js, f); err != nil {
		return fmt.Errorf("json5: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		return fmt.Errorf("json5: %w", err)
	}
	f.keys = sortedKeys(top)
	f.sections = map[string]map[string]json.RawMessage{}
	for k, raw := range top {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			f.sections[k] = obj
		}
	}
	if raw := top["agents"]; raw != nil {
		_ = json.Unmarshal(raw, &f.Agents.raw)
		var list struct {
			List    []map[string]json.RawMessage `json:"list"`
			Entries json.RawMessage              `json:"entries"`
		}
		_ = json.Unmarshal(raw, &list)
		for i := range f.Agents.List {
			if i < len(list.List) {
				f.Agents.List[i].keys = sortedKeys(list.List[i])
			}
		}
		f.Agents.order = objectKeyOrder(list.Entries)
		var def map[string]json.RawMessage
		_ = json.Unmarshal(f.Agents.raw["defaults"], &def)
		f.Agents.Defaults.keys = sortedKeys(def)
	}
	return nil
}

// decodeJobs reads cron/jobs.json: {version, jobs: [...]} or a bare list.
func decodeJobs(data []byte) ([]CronJob, error) {
	js, err := JSON5ToJSON(data)
	if err != nil {
		return nil, err
	}
	var wrapped struct {
		Jobs []CronJob `json:"jobs"`
	}
	if err := json.Unmarshal(js, &wrapped); err == nil {
		return wrapped.Jobs, nil
	}
	var list []CronJob
	if err := json.Unmarshal(js, &list); err != nil {
		return nil, fmt.Errorf("json5: %w", err)
	}
	return list, nil
}

// objectKeyOrder returns the keys of a JSON object in the order written.
func objectKeyOrder(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return keys
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys
		}
	}
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// expandHome resolves ~/ against the user's home, and a relative path against base.
func expandHome(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(base, p)
	}
	return p
}
