package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/subagent"
)

// What `reef sessions` reads, the same whether it comes from the database or, while a gateway
// holds the database, through the control socket (which runs the same code in the gateway).

// sessionFilter narrows `reef sessions list`.
type sessionFilter struct {
	Agent, Channel string
	Limit          int // 0: all
}

// sessionRow is one line of `reef sessions list`.
type sessionRow struct {
	persistence.SessionInfo
	// Live says whether the session is in the gateway's memory now: false when no gateway
	// runs, absent when the running gateway cannot tell.
	Live *bool `json:"live,omitempty"`
	// Parent is the session that spawned this one, for a sub-agent.
	Parent string `json:"parent,omitempty"`
}

// sessionList is the answer to a list: the newest rows and how many matched in all.
type sessionList struct {
	Total    int          `json:"total"`
	Sessions []sessionRow `json:"sessions"`
}

// sessionDetail is what `reef sessions show` prints.
type sessionDetail struct {
	Info    persistence.SessionInfo `json:"info"`
	Live    *bool                   `json:"live,omitempty"`
	Entries int                     `json:"entries"` // stored transcript entries, summarized ones included
	Inbox   int                     `json:"inbox"`   // accepted messages not answered yet
	Outbox  int                     `json:"outbox"`  // replies not confirmed sent yet
	// Summaries and Resets count the snapshots of each kind; Latest is the newest snapshot.
	Summaries int                   `json:"summaries"`
	Resets    int                   `json:"resets"`
	Latest    *persistence.Snapshot `json:"latest,omitempty"`
	// Recent are the last entries asked for, Marks the snapshots that fall among them.
	Recent []persistence.Entry    `json:"recent"`
	Marks  []persistence.Snapshot `json:"marks,omitempty"`
	// Parent is the link to the session that spawned this one (a sub-agent); Children are the
	// sub-agents this session spawned, oldest first.
	Parent   *subagent.Link  `json:"parent,omitempty"`
	Children []subagent.Link `json:"children,omitempty"`
}

// transcript is a whole stored conversation, for `reef sessions export`.
type transcript struct {
	Info      persistence.SessionInfo `json:"info"`
	Entries   []persistence.Entry     `json:"entries"`
	Snapshots []persistence.Snapshot  `json:"snapshots"`
}

// liveFunc reports the keys of the sessions in memory, and false if it cannot tell.
type liveFunc func() (map[string]bool, bool)

// notRunning is the liveFunc without a gateway: nothing is live.
func notRunning() (map[string]bool, bool) { return map[string]bool{}, true }

// liveOf returns a session's Live value from what live reported.
func liveOf(keys map[string]bool, known bool, key string) *bool {
	if !known {
		return nil
	}
	v := keys[key]
	return &v
}

// keyError says a key names no session, or more than one.
type keyError struct{ msg string }

func (e *keyError) Error() string { return e.msg }

// storeSessions reads sessions from a store.
type storeSessions struct {
	store persistence.Store
	live  liveFunc
}

func (s storeSessions) list(f sessionFilter) (sessionList, error) {
	var infos []persistence.SessionInfo
	var links map[string]subagent.Link
	err := s.store.View(func(r persistence.Reader) error {
		var err error
		if infos, err = r.Sessions(); err != nil {
			return err
		}
		links, err = subagent.All(r)
		return err
	})
	if err != nil {
		return sessionList{}, fmt.Errorf("list sessions: %w", err)
	}
	infos = slices.DeleteFunc(infos, func(in persistence.SessionInfo) bool {
		return f.Agent != "" && in.AgentID != f.Agent || f.Channel != "" && in.Channel != f.Channel
	})
	slices.SortFunc(infos, func(a, b persistence.SessionInfo) int {
		return cmp.Or(b.Updated.Compare(a.Updated), strings.Compare(a.Key, b.Key))
	})
	out := sessionList{Total: len(infos), Sessions: []sessionRow{}}
	if f.Limit > 0 && len(infos) > f.Limit {
		infos = infos[:f.Limit]
	}
	keys, known := s.live()
	for _, in := range infos {
		out.Sessions = append(out.Sessions, sessionRow{SessionInfo: in, Live: liveOf(keys, known, in.Key), Parent: links[in.Key].Parent})
	}
	out.Sessions = childrenUnderParents(out.Sessions)
	return out, nil
}

func (s storeSessions) show(key string, n int) (sessionDetail, error) {
	var d sessionDetail
	var snaps []persistence.Snapshot
	err := s.store.View(func(r persistence.Reader) error {
		var err error
		if d.Info, err = resolveKey(r, key); err != nil {
			return err
		}
		key = d.Info.Key
		entries, err := r.Messages(key, 0)
		if err != nil {
			return err
		}
		d.Entries, d.Recent = len(entries), entries[max(0, len(entries)-n):]
		if snaps, err = r.Snapshots(key); err != nil {
			return err
		}
		inbox, err := r.Inbox(key)
		if err != nil {
			return err
		}
		outbox, err := r.Outbox(key)
		d.Inbox, d.Outbox = len(inbox), len(outbox)
		if err != nil {
			return err
		}
		if l, ok, err := subagent.Get(r, key); err != nil {
			return err
		} else if ok {
			d.Parent = &l
		}
		d.Children, err = subagent.Children(r, key)
		return err
	})
	if err != nil {
		return d, err
	}
	for i, snap := range snaps {
		if snap.Kind == persistence.SnapshotReset {
			d.Resets++
		} else {
			d.Summaries++
		}
		if i == len(snaps)-1 {
			d.Latest = &snaps[i]
		}
		// A snapshot sits after the entry it covers up to: it shows if that entry, or the one
		// after it, is shown.
		if len(d.Recent) > 0 && snap.Seq+1 >= d.Recent[0].Seq && snap.Seq <= d.Recent[len(d.Recent)-1].Seq {
			d.Marks = append(d.Marks, snap)
		}
	}
	keys, known := s.live()
	d.Live = liveOf(keys, known, d.Info.Key)
	return d, nil
}

func (s storeSessions) export(key string) (transcript, error) {
	var tr transcript
	err := s.store.View(func(r persistence.Reader) error {
		var err error
		if tr.Info, err = resolveKey(r, key); err != nil {
			return err
		}
		if tr.Entries, err = r.Messages(tr.Info.Key, 0); err != nil {
			return err
		}
		tr.Snapshots, err = r.Snapshots(tr.Info.Key)
		return err
	})
	return tr, err
}

// resolveKey finds the session key names: the exact key, else the one key that starts with
// it or ends with it after a ":" (telegram:direct:42 for agent:main:telegram:direct:42).
func resolveKey(r persistence.Reader, key string) (persistence.SessionInfo, error) {
	if info, ok, err := r.Session(key); err != nil || ok {
		return info, err
	}
	infos, err := r.Sessions()
	if err != nil {
		return persistence.SessionInfo{}, err
	}
	var found []persistence.SessionInfo
	for _, in := range infos {
		if key != "" && (strings.HasPrefix(in.Key, key) || strings.HasSuffix(in.Key, ":"+key)) {
			found = append(found, in)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return persistence.SessionInfo{}, &keyError{fmt.Sprintf("no session %q (see `reef sessions list` for the keys)", key)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%q matches %d sessions; give more of the key:", key, len(found))
	for i, in := range found {
		if i == 10 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(found)-i)
			break
		}
		b.WriteString("\n  " + in.Key)
	}
	return persistence.SessionInfo{}, &keyError{b.String()}
}

// childrenUnderParents moves each sub-agent's row right below its parent's (and its own
// children below it), keeping the order of everything else.
func childrenUnderParents(rows []sessionRow) []sessionRow {
	shown := map[string]bool{}
	for _, r := range rows {
		shown[r.Key] = true
	}
	kids := map[string][]sessionRow{}
	var top []sessionRow
	for _, r := range rows {
		if r.Parent != "" && shown[r.Parent] {
			kids[r.Parent] = append(kids[r.Parent], r)
		} else {
			top = append(top, r)
		}
	}
	out := make([]sessionRow, 0, len(rows))
	var add func(r sessionRow)
	add = func(r sessionRow) {
		out = append(out, r)
		for _, k := range kids[r.Key] {
			add(k)
		}
	}
	for _, r := range top {
		add(r)
	}
	return out
}
