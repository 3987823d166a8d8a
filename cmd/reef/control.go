package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/access"
	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/providers"
)

// The control socket lets commands such as `reef pairing approve` and `reef status` work
// while a gateway holds the database: they talk to it over a unix socket in the data
// directory (mode 0600, so only reef's user can use it). Without a running reef they open
// the database themselves. No process reef started is served (control_peer.go): not a
// command of the exec tool, nor anything it left behind.

func socketPath(cfg *configs.Config) string { return filepath.Join(cfg.DataDir, "reef.sock") }

// Status is what `reef status` shows.
type Status struct {
	Version      string                 `json:"version"`
	PID          int                    `json:"pid"`
	Started      time.Time              `json:"started"`
	LiveSessions int                    `json:"liveSessions"`
	Sessions     int                    `json:"sessions"`
	Channels     []actors.ChannelHealth `json:"channels"`
	Pairing      []access.Pairing       `json:"pairing"`
	// DeadLetters are messages set aside because they crashed their session every time.
	DeadLetters []actors.DeadLetter `json:"deadLetters,omitempty"`
	// DeadReplies are replies set aside because the platform refused them for too long.
	DeadReplies []actors.DeadReply `json:"deadReplies,omitempty"`
	// Approvals are the exec commands waiting for the owner's approval.
	Approvals []access.ExecRequest `json:"approvals,omitempty"`
	// HeartbeatsPaused says, per agent, why its heartbeats are paused.
	HeartbeatsPaused map[string]string `json:"heartbeatsPaused,omitempty"`
	// ModelOutages are the model endpoints whose server is down (while reef runs);
	// WaitingForModel the conversations whose messages wait for one to come back.
	ModelOutages    []providers.Outage       `json:"modelOutages,omitempty"`
	WaitingForModel []actors.WaitingForModel `json:"waitingForModel,omitempty"`
	// Web is the running gateway's web UI address ("" when off or not running).
	Web string `json:"web,omitempty"`
	// Reload is the last configuration reload's outcome (none since the start: nil).
	Reload *ReloadStatus `json:"reload,omitempty"`
	// Storage is the database's state while it is unreachable (a storage outage); nil while
	// it answers. The rest of the status that is read from the database is missing then.
	Storage *actors.StorageHealth `json:"storage,omitempty"`
}

// serveControl serves the control socket until the returned stop function is called. It is
// called after the database lock is held, so a leftover socket file is stale.
func serveControl(cfg *configs.Config, rt *running, channelNames []string, log zerolog.Logger) (stop func(), err error) {
	path := socketPath(cfg)
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	started := time.Now()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		st, err := readStatus(rt.store, liveChannelNames(rt, channelNames))
		if sh := rt.StorageHealth(); !sh.Up {
			st.Storage, err = &sh, nil // what the gateway knows without its database
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		st.PID, st.Started, st.LiveSessions, st.Channels = os.Getpid(), started, rt.LiveSessions(), rt.Health()
		st.HeartbeatsPaused = rt.HeartbeatPauses()
		st.ModelOutages = rt.outages.Outages()
		st.Web = rt.webURL
		st.Reload = reloadStatusOf(rt)
		json.NewEncoder(w).Encode(st)
	})
	serveReload(mux, rt) // reload.go
	mux.HandleFunc("POST /pairing/{action}", func(w http.ResponseWriter, r *http.Request) {
		channel, code := r.FormValue("channel"), r.FormValue("code")
		var p access.Pairing
		err := rt.Write(r.Context(), func(tx persistence.Tx) error {
			var err error
			p, err = decidePairing(tx, r.PathValue("action"), channel, code)
			return err
		})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		json.NewEncoder(w).Encode(p)
	})
	mux.HandleFunc("POST /cron/{action}", serveCron(rt))
	mux.HandleFunc("POST /memory/{action}", serveMemory(rt.memory))
	mux.HandleFunc("GET /backup", serveBackup(rt.store))
	mux.HandleFunc("GET /events", serveEvents(rt.events))
	mux.HandleFunc("GET /usage", serveUsage(rt.store, cfg))
	mux.HandleFunc("GET /cluster", serveCluster(rt, cfg.Cluster.Node())) // cluster.go
	serveApprovals(mux, rt)
	serveSessions(mux, storeSessions{store: rt.store, live: gatewayLive(rt.Runtime)})
	srv := &http.Server{Handler: guardPeers(mux, log), ConnContext: peerContext, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Msg("control socket")
		}
	}()
	return func() {
		rt.events.Close() // ends GET /events streams, so that Shutdown need not wait for them
		ctx, cancel := context.WithTimeout(context.Background(), controlGrace)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil { // stops accepting, waits for requests in flight
			log.Warn().Err(err).Msg("control socket: requests still running at shutdown")
			srv.Close()
		}
		os.Remove(path)
	}, nil
}

// controlGrace is how long a stopping gateway lets control requests in flight (a status, a
// backup) finish before it closes the store under them.
const controlGrace = 5 * time.Second

// decidePairing approves or denies a pending pairing request.
func decidePairing(tx persistence.Tx, action, channel, code string) (access.Pairing, error) {
	switch action {
	case "approve":
		return access.ApprovePairing(tx, channel, code, time.Now())
	case "deny":
		return access.DenyPairing(tx, channel, code, time.Now())
	}
	return access.Pairing{}, fmt.Errorf("unknown action %q", action)
}

// readStatus reads what the database says: sessions and pending pairing requests.
func readStatus(store persistence.Store, channelNames []string) (Status, error) {
	st := Status{Version: version}
	err := store.View(func(r persistence.Reader) error {
		infos, err := r.Sessions()
		if err != nil {
			return err
		}
		st.Sessions = len(infos)
		if st.DeadLetters, err = actors.ListDeadLetters(r); err != nil {
			return err
		}
		if st.DeadReplies, err = actors.ListDeadReplies(r); err != nil {
			return err
		}
		if st.Approvals, err = access.ExecRequests(r); err != nil {
			return err
		}
		if st.WaitingForModel, err = actors.ListWaitingForModel(r); err != nil {
			return err
		}
		for _, ch := range channelNames {
			ps, err := access.ListPairings(r, ch, time.Now())
			if err != nil {
				return err
			}
			st.Pairing = append(st.Pairing, ps...)
		}
		return nil
	})
	sort.Slice(st.Pairing, func(i, j int) bool { return st.Pairing[i].Created.Before(st.Pairing[j].Created) })
	return st, err
}

// controlClient talks to a running reef, if there is one.
type controlClient struct{ http *http.Client }

// dialControl returns a client for the running reef's control socket, or nil if none answers.
func dialControl(cfg *configs.Config) *controlClient {
	path := socketPath(cfg)
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	c := &controlClient{http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		}}}}
	resp, err := c.http.Get("http://reef/status")
	if err != nil {
		return nil
	}
	resp.Body.Close()
	return c
}

func (c *controlClient) status() (Status, error) {
	var st Status
	resp, err := c.http.Get("http://reef/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK { // e.g. 403: the socket does not serve this process
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return st, errors.New(strings.TrimSpace(string(b)))
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

func (c *controlClient) pairing(action, channel, code string) (access.Pairing, error) {
	var p access.Pairing
	resp, err := c.http.PostForm("http://reef/pairing/"+action, map[string][]string{"channel": {channel}, "code": {code}})
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b [512]byte
		n, _ := resp.Body.Read(b[:])
		return p, errors.New(string(b[:n]))
	}
	return p, json.NewDecoder(resp.Body).Decode(&p)
}
