package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reefgw/reef/persistence"
)

// Limits and defaults of a search.
const (
	DefaultMaxResults = 6
	MaxResultsCap     = 50
	MaxQueryRunes     = 2000 // a longer query is cut
	SnippetRunes      = 700
	// Default minimum scores: keyword scores are the share of the query's weight a chunk
	// matches, so one rare shared word in ten is already evidence; fused scores are mostly
	// cosine similarity.
	DefaultMinScoreFTS    = 0.1
	DefaultMinScoreVector = 0.3
	vectorWeight          = 0.7
	textWeight            = 0.3
)

// Modes say what a search ran.
const (
	ModeHybrid = "hybrid"
	ModeVector = "vector"
	ModeFTS    = "fts"
)

// ErrEmptyQuery is returned for a query with no text.
var ErrEmptyQuery = errors.New("query is empty; say what to look for")

// Query is one search.
type Query struct {
	Text       string
	MaxResults int      // 0 = DefaultMaxResults; capped at MaxResultsCap
	MinScore   *float64 // nil = the mode's default
	// Only, when set, limits the search to the chunks of the paths it accepts (a guest's run
	// searches only its own conversation: no note, no other conversation's transcript).
	Only func(path string) bool
}

// Result is one found chunk.
type Result struct {
	Path      string  `json:"path"`
	StartLine int     `json:"startLine"`
	EndLine   int     `json:"endLine"`
	Score     float64 `json:"score"`
	Snippet   string  `json:"snippet"`
	Citation  string  `json:"citation"`
	// Source is memory (a note) or sessions (a past conversation: Path is sessions/<key>,
	// StartLine and EndLine number the turn's first and last message, Turn counts the turns).
	Source  string `json:"source"`
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
}

// Sources of results.
const (
	SourceMemory   = "memory"
	SourceSessions = "sessions"
)

// result is the Result for chunk c with its text t.
func result(c *chunkMeta, score float64, t string) Result {
	r := Result{Path: c.Path, StartLine: c.Start, EndLine: c.End, Score: score, Snippet: snippet(t), Source: SourceMemory,
		Citation: c.Path + "#L" + strconv.Itoa(c.Start) + "-L" + strconv.Itoa(c.End)}
	if IsSessionPath(c.Path) {
		r.Source, r.Session, r.Turn = SourceSessions, strings.TrimPrefix(c.Path, SessionPrefix), c.Turn
		r.Citation = c.Path + "#turn-" + strconv.Itoa(c.Turn)
	}
	return r
}

// Response is a search's answer, in the shape memory_search returns.
type Response struct {
	Results   []Result `json:"results"`
	Provider  string   `json:"provider"`
	Model     string   `json:"model"`
	Citations string   `json:"citations"`
	Mode      string   `json:"mode"`
	// Warning says why the search ran keyword-only although embeddings are configured, or
	// that the query was cut.
	Warning string `json:"warning,omitempty"`
}

// Search syncs the index with the workspace, then ranks its chunks for q.
func (x *Index) Search(ctx context.Context, q Query) (Response, error) {
	text := strings.TrimSpace(strings.ToValidUTF8(q.Text, "\uFFFD"))
	if text == "" {
		return Response{}, ErrEmptyQuery
	}
	resp := Response{Results: []Result{}, Provider: x.cfg.Provider, Model: x.cfg.Model, Citations: "auto", Mode: ModeFTS}
	if utf8.RuneCountInString(text) > MaxQueryRunes {
		text = string([]rune(text)[:MaxQueryRunes])
		resp.Warning = "the query was cut to " + strconv.Itoa(MaxQueryRunes) + " characters"
	}
	if err := x.Sync(ctx); err != nil {
		return resp, err
	}
	x.mu.Lock()
	embedOK, why := !x.clock().Before(x.embedOK), x.embedWhy
	dims := x.cur.state.Dims
	x.mu.Unlock()

	var qv []float32
	if x.cfg.Embedder != nil {
		if !embedOK {
			resp.Warning = joinWarn(resp.Warning, "keyword search only: embeddings failed recently ("+why+")")
		} else {
			vecs, err := x.embed(ctx, []string{text}, x.cfg.QueryTimeout, dims)
			x.mu.Lock()
			x.stats.EmbedCalls++
			x.stats.Embedded++
			if err != nil {
				x.embedFailed(err)
				resp.Warning = joinWarn(resp.Warning, "keyword search only: embeddings failed ("+err.Error()+")")
			} else {
				qv = vecs[0]
			}
			x.mu.Unlock()
		}
	}
	terms := uniqueTerms(text)
	switch {
	case qv != nil && len(terms) == 0:
		resp.Mode = ModeVector
	case qv != nil:
		resp.Mode = ModeHybrid
	}
	minScore := DefaultMinScoreFTS
	if qv != nil {
		minScore = DefaultMinScoreVector
	}
	if q.MinScore != nil {
		minScore = *q.MinScore
	}
	n := q.MaxResults
	if n <= 0 {
		n = DefaultMaxResults
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	var err error
	resp.Results, err = x.rank(x.snapshot(), terms, qv, min(n, MaxResultsCap), minScore, q.Only)
	return resp, err
}

func joinWarn(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// uniqueTerms are the query's distinct terms without English function words (unless the
// query has nothing else): "when is the dentist" searches for "dentist".
func uniqueTerms(text string) []string {
	seen := map[string]bool{}
	var out, stop []string
	for _, t := range Tokenize(text) {
		if seen[t] {
			continue
		}
		seen[t] = true
		if stopWords[t] {
			stop = append(stop, t)
		} else {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return stop
	}
	return out
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the is are was were be been am do does did of to in on at by for
		from with about as and or but not no if so than then that this these those it its i me my we
		our you your he him his she her they them their what when where which who whom why how can
		could should would will shall may might must have has had any some there here`) {
		m[w] = true
	}
	return m
}()

// doc is one chunk in a snapshot.
type doc struct {
	key    string
	c      *chunkMeta
	len    int
	hasVec bool
	day    time.Time // the date of a daily note (memory/YYYY-MM-DD*.md), a conversation's time, else zero
}

type posting struct{ doc, tf uint32 }

// snapshot is the search structure over the index at one moment: an inverted index for
// BM25 over the chunks in memory; vectors stay in the store and are read as they are
// scored. A sync that changes the index drops it.
type snapshot struct {
	docs []doc // in key order
	// post holds every term's postings, one term after the other in term id order: the
	// term with id t has post[start[t]:start[t+1]]. One exact array, not a slice grown per
	// term: at 15,000 chunks growing them left a third of 7.6 MB unused.
	post   []posting
	start  []uint32
	avgLen float64
}

// postings returns the postings of the term with id t.
func (s *snapshot) postings(t uint32) []posting {
	if int(t)+1 >= len(s.start) {
		return nil
	}
	return s.post[s.start[t]:s.start[t+1]]
}

// snapshot returns the current search structure, building it if the index changed. x.mu is held.
func (x *Index) snapshot() *snapshot {
	if x.snap != nil {
		return x.snap
	}
	keys := make([]string, 0, len(x.cur.chunks))
	for k := range x.cur.chunks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := &snapshot{docs: make([]doc, len(keys)), start: make([]uint32, len(x.cur.dict)+1)}
	for _, c := range x.cur.chunks { // count each term's postings, then place them
		for _, t := range c.terms {
			s.start[t.id+1]++
		}
	}
	for t := 1; t < len(s.start); t++ {
		s.start[t] += s.start[t-1]
	}
	s.post = make([]posting, s.start[len(s.start)-1])
	next := slices.Clone(s.start)
	total := 0
	for i, k := range keys {
		c := x.cur.chunks[k]
		d := doc{key: k, c: c, hasVec: x.cur.hasVec[k], day: noteDay(c.Path)}
		if c.Time != 0 {
			d.day = time.Unix(c.Time, 0)
		}
		for _, t := range c.terms {
			d.len += int(t.tf)
			s.post[next[t.id]] = posting{doc: uint32(i), tf: t.tf}
			next[t.id]++
		}
		total += d.len
		s.docs[i] = d
	}
	if len(keys) > 0 {
		s.avgLen = float64(total) / float64(len(keys))
	}
	x.snap = s
	return s
}

// noteDay parses the date of a daily note's name.
func noteDay(p string) time.Time {
	base := path.Base(p)
	if len(base) < 10 {
		return time.Time{}
	}
	t, err := time.Parse("2006-01-02", base[:10])
	if err != nil {
		return time.Time{}
	}
	return t
}

// rank scores every chunk and returns the best n at or above minScore: by score (to three
// decimals), then the newer daily note, then path and line. x.mu is held.
func (x *Index) rank(s *snapshot, terms []string, qv []float32, n int, minScore float64, only func(string) bool) ([]Result, error) {
	text := s.bm25(terms, x.cur.dict)
	var vec []float32
	if qv != nil {
		var err error
		if vec, err = x.vectorScores(s, qv); err != nil {
			return nil, err
		}
	}
	type scored struct {
		i     int
		key   int64 // the score to three decimals
		score float64
	}
	better := func(a, b scored) bool {
		if a.key != b.key {
			return a.key > b.key
		}
		da, db := s.docs[a.i], s.docs[b.i]
		if !da.day.Equal(db.day) {
			return da.day.After(db.day) // recency breaks ties: the newer daily note first
		}
		return da.key < db.key
	}
	top := make([]scored, 0, n+1) // the best n so far, best first
	for i, d := range s.docs {
		if only != nil && !only(d.c.Path) {
			continue
		}
		score := text[i]
		if vec != nil && d.hasVec {
			v := max(0, float64(vec[i]))
			score = vectorWeight*v + textWeight*score
			if len(terms) == 0 {
				score = v
			}
		}
		if score <= 0 || score < minScore {
			continue
		}
		h := scored{i: i, key: int64(math.Round(score * 1000)), score: score}
		if len(top) == n && !better(h, top[n-1]) {
			continue
		}
		at := sort.Search(len(top), func(j int) bool { return better(h, top[j]) })
		top = append(top, scored{})
		copy(top[at+1:], top[at:])
		top[at] = h
		if len(top) > n {
			top = top[:n]
		}
	}
	out := []Result{}
	err := x.store.View(func(r persistence.Reader) error {
		for _, h := range top {
			d := s.docs[h.i]
			t, err := chunkText(r, x.b, d.key)
			if err != nil {
				return err
			}
			out = append(out, result(d.c, float64(h.key)/1000, t))
		}
		return nil
	})
	return out, err
}

// vectorScores returns each doc's cosine with qv (a unit vector), read from the store's
// vectors as they are: they are not kept in memory.
func (x *Index) vectorScores(s *snapshot, qv []float32) ([]float32, error) {
	scores := make([]float32, len(s.docs))
	buf := make([]float32, 0, len(qv))
	j := 0 // docs and the bucket are both in key order: walk them in step
	err := x.store.View(func(r persistence.Reader) error {
		return r.Scan(x.b.vectors, "", func(k string, v []byte) error {
			for j < len(s.docs) && s.docs[j].key < k {
				j++
			}
			if j < len(s.docs) && s.docs[j].key == k && len(v) == 4*len(qv) {
				scores[j] = dot(qv, viewVector(v, buf))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("memory: read vectors: %w", err)
	}
	return scores, nil
}

// bm25 returns each doc's keyword score: its BM25 over the query terms divided by the sum
// of their idf (what a doc holding each term once, at average length, scores), capped at 1:
// about the share of the query's weight the doc matches.
func (s *snapshot) bm25(terms []string, dict dictionary) []float64 {
	const k1, b = 1.2, 0.75
	scores := make([]float64, len(s.docs))
	if len(terms) == 0 || len(s.docs) == 0 {
		return scores
	}
	// A small corpus makes every term it holds look common: count at least minCorpus docs,
	// so one shared rare word still weighs against the query's unmatched ones.
	const minCorpus = 100
	N := max(float64(len(s.docs)), minCorpus)
	var norm float64
	for _, t := range terms {
		var ps []posting
		if id, ok := dict[t]; ok {
			ps = s.postings(id)
		}
		nt := float64(len(ps))
		idf := math.Log(1 + (N-nt+0.5)/(nt+0.5))
		norm += idf
		for _, p := range ps {
			tf := float64(p.tf)
			dl := float64(s.docs[p.doc].len)
			scores[p.doc] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/s.avgLen))
		}
	}
	for i := range scores {
		scores[i] = min(1, scores[i]/norm)
	}
	return scores
}

// snippet is a chunk's text, trimmed and capped at SnippetRunes.
func snippet(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= SnippetRunes {
		return s
	}
	return string([]rune(s)[:SnippetRunes]) + "…"
}
