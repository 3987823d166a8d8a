package web

import (
	"net/http"
	"sort"
)

// sessionsView is the Sessions page: the rows that pass the channel and agent filters, with
// the channels and agents to choose from.
type sessionsView struct {
	Query, Channel, Agent string
	Rows                  []SessionRow
	Channels, Agents      []string
}

func filterSessions(r *http.Request, query string, rows []SessionRow) sessionsView {
	v := sessionsView{Query: query, Channel: r.URL.Query().Get("channel"), Agent: r.URL.Query().Get("agent")}
	chans, agents := map[string]bool{}, map[string]bool{}
	for _, row := range rows {
		if row.Channel != "" {
			chans[row.Channel] = true
		}
		agents[row.AgentID] = true
		if (v.Channel == "" || row.Channel == v.Channel) && (v.Agent == "" || row.AgentID == v.Agent) {
			v.Rows = append(v.Rows, row)
		}
	}
	v.Channels, v.Agents = keysOf(chans), keysOf(agents)
	return v
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
