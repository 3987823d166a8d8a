//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// The idle scenario: a gateway with Telegram, Discord and Feishu connected to their fakes,
// and nobody talking. Once all three are connected (the first getUpdates, the Discord
// session identified, Feishu's long connection up), memory is sampled every second for
// -idle-for; the idle figure is the highest sample. A short window misses the first garbage
// collections.

// idleResult is what the idle scenario measured.
type idleResult struct {
	Channels       string             `json:"channels,omitempty"`    // the channels connected when the window started
	ConnectedMs    map[string]float64 `json:"connectedMs,omitempty"` // channel → child started → connected at its fake
	ReadyMs        float64            `json:"readyMs,omitempty"`     // child started → "reef gateway ready" read
	StartupMs      float64            `json:"startupMs,omitempty"`   // process start → ready, as the gateway logs it
	FirstPollMs    float64            `json:"firstPollMs,omitempty"` // child started → first getUpdates at the fake
	IdleForSeconds float64            `json:"idleForSeconds,omitempty"`
	IdleSamples    int                `json:"idleSamples,omitempty"`
	// IdleAnonMB is the highest RssAnon sampled in the window (the heap, stacks and runtime),
	// at IdlePeakAtSeconds into it, with the PSS (Pss, Pss_Anon) and, as secondary figures,
	// the VmRSS and RssFile (the binary's pages, the mapped database) of that sample.
	IdleAnonMB        float64 `json:"idleAnonMB,omitempty"`
	IdlePSSMB         float64 `json:"idlePssMB,omitempty"`
	IdlePssAnonMB     float64 `json:"idlePssAnonMB,omitempty"`
	IdleRSSMB         float64 `json:"idleRssMB,omitempty"`
	IdleFileMB        float64 `json:"idleFileMB,omitempty"`
	IdlePeakAtSeconds float64 `json:"idlePeakAtSeconds,omitempty"`
	// The last sample of the window.
	IdleLastAnonMB float64 `json:"idleLastAnonMB,omitempty"`
	IdleLastPSSMB  float64 `json:"idleLastPssMB,omitempty"`
	IdleLastRSSMB  float64 `json:"idleLastRssMB,omitempty"`
	// After the window, one message: injected → answered, and the memory then.
	WakeReplyMs float64 `json:"wakeReplyMs,omitempty"`
	WakeAnonMB  float64 `json:"wakeAnonMB,omitempty"`
	WakeRSSMB   float64 `json:"wakeRssMB,omitempty"`
}

// runIdle measures a started idle gateway and stops it.
func runIdle(ctx context.Context, rig *benchRig, child *benchChild, o benchOpts, res benchResult) (benchResult, error) {
	connected, err := rig.awaitConnected(ctx, child.started, 15*time.Second)
	res.ConnectedMs = connected
	if err != nil {
		return res, fmt.Errorf("%w\n%s", err, child.log.tail())
	}
	res.Channels = strings.Join(idleChannels, ", ")
	_, first := rig.pollsSeen()
	res.ReadyMs = ms(child.readyAt.Sub(child.started))
	res.StartupMs = child.startupMs
	res.FirstPollMs = ms(first.Sub(child.started))
	peak, last, n, err := sampleIdle(ctx, child.pid(), o.idleFor)
	if err != nil {
		return res, err
	}
	res.IdleForSeconds, res.IdleSamples = o.idleFor.Seconds(), n
	res.IdleAnonMB, res.IdlePSSMB, res.IdlePssAnonMB = kbMB(peak.st.anonKB), kbMB(peak.st.pssKB), kbMB(peak.st.pssAnonKB)
	res.IdleRSSMB, res.IdleFileMB = kbMB(peak.st.rssKB), kbMB(peak.st.fileKB)
	res.IdlePeakAtSeconds = peak.at.Round(time.Second).Seconds()
	res.IdleLastAnonMB, res.IdleLastPSSMB, res.IdleLastRSSMB = kbMB(last.st.anonKB), kbMB(last.st.pssKB), kbMB(last.st.rssKB)
	res.PeakRSSMB = kbMB(last.st.hwmKB)
	res.CPUSeconds = last.st.cpu.Seconds()
	if !rig.dc.Connected() || !rig.fs.Connected() {
		return res, fmt.Errorf("a channel lost its connection during the idle window (discord %v, feishu %v):\n%s",
			rig.dc.Connected(), rig.fs.Connected(), child.log.tail())
	}
	if err := wake(ctx, rig, child, &res); err != nil {
		return res, err
	}
	return res, child.stop()
}

// wake sends one message after the idle window and records how long its answer took and the
// RSS after it.
func wake(ctx context.Context, rig *benchRig, child *benchChild, res *benchResult) error {
	m := rig.inject(1, 0, false)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := waitAll(wctx, []*benchMsg{m}); err != nil {
		return fmt.Errorf("the message sent after the idle window was not answered: %w\n%s", err, child.log.tail())
	}
	rig.mu.Lock()
	res.WakeReplyMs = ms(m.replied.Sub(m.injected))
	rig.mu.Unlock()
	st, err := readProc(child.pid())
	if err != nil {
		return err
	}
	res.WakeAnonMB, res.WakeRSSMB = kbMB(st.anonKB), kbMB(st.rssKB)
	return nil
}

// idleChannels are the channels of the idle scenario, in the order they are reported.
var idleChannels = []string{"telegram", "discord", "feishu"}

// awaitConnected waits until every channel is connected at its fake: Telegram's first
// getUpdates, a Discord gateway session identified (READY sent) and live, Feishu's long
// connection open. It returns, per channel, when that was first seen after since.
func (r *benchRig) awaitConnected(ctx context.Context, since time.Time, limit time.Duration) (map[string]float64, error) {
	checks := map[string]func() bool{
		"telegram": func() bool { n, _ := r.pollsSeen(); return n > 0 },
		"discord":  r.dc.Connected,
		"feishu":   r.fs.Connected,
	}
	got := map[string]float64{}
	err := waitFor(ctx, limit, func() bool {
		for name, ok := range checks {
			if _, seen := got[name]; !seen && ok() {
				got[name] = ms(time.Since(since))
			}
		}
		return len(got) == len(checks)
	})
	if _, first := r.pollsSeen(); !first.IsZero() {
		got["telegram"] = ms(first.Sub(since))
	}
	if err != nil {
		var missing []string
		for _, name := range idleChannels {
			if _, ok := got[name]; !ok {
				missing = append(missing, name)
			}
		}
		return got, fmt.Errorf("not connected within %v of start: %s (%w)", limit, strings.Join(missing, ", "), err)
	}
	return got, nil
}

// idleSample is one reading of /proc, at when into the window.
type idleSample struct {
	at time.Duration
	st procStat
}

// sampleIdle reads pid's memory at the start of a window of length d, every second in it
// and at its end, and returns the sample with the highest anonymous RSS, the last one and how
// many were taken.
func sampleIdle(ctx context.Context, pid int, d time.Duration) (peak, last idleSample, n int, err error) {
	start := time.Now()
	for next := time.Duration(0); ; next = min(next+time.Second, d) {
		if wait := time.Until(start.Add(next)); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return peak, last, n, ctx.Err()
			}
		}
		st, err := readProc(pid)
		if err != nil {
			return peak, last, n, err
		}
		last = idleSample{at: time.Since(start), st: st}
		if n == 0 || st.anonKB > peak.st.anonKB {
			peak = last
		}
		n++
		if next == d {
			return peak, last, n, nil
		}
	}
}

func kbMB(kb int) float64 { return float64(kb) / 1024 }

// printIdle prints the idle scenario's result.
func printIdle(w io.Writer, r benchResult) {
	var conn []string
	for _, name := range strings.Split(r.Channels, ", ") {
		conn = append(conn, fmt.Sprintf("%s %.0fms", name, r.ConnectedMs[name]))
	}
	fmt.Fprintf(w, "idle: connected %s after exec (ready %.0fms; the gateway logs startup %.0fms)\n",
		strings.Join(conn, ", "), r.ReadyMs, r.StartupMs)
	fmt.Fprintf(w, "idle: over %gs, sampled every second (%d samples): anonymous RSS peak %.1fMB at %.0fs, last %.1fMB; PSS %.1fMB (anon %.1fMB) at the peak, last %.1fMB\n",
		r.IdleForSeconds, r.IdleSamples, r.IdleAnonMB, r.IdlePeakAtSeconds, r.IdleLastAnonMB, r.IdlePSSMB, r.IdlePssAnonMB, r.IdleLastPSSMB)
	fmt.Fprintf(w, "idle: secondary: VmRSS %.1fMB at the peak (%.1fMB file-backed), last %.1fMB; VmHWM since start %.1fMB\n",
		r.IdleRSSMB, r.IdleFileMB, r.IdleLastRSSMB, r.PeakRSSMB)
	fmt.Fprintf(w, "idle: then one message, answered in %.0fms; anonymous RSS after it %.1fMB (VmRSS %.1fMB)\n", r.WakeReplyMs, r.WakeAnonMB, r.WakeRSSMB)
}
