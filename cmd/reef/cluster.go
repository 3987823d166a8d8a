package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/rs/zerolog"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/internal/cluster"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/persistence/postgres"
)

// workGate is the channels' and the Timer's gate in cluster mode. The channels are built
// before the database opens; the node's work holder is installed once it has (startCluster),
// before the actors start, and Hold waits for it until then.
type workGate struct {
	once   sync.Once
	ready  chan struct{}
	holder *cluster.Holder
	store  persistence.Store // the cluster's database, for the channels' shared state
}

func newWorkGate() *workGate { return &workGate{ready: make(chan struct{})} }

func (g *workGate) install(h *cluster.Holder, store persistence.Store) {
	g.once.Do(func() { g.holder, g.store = h, store; close(g.ready) })
}

// Hold implements channels.Gate and actors.WorkGate.
func (g *workGate) Hold(ctx context.Context, unit string) (context.Context, context.CancelFunc, error) {
	select {
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case <-g.ready:
	}
	return g.holder.Hold(ctx, unit)
}

// Nodes implements channels.Spreader: the live nodes, over which a Discord bot's shards
// spread.
func (g *workGate) Nodes(ctx context.Context) (int, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-g.ready:
	}
	return g.holder.Nodes(ctx)
}

// startCluster, in cluster mode, refuses a workspace that is not shared and installs the
// node's work holder into gate (a new one when the channels have none). It returns the gate
// the Timer asks, nil without cluster mode.
func startCluster(cfg *configs.Config, store persistence.Store, gate *workGate, log zerolog.Logger) (*workGate, error) {
	if !cfg.Cluster.Enabled {
		return nil, nil
	}
	if gate == nil {
		gate = newWorkGate()
	}
	pg, ok := store.(*postgres.Store)
	if !ok {
		return nil, errors.New("cluster mode needs storage.driver: postgres")
	}
	ctx, cancel := context.WithTimeout(context.Background(), postgresConnectTimeout)
	defer cancel()
	node := cfg.Cluster.Node()
	var dirs []string
	for _, a := range cfg.Agents {
		dirs = append(dirs, a.Workspace)
	}
	if err := cluster.CheckShared(ctx, pg.Pool(), node, dirs); err != nil {
		return nil, err
	}
	work, err := cluster.NewWorkLeases(ctx, pg.Pool(), time.Duration(cfg.Cluster.LeaseTTL())*time.Second)
	if err != nil {
		return nil, err
	}
	h := cluster.NewHolder(work, node, log)
	gate.install(h, store)
	log.Info().Str("node", node).Int("leaseSeconds", cfg.Cluster.LeaseTTL()).Msg("cluster mode: workspace shared; channels' inbound loops and the timer run where their leases are")
	return gate, nil
}

// clusterView is what `reef cluster status` shows.
type clusterView struct {
	Node    string           `json:"node,omitempty"` // the node that answered (through the control socket)
	Members []clusterMember  `json:"members"`
	Work    []cluster.Work   `json:"work"`
	Parts   map[string]int   `json:"partitions"` // live partition leases per node
	Checked []workspaceCheck `json:"workspaceChecks"`
}

type clusterMember struct {
	Node         string        `json:"node"`
	HeartbeatAge time.Duration `json:"heartbeatAge"`
}

type workspaceCheck struct {
	Node    string    `json:"node"`
	Dir     string    `json:"dir"`
	Written time.Time `json:"written"`
}

type querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}

// readCluster reads the cluster's tables; a table not there yet shows as empty (the members
// and partition leases are written by the partitions' loop, the work leases by the holders).
func readCluster(ctx context.Context, q querier) (clusterView, error) {
	v := clusterView{Parts: map[string]int{}}
	var err error
	if v.Work, err = cluster.ListWork(ctx, q); err != nil {
		return v, err
	}
	err = scanRows(ctx, q, `SELECT node, extract(epoch FROM now() - heartbeat) FROM reef_members ORDER BY node`, func(r pgx.Rows) error {
		var m clusterMember
		var age float64
		err := r.Scan(&m.Node, &age)
		m.HeartbeatAge = time.Duration(age * float64(time.Second))
		v.Members = append(v.Members, m)
		return err
	})
	if err != nil {
		return v, err
	}
	err = scanRows(ctx, q, `SELECT owner, count(*) FROM reef_leases WHERE expires > now() GROUP BY owner`, func(r pgx.Rows) error {
		var owner string
		var n int
		err := r.Scan(&owner, &n)
		v.Parts[owner] = n
		return err
	})
	if err != nil {
		return v, err
	}
	err = scanRows(ctx, q, `SELECT node, dir, written FROM reef_workspace_checks ORDER BY node, dir`, func(r pgx.Rows) error {
		var c workspaceCheck
		err := r.Scan(&c.Node, &c.Dir, &c.Written)
		v.Checked = append(v.Checked, c)
		return err
	})
	return v, err
}

// scanRows runs sql and calls each for every row; a missing table is no rows.
func scanRows(ctx context.Context, q querier, sql string, each func(pgx.Rows) error) error {
	rows, err := q.Query(ctx, sql)
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			if err = each(rows); err != nil {
				break
			}
		}
		if err == nil {
			err = rows.Err()
		}
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "42P01" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster status: %w", err)
	}
	return nil
}

// serveCluster answers GET /cluster on the control socket: the database's view, from the
// gateway's own connections.
func serveCluster(rt *running, node string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pg, ok := rt.store.(*postgres.Store)
		if !ok {
			http.Error(w, "this reef is not in cluster mode (storage.driver: bbolt)", http.StatusNotFound)
			return
		}
		v, err := readCluster(r.Context(), pg.Pool())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		v.Node = node
		json.NewEncoder(w).Encode(v)
	}
}

// runCluster is `reef cluster status [-json]` and `reef cluster forget NODE`.
func runCluster(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(stdout, "usage: reef cluster status [-json] | forget NODE (cluster mode: docs/scaling.md)")
		return 0
	}
	if len(args) == 0 || args[0] != "status" && args[0] != "forget" {
		fmt.Fprintln(stderr, "usage: reef cluster status [-json] | forget NODE")
		return 2
	}
	flags, configPath := commandFlags("cluster "+args[0], stderr)
	asJSON := flags.Bool("json", false, "print JSON")
	if code, ok := parseFlags(flags, args[1:], stdout); !ok {
		return code
	}
	cfg := configOrExplain(*configPath, stderr)
	if cfg == nil {
		return 2
	}
	if !cfg.Storage.Postgres() {
		fmt.Fprintln(stderr, "reef cluster: this reef keeps its state in bbolt on one machine; cluster mode needs storage.driver: postgres (docs/scaling.md)")
		return 1
	}
	if args[0] == "forget" {
		return forgetNode(cfg, flags.Args(), stdout, stderr)
	}
	var v clusterView
	var err error
	if c := dialControl(cfg); c != nil {
		v, err = c.cluster()
	} else {
		v, err = readClusterDB(cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "reef cluster status: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(v)
		return 0
	}
	printCluster(stdout, v, cfg.Cluster.LeaseTTL())
	return 0
}

func forgetNode(cfg *configs.Config, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: reef cluster forget NODE")
		return 2
	}
	st, err := openPostgres(cfg, false)
	if err != nil {
		fmt.Fprintf(stderr, "reef cluster forget: %v\n", err)
		return 1
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), postgresConnectTimeout)
	defer cancel()
	n, err := cluster.Forget(ctx, st.Pool(), args[0])
	if err != nil {
		fmt.Fprintf(stderr, "reef cluster forget: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "forgot node %s (%d workspace checks removed)\n", args[0], n)
	return 0
}

func readClusterDB(cfg *configs.Config) (clusterView, error) {
	st, err := openPostgres(cfg, false)
	if err != nil {
		return clusterView{}, err
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), postgresConnectTimeout)
	defer cancel()
	return readCluster(ctx, st.Pool())
}

func (c *controlClient) cluster() (clusterView, error) {
	var v clusterView
	resp, err := c.http.Get("http://reef/cluster")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return v, errors.New(strings.TrimSpace(string(b)))
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// printCluster writes the view as three tables: nodes, work, workspace checks.
func printCluster(w io.Writer, v clusterView, leaseSeconds int) {
	if v.Node != "" {
		fmt.Fprintf(w, "asked node %s (through its control socket)\n\n", v.Node)
	} else {
		fmt.Fprint(w, "no gateway runs here: read from the database\n\n")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tLAST HEARTBEAT\tPARTITIONS\tSTATE")
	seen := map[string]bool{}
	for _, m := range v.Members {
		seen[m.Node] = true
		state := "live"
		if m.HeartbeatAge > time.Duration(leaseSeconds)*time.Second {
			state = "gone"
		}
		fmt.Fprintf(tw, "%s\t%s ago\t%d\t%s\n", m.Node, m.HeartbeatAge.Round(100*time.Millisecond), v.Parts[m.Node], state)
	}
	for _, wk := range v.Work { // nodes that hold work but have no members row (no partitions loop)
		if wk.Live && !seen[wk.Owner] {
			seen[wk.Owner] = true
			fmt.Fprintf(tw, "%s\t-\t%d\tholds work\n", wk.Owner, v.Parts[wk.Owner])
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORK\tHELD BY\tEPOCH\tLEASE")
	for _, wk := range v.Work {
		owner, lease := wk.Owner, "expires "+wk.Expires.Local().Format("15:04:05")
		if !wk.Live {
			owner, lease = "nobody (was "+wk.Owner+")", "free"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", wk.Name, owner, wk.Epoch, lease)
	}
	if len(v.Work) == 0 {
		fmt.Fprintln(tw, "(none yet: no node in cluster mode has started)\t\t\t")
	}
	tw.Flush()
	if len(v.Checked) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "WORKSPACE CHECK\tNODE\tWRITTEN")
		for _, c := range v.Checked {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Dir, c.Node, c.Written.Local().Format(time.DateTime))
		}
		tw.Flush()
	}
}
