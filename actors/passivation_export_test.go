package actors

import "time"

// SessionCounts returns the sessions in the Router's map and the Session actors it has not
// yet seen terminate (live ones included).
func (rt *Runtime) SessionCounts() (live, actors int) {
	reply := make(chan [2]int, 1)
	rt.system.Root.Send(rt.router, &sessionCounts{reply: reply})
	select {
	case n := <-reply:
		return n[0], n[1]
	case <-time.After(20 * time.Second):
		return -1, -1
	}
}

// Processes returns how many processes the actor system's registry holds: every live actor,
// plus futures waiting for a reply.
func (rt *Runtime) Processes() int {
	n := 0
	for _, m := range rt.system.ProcessRegistry.LocalPIDs.LocalPIDs {
		n += m.Count()
	}
	return n
}
