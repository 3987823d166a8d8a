package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reefgw/reef/actors"
	"github.com/reefgw/reef/internal/logring"
	"github.com/reefgw/reef/internal/web"
	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/redact"
	"github.com/reefgw/reef/schedule"
	ledger "github.com/reefgw/reef/usage"
)

// webBackend's web.Console: the Control UI's cron form, log viewer and usage page, through
// the code of `reef cron` (the Timer's cron actions), the gateway's log ring and `reef usage`.

var _ web.Console = (*webBackend)(nil)

// cronCallWeb performs a cron action as the operator, as `reef cron` does through the
// control socket; a refusal is the page's bad input.
func (b *webBackend) cronCallWeb(ctx context.Context, action string, args any) (json.RawMessage, error) {
	body, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := b.rt.Cron(ctx, action, body)
	switch {
	case err != nil && strings.Contains(err.Error(), "no job"):
		return nil, fmt.Errorf("%w: %v", web.ErrNotFound, err)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", web.ErrBadInput, strings.TrimPrefix(err.Error(), "cron: "))
	}
	return out, nil
}

func (b *webBackend) CronJob(ctx context.Context, id string) (web.CronDetail, error) {
	var d web.CronDetail
	out, err := b.cronCallWeb(ctx, "get", schedule.Args{ID: id})
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(out, &d.Job); err != nil {
		return d, err
	}
	if out, err = b.cronCallWeb(ctx, "runs", schedule.Args{ID: id, Limit: 50}); err != nil {
		return d, err
	}
	if err := json.Unmarshal(out, &d.Runs); err != nil {
		return d, err
	}
	slices.Reverse(d.Runs) // newest first
	return d, nil
}

func (b *webBackend) CronSave(ctx context.Context, id string, in schedule.JobInput) (schedule.Job, error) {
	a := schedule.Args{Job: &in}
	action := "add"
	if id != "" {
		a = schedule.Args{ID: id, Patch: &in}
		action = "update"
	}
	var j schedule.Job
	out, err := b.cronCallWeb(ctx, action, a)
	if err != nil {
		return j, err
	}
	return j, json.Unmarshal(out, &j)
}

func (b *webBackend) Logs(q logring.Query) []logring.Line {
	if b.rt.logs == nil {
		return nil
	}
	lines := b.rt.logs.Lines(q)
	red := redact.New(b.cfg.Secrets()...) // the ring redacts too: this is the second line
	for i := range lines {
		lines[i].Message, lines[i].Fields = red.String(lines[i].Message), red.String(lines[i].Fields)
	}
	return lines
}

func (b *webBackend) FollowLogs() (<-chan logring.Line, func()) {
	if b.rt.logs == nil {
		return nil, func() {}
	}
	return b.rt.logs.Follow()
}

func (b *webBackend) Usage(_ context.Context, days int) (ledger.Report, error) {
	return usageReport(b.rt.store, b.cfg, days, time.Now())
}

// sessionSummaries fills the Sessions page's title (the first user line), preview (the last
// message's first line) and cost (the session's tokens at its model's price) of the first
// summaryRows rows; reading transcripts costs, so the rest show the key only.
func (b *webBackend) sessionSummaries(rows []web.SessionRow) error {
	prices := modelPrices(b.cfg)
	models := map[string]string{}
	for _, a := range b.cfg.Agents {
		models[a.ID] = a.Model
	}
	return b.rt.store.View(func(r persistence.Reader) error {
		for i := range rows {
			row := &rows[i]
			model := cmp.Or(row.Model, models[row.AgentID])
			if p, ok := prices[model]; ok {
				row.Cost, row.Priced = p.Cost(row.Usage), true
			}
			if i >= summaryRows {
				continue
			}
			entries, err := r.Messages(row.Key, 0)
			if err != nil {
				return err
			}
			for _, e := range entries {
				if e.Role == messages.RoleUser {
					if t := firstLineOf(splitInbound(e.Content).text); t != "" {
						row.Title = t
						break
					}
				}
			}
			for j := len(entries) - 1; j >= 0; j-- {
				e := entries[j]
				text := e.Content
				if e.Role == messages.RoleUser {
					text = splitInbound(text).text
				}
				if e.Role != messages.RoleTool && strings.TrimSpace(text) != "" {
					row.Preview = firstLineOf(text)
					break
				}
			}
		}
		return nil
	})
}

// summaryRows is how many sessions the Sessions page shows a title and preview for.
const summaryRows = 200

// firstLineOf is s's first non-empty line, cut to 100 characters.
func firstLineOf(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			if r := []rune(line); len(r) > 100 {
				return string(r[:100]) + "…"
			}
			return line
		}
	}
	return ""
}

func (b *webBackend) ChannelAction(ctx context.Context, action, name string) error {
	if !slices.Contains(b.channelNames(), name) {
		return fmt.Errorf("%w: no channel %q", web.ErrNotFound, name)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return b.rt.ControlChannel(ctx, name, action)
}

// channelNames are the running channels' names (their connectors').
func (b *webBackend) channelNames() []string {
	var out []string
	for _, h := range b.rt.Health() {
		out = append(out, h.Name)
	}
	return out
}

// SessionAction resets or deletes a session through the runtime (actors.Runtime.SessionAdmin).
func (b *webBackend) SessionAction(ctx context.Context, action, key string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := b.rt.SessionAdmin(ctx, key, action)
	switch {
	case errors.Is(err, actors.ErrNoSession):
		return fmt.Errorf("%w: no session %q", web.ErrNotFound, key)
	case errors.Is(err, actors.ErrSessionLive):
		return fmt.Errorf("%w: %v", web.ErrBadInput, err)
	}
	return err
}
