// Package configs holds reef's configuration: the schema, the loader (YAML with ${ENV}
// expansion and strict keys), defaults derived from the environment, and Validate.
// reef.example.yaml documents every key.
package configs

// Config is the whole configuration file.
type Config struct {
	// Home is REEF_HOME (default ~/.reef). Not read from the file.
	Home    string `yaml:"-"`
	DataDir string `yaml:"dataDir"` // default $REEF_HOME/data

	Providers map[string]ProviderConfig `yaml:"providers"` // keyed by provider name: openai, anthropic, gemini, or any name with a type
	Models    map[string]ModelConfig    `yaml:"models"`    // keyed by "provider/model"
	Agents    []AgentConfig             `yaml:"agents"`    // at least one after defaults; the first is the default agent

	LLM      LLMConfig      `yaml:"llm"`
	Session  SessionConfig  `yaml:"session"`
	Tools    ToolsConfig    `yaml:"tools"`
	Cron     CronConfig     `yaml:"cron"`
	Channels ChannelsConfig `yaml:"channels"`
	Log      LogConfig      `yaml:"log"`
	// Bindings route chats to agents (most specific match first); a chat no binding matches
	// goes to the default agent, agents[0].
	Bindings []BindingConfig `yaml:"bindings"`
	Backup   BackupConfig    `yaml:"backup"`  // automatic backups by the gateway
	Memory   MemoryConfig    `yaml:"memory"`  // memory search over the agents' notes
	MCP      MCPConfig       `yaml:"mcp"`     // MCP servers whose tools agents may use (docs/workspace.md#mcp-servers)
	Media    MediaConfig     `yaml:"media"`   // files people send and agents send back (docs/media.md)
	Gateway  GatewayConfig   `yaml:"gateway"` // the gateway's web face (docs/web.md)
	Storage  StorageConfig   `yaml:"storage"` // where the state lives: bbolt (default) or postgres (docs/scaling.md)
	Cluster  ClusterConfig   `yaml:"cluster"` // several reef nodes on one PostgreSQL (docs/scaling.md)

	unset   []unsetRef // ${VAR} references left empty by Load, reported by Validate
	aliases []string   // OpenClaw-shaped keys Load rewrote (aliases.go), reported by Notes
	renamed []string   // renamed keys read under their old names (renamed.go), reported by Notes
}

// BindingConfig routes the chats Match selects to the agent AgentID.
type BindingConfig struct {
	AgentID string       `yaml:"agentId"`
	Match   BindingMatch `yaml:"match"`
}

// BindingMatch selects chats: all of a channel, one bot account of it, or one peer (a person
// in direct messages, a group or a channel). A peer match wins over an account match, which
// wins over a channel match; among equals the first binding wins.
type BindingMatch struct {
	Channel   string     `yaml:"channel"`   // telegram | discord | feishu | terminal (required)
	AccountID string     `yaml:"accountId"` // an account under channels.<channel>.accounts, or "default"; "" = any
	Peer      *PeerMatch `yaml:"peer"`
}

// PeerMatch is one conversation partner: kind direct (id: the sender's id) or group / channel
// (id: the chat's id; a Discord channel, a Telegram or Feishu group).
type PeerMatch struct {
	Kind string `yaml:"kind"` // direct | group | channel
	ID   string `yaml:"id"`
}

// ProviderConfig is one LLM endpoint.
type ProviderConfig struct {
	Type    string `yaml:"type"`    // openai | anthropic | gemini; default: the provider's name
	BaseURL string `yaml:"baseUrl"` // default: the public endpoint of Type
	APIKey  string `yaml:"apiKey"`  // usually "${OPENAI_API_KEY}"; may be empty for local servers
}

// ModelConfig holds per-model settings.
type ModelConfig struct {
	ContextWindow int    `yaml:"contextWindow"` // tokens; default from a table of known models, else 128000
	MaxTokens     int    `yaml:"maxTokens"`     // output limit per call; 0 = provider default
	ToolMode      string `yaml:"toolMode"`      // native (default) | prompt (tools described in the prompt)
	// Vision says whether the model takes image input; default from a table of known models.
	Vision *bool `yaml:"vision"`
	// Cost is the model's price per million tokens, for the usage report (reef usage, the
	// Control UI's Usage page); zero: not priced.
	Cost ModelCost `yaml:"cost"`
}

// ModelCost is a model's price per million tokens, in whatever currency you read it in.
type ModelCost struct {
	Input     float64 `yaml:"input"`
	Output    float64 `yaml:"output"`
	CacheRead float64 `yaml:"cacheRead"` // cached input; 0: charged as input
}

// AgentConfig is one agent.
type AgentConfig struct {
	ID        string   `yaml:"id"`        // default "main"
	Name      string   `yaml:"name"`      // display name
	Model     string   `yaml:"model"`     // "provider/model"; default REEF_MODEL or the first provider with a key
	Fallbacks []string `yaml:"fallbacks"` // tried in order when the model fails
	Models    []string `yaml:"models"`    // more models a session may switch to with /model
	Workspace string   `yaml:"workspace"` // default $REEF_HOME/workspace (first agent) or $REEF_HOME/workspace-<id>
	// SystemPrompt is persona text of this agent appended to the system prompt, after the
	// workspace files (OpenClaw's agents[].systemPrompt).
	SystemPrompt string          `yaml:"systemPrompt"`
	Tools        ToolPolicy      `yaml:"tools"`
	Skills       SkillPolicy     `yaml:"skills"` // which skills it may use (docs/workspace.md#skills)
	Limits       AgentLimits     `yaml:"limits"`
	Heartbeat    HeartbeatConfig `yaml:"heartbeat"` // periodic wake-ups that read HEARTBEAT.md
	Subagents    SubagentsConfig `yaml:"subagents"` // limits on the sub-agents it spawns (docs/subagents.md)

	Compaction CompactionConfig `yaml:"compaction"` // summarizing old messages when the context fills up
	Memory     MemoryConfig     `yaml:"memory"`     // overrides of the global memory block
}

// ToolPolicy lists tool names and groups ("group:fs", "group:runtime") an agent may or may not use.
// Empty Allow means every tool; Deny wins over Allow.
type ToolPolicy struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// SkillPolicy names the skills an agent may use. Empty Allow means every skill; Deny wins.
type SkillPolicy struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// AgentLimits bound one run.
type AgentLimits struct {
	MaxToolCalls       int `yaml:"maxToolCalls"`       // per turn, default 50
	TurnTimeoutSeconds int `yaml:"turnTimeoutSeconds"` // wall time of one run, default 600
	// The same tool with the same arguments and the same result, this often in one run: the
	// model is warned to change its approach (default 10, or half of loopStopAt when that is
	// below 20), then the run stops and the user is told why (default 20).
	LoopWarnAt int `yaml:"loopWarnAt"`
	LoopStopAt int `yaml:"loopStopAt"`
	// DailyTokenBudget overrides session.dailyTokenBudget for this agent's sessions; 0 = use that.
	DailyTokenBudget int `yaml:"dailyTokenBudget"`
	// MaxReplyChunks caps the platform messages one reply is split into; the rest is replaced
	// by a note. Default 20.
	MaxReplyChunks int `yaml:"maxReplyChunks"`
	// MaxRepeatCalls is deprecated and ignored (loopWarnAt and loopStopAt replaced it); it is
	// still accepted so that files written from older examples load. Notes mentions it.
	MaxRepeatCalls int `yaml:"maxRepeatCalls"`
}

// CompactionConfig controls how an agent's conversations are kept inside the model's context
// window: when a request would exceed window − reserveTokens, the older messages are summarized
// by the model and the most recent keepRecentTokens are kept word for word.
type CompactionConfig struct {
	ReserveTokens    int   `yaml:"reserveTokens"`    // tokens kept free; 0 = max(16384, window/5), at most window/4
	KeepRecentTokens int   `yaml:"keepRecentTokens"` // recent tokens kept verbatim; 0 = 20000 (less in small windows)
	MemoryFlush      *bool `yaml:"memoryFlush"`      // let the agent write notes to memory/ first, default true
}

// Flush reports whether the memory flush runs before an automatic compaction (default true).
func (c CompactionConfig) Flush() bool { return c.MemoryFlush == nil || *c.MemoryFlush }

// LLMConfig holds settings shared by every provider.
type LLMConfig struct {
	// MaxConcurrent is a hard ceiling on the calls in flight to each provider endpoint. The
	// limit below it adapts (it starts at 1024, grows while calls succeed and shrinks when the
	// endpoint answers 429, 503 or 529); 0 (default) means no ceiling but the adaptive one.
	MaxConcurrent        int `yaml:"maxConcurrent"`
	MaxRetries           int `yaml:"maxRetries"`           // per model, default 3
	IdleTimeoutSeconds   int `yaml:"idleTimeoutSeconds"`   // stream idle watchdog, default 90
	MaxRetryAfterSeconds int `yaml:"maxRetryAfterSeconds"` // longer Retry-After fails over instead, default 30
	// MaxAnswerChars caps one model answer (text, reasoning and tool-call arguments): past it
	// reef stops reading, keeps what came with a note that it was cut and runs none of its tool
	// calls. Default 100000.
	MaxAnswerChars int `yaml:"maxAnswerChars"`
	// StreamTimeoutSeconds caps one model call's wall time however steadily it streams (the
	// idle watchdog only catches silence). Default 600.
	StreamTimeoutSeconds int `yaml:"streamTimeoutSeconds"`
	// OutageWaitMinutes bounds how long messages wait for a model whose server is unreachable
	// or overloaded before reef gives up on them and tells the chat. Default 60.
	OutageWaitMinutes int `yaml:"outageWaitMinutes"`
}

// SessionConfig shapes conversations.
type SessionConfig struct {
	IdleMinutes int    `yaml:"idleMinutes"` // passivate after this long without traffic, default 10
	DMScope     string `yaml:"dmScope"`     // main | per-peer | per-channel-peer (default) | per-account-channel-peer
	// Queue says what happens to messages sent while a run is active; QueueByChannel
	// overrides it per channel name (telegram, discord, feishu, terminal). /queue overrides
	// both for one session.
	Queue          QueueConfig            `yaml:"queue"`
	QueueByChannel map[string]QueueConfig `yaml:"queueByChannel"`
	RateLimit      RateLimitConfig        `yaml:"rateLimit"`
	// DailyTokenBudget is the input+output tokens one conversation may use per day (heartbeat,
	// cron and silent runs count); 0 (default) means no budget.
	DailyTokenBudget int `yaml:"dailyTokenBudget"`
	// GreetOnNew: after /new and /reset the agent greets the user at once in its persona (one
	// model turn). Default true.
	GreetOnNew *bool `yaml:"greetOnNew"`
	// GuestModels is what guests may choose with /model, /new <model> and /think: listed
	// (default: the agent's model and models; thinking only off, low or default) or none.
	// The owner's choices are free.
	GuestModels string `yaml:"guestModels"`
}

// Greets reports whether the agent greets the user after /new and /reset (default true).
func (s SessionConfig) Greets() bool { return s.GreetOnNew == nil || *s.GreetOnNew }

// QueueConfig is a queue mode with its settings. Zero fields inherit.
type QueueConfig struct {
	Mode       string `yaml:"mode"`       // steer (default) | followup | collect | interrupt
	DebounceMs int    `yaml:"debounceMs"` // collect: quiet window before the run, default 500
	Cap        int    `yaml:"cap"`        // most messages waiting, default 20
	Drop       string `yaml:"drop"`       // past the cap: summarize (default) | old | new
}

// RateLimitConfig is the message rate limit per sender and channel (a token bucket): Messages
// in a row, earned back evenly over PerSeconds. The terminal is exempt.
type RateLimitConfig struct {
	Messages   *int `yaml:"messages"`   // default 20; 0 disables the limit
	PerSeconds int  `yaml:"perSeconds"` // default 60
}

// ToolsConfig configures built-in tools.
type ToolsConfig struct {
	Exec ExecConfig `yaml:"exec"`
	Web  WebConfig  `yaml:"web"`
}

// WebConfig configures web_fetch and the SSRF guard that every request reef makes for the
// agent passes (docs/security.md).
type WebConfig struct {
	// AllowPrivate opens exceptions to the guard: CIDRs ("192.168.1.0/24"), addresses or host
	// names ("nas.lan") the agent may reach although they are private, loopback or reserved.
	AllowPrivate []string `yaml:"allowPrivate"`
	// Search configures web_search; without a provider the tool is not offered.
	Search WebSearchConfig `yaml:"search"`
}

// WebSearchConfig chooses web_search's provider. Without a provider, the first of
// BRAVE_API_KEY, TAVILY_API_KEY and SEARXNG_URL that is set chooses one.
type WebSearchConfig struct {
	Provider string `yaml:"provider"` // brave | tavily | searxng
	APIKey   string `yaml:"apiKey"`   // brave, tavily; default ${BRAVE_API_KEY} / ${TAVILY_API_KEY}
	BaseURL  string `yaml:"baseUrl"`  // the API's address; required for searxng (default ${SEARXNG_URL})
}

// ExecConfig configures the exec tool.
type ExecConfig struct {
	TimeoutSeconds    int `yaml:"timeoutSeconds"`    // default 120
	MaxTimeoutSeconds int `yaml:"maxTimeoutSeconds"` // default 1800
	MaxOutputBytes    int `yaml:"maxOutputBytes"`    // default 65536
	// Sandbox: auto (default: Landlock where the kernel has it, else rlimits only), off,
	// landlock or bwrap (both refuse to run commands where they are missing).
	Sandbox  string           `yaml:"sandbox"`
	Writable []string         `yaml:"writable"` // writable under landlock/bwrap besides the workspace and temp dirs
	Limits   ExecLimitsConfig `yaml:"limits"`
	// Background bounds the commands exec leaves running (background, yieldMs) and the
	// process tool's records of them.
	Background ExecBackgroundConfig `yaml:"background"`
	// Approvals: owner (default: exec in a run the owner did not start waits for the owner's
	// /approve), always (every exec waits, the owner's own too) or off.
	Approvals              string `yaml:"approvals"`
	ApprovalTimeoutSeconds int    `yaml:"approvalTimeoutSeconds"` // unanswered this long: denied; default 600
}

// ExecLimitsConfig are the rlimits of every exec command: 0 takes the default, -1 is no limit.
type ExecLimitsConfig struct {
	Processes  int `yaml:"processes"`  // processes a command may add to its user's; default 256
	FileSizeMB int `yaml:"fileSizeMB"` // largest file a command may write; default 1024
	CPUSeconds int `yaml:"cpuSeconds"` // CPU time per process; default 600
	MemoryMB   int `yaml:"memoryMB"`   // address space per process; default 4096
}

// ExecBackgroundConfig bounds exec's background processes; 0 takes the default.
type ExecBackgroundConfig struct {
	MaxRunning          int `yaml:"maxRunning"`          // running at once per conversation; default 4
	MaxTotal            int `yaml:"maxTotal"`            // running at once in the whole gateway; default 32
	MaxKept             int `yaml:"maxKept"`             // finished processes a conversation keeps for poll and log; default 16
	KeepFinishedMinutes int `yaml:"keepFinishedMinutes"` // how long a finished process is kept; default 60
	OutputBytes         int `yaml:"outputBytes"`         // output kept per process (its last bytes); default 1048576
}

// ChannelsConfig lists the channels to run with `reef gateway`. A platform runs when its
// block is present (or its token variable is set: TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN,
// FEISHU_APP_ID with FEISHU_APP_SECRET, SLACK_BOT_TOKEN with SLACK_APP_TOKEN).
type ChannelsConfig struct {
	Terminal *TerminalConfig `yaml:"terminal"`
	Telegram *TelegramConfig `yaml:"telegram"`
	Discord  *DiscordConfig  `yaml:"discord"`
	Feishu   *FeishuConfig   `yaml:"feishu"`
	Slack    *SlackConfig    `yaml:"slack"`
}

// AccessConfig says who may talk to a channel's bot. Each platform block carries these keys.
type AccessConfig struct {
	// DMPolicy for direct messages: pairing (default: an unknown sender gets a one-time code
	// the owner approves with `reef pairing approve`), allowlist (only AllowFrom), open
	// (anyone; requires AllowFrom ["*"]), disabled (no DMs).
	DMPolicy string
	// AllowFrom lists sender ids (stable platform user ids) allowed in DMs; "*" means anyone.
	AllowFrom []string
	// Groups lists group/channel ids where the bot answers; "*" means every group. Empty: none.
	Groups []string
	// RequireMention: in groups, answer only when mentioned or replied to (default true).
	RequireMention bool
	// Guests are the tools granted to (or taken from) everyone but the owner on the channel.
	Guests GuestTools
}

// GuestTools grant tools to guests (paired senders, group members, open DMs) beyond the
// read-only set they get by default, or take tools away from them; deny always wins. The
// owner is not affected (agents[].tools limits the owner).
type GuestTools struct {
	Tools         ToolPolicy                 // every guest on the channel
	GroupTools    map[string]GroupToolPolicy // the members of one group, by group id ("*": every group)
	ToolsBySender map[string]ToolPolicy      // one sender, by sender id, in direct messages and groups
}

// GroupToolPolicy grants tools in one group, and to single senders (by id) in that group.
type GroupToolPolicy struct {
	Allow    []string              `yaml:"allow"`
	Deny     []string              `yaml:"deny"`
	BySender map[string]ToolPolicy `yaml:"bySender"`
}

// TelegramConfig is a Telegram bot.
type TelegramConfig struct {
	BotToken       string   `yaml:"botToken"`      // from @BotFather; usually ${TELEGRAM_BOT_TOKEN}
	APIRoot        string   `yaml:"apiRoot"`       // default https://api.telegram.org (tests and local Bot API servers)
	Mode           string   `yaml:"mode"`          // polling (default) | webhook
	WebhookURL     string   `yaml:"webhookUrl"`    // public https URL Telegram posts to (webhook mode)
	WebhookSecret  string   `yaml:"webhookSecret"` // secret token Telegram sends back (webhook mode)
	WebhookListen  string   `yaml:"webhookListen"` // local address the webhook server listens on, default 127.0.0.1:8443
	DMPolicy       string   `yaml:"dmPolicy"`
	AllowFrom      []string `yaml:"allowFrom"`
	Groups         []string `yaml:"groups"`
	RequireMention *bool    `yaml:"requireMention"`
	// Tools for guests on this channel (GuestTools): tools.allow / tools.deny, groupTools.<id>,
	// toolsBySender.<id>.
	Tools         ToolPolicy                 `yaml:"tools"`
	GroupTools    map[string]GroupToolPolicy `yaml:"groupTools"`
	ToolsBySender map[string]ToolPolicy      `yaml:"toolsBySender"`
	// Streaming is how a run shows while the agent works (off, partial, block, progress).
	Streaming *StreamingConfig `yaml:"streaming"`
	// Accounts are more bots of this platform, by name (a-z, 0-9, '_', '-'; not "default").
	// Each inherits the keys of this block it does not set, except credentials and webhook
	// endpoints; this block's own keys run as the account "default" when it has a credential.
	Accounts map[string]*TelegramConfig `yaml:"accounts"`
}

// DiscordConfig is a Discord bot.
type DiscordConfig struct {
	Token          string   `yaml:"token"`   // bot token; usually ${DISCORD_BOT_TOKEN}
	APIBase        string   `yaml:"apiBase"` // default https://discord.com (tests)
	DMPolicy       string   `yaml:"dmPolicy"`
	AllowFrom      []string `yaml:"allowFrom"`
	Groups         []string `yaml:"groups"`
	RequireMention *bool    `yaml:"requireMention"`
	// Tools for guests on this channel (GuestTools): tools.allow / tools.deny, groupTools.<id>,
	// toolsBySender.<id>.
	Tools         ToolPolicy                 `yaml:"tools"`
	GroupTools    map[string]GroupToolPolicy `yaml:"groupTools"`
	ToolsBySender map[string]ToolPolicy      `yaml:"toolsBySender"`
	// Streaming is how a run shows while the agent works (off, partial, block, progress).
	Streaming *StreamingConfig `yaml:"streaming"`
	// Accounts are more bots of this platform, by name (a-z, 0-9, '_', '-'; not "default").
	// Each inherits the keys of this block it does not set, except credentials and webhook
	// endpoints; this block's own keys run as the account "default" when it has a credential.
	Accounts map[string]*DiscordConfig `yaml:"accounts"`
	// Shards is the number of gateway shards: "auto" (the default: as many as Discord
	// recommends, GET /gateway/bot) or a number. In a cluster the shards spread over the nodes.
	Shards string `yaml:"shards"`
}

// SlackConfig is a Slack app's bot user.
type SlackConfig struct {
	BotToken       string   `yaml:"botToken"`      // xoxb-…; usually ${SLACK_BOT_TOKEN}
	AppToken       string   `yaml:"appToken"`      // xapp-… (Socket Mode); usually ${SLACK_APP_TOKEN}
	SigningSecret  string   `yaml:"signingSecret"` // events mode: verifies Slack's requests
	Mode           string   `yaml:"mode"`          // socket (default) | events
	EventsListen   string   `yaml:"eventsListen"`  // events mode: a local address of its own; default: the web listener
	EventsPath     string   `yaml:"eventsPath"`    // events mode: path, default /slack/events (an account's /slack/events/<name>)
	APIURL         string   `yaml:"apiUrl"`        // default https://slack.com/api/ (tests)
	Buttons        bool     `yaml:"buttons"`       // Socket Mode, app with Interactivity on: approvals get buttons
	DMPolicy       string   `yaml:"dmPolicy"`
	AllowFrom      []string `yaml:"allowFrom"` // Slack user ids (U…)
	Groups         []string `yaml:"groups"`    // channel ids (C…, G…)
	RequireMention *bool    `yaml:"requireMention"`
	// Tools for guests on this channel (GuestTools): tools.allow / tools.deny, groupTools.<id>,
	// toolsBySender.<id>.
	Tools         ToolPolicy                 `yaml:"tools"`
	GroupTools    map[string]GroupToolPolicy `yaml:"groupTools"`
	ToolsBySender map[string]ToolPolicy      `yaml:"toolsBySender"`
	// Streaming is how a run shows while the agent works (off, partial, block, progress).
	Streaming *StreamingConfig `yaml:"streaming"`
	// Accounts are more apps (workspaces) by name (a-z, 0-9, '_', '-'; not "default"). Each
	// inherits the keys of this block it does not set, except credentials and the endpoint;
	// this block's own keys run as the account "default" when it has a credential.
	Accounts map[string]*SlackConfig `yaml:"accounts"`
}

// Access returns the channel's access settings with defaults.
func (s *SlackConfig) Access() AccessConfig {
	a := access(s.DMPolicy, s.AllowFrom, s.Groups, s.RequireMention)
	a.Guests = GuestTools{Tools: s.Tools, GroupTools: s.GroupTools, ToolsBySender: s.ToolsBySender}
	return a
}

// FeishuConfig is a Feishu (Lark) app bot.
type FeishuConfig struct {
	AppID             string   `yaml:"appId"`             // usually ${FEISHU_APP_ID}
	AppSecret         string   `yaml:"appSecret"`         // usually ${FEISHU_APP_SECRET}
	Domain            string   `yaml:"domain"`            // feishu (default) | lark | a base URL
	Mode              string   `yaml:"mode"`              // websocket (default) | webhook
	VerificationToken string   `yaml:"verificationToken"` // webhook mode
	EncryptKey        string   `yaml:"encryptKey"`        // webhook mode: signature check and body decryption
	WebhookListen     string   `yaml:"webhookListen"`     // webhook mode: local address, default 127.0.0.1:9000
	WebhookPath       string   `yaml:"webhookPath"`       // webhook mode: path, default /feishu/events
	DMPolicy          string   `yaml:"dmPolicy"`
	AllowFrom         []string `yaml:"allowFrom"`
	Groups            []string `yaml:"groups"`
	RequireMention    *bool    `yaml:"requireMention"`
	// Tools for guests on this channel (GuestTools): tools.allow / tools.deny, groupTools.<id>,
	// toolsBySender.<id>.
	Tools         ToolPolicy                 `yaml:"tools"`
	GroupTools    map[string]GroupToolPolicy `yaml:"groupTools"`
	ToolsBySender map[string]ToolPolicy      `yaml:"toolsBySender"`
	// Streaming is how a run shows while the agent works (off, partial, block, progress).
	Streaming *StreamingConfig `yaml:"streaming"`
	// Accounts are more bots of this platform, by name (a-z, 0-9, '_', '-'; not "default").
	// Each inherits the keys of this block it does not set, except credentials and webhook
	// endpoints; this block's own keys run as the account "default" when it has a credential.
	Accounts map[string]*FeishuConfig `yaml:"accounts"`
}

func access(policy string, allow, groups []string, mention *bool) AccessConfig {
	return AccessConfig{DMPolicy: orDefault(policy, "pairing"), AllowFrom: allow, Groups: groups,
		RequireMention: mention == nil || *mention}
}

// Access returns the channel's access settings with defaults.
func (t *TelegramConfig) Access() AccessConfig {
	a := access(t.DMPolicy, t.AllowFrom, t.Groups, t.RequireMention)
	a.Guests = GuestTools{Tools: t.Tools, GroupTools: t.GroupTools, ToolsBySender: t.ToolsBySender}
	return a
}

// Access returns the channel's access settings with defaults.
func (d *DiscordConfig) Access() AccessConfig {
	a := access(d.DMPolicy, d.AllowFrom, d.Groups, d.RequireMention)
	a.Guests = GuestTools{Tools: d.Tools, GroupTools: d.GroupTools, ToolsBySender: d.ToolsBySender}
	return a
}

// Access returns the channel's access settings with defaults.
func (f *FeishuConfig) Access() AccessConfig {
	a := access(f.DMPolicy, f.AllowFrom, f.Groups, f.RequireMention)
	a.Guests = GuestTools{Tools: f.Tools, GroupTools: f.GroupTools, ToolsBySender: f.ToolsBySender}
	return a
}

// TerminalConfig enables the terminal channel in `reef gateway` (reef chat always uses it).
type TerminalConfig struct {
	Enabled bool `yaml:"enabled"`
}

// LogConfig configures logging.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug | info (default) | warn | error
	Format string `yaml:"format"` // console (default on a terminal) | json
	File   string `yaml:"file"`   // default: $REEF_HOME/logs/reef.log for chat, stderr for gateway
}
