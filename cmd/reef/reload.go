package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
)

// A running gateway re-reads its configuration on SIGHUP, on `reef reload` (the control
// socket), when reef.yaml changes (watched: reload_watch.go) and when the web UI's Config
// page saves it. A valid change is applied without a restart where the setting allows
// (configs.Diff says which do not: they are logged and shown by `reef status` until the next
// start); an invalid one is refused, its reason logged and shown, and the running
// configuration stays.

// reloader owns the gateway's configuration after start: one reload at a time.
type reloader struct {
	mu       sync.Mutex
	path     string              // the -config flag ("" for $REEF_HOME/reef.yaml)
	env      func(string) string // the environment reef started with (envSnapshot)
	log      zerolog.Logger
	rt       *running
	started  *configs.Config // what the gateway started with: restart-only keys compare to it
	cfg      *configs.Config // what runs now
	accounts map[string]configs.ChannelAccount
	last     ReloadStatus
	loaded   [sha256.Size]byte // the file's hash when last read (the watcher's compare)
}

// ReloadStatus is the last reload's outcome, for `reef status` and the web Overview.
type ReloadStatus struct {
	At     time.Time `json:"at"`
	Source string    `json:"source"` // "SIGHUP", "reef reload", "reef.yaml changed", "web UI"
	// Applied are the changes it made; Refused why it changed nothing (the old config runs).
	Applied []string `json:"applied,omitempty"`
	Refused string   `json:"refused,omitempty"`
	// Restart are the settings that differ from what the gateway started with and wait for a
	// restart (from every reload so far).
	Restart []string `json:"restart,omitempty"`
}

func newReloader(path string, cfg *configs.Config, rt *running, env func(string) string, log zerolog.Logger) *reloader {
	l := &reloader{path: path, env: env, log: log, rt: rt, started: cfg, cfg: cfg, accounts: map[string]configs.ChannelAccount{}}
	for _, a := range cfg.Channels.Accounts() {
		l.accounts[accountID(a)] = a
	}
	if data, err := os.ReadFile(l.file()); err == nil {
		l.loaded = sha256.Sum256(data)
	}
	rt.reload = l
	return l
}

// file is the configuration file reloads read and the watcher watches (it may not exist
// yet: the configuration then comes from the environment).
func (l *reloader) file() string {
	if l.path != "" {
		return l.path
	}
	return configs.DefaultPath(l.env)
}

// current is the configuration that runs now.
func (l *reloader) current() *configs.Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cfg
}

// status is the last reload's outcome (zero when none happened).
func (l *reloader) status() ReloadStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// reload reads the file and applies it; see check for what refuses it.
func (l *reloader) reload(source string) ReloadStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, err := os.ReadFile(l.file())
	if err != nil && !(errors.Is(err, os.ErrNotExist) && l.path == "") {
		return l.refuse(source, fmt.Errorf("config: %w", err))
	}
	l.loaded = sha256.Sum256(data)
	var next *configs.Config
	if l.path != "" {
		next, err = configs.Load(l.path, l.env)
	} else {
		next, err = configs.LoadDefault(l.env)
	}
	if err != nil {
		return l.refuse(source, err)
	}
	l.keepToken(next)
	return l.apply(source, next)
}

// apply applies next, a loaded and valid configuration. Called with mu held.
func (l *reloader) apply(source string, next *configs.Config) ReloadStatus {
	changes := configs.Diff(l.cfg, next)
	st := ReloadStatus{At: time.Now(), Source: source, Restart: restartPending(l.started, next)}
	var live []configs.Change
	for _, c := range changes {
		if !c.Restart {
			live = append(live, c)
		}
	}
	if len(live) > 0 {
		b, err := l.build(next, live)
		if err != nil {
			return l.refuse(source, err)
		}
		if err := l.rt.Reload(b.settings); err != nil {
			b.abort()
			return l.refuse(source, err)
		}
		b.commit()
		l.accounts = b.accounts
		for _, c := range live {
			st.Applied = append(st.Applied, c.String())
		}
	}
	l.cfg = next
	if len(changes) > 0 || l.last.Refused != "" { // "nothing changed" does not hide what the last reload did
		l.last = st
	}
	ev := l.log.Info().Str("source", source).Strs("applied", st.Applied)
	if len(st.Restart) > 0 {
		ev = l.log.Warn().Str("source", source).Strs("applied", st.Applied).Strs("needsRestart", st.Restart)
	}
	switch {
	case len(live) == 0 && len(st.Restart) == 0:
		ev.Msg("config reloaded: nothing changed")
	case len(st.Restart) > 0:
		ev.Msg("config reloaded; some settings take effect only after a restart")
	default:
		ev.Msg("config reloaded")
	}
	return st
}

// refuse records and logs a refused reload. Called with mu held.
func (l *reloader) refuse(source string, err error) ReloadStatus {
	why := strings.TrimSpace(err.Error())
	l.last = ReloadStatus{At: time.Now(), Source: source, Refused: why, Restart: l.last.Restart}
	l.log.Error().Str("source", source).Str("reason", why).
		Msg("config reload refused: the gateway keeps running the configuration it had")
	return l.last
}

// check loads data as the configuration would be read from the file and says what saving
// it would change, without applying anything (the web UI's editor).
func (l *reloader) check(data []byte) ([]configs.Change, *configs.Config, error) {
	next, err := configs.LoadBytes(l.file(), data, l.env)
	if err != nil {
		return nil, nil, err
	}
	l.keepToken(next)
	return configs.Diff(l.current(), next), next, nil
}

// keepToken gives next the running gateway token when it names none: the one generated in
// the data directory at the first start (gatewayToken) is not in the file.
func (l *reloader) keepToken(next *configs.Config) {
	if h := &next.Gateway.HTTP; h.Token == "" && !h.Off() {
		h.Token = l.started.Gateway.HTTP.Token
	}
}

// restartPending names the settings next has that the gateway did not start with and
// cannot apply while it runs.
func restartPending(started, next *configs.Config) []string {
	var out []string
	for _, c := range configs.Diff(started, next) {
		if c.Restart {
			out = append(out, c.Key)
		}
	}
	return out
}

// changedOnDisk reports whether the file's content differs from what was last read.
func (l *reloader) changedOnDisk(data []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := sha256.Sum256(data)
	return !bytes.Equal(h[:], l.loaded[:])
}

// serveReload serves POST /reload on the control socket (`reef reload`): the outcome as JSON.
func serveReload(mux *http.ServeMux, rt *running) {
	mux.HandleFunc("POST /reload", func(w http.ResponseWriter, r *http.Request) {
		if rt.reload == nil {
			http.Error(w, "this reef does not reload its configuration", http.StatusNotImplemented)
			return
		}
		json.NewEncoder(w).Encode(rt.reload.reload("reef reload"))
	})
}

// reloadStatusOf is the last reload's outcome, nil when none happened.
func reloadStatusOf(rt *running) *ReloadStatus {
	if rt.reload == nil {
		return nil
	}
	if st := rt.reload.status(); !st.At.IsZero() {
		return &st
	}
	return nil
}

// liveChannelNames are the platforms the running configuration has (pairing requests are
// listed for them); names when the gateway does not reload.
func liveChannelNames(rt *running, names []string) []string {
	if rt.reload == nil {
		return names
	}
	return configuredChannels(rt.reload.current())
}
