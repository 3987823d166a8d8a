package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/reefgw/reef/configs"
	"github.com/reefgw/reef/providers"
)

// The provider reachability probe `reef doctor` prints and the Config page's "check
// providers" shows: each provider's client pings its endpoint (lists the models) with the
// configured key, so both report the same thing in the same words.

// probeState is what a probe found.
type probeState int

const (
	probeReachable   probeState = iota // answered and took the key
	probeAuthRefused                   // answered and refused the key (401/403)
	probeUnreachable                   // no answer, or an error answer: reason says which
	probeUnchecked                     // the client has no cheap check (no providers.Pinger)
	probeBroken                        // no client: the configuration names an unknown type
)

func (s probeState) String() string {
	return [...]string{"reachable", "auth refused", "unreachable", "not checked", "misconfigured"}[s]
}

// providerProbe is one provider's probe.
type providerProbe struct {
	name    string
	pc      configs.ProviderConfig
	client  providers.Provider // nil when state is probeBroken
	state   probeState
	err     error         // why it is not reachable; the clients keep the key out of it
	latency time.Duration // of the ping
}

// probeProviders pings the named providers of cfg at once, each within timeout, and returns
// their probes in names' order. It returns when every ping has (ctx's end cuts them short).
func probeProviders(ctx context.Context, cfg *configs.Config, names []string, timeout time.Duration) []providerProbe {
	out := make([]providerProbe, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		pr := &out[i]
		pr.name, pr.pc = name, cfg.Providers[name]
		p, err := newProvider(name, pr.pc, timeout)
		if err != nil {
			pr.state, pr.err = probeBroken, err
			continue
		}
		pr.client = p
		pinger, ok := p.(providers.Pinger)
		if !ok {
			pr.state = probeUnchecked
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { // a client's bug fails its line, not the gateway
				if r := recover(); r != nil {
					pr.state, pr.err = probeUnreachable, fmt.Errorf("%s: the check panicked: %v", name, r)
				}
			}()
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			err := pinger.Ping(pctx)
			pr.latency = time.Since(start)
			switch {
			case errors.Is(err, providers.ErrAuth):
				pr.state, pr.err = probeAuthRefused, err
			case err != nil:
				pr.state, pr.err = probeUnreachable, err
			default:
				pr.state = probeReachable
			}
		}()
	}
	wg.Wait()
	return out
}
