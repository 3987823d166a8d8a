//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// The passivated scenario: -n chats send one message each (the burst), on a gateway whose
// conversations are unloaded after a minute of silence (session.idleMinutes 1). Once `reef
// status` reports no live session, the gateway's memory is sampled every second for
// -idle-for: what a gateway that has served n conversations keeps of them.

// passivateWithin bounds the wait for every conversation to be unloaded.
const passivateWithin = 5 * time.Minute

// passivatedResult is the memory of the gateway once every conversation was unloaded.
type passivatedResult struct {
	Stored        int     `json:"stored"`        // sessions in the database
	WaitedSeconds float64 `json:"waitedSeconds"` // last reply → no live session
	WindowSeconds float64 `json:"windowSeconds"`
	// Peak*: the highest of each figure over the window; Last*: its last sample.
	PeakAnonMB    float64 `json:"peakAnonMB"`
	PeakPSSMB     float64 `json:"peakPssMB"`
	PeakPssAnonMB float64 `json:"peakPssAnonMB"`
	PeakRSSMB     float64 `json:"peakRssMB"`
	LastAnonMB    float64 `json:"lastAnonMB"`
	LastPSSMB     float64 `json:"lastPssMB"`
	LastPssAnonMB float64 `json:"lastPssAnonMB"`
	LastRSSMB     float64 `json:"lastRssMB"`
}

// statusSessions matches the sessions line of `reef status` while the gateway runs.
var statusSessions = regexp.MustCompile(`sessions: (\d+) stored, (\d+) live`)

// liveSessions runs `reef status` against the rig's home and returns the stored and live
// sessions it reports.
func (r *benchRig) liveSessions(ctx context.Context) (stored, live int, err error) {
	cmd := exec.CommandContext(ctx, r.exe, "status")
	cmd.Env = benchChildEnv(r.home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, 0, fmt.Errorf("reef status: %v\n%s", err, out)
	}
	m := statusSessions.FindSubmatch(out)
	if m == nil {
		return 0, 0, fmt.Errorf("reef status: no sessions line with live sessions in:\n%s", out)
	}
	stored, _ = strconv.Atoi(string(m[1]))
	live, _ = strconv.Atoi(string(m[2]))
	return stored, live, nil
}

// awaitPassivated waits until the gateway has no live session, then samples its memory.
func awaitPassivated(ctx context.Context, rig *benchRig, child *benchChild, o benchOpts) (*passivatedResult, error) {
	res := &passivatedResult{}
	start := time.Now()
	for {
		stored, live, err := rig.liveSessions(ctx)
		if err != nil {
			return nil, err
		}
		if live == 0 {
			res.Stored = stored
			break
		}
		fmt.Fprintf(o.progress, "reef-bench passivated: %d of %d sessions still live after %.0fs\n", live, stored, time.Since(start).Seconds())
		if time.Since(start) > passivateWithin {
			return nil, fmt.Errorf("%d sessions still live %v after the last reply", live, passivateWithin)
		}
		select {
		case <-time.After(5 * time.Second):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	res.WaitedSeconds = time.Since(start).Seconds()
	stop := sampleMem(child.pid(), time.Second)
	select {
	case <-time.After(o.idleFor):
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
	peaks := stop()
	var last procStat
	if err := readMem(child.pid(), &last); err != nil {
		return nil, err
	}
	res.WindowSeconds = o.idleFor.Seconds()
	res.PeakAnonMB, res.PeakPSSMB, res.PeakPssAnonMB, res.PeakRSSMB = kbMB(peaks.anonKB), kbMB(peaks.pssKB), kbMB(peaks.pssAnonKB), kbMB(peaks.rssKB)
	res.LastAnonMB, res.LastPSSMB, res.LastPssAnonMB, res.LastRSSMB = kbMB(last.anonKB), kbMB(last.pssKB), kbMB(last.pssAnonKB), kbMB(last.rssKB)
	return res, nil
}

// printPassivated prints the passivated scenario's memory.
func printPassivated(w io.Writer, r benchResult) {
	p := r.Passivated
	fmt.Fprintf(w, "passivated: %d conversations stored, none live %.0fs after the last reply (peak anon while answering %.1fMB, PSS %.1fMB)\n",
		p.Stored, p.WaitedSeconds, r.PeakAnonMB, r.PeakPSSMB)
	fmt.Fprintf(w, "passivated: over %gs then: anonymous RSS peak %.1fMB, last %.1fMB; PSS peak %.1fMB (anon %.1fMB), last %.1fMB (anon %.1fMB); VmRSS last %.1fMB\n",
		p.WindowSeconds, p.PeakAnonMB, p.LastAnonMB, p.PeakPSSMB, p.PeakPssAnonMB, p.LastPSSMB, p.LastPssAnonMB, p.LastRSSMB)
}
