// Package cluster holds the ownership rules of reef's cluster mode (docs/scaling.md):
// session keys hash into a fixed number of partitions, nodes register in a members table
// with a heartbeat, and each partition is owned by one node through a lease row with an
// epoch. Fence checks the lease inside the transaction of every write its owner makes, so a
// node that was paused past its lease (a GC stall, a frozen VM, a network split) can no
// longer commit anything once another node took the partition over.
//
// It is the pattern of Temporal's and Cadence's history shards, on PostgreSQL alone: no
// gossip, no Raft. Times are the database's (now()), never a node's clock.
//
// Node (node.go) is a process's membership: its loop heartbeats, renews its leases in one
// statement, and moves partitions by Plan (plan.go: even shares, as few moves as it can);
// cmd/reef starts it in cluster mode and tells the gateway's Router what it gained and lost.
// Node.Fence is what the Storage actor checks in every batch's transaction.
//
// Named units of work (work.go) are leased the same way: a channel's inbound loop, the
// Timer. A Holder (hold.go) is one node's gate to them; cmd/reef hands it to the channels
// (channels.Gate) and the Timer (actors.WorkGate) in cluster mode. CheckShared
// (workspace.go) refuses a workspace that is not the same folder on every node. The Relay
// (relay.go) is a live feed between the nodes over LISTEN/NOTIFY: what a run shows to a
// connection another node holds (a WebChat page, an API request, `reef chat`), and Ctrl-C.
package cluster
