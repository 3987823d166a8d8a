package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

// SearchProviders are the names tools.web.search.provider accepts.
var SearchProviders = []string{"brave", "tavily", "searxng"}

// SearchConfig configures web_search.
type SearchConfig struct {
	Provider string // brave | tavily | searxng
	APIKey   string // brave and tavily; sent only to that provider
	BaseURL  string // the provider's endpoint; required for searxng (your instance)
	Timeout  time.Duration
	// Client replaces the HTTP client (nil: one with Timeout). The endpoint is the operator's
	// choice, not the agent's, so it does not pass the SSRF guard: a SearXNG instance usually
	// runs on the local network.
	Client *http.Client
}

// Query is one search.
type Query struct {
	Text      string
	Count     int
	Freshness string // "", day, week, month, year
	Country   string // ISO 3166-1 alpha-2, upper case
	Language  string // ISO 639-1, lower case, maybe with a region or script: "zh-tw", "zh-hans"
}

// Hit is one search result.
type Hit struct {
	Title     string `json:"title"`
	URL       string `json:"url"`
	Snippet   string `json:"snippet"`
	Published string `json:"published,omitempty"`
}

// searcher asks one provider's API.
type searcher interface {
	search(ctx context.Context, c *http.Client, q Query) ([]Hit, error)
}

// Search is the web_search tool.
type Search struct {
	cfg    SearchConfig
	client *http.Client
	api    searcher
}

var _ tools.Idempotent = (*Search)(nil)

// NewSearch returns web_search for the configured provider; an unknown provider, or one
// without its key or URL, is an error that says what to set.
func NewSearch(cfg SearchConfig) (*Search, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	s := &Search{cfg: cfg, client: cfg.Client}
	if s.client == nil {
		s.client = &http.Client{Timeout: cfg.Timeout}
	}
	switch cfg.Provider {
	case "brave":
		s.api = brave{key: cfg.APIKey, base: orDefault(cfg.BaseURL, "https://api.search.brave.com")}
	case "tavily":
		s.api = tavily{key: cfg.APIKey, base: orDefault(cfg.BaseURL, "https://api.tavily.com")}
	case "searxng":
		if cfg.BaseURL == "" {
			return nil, errors.New("web: searxng needs tools.web.search.baseUrl (your instance, e.g. http://127.0.0.1:8888)")
		}
		s.api = searxng{base: strings.TrimRight(cfg.BaseURL, "/")}
	default:
		return nil, fmt.Errorf("web: search provider %q: use one of %s", cfg.Provider, strings.Join(SearchProviders, ", "))
	}
	if cfg.Provider != "searxng" && cfg.APIKey == "" {
		return nil, fmt.Errorf("web: search provider %s needs tools.web.search.apiKey", cfg.Provider)
	}
	return s, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return strings.TrimRight(s, "/")
}

// Idempotent: a search changes nothing, so a call a crash interrupted is run again.
func (*Search) Idempotent() {}

type searchArgs struct {
	Query     string `json:"query"`
	Count     int    `json:"count"`
	Freshness string `json:"freshness"`
	Country   string `json:"country"`
	Language  string `json:"language"`
}

// Spec describes web_search to the model.
func (s *Search) Spec() messages.ToolSpec {
	return messages.ToolSpec{
		Name: "web_search",
		Description: "Search the web (" + s.cfg.Provider + "). Returns {query, results: [{title, url, snippet, published}]}. " +
			"Use web_fetch to read a result.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to search for."},` +
			`"count":{"type":"integer","minimum":1,"maximum":10,"description":"Results to return, 1-10. Default 5."},` +
			`"freshness":{"type":"string","enum":["day","week","month","year"],"description":"Only results from the last day, week, month or year."},` +
			`"country":{"type":"string","description":"Two-letter country code for regional results, e.g. DE."},` +
			`"language":{"type":"string","description":"Language of the results: a two-letter code (de, ja, zh) or a tag with region or script (zh-CN, zh-TW, pt-BR)."}},` +
			`"required":["query"],"additionalProperties":false}`),
	}
}

// Run searches.
func (s *Search) Run(ctx context.Context, call tools.Call) (tools.Result, error) {
	var a searchArgs
	if err := tools.DecodeArgs(call.Args, &a); err != nil {
		return tools.Result{}, err
	}
	q, err := checkSearchArgs(a)
	if err != nil {
		return tools.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	hits, err := s.api.search(ctx, s.client, q)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return tools.Result{}, fmt.Errorf("web_search: %s did not answer within %s", s.cfg.Provider, s.cfg.Timeout)
		}
		return tools.Result{}, fmt.Errorf("web_search: %s: %w", s.cfg.Provider, err)
	}
	if len(hits) > q.Count {
		hits = hits[:q.Count]
	}
	if hits == nil {
		hits = []Hit{}
	}
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Query   string `json:"query"`
		Results []Hit  `json:"results"`
	}{q.Text, hits}); err != nil {
		return tools.Result{}, fmt.Errorf("web_search: %w", err)
	}
	return tools.Result{Content: strings.TrimSuffix(out.String(), "\n")}, nil
}

func checkSearchArgs(a searchArgs) (Query, error) {
	q := Query{Text: strings.TrimSpace(a.Query), Count: a.Count, Freshness: a.Freshness,
		Country: strings.ToUpper(strings.TrimSpace(a.Country)), Language: strings.ReplaceAll(strings.ToLower(strings.TrimSpace(a.Language)), "_", "-")}
	switch {
	case q.Text == "":
		return q, errors.New(`"query" is required: what to search for`)
	case q.Count == 0:
		q.Count = 5
	case q.Count < 1 || q.Count > 10:
		return q, errors.New(`"count" must be between 1 and 10`)
	}
	switch q.Freshness {
	case "", "day", "week", "month", "year":
	default:
		return q, fmt.Errorf(`"freshness" must be day, week, month or year, not %q`, q.Freshness)
	}
	if q.Country != "" && !letters(q.Country, 2) {
		return q, fmt.Errorf(`"country" must be a two-letter code such as US, not %q`, a.Country)
	}
	if q.Language != "" && !languageTag.MatchString(q.Language) {
		return q, fmt.Errorf(`"language" must be a two-letter code such as en, or a tag such as zh-TW, not %q`, a.Language)
	}
	return q, nil
}

// languageTag is a language code, with a region or script: en, zh-tw, zh-hans, pt-br.
var languageTag = regexp.MustCompile(`^[a-z]{2}(-[a-z0-9]{2,4})?$`)

func letters(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// apiError turns a provider's error answer into a short error: the status, what the body
// says (at most 200 characters; providers never echo the key), and for 429 that it is a rate
// limit.
func apiError(resp *http.Response, detail func([]byte) string) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := detail(body)
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	if utf8.RuneCountInString(msg) > 200 {
		msg, _ = cut(msg, 200)
		msg += "…"
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		wait := ""
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			wait = " (retry after " + ra + " s)"
		} else if rs := resp.Header.Get("X-RateLimit-Reset"); rs != "" {
			wait = " (resets in " + strings.Split(rs, ",")[0] + " s)"
		}
		return fmt.Errorf("rate limited%s: %s", wait, msg)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("refused (HTTP %d; check tools.web.search): %s", resp.StatusCode, msg)
	}
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, msg)
}

// getJSON does req and decodes a 200 answer into v; anything else is apiError's.
func getJSON(c *http.Client, req *http.Request, v any, detail func([]byte) string) error {
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return context.DeadlineExceeded
		}
		return errors.New(strings.ReplaceAll(err.Error(), req.URL.RawQuery, "…"))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp, detail)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(v); err != nil {
		return fmt.Errorf("unreadable answer: %w", err)
	}
	return nil
}
