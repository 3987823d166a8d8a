package actors

import (
	"testing"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
	"github.com/reefgw/reef/tools"
)

// StorageStats returns how many commits Storage made and how many writes they carried.
func StorageStats() (commits, writes, nanos int64) {
	return storageStats.commits.Load(), storageStats.writes.Load(), storageStats.nanos.Load()
}

// NoTools returns an empty tool registry and the policy that allows it, for tests whose
// agent needs no tools.
func NoTools(tb testing.TB) (*tools.Registry, tools.Policy) {
	tb.Helper()
	reg, err := tools.NewRegistry()
	if err != nil {
		tb.Fatal(err)
	}
	policy, err := tools.NewPolicy(nil, nil, reg.Names())
	if err != nil {
		tb.Fatal(err)
	}
	return reg, policy
}

// RouteInbound hands in to the Router as a Connector or another Session would.
func (rt *Runtime) RouteInbound(in messages.Inbound) {
	rt.system.Root.Send(rt.router, &routeInbound{in: in})
}

// CrashRouter makes the Router panic in its Receive, as a bug in one of its handlers would
// (a nil *routeInbound); the Gateway restarts it after its backoff.
func (rt *Runtime) CrashRouter() { rt.system.Root.Send(rt.router, (*routeInbound)(nil)) }

// CrashStorage makes Storage panic in its Receive (a nil *pruneSeen); the Gateway restarts it.
func (rt *Runtime) CrashStorage() { rt.system.Root.Send(rt.storage, (*pruneSeen)(nil)) }

// WriteAsync sends Storage a write and returns where its outcome will arrive. Writes and
// crashes sent from one goroutine reach Storage in that order.
func (rt *Runtime) WriteAsync(apply func(persistence.Tx) error) <-chan error {
	done := make(chan error, 1)
	rt.system.Root.Send(rt.storage, &storeWrite{Apply: apply, Done: func(err error) { done <- err }})
	return done
}
