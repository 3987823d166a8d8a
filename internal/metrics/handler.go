package metrics

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/rs/zerolog"
)

// Source is what Handler asks the gateway at scrape time. Nil fields are left out.
type Source struct {
	LiveSessions   func() int
	StoredSessions func() (int, error) // bolt.Store.SessionCount
	Connectors     func() []Connector
	Storage        func() bool // whether the database answers (false during a storage outage)
	Log            zerolog.Logger
}

// Connector is a channel account's state (actors.ChannelHealth).
type Connector struct {
	Name     string
	Up       bool
	Restarts int
}

// ContentType is Prometheus' text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler serves m and src in Prometheus' text format (GET /metrics).
func Handler(m *Metrics, src Source) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET")
			http.Error(w, "use GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", ContentType)
		bw := bufio.NewWriter(w)
		m.write(bw, src)
		_ = bw.Flush()
	})
}

// write writes every metric. A source that fails is left out and logged.
func (m *Metrics) write(w *bufio.Writer, src Source) {
	e := &expo{w: w}
	counterVecOut(e, "reef_messages_in_total", "Messages people sent that reef accepted, by channel.", []string{"channel"}, &m.messagesIn)
	counterVecOut(e, "reef_messages_out_total", "Replies reef stored for delivery, by channel.", []string{"channel"}, &m.messagesOut)
	counterVecOut(e, "reef_runs_total", "Agent runs by outcome (ok, error, cancelled).", []string{"outcome"}, &m.runs)
	counterVecOut(e, "reef_tool_calls_total", "Tool calls by tool and outcome (ok, error).", []string{"tool", "outcome"}, &m.toolCalls)
	counterVecOut(e, "reef_api_requests_total", "Requests to the OpenAI-compatible API, by key name (gateway: the gateway token).", []string{"key"}, &m.apiRequests)
	e.header("reef_model_call_duration_seconds", "Model calls: time from the request to the end of the answer, by provider and model.", "histogram")
	keys, hs := m.modelCalls.snapshot()
	for i, k := range keys {
		e.histogram("reef_model_call_duration_seconds", labelPairs([]string{"provider", "model"}, k), hs[i])
	}
	counterVecOut(e, "reef_model_call_errors_total", "Model calls that failed, by provider and model.", []string{"provider", "model"}, &m.modelErrors)
	counterVecOut(e, "reef_model_tokens_total", "Tokens by provider, model and kind (input, output, cache_read, cache_write).",
		[]string{"provider", "model", "kind"}, &m.tokens)

	if m.stored.primed.Load() { // else not known yet (Prime)
		e.gauge("reef_queue_depth", "Messages accepted and not yet answered (stored inbox rows).", nonNegative(m.stored.inbox.Load()))
		e.gauge("reef_outbox_backlog", "Replies not yet confirmed sent (stored outbox rows).", nonNegative(m.stored.outbox.Load()))
	}
	if src.LiveSessions != nil {
		e.gauge("reef_sessions_live", "Sessions in memory (not passivated).", int64(src.LiveSessions()))
	}
	if src.StoredSessions != nil {
		if n, err := src.StoredSessions(); err != nil {
			src.Log.Warn().Err(err).Msg("metrics: counting the stored sessions")
		} else {
			e.gauge("reef_sessions_stored", "Sessions in the store.", int64(n))
		}
	}
	e.gauge("reef_subagents_running", "Sub-agent runs started and not yet ended.", nonNegative(m.subagents.Load()))
	e.header("reef_storage_commit_duration_seconds", "Store transactions: time to apply and commit (fsync), each.", "histogram")
	e.histogram("reef_storage_commit_duration_seconds", "", m.commits)
	e.header("reef_storage_commit_errors_total", "Store transactions that failed.", "counter")
	e.sample("reef_storage_commit_errors_total", "", strconv.FormatUint(m.commitErrs.Load(), 10))
	if src.Storage != nil {
		up := int64(0)
		if src.Storage() {
			up = 1
		}
		e.gauge("reef_storage_up", "Whether the database answers (1), or reef waits for it with its writes held (0: a storage outage).", up)
	}
	if src.Connectors != nil {
		cs := src.Connectors()
		e.header("reef_connector_up", "Whether a channel account is connected: its last call to the platform succeeded (1), or it is connecting, reconnecting or failed (0).", "gauge")
		for _, c := range cs {
			up := "0"
			if c.Up {
				up = "1"
			}
			e.sample("reef_connector_up", labelPairs([]string{"channel"}, c.Name), up)
		}
		e.header("reef_connector_restarts_total", "Restarts of a channel account's connection after it failed.", "counter")
		for _, c := range cs {
			e.sample("reef_connector_restarts_total", labelPairs([]string{"channel"}, c.Name), strconv.Itoa(c.Restarts))
		}
	}
	var lost uint64
	if dropped, ok := m.dropped.Load().(func() uint64); ok {
		lost = dropped()
	}
	e.header("reef_events_lost_total", "Run events the bus dropped for a watcher that fell behind (reef events, the Live page, WebChat, the API's stream); the metrics themselves miss none.", "counter")
	e.sample("reef_events_lost_total", "", strconv.FormatUint(lost, 10))
}

func nonNegative(n int64) int64 { return max(n, 0) }

func counterVecOut(e *expo, name, help string, labels []string, c *counterVec) {
	e.header(name, help, "counter")
	keys, vals := c.snapshot()
	for i, k := range keys {
		e.sample(name, labelPairs(labels, k), strconv.FormatUint(vals[i], 10))
	}
}

// expo writes the text exposition format.
type expo struct{ w *bufio.Writer }

func (e *expo) header(name, help, typ string) {
	fmt.Fprintf(e.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (e *expo) gauge(name, help string, v int64) {
	e.header(name, help, "gauge")
	e.sample(name, "", strconv.FormatInt(v, 10))
}

// sample writes one line; labels is `a="x",b="y"` or "".
func (e *expo) sample(name, labels, value string) {
	e.w.WriteString(name)
	if labels != "" {
		e.w.WriteByte('{')
		e.w.WriteString(labels)
		e.w.WriteByte('}')
	}
	e.w.WriteByte(' ')
	e.w.WriteString(value)
	e.w.WriteByte('\n')
}

func (e *expo) histogram(name, labels string, h *histogram) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		e.sample(name+"_bucket", labels+sep+`le="`+strconv.FormatFloat(b, 'g', -1, 64)+`"`, strconv.FormatUint(cum, 10))
	}
	cum += h.counts[len(h.bounds)].Load()
	e.sample(name+"_bucket", labels+sep+`le="+Inf"`, strconv.FormatUint(cum, 10))
	e.sample(name+"_sum", labels, strconv.FormatFloat(float64(h.sumNS.Load())/1e9, 'g', -1, 64))
	e.sample(name+"_count", labels, strconv.FormatUint(cum, 10))
}

// labelPairs renders the label names with the values joined in key.
func labelPairs(names []string, key string) string {
	vals := strings.Split(key, labelSep)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		v := ""
		if i < len(vals) {
			v = vals[i]
		}
		b.WriteString(n)
		b.WriteString(`="`)
		b.WriteString(escapeLabel(v))
		b.WriteByte('"')
	}
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(v string) string { return labelEscaper.Replace(strings.ToValidUTF8(v, "\uFFFD")) }
