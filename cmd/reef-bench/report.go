//go:build linux

package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// benchResult is what one scenario measured.
type benchResult struct {
	Scenario      string  `json:"scenario"`
	Platform      string  `json:"platform,omitempty"`  // burst: where the messages came from, when not Telegram
	Floor         bool    `json:"floor,omitempty"`     // measured the floor gateway (-floor), not reef
	AtOnce        bool    `json:"atOnce,omitempty"`    // chats: each chat's messages sent at once
	QueueMode     string  `json:"queueMode,omitempty"` // the gateway's session.queue.mode, when set
	Streaming     string  `json:"streaming,omitempty"` // the gateway's channels.telegram.streaming.mode, when set
	RateLimited   int     `json:"rateLimited429"`      // streaming: edits the fake refused with 429
	Chats         int     `json:"chats"`
	Messages      int     `json:"messages"`
	LLMLatencyMs  float64 `json:"llmLatencyMs"`
	WallSeconds   float64 `json:"wallSeconds"`
	RepliesPerSec float64 `json:"repliesPerSec"`
	MinMs         float64 `json:"minMs"`
	P50Ms         float64 `json:"p50Ms"`
	P95Ms         float64 `json:"p95Ms"`
	P99Ms         float64 `json:"p99Ms"`
	MaxMs         float64 `json:"maxMs"`
	// ToModelP50Ms .. ToModelMaxMs: injection to the model request that carried the message
	// (the gateway's intake, before the model's own latency).
	ToModelP50Ms float64 `json:"toModelP50Ms"`
	ToModelP99Ms float64 `json:"toModelP99Ms"`
	ToModelMaxMs float64 `json:"toModelMaxMs"`
	CPUSeconds   float64 `json:"cpuSeconds"`
	CPUMsPerMsg  float64 `json:"cpuMsPerMessage"`
	// PeakAnonMB .. PeakPssAnonMB: the highest RssAnon, Pss and Pss_Anon sampled every 100 ms
	// from the first injection to the last reply. PeakRSSMB is VmHWM, the highest VmRSS since
	// the gateway started (secondary: it counts clean file-backed pages).
	PeakAnonMB    float64 `json:"peakAnonMB"`
	PeakPSSMB     float64 `json:"peakPssMB"`
	PeakPssAnonMB float64 `json:"peakPssAnonMB"`
	PeakRSSMB     float64 `json:"peakRssMB"`
	Lost          int     `json:"lost"`
	Duplicated    int     `json:"duplicated"`
	OutOfOrder    int     `json:"chatsOutOfOrder"`
	LLMCalls      int64   `json:"llmCalls"`
	// APICalls counts the gateway's Bot API calls by method over the whole run.
	APICalls map[string]int `json:"apiCalls"`
	// Passivated: the memory once every conversation was unloaded (the passivated scenario).
	Passivated *passivatedResult `json:"passivated,omitempty"`

	idleResult
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// printBench prints the results as a table.
func printBench(w io.Writer, results []benchResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tchats\tmsgs\tLLM\twall\treplies/s\tp50\tp95\tp99\tto model p50/max\tCPU/msg\tpeak anon\tpeak PSS\tVmHWM\tlost\tdup\tout of order\t")
	var idle []benchResult
	for _, r := range results {
		if r.Scenario == "idle" {
			idle = append(idle, r)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.2fs\t%.0f\t%.0fms\t%.0fms\t%.0fms\t%.0f/%.0fms\t%.2fms\t%.1fMB\t%.1fMB\t%.1fMB\t%d\t%d\t%d\t\n",
			r.label(), r.Chats, r.Messages, time.Duration(r.LLMLatencyMs*float64(time.Millisecond)), r.WallSeconds, r.RepliesPerSec,
			r.P50Ms, r.P95Ms, r.P99Ms, r.ToModelP50Ms, r.ToModelMaxMs, r.CPUMsPerMsg, r.PeakAnonMB, r.PeakPSSMB, r.PeakRSSMB, r.Lost, r.Duplicated, r.OutOfOrder)
	}
	if len(idle) < len(results) {
		tw.Flush()
	}
	for _, r := range results {
		if r.Passivated != nil {
			printPassivated(w, r)
		}
	}
	for _, r := range idle {
		printIdle(w, r)
	}
}

// label names a result's scenario in the table, with how its messages were sent.
func (r benchResult) label() string {
	l := r.Scenario
	if r.Floor {
		l += " (floor)"
	}
	if r.AtOnce {
		l += " at once"
	}
	if r.QueueMode != "" {
		l += " (" + r.QueueMode + ")"
	}
	if r.Streaming != "" {
		l += " (" + r.Streaming + ")"
	}
	if r.Scenario == "streaming" {
		l += fmt.Sprintf(" [%d×429]", r.RateLimited)
	}
	return l
}
