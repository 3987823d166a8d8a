// Package messages holds the typed messages reef's actors exchange and the data that crosses the
// boundary between reef and the outside world (platforms, LLM providers, tools). It depends on the
// standard library only, so every other package can import it.
//
// Messages are plain structs sent as pointers and never changed after sending: copy slices before
// you keep or modify them. They carry no actor PIDs.
//
// # Flow
//
//	message          from → to                         reply
//	Inbound          Connector → Storage → Router       (Storage: InboxAppended, then routed)
//	                 Router → Session
//	Outbound         Session → Connector               OutboundSent → Session (marks outbox row)
//	TurnEvent        Turn → Session → Connector         none (progress rendering, best effort)
//	CancelRun        Connector/CLI → Router → Session   none (the current run stops; TurnFinished follows)
//
// Actor-private requests (RunTool, ToolFinished, TurnFinished, storage writes) live in package actors.
package messages
