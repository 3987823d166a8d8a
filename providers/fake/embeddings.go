package fake

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
)

// DefaultEmbeddingDims is the length of the fake's vectors.
const DefaultEmbeddingDims = 256

// EmbedRequest is one recorded embeddings request.
type EmbedRequest struct {
	Model string
	Input []string
	Body  []byte
}

// Embeddings is the OpenAI fake's POST /v1/embeddings: deterministic vectors (Vector) for
// any model, faults to script, and a record of every request. Safe for concurrent use.
type Embeddings struct {
	mu       sync.Mutex
	requests []EmbedRequest // the last maxEmbedRecord
	inputs   int
	// Status, when set, answers every request with this HTTP error status.
	Status int
	// Delay waits this long before answering (honouring cancellation).
	Delay time.Duration
	// Dims overrides the vectors' length (a wrong dimension); 0 = DefaultEmbeddingDims.
	Dims int
}

// Embeddings returns the script's embeddings endpoint, for settings and its record.
func (s *Script) Embeddings() *Embeddings {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.embeddings == nil {
		s.embeddings = &Embeddings{}
	}
	return s.embeddings
}

// Requests returns a copy of the embeddings requests so far (about the last 10,000).
func (e *Embeddings) Requests() []EmbedRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]EmbedRequest(nil), e.requests...)
}

// Inputs counts the texts embedded so far.
func (e *Embeddings) Inputs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inputs
}

// maxEmbedRecord bounds the record of requests (a long-running reef fake-llm).
const maxEmbedRecord = 10_000

// Set changes the fault settings under the lock.
func (e *Embeddings) Set(status int, delay time.Duration, dims int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.Status, e.Delay, e.Dims = status, delay, dims
}

// Record records one request (for fakes of other wire formats) and returns the fault settings
// and the vectors' length to answer with.
func (e *Embeddings) Record(r EmbedRequest) (status int, delay time.Duration, dims int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.requests = append(e.requests, r)
	if len(e.requests) > 2*maxEmbedRecord {
		e.requests = append(e.requests[:0], e.requests[len(e.requests)-maxEmbedRecord:]...)
	}
	e.inputs += len(r.Input)
	dims = e.Dims
	if dims <= 0 {
		dims = DefaultEmbeddingDims
	}
	return e.Status, e.Delay, dims
}

// embed serves OpenAI's embeddings API: {"model", "input": string | [string]} →
// {"object":"list","data":[{"object":"embedding","index":i,"embedding":[...]}],"model","usage"}.
func (s *openaiServer) embed(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		return
	}
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "could not parse the JSON body: "+err.Error())
		return
	}
	var input []string
	if err := json.Unmarshal(req.Input, &input); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "", "input must be a string or an array of strings")
			return
		}
		input = []string{one}
	}
	status, delay, dims := s.script.Embeddings().Record(EmbedRequest{Model: req.Model, Input: input, Body: body})
	if delay > 0 && !s.wait(r, delay) {
		return
	}
	if status != 0 {
		writeError(w, status, "server_error", "", "The embeddings server is failing (scripted).")
		return
	}
	data := make([]map[string]any, len(input))
	tokens := 0
	for i, text := range input {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Vector(text, dims)}
		tokens += len(text) / 4
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// Vector is the fake's embedding of text: a unit vector of hashed features, so texts that
// share words, character n-grams or concepts are near. Features: each word and its character
// trigrams; each CJK character and bigram; and a concept for words of a small English and
// Chinese lexicon (concepts), so "programming language" and "编程语言" meet.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	add := func(feature string, w float32) {
		h := fnv.New64a()
		h.Write([]byte(feature))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dims)] += sign * w
	}
	lower := strings.ToLower(text)
	for _, word := range strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) || isCJK(r) }) {
		add("w:"+word, 1)
		p := "^" + word + "$"
		rs := []rune(p)
		for i := 0; i+3 <= len(rs); i++ {
			add("t:"+string(rs[i:i+3]), 0.3)
		}
	}
	var run []rune
	flush := func() {
		for i, r := range run {
			add("c:"+string(r), 0.4)
			if i+1 < len(run) {
				add("b:"+string(run[i:i+2]), 1)
			}
		}
		run = run[:0]
	}
	for _, r := range lower {
		if isCJK(r) {
			run = append(run, r)
		} else {
			flush()
		}
	}
	flush()
	for word, concept := range concepts {
		if strings.Contains(lower, word) {
			add("k:"+concept, 2)
		}
	}
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	if n > 0 {
		s := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= s
		}
	}
	return v
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// concepts is the fake embedder's lexicon: words in English and Chinese that mean one thing.
var concepts = map[string]string{
	"programming": "programming", "编程": "programming", "code": "programming", "代码": "programming",
	"language": "language", "语言": "language",
	"learn": "learn", "学习": "learn", "在学": "learn", "studying": "learn",
	"favourite": "like", "favorite": "like", "喜欢": "like", "prefer": "like", "偏好": "like",
	"coffee": "drink", "咖啡": "drink", "tea": "drink", "茶": "drink",
	"birthday": "birthday", "生日": "birthday",
	"meeting": "meeting", "会议": "meeting", "开会": "meeting",
	"travel": "travel", "trip": "travel", "旅行": "travel", "出差": "travel", "flight": "travel", "航班": "travel",
	"doctor": "health", "医生": "health", "dentist": "health", "牙医": "health",
	"wife": "family", "妻子": "family", "daughter": "family", "女儿": "family", "mother": "family", "妈妈": "family",
	"password": "secret", "密码": "secret",
	"deploy": "deploy", "部署": "deploy", "release": "deploy", "发布": "deploy",
	"database": "database", "数据库": "database", "postgres": "database",
	"budget": "money", "预算": "money", "salary": "money", "工资": "money",
	"allergic": "allergy", "过敏": "allergy",
	"cat": "pet", "猫": "pet", "dog": "pet", "狗": "pet",
}
