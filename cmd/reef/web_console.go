package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reefgw/reef/internal/logring"
	"github.com/reefgw/reef/internal/web"
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
