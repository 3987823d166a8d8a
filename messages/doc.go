// Package messages holds the typed messages reef's actors exchange and the data that crosses the
// boundary between reef and the outside world (platforms, LLM providers, tools). It depends on the
// standard library only, so every other package can import it.
//
// Messages are plain structs sent as pointers and never changed after sending: copy slices before
// you keep or modify them. They carry no actor PIDs.
//
// # Flow
//
//	message          from → to                              reply
//	Inbound          Connector → Storage (inbox) → Router    none; Deliver returns once it is durable
//	                 Router → Session
//	Inbound{System}  Timer → Storage (inbox + run record) →  as above; access checks do not apply
//	                 Router → Session
//	Inbound{Approval} Approvals (any node) → Storage (inbox,  none; the Session hands it to its node's
//	                 with the request's removal) → Router →  Approvals and removes it (cluster mode)
//	                 Session
//	Outbound         Session → Connector                     for an outbox row: OutboundSent once the
//	                 (a Connector to itself: pairing codes,  Connector is done with it or keeps it to
//	                 notices for refused messages)           retry; it removes the row (and the run's
//	                                                         draft) once sent
//	OutboundSent     Connector → Router → Session            none (the Session may passivate again)
//	TurnEvent        Turn → Session → Connector              none (typing, draft, progress lines)
//	CancelRun        Runtime.Cancel (Ctrl-C in reef chat)    none (the run stops; TurnFinal follows)
//	                 → Router → Session (another node's: a
//	                 cancel entry in the session's inbox)
//
// Messages private to the runtime (turnFinished, toolDone, steerMessage, storeWrite, ...) live
// in package actors.
package messages
