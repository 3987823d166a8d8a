// Package actors is reef's runtime: the protoactor actors that own every conversation,
// channel connection, agent run and tool call. Everything outside this package is plain Go
// (agent logic, providers, tools, channels, persistence); this package wires it into a
// supervised tree.
//
// # The tree
//
// The Gateway spawns its children in this order (gateway.go:Gateway.onStarted); actor names
// are in brackets, Turns and ToolRuns are unnamed.
//
//	Gateway [gateway]           root; restarts its children with backoff; ordered shutdown
//	├── Storage [storage]       the Store's writer (but for the memory index's own buckets, which
//	│                           package memory writes itself): group commit, answers after the commit
//	├── Approvals [approvals]   exec commands waiting for the owner's approval (approvals.go)
//	├── Router [router]         session key → Session; spawns on demand, passivates idle sessions,
//	│   │                       gates and archives sub-agents (subagent_router.go, subagent_archive.go)
//	│   ├── Session [<key>|<n>] one per conversation: transcript, queue, at most one Turn
//	│   │   └── Turn            one agent run: the LLM ↔ tools loop
//	│   │       └── ToolRun     one tool call; a crash or hang fails only this call
//	│   └── Session [agent:<id>:subagent:<uuid>|<n>]  a sub-agent: a Session like the others,
//	│                           linked to its parent Session in the store (subagent.go)
//	├── Timer [timer]           cron jobs and heartbeats: one heap of wake-ups, one clock timer
//	└── Connector [connector-<id>]  one per channel account (channels.ID: telegram, telegram:work,
//	                            terminal, webchat, openai): platform goroutine, durable accept,
//	                            ordered sends, drafts; replies leave by the account that received
//	                            the message (Session.toConnector); the owner may pause, resume
//	                            or restart its platform loop (connector_control.go)
//
// Sessions find a Connector by its name (Deps.connector, live.go: the accounts the live
// Settings run). A reload (Runtime.Reload, gateway_reload.go) swaps the Settings snapshot and
// has the Gateway stop the Connectors of removed or changed accounts, spawn the new ones, and
// send settingsChanged to the Connectors it keeps and to the Timer. In Started, at its first start and after every restart, it builds the
// Sessions' props, reads from the store the sessions with pending work and the sub-agents
// marked queued, and asks the Gateway (routerStarted); the Gateway answers connectorsReady
// once every Connector is spawned, and only then does the Router respawn those sessions and
// start its sweep ticker (router_start.go).
//
// Outside the tree, cmd/reef owns and hands over in Deps: the event bus (package events),
// the model endpoints' breakers (providers.Breakers, Deps.Outages), the background processes
// (tools/exec.Processes, Deps.Processes), and, inside the agents' tools, the memory index and
// the MCP connections.
//
// # Who starts and stops what
//
//	actor / goroutine              started by                 stopped by / ends when
//	Gateway                        Start                      Runtime.Stop (shutdown message)
//	Storage                        Gateway.Started            Gateway, after every other child stopped; drains
//	                                                          first (and on Restarting: no write is dropped)
//	Storage commit goroutine       Storage.flush              the commit returns (one at a time)
//	Storage prune ticker goroutine Storage.Started            Storage.Stopping/Restarting; it asks for
//	                                                          a dedup prune (storage_prune.go) hourly
//	Storage retry timer            Storage.onCommitted, when  it fires (storageRetryDue) or
//	(time.AfterFunc)               the database was           Storage.Stopping/Restarting
//	                               unreachable (storage_outage.go)
//	Approvals                      Gateway.Started, after     Gateway shutdown; restarted on panic
//	                               Storage, before the Router (it reloads the waiting requests)
//	approval timeout (Deps.Clock)  Approvals.arm, per request the decision; Approvals.Stopping/Restarting
//	approval backstop timer        ToolRun.ask                the decision; ToolRun.Stopping
//	Approvals store reads (cluster Approvals: a new ask, a     the read ends and answers (askFresh,
//	mode, approvals_cluster.go)    resumed call it does not   resumedRead, listRead)
//	                               know, /approvals
//	Connector                      Gateway.Started, after     Gateway shutdown; restarted on panic;
//	                               the Timer, one per account; a reload that removes or changes its
//	                               Gateway.onReload for an    account (gateway_reload.go)
//	                               account a reload adds
//	channel Run goroutine          Connector.Started          Connector.Stopping cancels its ctx
//	send/progress goroutine        Connector.next (per chat)  the job ends; Stopping waits up to 5 s
//	show timer (per started run)   Connector, TurnStarted     fires after the account's startDelayMs
//	                                                          (500 ms), or stopped by the run's reply
//	                                                          or end, or Stopping
//	draft edit wake-up (per shown  Connector.scheduleEdit     fires (editDue) when the platform's
//	run whose edit waits for its   (connector_live.go)        limits allow the edit, or stopped when
//	turn; Deps.Clock)                                         the run's draft is dropped (its reply
//	                                                          or end, a newer run, Stopping)
//	retry timer (per chat whose    Connector.park             fires after the backoff (retryDue), or
//	reply the platform refused;                               stopped by a flush (the platform answered,
//	Deps.Clock)                                               the chat wrote), or Stopping
//	send probe timer (while chats  Connector.park             fires every 5 s (probeDue): tries the
//	wait; Deps.Clock)              (probeLater)               chat that waited longest; Stopping
//	Router                         Gateway.Started            Gateway shutdown (stops every Session)
//	Timer                          Gateway.Started, after     Gateway shutdown, before Storage
//	                               Storage and the Router
//	Timer enqueue / HEARTBEAT.md   Timer                      they finish; Timer.Stopping cancels them
//	reader goroutines
//	Timer poll timer (real time)   Timer, while cron runs     no run in flight; Timer.Stopping
//	                               are in flight
//	Timer lead and refresh         Timer.Started, cluster     Timer.Stopping/Restarting; stop waits
//	goroutines (timer_cluster.go)  mode (Deps.Work)           up to 3 s for the lease to be given back
//	sweep ticker goroutine         Router (connectorsReady)   Router.Stopping/Restarting
//	cluster sweep ticker and its   Router (connectorsReady,   Router.Stopping/Restarting; the read
//	store read (cluster mode)      router_cluster.go)         ends and answers (pendingFound)
//	Session                        Router (first message or   Router passivation (Poison, after the
//	                               pending work at start)     idle check handshake), Router stop, or
//	                                                          its restart budget running out
//	sub-agent Session              Router, on startSubagent   like any Session; its slot (subagentGate,
//	                               from the parent Session    at most maxConcurrent) is freed by
//	                               after the commit of the    subagentEnded after the commit of a
//	                               spawn or of a follow-up,   run's completion when no follow-up
//	                               once it has a slot; or at  waits for it, or when it terminates;
//	                               start when it has pending  the Router asks it to passivate at
//	                               work (through the gate:    once then (subagent_archive.go)
//	                               running ones first, then
//	                               queued, in the order they
//	                               asked); or for a message
//	                               sent to it
//	sub-agent archive pass         Router sweep, when the     its Storage write answers (archiveDue);
//	(one Storage write)            earliest due time passed   one at a time
//	Turn                           Session.maybeStartTurn     itself when finished; Session stop
//	media fetch goroutine          Turn.fetchMedia, before    the files are saved (mediaFetched);
//	                               the first model call       Turn cancels its ctx
//	LLM stream goroutine           Turn.startLLM              the stream ends; Turn cancels its ctx
//	compaction goroutine           Turn.startSummary          the summary calls end; Turn cancels its ctx
//	turn timer                     Turn.Started               Turn.finish / Stopping
//	collect wake-up (Deps.Clock)   Session.waitForQuiet       it fires; a newer wait or Session.Stopping
//	outage wait (Deps.Outages      Session.awaitModel (a run  a probe answers (outageOver), the wait
//	registration) and give-up      failed on an outage)       ends, or Session.Stopping
//	timer (Deps.Clock)
//	breaker probe timer (per open  providers.Breakers, when   the probe answers; Breakers.Close
//	endpoint; probe goroutine)     a breaker opens            (cmd/reef, at shutdown)
//	record retry (Deps.Clock)      Session.onRunClosed (the   it fires; Session.Stopping
//	                               run's record and its
//	                               closing both failed)
//	background process (outside   tools/exec.Processes, for  its end or its timeout; process kill;
//	the tree; processes.go)        exec background/yieldMs    Session /stop and /new, a stopped
//	                                                          sub-agent, the Router at a sub-agent's
//	                                                          end (KillSession); cmd/reef closes the
//	                                                          owner at shutdown, before Runtime.Stop;
//	                                                          running ones are recorded (processes_restart.go)
//	event bus (outside the tree;   cmd/reef, before Start     cmd/reef at shutdown, before
//	package events)                                           Runtime.Stop (Publish after Close is a
//	                                                          no-op)
//	ToolRun                        Turn.dispatch              itself after reporting; Turn stop
//	tool goroutine                 ToolRun.Started            the tool returns; ctx cancelled at
//	                                                          the deadline; abandoned after a grace
//
// # A message's walk
//
// Each hop of a Telegram message and its answer, as file:function (files in actors/ unless
// a directory is named; telegram/ is channels/telegram/). Other channels differ only before
// deliver and in how they send.
//
//	channels/telegram/poll.go:Bot.poll          long-polls getUpdates
//	channels/telegram/poll.go:Bot.deliverBatch  updates → Inbounds (telegram/inbound.go:Bot.inbound);
//	                                            one deliver call for the batch
//	connector_intake.go:Connector.deliverAllFunc  the deliver: runs on the channel's goroutine
//	connector_intake.go:Connector.ready         valid text; access (package access), by
//	                                            connector.go:Connector.admit; the session key, of
//	                                            the agent Deps.Routes binds the chat to (package routing)
//	connector_media.go:Connector.meterMedia     files over the sender's hourly limit dropped, the
//	                                            sender told once (media.Meter)
//	connector_intake.go:Connector.acceptAll     one Storage write for the batch (intake.apply: dedup
//	                                            by MarkSeen, then the session's inbox), waited for by
//	                                            connector.go:writeAndWait; storage.go:Storage.flush
//	                                            commits it and answers after the commit
//	channels/telegram/poll.go:Bot.poll          deliver returned nil: the offset passes the update (ack)
//	connector_intake.go:Connector.deliverAllFunc  routeInbound to the Router
//	router.go:Router.onRouteInbound             forwards to the Session; Router.session spawns it
//	session.go:Session.onInbound                a command is answered here (session_commands.go)
//	session_queue.go:Session.onMessage          otherwise: start a run, or queue, steer or interrupt
//	                                            by the queue mode (sessionQueue.arrive)
//	session.go:Session.maybeStartTurn           takes the run's messages (sessionQueue.take), spawns the Turn
//	                                            with the tools its senders may use (Session.toolPolicy:
//	                                            tools.GuestPolicy per channel; the owner gets the agent's)
//	turn_media.go:Turn.fetchMedia               the messages' files (Inbound.Media, by the channel's
//	                                            channels.Fetcher) saved under inbox/<date>/ and described
//	                                            in the user entries, which the Session records (internal/media)
//	turn.go:Turn.onStarted, Turn.begin          TurnStarted; the first model call (its context carries
//	                                            the run's providers.Priority: background for heartbeat,
//	                                            cron and sub-agent runs, session.go:runPriority)
//	turn_llm.go:Turn.startLLM                   the prompt (requestPrompt) and the provider's stream in
//	                                            a goroutine (callLLM), back as llmDone
//	turn_llm.go:Turn.onLLMDone                  no tool calls: Turn.finish; else Turn.dispatch
//	turn_tools.go:Turn.dispatch                 records the calls as started (turn_started.go), then
//	                                            one ToolRun per call (toolrun.go:ToolRun.onStarted, runTool);
//	                                            Turn.precheck refuses a tool the run may not use first
//	toolrun_approval.go:ToolRun.ask             an exec that needs the owner's approval (Turn.gate,
//	                                            Deps.Approvals) asks approvals.go:Approvals.onAsk, which
//	                                            stores it and asks the owner in their chat
//	                                            (approval_notify.go); the ToolRun waits (the Turn pauses its
//	                                            timeout, the Session shows the wait) until approvalDecided:
//	                                            /approve, /deny (session_approval.go), the timeout, or
//	                                            the run ending; then it runs the tool or reports the denial
//	turn_tools.go:Turn.onToolDone               the result; Turn.maybeNextStep calls the model again
//	turn.go:Turn.finish                         turnFinished to the Session; the Turn stops
//	session_turn.go:Session.onTurnFinished      one Storage write: the run's transcript entries, its
//	                                            inbox entries removed, the reply's outbox row (settle)
//	session_turn.go:Session.onTurnRecorded      after the commit: session.go:Session.toConnector
//	connector_send.go:Connector.onOutbound      queued behind the chat's earlier jobs (Connector.enqueue)
//	connector_send.go:Connector.send            connector_draft.go:Connector.deliverByEdit moves the
//	                                            run's draft to the reply (one write, before the edit:
//	                                            Connector.takeRunDraft) or records a new one for it
//	                                            (none on a channels.OnceSender: Slack finds its
//	                                            own sends again, slack/once.go; a new message)
//	                                            (a draft sent again after a kill first sweeps what
//	                                            the cut-off send left: connector_sweep.go),
//	                                            and edits it into the reply (telegram/call.go:Bot.Edit;
//	                                            too long, or no draft possible: telegram/send.go:Bot.Send;
//	                                            no draft yet and the chat's edit would wait for its
//	                                            per-chat pace: sent as its own recorded message,
//	                                            connector_anew.go:Connector.sendAsMessage, a lost
//	                                            send found again by Connector.sweepReply),
//	                                            then deletes the outbox row in Storage: marked sent;
//	                                            a failure that may pass parks the reply at the head of
//	                                            its chat's queue (connector_retry.go:Connector.park),
//	                                            tried again after a backoff or at once when the
//	                                            platform answers (Connector.flush)
//	connector_send.go:Connector.confirm         OutboundSent → Router.forward →
//	                                            session_turn.go:Session.onOutboundSent
//
// Progress on the way: Turn.event sends TurnEvents to the Session (session.go:Session.onTurnEvent),
// which passes them on to connector_show.go:Connector.onTurnEvent (with PlanUpdated from
// turn_events.go:Turn.updatePlan, and TextStreamed from the model call's goroutine,
// turn_events.go:textStream); a run still going after the account's startDelay gets its
// draft (connector_draft.go:Connector.openDraft) and a typing indicator. The draft follows
// the run by the account's streaming mode (connector_live.go: package streaming
// renders it; edits are coalesced, paced under channels.EditLimits, and dropped when the
// reply comes, which then waits only for the chat's per-chat gap, editPacer.wait).
// Besides, the Turn publishes its run events (messages.RunEvent) on Deps.Events from its
// Receive (turn_events.go: run.start, text.delta, tool.start/end, plan.update from update_plan's
// tools.Result.Plan and from openclaw-process blocks, which agent.ParseProcess takes out of the
// reply, subagent.start, approval.wait, run.end); subagent_router.go:Router.onSubagentEnded adds
// subagent.end. The bus (package events) never blocks; cmd/reef owns it and closes it at stop.
// The web UI (package internal/web, outside the tree) is cmd/reef's too: started after the
// runtime, closed before it; its WebChat is a channel (channels/webchat) run by a Connector
// like the others, and its Live page and streamed chat text subscribe to the bus.
//
// The OpenAI-compatible API (internal/openaiapi) is a channel like the others ("openai"): an
// HTTP request delivers its message through its Connector and waits for what the Connector
// hands the channel for its chat, the reply (Send) and the run's end (Progress with TurnFinal,
// which carries the run's usage, session_turn.go:Session.onTurnRecorded). The request names
// its agent (messages.Inbound.Agent, honoured by Deps.agentFor in Connector.ready); its caller
// holds the gateway token, so it is the owner (access.APIChannel) and not rate limited. A
// request naming no session is Stateless: sessionkey.For gives it a session of its own, the
// Session runs it on the request's Context instead of a history (session.go:runHistory), takes
// no command from it, and deletes the session in the transaction that records the run
// (session_turn.go, session_record.go); the Router unloads it once idle (unloadStateless).
// A request's own tools (Inbound.ClientTools) are offered beside the agent's; a Turn whose
// model calls one parks by ending with the call: its record keeps the call without a result,
// its TurnFinal carries ClientCalls to the caller, and the next message's ToolResults open the
// next run, before anything else (turn_client.go, session_client.go).
//
// Events reef raises itself skip the Connector and its access check but take the same two
// steps, a durable inbox entry and then routeInbound to the Router: the Timer's cron jobs and
// heartbeats and a background process's exit (Runtime.ProcessExited) go through enqueue
// (inject.go), a cron run with its run record in the same transaction; a sub-agent's task and
// completion, sessions_send and subagents steer are written by the Session that raises them
// (see Sub-agents below); the greeting after /new is stored in the reset's transaction.
// CLI commands reach a running gateway through cmd/reef's control socket and the Runtime's
// methods (Write through Storage, Cron through the Timer, DecideApproval, Cancel).
//
// # Cluster mode
//
// With Deps.Cluster (cmd/reef/cluster_mode.go: internal/cluster.Node), several gateways share
// one PostgreSQL store and each session runs on the node holding its partition's lease.
// Connectors on every node accept inbound into the shared inbox as usual; the Router routes
// a message only to a session it owns (Router.owns) and leaves the others to their owner,
// which hears of the entry by the database's notification (Runtime.InboxNotified) or finds it
// by its sweep every 3 s, and spawns the Session or sends a live one inboxChanged (it reads
// its inbox again and takes what it has not taken: Session.took). Runtime.PartitionsChanged
// stops the Sessions of partitions the node lost and sweeps for those it gained. A Session
// takes its partition's lease epoch at start (0 owned by none: -1) and every write it or its
// Turn makes carries it (storeWrite.Owner, Epoch); Storage checks those leases in the batch's
// transaction and refuses only the writes of lost ones (ErrFenced, storage_fence.go). A
// Connector leaves a reply of a session it no longer owns in the outbox for the new owner.
// A sub-agent's task and completion and a /stop typed in a chat are inbox entries, so they
// reach a session on another node the same way. So are an exec approval's decision taken on
// any node (approvals_cluster.go: Approvals.decideShared writes it with the request's
// removal) and the reply to a sessions_send that waits (subagent_send.go: putReplies, with
// the receiver's run): the Session that takes such an entry hands it to its node's Approvals
// or Router and removes it without a run (session_cluster_handover.go). A Connector keeps the
// ids it sent per chat in the store too (connector_sent_cluster.go), so the message tool edits
// a message a run on another node sent. Runtime.Cancel for a session another node runs is a
// cancel entry in its inbox (cancel_cluster.go), taken the same way.
//
// # Rules
//
// Receive never waits on the network, a child process or a disk write. It may read the
// Store (a bbolt View over memory-mapped pages): Session, Timer and Approvals load their state
// in Started, the Router lists pending sessions in Started too, and a few handlers look
// up one record (the Timer's poll of cron runs in flight and its cron requests, a heartbeat's
// session, /subagents log). On PostgreSQL a read that finds the database unreachable is
// tried again until it answers (viewWaiting, storage_outage.go): the Session's and the
// Router's loads wait out a storage outage rather than go on as if the store were empty.
// It waits on other work only on the way out: Storage drains its pending writes when it
// stops (trying an unreachable database for up to 5 s), a stopping Connector lets sends in flight finish for up to
// sendGrace (5 s), and a Session that panicked waits up to 5 s for Storage to count the
// attempt (session_poison.go). Work that blocks runs in a goroutine the actor owns; results
// come back as messages to self, tagged so late results are dropped. Every such goroutine
// recovers panics, and every actor's recoverMiddleware logs a panic's stack in Receive.
//
// Supervision (a parent's props name the strategy for its children): Turn → ToolRun and
// Session → Turn stop the failed child (stopDecider; the parent turns the loss into an error
// result or a failed run); Router → Session restarts up to 3 times a minute, then stops it
// (OneForOne(3, time.Minute); a panic in Session.Receive first charges the messages in hand
// with an attempt, and one charged twice becomes a dead letter, session_poison.go); the
// Gateway restarts any of its children (Storage, Approvals, Router, Timer, Connectors) with
// protoactor's ExponentialBackoffStrategy(time.Minute, 500ms): the delay is 500 ms times the
// failures counted since the last quiet minute, without a limit. A restarted actor is a new
// instance built by its producer and sees Started again; messages its Receive was handling
// when it panicked are dropped by protoactor, and the messages sent to it meanwhile wait in
// its mailbox. Whatever the new instance needs comes from its props and the store in
// Started, never from a message sent once: Storage commits what was pending on Restarting
// (its writes' callers are answered, as on Stopping); the Router, whose Sessions protoactor
// stops before it starts again (it spawns none while restarting), rebuilds its routing and
// sub-agent gate in Started and respawns the sessions with pending work at connectorsReady,
// which the Gateway sends at every routerStarted; Approvals, the Timer and the Connectors
// stop their timers and goroutines on Restarting and reload in Started.
//
// # Tool calls across a crash
//
// A tool's side effect happens at most once across a crash (turn_started.go). Besides the
// rest of the layout (docs/architecture.md, Persistence), the store holds, in the named
// bucket runs/started, one record per recorded step of a running run, under
// "<session key>\n<n>" (n 8 digits, from 0): JSON
// {"entries": [...]} with the run's transcript entries since the previous record (the results
// of the earlier steps and the assistant message asking for this step's calls). Turn.dispatch
// writes it through Storage before the step's ToolRuns start (skipped when every call is of a
// tools.Idempotent tool, and during the memory flush); Session.onTurnFinished deletes the
// session's records in the transaction that records the run. Records left by a crash are loaded
// by Session.onStarted and given to the first run, which starts from them (Turn.resume): calls
// without a result get "interrupted: ..." unless their tool is idempotent, which runs again,
// or tools.Resumable (sessions_spawn, sessions_yield), which runs again and finds what the
// call did before: a spawn whose child is recorded under the call (subagent.Link.Call, the
// run's first inbox seq and the call id) is answered with that child (Session.childOfCall).
// Steered user entries in a record are skipped: those messages are still in the inbox.
// An exec call that was waiting for the owner's approval (its request still stored in
// approvals/pending) never ran: it is not answered as interrupted but waits again, joined to
// its stored request (Approvals.onResumedAsk).
//
// # A Session's messages
//
// A Session answers commands (/stop, /new, /status, ...) itself, in one Storage write with
// the removal of the command's inbox entry, and never sends them to the model. A message
// that arrives while a Turn runs is queued by the queue mode (session_queue.go): steer sends
// it to the Turn, which takes it in at its next boundary and reports what it took in with
// its result; followup, collect and interrupt keep it in the Session's queue. /new during a
// run waits (deferred) until the cancelled Turn is recorded, so the reset snapshot always
// follows the run's entries. After the reset is recorded the agent greets the user at once
// when Deps.Session.GreetOnNew (session_greet.go): the greeting is a System event stored in
// the inbox in the reset's transaction and queued by Session.onCommandRecorded.
//
// The message tool's edit and delete, and the ids its send reports, go through the chat's
// Connector as a messageOp queued behind the chat's replies (session_edit.go,
// connector_edit.go): the Connector keeps the ids of what it sent lately per chat, in
// memory, and changes only those messages. A send the platform refused for good is reported
// to the waiting tool as an error (sentLog.refused), so the agent never hears "sent" for it.
//
// A run that fails because every model it may use is down (providers.ErrUnavailable) is not
// answered with an error: its messages wait in the queue and the inbox, the wait is recorded
// in the named bucket runs/waiting (session key → since, notified) with the chat's notice, and
// they run again when a breaker's probe answers, or are closed past Deps.OutageWait
// (session_outage.go). A run whose record cannot be stored is closed with a "send it again"
// notice in one write, or, when nothing can be written, recorded again later and then
// answered; never both (session_record.go).
//
// # Sub-agents
//
// A run's sessions_spawn goes tool → toolsRuntime.Sessions → Router → the Session of the run
// (subagent.go:Session.spawnChild): limits checked, then one Storage write holds the child's
// link (package subagent), session info and task (a System event in its inbox, with the
// parent run's tool standing); after the commit the tool answers "accepted" and the Router
// starts the child (subagent_router.go, behind the gateway-wide gate). sessions_yield lets the
// Turn end after its step without a reply (Turn.yielded). The child's run that ends its job is
// recorded by session_turn.go:Session.onTurnFinished together with its link's status and the
// completion in the parent's inbox (subagent_child.go:subagentEnding.put, same transaction);
// after the commit the child sends subagentEnded to the Router, which frees its slot (unless
// follow-ups wait for the child's next run) and routes the completion to the parent like an
// inbound message. A stopped child's completion is recorded by the parent without a run.
// /stop, subagents kill and a stopped parent send stopSubagent down the tree. sessions_send (subagent_send.go) stores an inter-session event
// in the receiver's inbox; a waiting sender gets the receiver's answer through the Router.
// Events reef raises reach a Session from several actors and may overtake each other; a
// Session takes one whose inbox seq is above what it loaded at start (Session.loadedInbox).
//
// A child beyond the gate's maxConcurrent waits in the Router and is marked queued in its
// link (and in its parent's Session, told after the commit), running again when it gets its
// slot; messages for it stay in its inbox (a live Session is sent them, held by the Router,
// once it has its slot). The Router admits no child while it stops, so the queued marks
// survive a restart, and at start it takes the pending children back through the gate in the
// order they had (Router.startPending). A child of mode "session" takes follow-ups (subagents
// steer, sessions_send without waiting, from its parent: subagent.FollowUpSource). The parent
// stores each in the child's inbox in one write with its count in the child's link
// (subagent.FollowUp), which makes a child that ended running again, then sends startSubagent
// with it: the follow-up's run takes a slot like a new child (subagent_followup.go). The
// transaction that records the end of a child's run reads the follow-ups still in its inbox
// (subagentEnding.put): while some wait, the child stays running in its slot and its
// completion says so (SubagentDone.Pending); its parent counts it running until a completion
// covers every follow-up it sent with none pending (childDone), so each run gives exactly one
// completion and the parent's count of running children is right at each. A stop drops the
// follow-ups that wait. A finished child is unloaded at once and archived archiveAfterMinutes
// later by the Router's archive pass, from an index of due times in the store
// (subagent_archive.go; package subagent, archive.go).
//
// A protoactor detail shapes the code: Terminated (a system message) overtakes user
// messages the stopped child sent before stopping, so a "lost child" verdict is re-queued as
// a user message.
package actors
