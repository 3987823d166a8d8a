// Package usage is reef's token ledger: every finished run adds its tokens to one row per
// day, agent, model and channel (in the store's "usage" bucket, in the run's own
// transaction), and Report sums the rows by day, agent, model or channel with a cost from
// the configured per-model prices. `reef usage` and the Control UI's Usage page both read it.
package usage

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

// Bucket holds the ledger: key "day\x00agent\x00model\x00channel", value a messages.Usage.
const Bucket = "usage"

// Key names one ledger row.
type Key struct {
	Day     string // YYYY-MM-DD in the agent's time zone
	Agent   string
	Model   string // "provider/model"
	Channel string // "" for runs no channel started (cron in an isolated session, the API)
}

func (k Key) String() string {
	return strings.Join([]string{k.Day, k.Agent, k.Model, k.Channel}, "\x00")
}

func parseKey(s string) (Key, bool) {
	p := strings.Split(s, "\x00")
	if len(p) != 4 {
		return Key{}, false
	}
	return Key{Day: p[0], Agent: p[1], Model: p[2], Channel: p[3]}, true
}

// Add adds u to k's row, inside the caller's transaction. A zero u writes nothing.
func Add(tx persistence.Tx, k Key, u messages.Usage) error {
	if u == (messages.Usage{}) {
		return nil
	}
	var have messages.Usage
	b, ok, err := tx.Get(Bucket, k.String())
	if err != nil {
		return fmt.Errorf("usage: %w", err)
	}
	if ok {
		if err := json.Unmarshal(b, &have); err != nil {
			return fmt.Errorf("usage: row %q: %w", k.String(), err)
		}
	}
	b, err = json.Marshal(have.Add(u))
	if err != nil {
		return err
	}
	return tx.Put(Bucket, k.String(), b)
}

// Row is one ledger row.
type Row struct {
	Key
	messages.Usage
}

// Read returns the rows of the days from..to (YYYY-MM-DD, inclusive; "" = open), by key order.
func Read(r persistence.Reader, from, to string) ([]Row, error) {
	var out []Row
	err := r.Scan(Bucket, "", func(key string, v []byte) error {
		k, ok := parseKey(key)
		if !ok || (from != "" && k.Day < from) || (to != "" && k.Day > to) {
			return nil
		}
		var u messages.Usage
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("usage: row %q: %w", key, err)
		}
		out = append(out, Row{Key: k, Usage: u})
		return nil
	})
	return out, err
}

// Price is a model's cost in money per million tokens (the config's models.<ref>.cost).
type Price struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	CacheRead float64 `json:"cacheRead"`
}

// Cost is what u cost at p. Cache reads are part of the input tokens the providers report;
// they are charged at CacheRead (at Input when CacheRead is 0), the rest at Input.
func (p Price) Cost(u messages.Usage) float64 {
	cache := p.CacheRead
	if cache == 0 {
		cache = p.Input
	}
	fresh := u.InputTokens - u.CacheReadTokens
	if fresh < 0 {
		fresh = 0
	}
	return (float64(fresh)*p.Input + float64(u.CacheReadTokens)*cache + float64(u.OutputTokens)*p.Output) / 1e6
}

// Line is one line of a report: a day, agent, model or channel with its tokens and cost.
type Line struct {
	Name string `json:"name"`
	messages.Usage
	Cost float64 `json:"cost"`
	// Priced is false when some of its tokens are of a model without a price.
	Priced bool `json:"priced"`
}

// Total is input + output tokens.
func (l Line) Total() int { return l.InputTokens + l.OutputTokens }

// Report is the ledger summed four ways.
type Report struct {
	From     string `json:"from"` // the days it covers
	To       string `json:"to"`
	Days     []Line `json:"days"` // every day From..To, oldest first (zero lines included)
	Agents   []Line `json:"agents"`
	Models   []Line `json:"models"`
	Channels []Line `json:"channels"`
	Total    Line   `json:"total"`
}

// Build sums rows into a report of the days from..to, pricing each model by prices.
func Build(rows []Row, prices map[string]Price, from, to string) Report {
	rep := Report{From: from, To: to, Total: Line{Name: "total", Priced: true}}
	days, agents, models, chans := map[string]*Line{}, map[string]*Line{}, map[string]*Line{}, map[string]*Line{}
	for _, r := range rows {
		p, priced := prices[r.Model]
		cost := p.Cost(r.Usage)
		for _, m := range []struct {
			set  map[string]*Line
			name string
		}{{days, r.Day}, {agents, r.Agent}, {models, r.Model}, {chans, orNone(r.Channel)}} {
			l := m.set[m.name]
			if l == nil {
				l = &Line{Name: m.name, Priced: true}
				m.set[m.name] = l
			}
			l.Usage, l.Cost, l.Priced = l.Usage.Add(r.Usage), l.Cost+cost, l.Priced && priced
		}
		rep.Total.Usage, rep.Total.Cost, rep.Total.Priced = rep.Total.Usage.Add(r.Usage), rep.Total.Cost+cost, rep.Total.Priced && priced
	}
	if f, err := time.Parse(time.DateOnly, from); err == nil {
		if t, err := time.Parse(time.DateOnly, to); err == nil {
			for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
				name := d.Format(time.DateOnly)
				if l := days[name]; l != nil {
					rep.Days = append(rep.Days, *l)
				} else {
					rep.Days = append(rep.Days, Line{Name: name, Priced: true})
				}
			}
		}
	}
	rep.Agents, rep.Models, rep.Channels = sorted(agents), sorted(models), sorted(chans)
	return rep
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// sorted lists the lines by tokens, most first.
func sorted(m map[string]*Line) []Line {
	out := make([]Line, 0, len(m))
	for _, l := range m {
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Total() != out[j].Total() {
			return out[i].Total() > out[j].Total()
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Range is the days of a report ending today: the last n days, today included.
func Range(now time.Time, n int) (from, to string) {
	if n < 1 {
		n = 1
	}
	return now.AddDate(0, 0, -(n - 1)).Format(time.DateOnly), now.Format(time.DateOnly)
}
