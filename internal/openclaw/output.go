package openclaw

// The reef.yaml the importer writes: reef's keys (configs.Config), with omitempty so that
// only what was imported appears and reef's defaults apply to the rest.

type outConfig struct {
	Providers map[string]outProvider `yaml:"providers,omitempty"`
	Models    map[string]outModel    `yaml:"models,omitempty"`
	Agents    []outAgent             `yaml:"agents"`
	Session   *outSession            `yaml:"session,omitempty"`
	Channels  *outChannels           `yaml:"channels,omitempty"`
	Bindings  []outBinding           `yaml:"bindings,omitempty"`
	Tools     *outTools              `yaml:"tools,omitempty"`
	Memory    *outMemory             `yaml:"memory,omitempty"`
}

type outTools struct {
	Web *outWeb `yaml:"web,omitempty"`
}

type outWeb struct {
	Search *outSearch `yaml:"search,omitempty"`
}

type outSearch struct {
	Provider string `yaml:"provider"`
	APIKey   string `yaml:"apiKey,omitempty"`
}

type outMemory struct {
	Enabled  *bool    `yaml:"enabled,omitempty"`
	Provider string   `yaml:"provider,omitempty"`
	Model    string   `yaml:"model,omitempty"`
	Sources  []string `yaml:"sources,omitempty"`
}

type outProvider struct {
	Type    string `yaml:"type"`
	BaseURL string `yaml:"baseUrl,omitempty"`
	APIKey  string `yaml:"apiKey,omitempty"`
}

type outModel struct {
	ContextWindow int `yaml:"contextWindow,omitempty"`
	MaxTokens     int `yaml:"maxTokens,omitempty"`
}

type outAgent struct {
	ID           string        `yaml:"id"`
	Name         string        `yaml:"name,omitempty"`
	Model        string        `yaml:"model,omitempty"`
	Fallbacks    []string      `yaml:"fallbacks,omitempty"`
	SystemPrompt string        `yaml:"systemPrompt,omitempty"`
	Tools        *outPolicy    `yaml:"tools,omitempty"`
	Skills       *outPolicy    `yaml:"skills,omitempty"`
	Limits       *outLimits    `yaml:"limits,omitempty"`
	Heartbeat    *outHeartbeat `yaml:"heartbeat,omitempty"`
	Subagents    *outSubagents `yaml:"subagents,omitempty"`
}

type outPolicy struct {
	Allow []string `yaml:"allow,omitempty"`
	Deny  []string `yaml:"deny,omitempty"`
}

type outLimits struct {
	TurnTimeoutSeconds int `yaml:"turnTimeoutSeconds,omitempty"`
}

type outHeartbeat struct {
	Every       string          `yaml:"every,omitempty"`
	ActiveHours *outActiveHours `yaml:"activeHours,omitempty"`
	Target      string          `yaml:"target,omitempty"`
}

type outActiveHours struct {
	Start string `yaml:"start,omitempty"`
	End   string `yaml:"end,omitempty"`
	TZ    string `yaml:"tz,omitempty"`
}

type outSubagents struct {
	AllowAgents         []string `yaml:"allowAgents,omitempty"`
	MaxSpawnDepth       int      `yaml:"maxSpawnDepth,omitempty"`
	MaxChildren         int      `yaml:"maxChildren,omitempty"`
	MaxConcurrent       int      `yaml:"maxConcurrent,omitempty"`
	RunTimeoutSeconds   int      `yaml:"runTimeoutSeconds,omitempty"`
	ArchiveAfterMinutes int      `yaml:"archiveAfterMinutes,omitempty"`
}

type outSession struct {
	DMScope string    `yaml:"dmScope,omitempty"`
	Queue   *outQueue `yaml:"queue,omitempty"`
}

type outQueue struct {
	Mode       string `yaml:"mode,omitempty"`
	DebounceMs int    `yaml:"debounceMs,omitempty"`
	Cap        int    `yaml:"cap,omitempty"`
	Drop       string `yaml:"drop,omitempty"`
}

type outChannels struct {
	Telegram *outTelegram `yaml:"telegram,omitempty"`
	Discord  *outDiscord  `yaml:"discord,omitempty"`
	Feishu   *outFeishu   `yaml:"feishu,omitempty"`
	Slack    *outSlack    `yaml:"slack,omitempty"`
}

// outAccess are the access keys every platform block has.
type outAccess struct {
	DMPolicy       string   `yaml:"dmPolicy,omitempty"`
	AllowFrom      []string `yaml:"allowFrom,omitempty"`
	Groups         []string `yaml:"groups,omitempty"`
	RequireMention *bool    `yaml:"requireMention,omitempty"`
}

type outTelegram struct {
	BotToken      string `yaml:"botToken,omitempty"`
	Mode          string `yaml:"mode,omitempty"`
	WebhookURL    string `yaml:"webhookUrl,omitempty"`
	WebhookSecret string `yaml:"webhookSecret,omitempty"`
	outAccess     `yaml:",inline"`
	Accounts      map[string]*outTelegram `yaml:"accounts,omitempty"`
}

type outDiscord struct {
	Token     string `yaml:"token,omitempty"`
	outAccess `yaml:",inline"`
	Accounts  map[string]*outDiscord `yaml:"accounts,omitempty"`
}

type outFeishu struct {
	AppID             string `yaml:"appId,omitempty"`
	AppSecret         string `yaml:"appSecret,omitempty"`
	Domain            string `yaml:"domain,omitempty"`
	Mode              string `yaml:"mode,omitempty"`
	VerificationToken string `yaml:"verificationToken,omitempty"`
	EncryptKey        string `yaml:"encryptKey,omitempty"`
	WebhookListen     string `yaml:"webhookListen,omitempty"`
	WebhookPath       string `yaml:"webhookPath,omitempty"`
	outAccess         `yaml:",inline"`
	Accounts          map[string]*outFeishu `yaml:"accounts,omitempty"`
}

type outBinding struct {
	AgentID string   `yaml:"agentId"`
	Match   outMatch `yaml:"match"`
}

type outMatch struct {
	Channel   string   `yaml:"channel"`
	AccountID string   `yaml:"accountId,omitempty"`
	Peer      *outPeer `yaml:"peer,omitempty"`
}

type outPeer struct {
	Kind string `yaml:"kind"`
	ID   string `yaml:"id"`
}
