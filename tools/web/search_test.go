package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/reefgw/reef/tools"
)

const testKey = "BSA-canary-key-0123456789abcdef"

// braveSearchLangs are the search_lang values Brave's documentation lists; any other gets
// 422 VALIDATION.
var braveSearchLangs = strings.Fields("ar eu bn bg ca zh-hans zh-hant hr cs da nl en en-gb et fi fr gl de gu he hi hu is it jp " +
	"kn ko lv lt ms ml mr nb pl pt-br pt-pt pa ro ru sr sk sl es sv ta te th tr uk vi")

// fakeBrave speaks the Brave Search API: GET /res/v1/web/search, X-Subscription-Token,
// {"web":{"results":[...]}}; a wrong token gets 401, the query "flood" a 429 ErrorResponse,
// a search_lang Brave does not list (zh, ja, zh-CN) a 422 VALIDATION ErrorResponse.
func fakeBrave(t *testing.T, seen *http.Request) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*seen = *r.Clone(context.Background())
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search":
			http.NotFound(w, r)
		case r.Header.Get("X-Subscription-Token") != testKey:
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"ErrorResponse","error":{"id":"e1","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."},"time":1}`)
		case r.URL.Query().Has("search_lang") && !slices.Contains(braveSearchLangs, r.URL.Query().Get("search_lang")):
			w.WriteHeader(http.StatusUnprocessableEntity)
			io.WriteString(w, `{"type":"ErrorResponse","error":{"id":"e3","status":422,"code":"VALIDATION","detail":"Unable to validate request parameter(s)",`+
				`"meta":{"errors":[{"type":"enum","loc":["query","search_lang"],"msg":"Input should be 'ar', 'eu', ... or 'vi'","input":"`+r.URL.Query().Get("search_lang")+`"}]}},"time":1}`)
		case r.URL.Query().Get("q") == "flood":
			w.Header().Set("X-RateLimit-Limit", "1, 15000")
			w.Header().Set("X-RateLimit-Reset", "1, 1419704")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"type":"ErrorResponse","error":{"id":"e2","status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan.","meta":{"plan":"Free","rate_limit":1}},"time":1}`)
		default:
			io.WriteString(w, `{"type":"search","query":{"original":"reef tides"},"web":{"type":"search","results":[
				{"title":"Tides & times","url":"https://tides.example/reef?a=1&b=2","description":"High tide at <strong>reef</strong> today","age":"2 days ago","page_age":"2026-11-24T08:00:00"},
				{"title":"Second","url":"https://two.example/","description":"two"},
				{"title":"Third","url":"https://three.example/","description":"three"}]}}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runSearch(t *testing.T, s *Search, args string) (struct {
	Query   string `json:"query"`
	Results []Hit  `json:"results"`
}, tools.Result) {
	t.Helper()
	res := tools.Run(context.Background(), s, tools.Call{ID: "c1", Args: []byte(args)})
	var out struct {
		Query   string `json:"query"`
		Results []Hit  `json:"results"`
	}
	if !res.IsError {
		if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, res.Content)
		}
	}
	return out, res
}

func TestBraveSearch(t *testing.T) {
	var seen http.Request
	srv := fakeBrave(t, &seen)
	s, err := NewSearch(SearchConfig{Provider: "brave", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	out, res := runSearch(t, s, `{"query":"reef tides","count":2,"freshness":"week","country":"de","language":"DE"}`)
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	q := seen.URL.Query()
	if q.Get("q") != "reef tides" || q.Get("count") != "2" || q.Get("freshness") != "pw" || q.Get("country") != "DE" || q.Get("search_lang") != "de" {
		t.Errorf("request query %v", q)
	}
	want := Hit{Title: "Tides & times", URL: "https://tides.example/reef?a=1&b=2", Snippet: "High tide at reef today", Published: "2026-11-24T08:00:00"}
	if len(out.Results) != 2 || out.Results[0] != want {
		t.Errorf("results %+v, want 2 starting with %+v", out.Results, want)
	}
	if !strings.Contains(res.Content, "?a=1&b=2") || strings.Contains(res.Content, testKey) {
		t.Errorf("content: %s", res.Content)
	}
	_, res = runSearch(t, s, `{"query":"flood"}`)
	if !res.IsError || !strings.Contains(res.Content, "rate limited (resets in 1 s): RATE_LIMITED: Request rate limit exceeded") {
		t.Errorf("429: %s", res.Content)
	}
	bad, _ := NewSearch(SearchConfig{Provider: "brave", APIKey: "wrong-key-wrong-key", BaseURL: srv.URL})
	_, res = runSearch(t, bad, `{"query":"x"}`)
	if !res.IsError || !strings.Contains(res.Content, "HTTP 401") || !strings.Contains(res.Content, "SUBSCRIPTION_TOKEN_INVALID") || strings.Contains(res.Content, "wrong-key") {
		t.Errorf("401: %s", res.Content)
	}
}

// TestBraveLanguages: Chinese and Japanese searches send the codes Brave takes (zh-hans,
// zh-hant, jp), which the fake, like Brave, requires (#33.9).
func TestBraveLanguages(t *testing.T) {
	var seen http.Request
	srv := fakeBrave(t, &seen)
	s, err := NewSearch(SearchConfig{Provider: "brave", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for lang, want := range map[string]string{"zh": "zh-hans", "zh-CN": "zh-hans", "zh_TW": "zh-hant", "zh-HK": "zh-hant",
		"ja": "jp", "pt-BR": "pt-br", "pt": "pt-pt", "en-GB": "en-gb", "en-US": "en", "de": "de", "xx": ""} {
		t.Run(lang, func(t *testing.T) {
			_, res := runSearch(t, s, `{"query":"reef tides","language":"`+lang+`"}`)
			if res.IsError {
				t.Fatalf("language %s: %s", lang, res.Content)
			}
			if got := seen.URL.Query().Get("search_lang"); got != want {
				t.Errorf("search_lang = %q, want %q", got, want)
			}
		})
	}
	if _, res := runSearch(t, s, `{"query":"x","language":"chinese"}`); !res.IsError || !strings.Contains(res.Content, "zh-TW") {
		t.Errorf("a language that is no code: %s", res.Content)
	}
}

func TestTavilySearch(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`)
			return
		}
		json.NewDecoder(r.Body).Decode(&body)
		if body["query"] == "flood" {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"detail":{"error":"Your request has been blocked due to excessive requests."}}`)
			return
		}
		io.WriteString(w, `{"query":"reef tides","answer":null,"images":[],"results":[
			{"title":"Tide chart","url":"https://tides.example/","content":"Tides for the reef.","score":0.9,"raw_content":null,"published_date":"Mon, 24 Nov 2026 08:00:00 GMT"},
			{"title":"Other","url":"https://other.example/","content":"Other page.","score":0.5,"raw_content":null}],
			"response_time":1.2}`)
	}))
	defer srv.Close()
	s, err := NewSearch(SearchConfig{Provider: "tavily", APIKey: testKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	out, res := runSearch(t, s, `{"query":"reef tides","count":3,"freshness":"month"}`)
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	if body["max_results"] != float64(3) || body["time_range"] != "month" || body["api_key"] != nil {
		t.Errorf("request body %v", body)
	}
	if len(out.Results) != 2 || out.Results[0].Snippet != "Tides for the reef." || out.Results[0].Published == "" || out.Results[1].Published != "" {
		t.Errorf("results %+v", out.Results)
	}
	_, res = runSearch(t, s, `{"query":"flood"}`)
	if !res.IsError || !strings.Contains(res.Content, "rate limited (retry after 60 s): Your request has been blocked due to excessive requests.") {
		t.Errorf("429: %s", res.Content)
	}
	bad, _ := NewSearch(SearchConfig{Provider: "tavily", APIKey: "tvly-wrong", BaseURL: srv.URL})
	if _, res = runSearch(t, bad, `{"query":"x"}`); !res.IsError || !strings.Contains(res.Content, "invalid API key") {
		t.Errorf("401: %s", res.Content)
	}
}

func TestSearXNGSearch(t *testing.T) {
	jsonOn := true
	var seen http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = *r.Clone(context.Background())
		if r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		if !jsonOn || r.URL.Query().Get("format") != "json" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "<!DOCTYPE html><html><body><h1>403 Forbidden</h1></body></html>")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"query":"reef","number_of_results":0,"results":[
			{"url":"https://a.example/","title":"A","content":"about a","engine":"duckduckgo","engines":["duckduckgo"],"score":1.0,"category":"general","publishedDate":null},
			{"url":"https://b.example/","title":"B","content":"about b","engine":"brave","publishedDate":"2026-11-20T00:00:00"}],
			"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`)
	}))
	defer srv.Close()
	s, err := NewSearch(SearchConfig{Provider: "searxng", BaseURL: srv.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	out, res := runSearch(t, s, `{"query":"reef","freshness":"day","language":"de","country":"at"}`)
	if res.IsError {
		t.Fatalf("error: %s", res.Content)
	}
	if q := seen.URL.Query(); q.Get("q") != "reef" || q.Get("time_range") != "day" || q.Get("language") != "de-AT" {
		t.Errorf("request query %v", q)
	}
	if len(out.Results) != 2 || out.Results[1] != (Hit{Title: "B", URL: "https://b.example/", Snippet: "about b", Published: "2026-11-20T00:00:00"}) {
		t.Errorf("results %+v", out.Results)
	}
	jsonOn = false
	if _, res = runSearch(t, s, `{"query":"reef"}`); !res.IsError || !strings.Contains(res.Content, "add json to search.formats") {
		t.Errorf("403: %s", res.Content)
	}
}

func TestSearchArgumentsAndConfig(t *testing.T) {
	s, _ := NewSearch(SearchConfig{Provider: "searxng", BaseURL: "http://127.0.0.1:1"})
	for args, want := range map[string]string{
		`{}`:                                 `"query" is required`,
		`{"query":"x","count":11}`:           `"count" must be between 1 and 10`,
		`{"query":"x","freshness":"hour"}`:   `"freshness" must be`,
		`{"query":"x","country":"Germany"}`:  `"country" must be a two-letter code`,
		`{"query":"x","language":"deutsch"}`: `"language" must be a two-letter code`,
	} {
		if _, res := runSearch(t, s, args); !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: %s, want %q", args, res.Content, want)
		}
	}
	for _, cfg := range []SearchConfig{{Provider: "google", APIKey: "k"}, {Provider: "brave"}, {Provider: "tavily"}, {Provider: "searxng"}} {
		if _, err := NewSearch(cfg); err == nil {
			t.Errorf("NewSearch(%+v) = nil error", cfg)
		}
	}
}
