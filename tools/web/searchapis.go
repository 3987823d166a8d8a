package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// brave speaks the Brave Search API: GET /res/v1/web/search with X-Subscription-Token.
type brave struct{ key, base string }

var braveFreshness = map[string]string{"day": "pd", "week": "pw", "month": "pm", "year": "py"}

func (b brave) search(ctx context.Context, c *http.Client, q Query) ([]Hit, error) {
	v := url.Values{"q": {q.Text}, "count": {strconv.Itoa(q.Count)}}
	if f := braveFreshness[q.Freshness]; f != "" {
		v.Set("freshness", f)
	}
	if q.Country != "" {
		v.Set("country", q.Country)
	}
	if l := braveLang(q.Language); l != "" {
		v.Set("search_lang", l)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+"/res/v1/web/search?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Subscription-Token", b.key)
	var ans struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				Age         string `json:"age"`
				PageAge     string `json:"page_age"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := getJSON(c, req, &ans, braveError); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(ans.Web.Results))
	for _, r := range ans.Web.Results {
		pub := r.PageAge
		if pub == "" {
			pub = r.Age
		}
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: stripTags(r.Description), Published: pub})
	}
	return hits, nil
}

// braveError reads {"type":"ErrorResponse","error":{"code":...,"detail":...}}.
func braveError(body []byte) string {
	var e struct {
		Error struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Detail == "" {
		return ""
	}
	return e.Error.Code + ": " + e.Error.Detail
}

// tavily speaks the Tavily Search API: POST /search with a bearer key.
type tavily struct{ key, base string }

func (t tavily) search(ctx context.Context, c *http.Client, q Query) ([]Hit, error) {
	body := map[string]any{"query": q.Text, "max_results": q.Count, "topic": "general", "search_depth": "basic"}
	if q.Freshness != "" {
		body["time_range"] = q.Freshness
	}
	// Tavily names countries in full ("germany") and has no language filter: country and
	// language are not sent.
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/search", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+t.key)
	var ans struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"published_date"`
		} `json:"results"`
	}
	if err := getJSON(c, req, &ans, tavilyError); err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(ans.Results))
	for _, r := range ans.Results {
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: r.Content, Published: r.PublishedDate})
	}
	return hits, nil
}

// tavilyError reads {"detail":{"error":"..."}}.
func tavilyError(body []byte) string {
	var e struct {
		Detail struct {
			Error string `json:"error"`
		} `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Detail.Error
}

// searxng speaks a SearXNG instance's JSON API: GET /search?format=json (the instance must
// list json under search.formats in its settings.yml, else it answers 403).
type searxng struct{ base string }

func (s searxng) search(ctx context.Context, c *http.Client, q Query) ([]Hit, error) {
	v := url.Values{"q": {q.Text}, "format": {"json"}, "pageno": {"1"}}
	if q.Freshness != "" {
		v.Set("time_range", q.Freshness)
	}
	switch {
	case strings.Contains(q.Language, "-"): // a tag with its region: zh-TW
		base, region, _ := strings.Cut(q.Language, "-")
		if len(region) == 2 {
			region = strings.ToUpper(region)
		}
		v.Set("language", base+"-"+region)
	case q.Language != "" && q.Country != "":
		v.Set("language", q.Language+"-"+q.Country)
	case q.Language != "":
		v.Set("language", q.Language)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/search?"+v.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var ans struct {
		Results []struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedDate string `json:"publishedDate"`
		} `json:"results"`
	}
	err = getJSON(c, req, &ans, func(body []byte) string {
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("<")) {
			return "the instance does not answer JSON: add json to search.formats in its settings.yml"
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(ans.Results))
	for _, r := range ans.Results {
		hits = append(hits, Hit{Title: r.Title, URL: r.URL, Snippet: r.Content, Published: r.PublishedDate})
	}
	return hits, nil
}

// stripTags drops the <strong> highlights Brave puts in descriptions.
func stripTags(s string) string {
	var b []rune
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
		case !in:
			b = append(b, r)
		}
	}
	return string(b)
}

// braveLangs are the search_lang values Brave takes; it refuses any other with a 422.
var braveLangs = map[string]bool{
	"ar": true, "eu": true, "bn": true, "bg": true, "ca": true, "zh-hans": true, "zh-hant": true, "hr": true,
	"cs": true, "da": true, "nl": true, "en": true, "en-gb": true, "et": true, "fi": true, "fr": true,
	"gl": true, "de": true, "gu": true, "he": true, "hi": true, "hu": true, "is": true, "it": true,
	"jp": true, "kn": true, "ko": true, "lv": true, "lt": true, "ms": true, "ml": true, "mr": true,
	"nb": true, "pl": true, "pt-br": true, "pt-pt": true, "pa": true, "ro": true, "ru": true, "sr": true,
	"sk": true, "sl": true, "es": true, "sv": true, "ta": true, "te": true, "th": true, "tr": true,
	"uk": true, "vi": true,
}

// braveLang is Brave's search_lang for a language tag, "" for a language Brave has no code
// for (the search then runs without one rather than failing). Brave names Chinese by script
// (zh-hans, zh-hant) and Japanese "jp".
func braveLang(tag string) string {
	base, region, _ := strings.Cut(tag, "-")
	switch {
	case tag == "":
		return ""
	case base == "zh" && (region == "tw" || region == "hk" || region == "mo" || region == "hant"):
		return "zh-hant"
	case base == "zh":
		return "zh-hans" // zh, zh-cn, zh-sg, zh-hans
	case base == "ja":
		return "jp"
	case base == "no" || base == "nn":
		return "nb"
	case base == "iw":
		return "he"
	case braveLangs[tag]:
		return tag // en-gb, pt-br, pt-pt
	case base == "pt":
		return "pt-pt"
	case braveLangs[base]:
		return base
	}
	return ""
}
