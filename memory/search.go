package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"path"
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

// result is the Result for chunk c.
func result(c *chunkRec, score float64) Result {
	r := Result{Path: c.Path, StartLine: c.Start, EndLine: c.End, Score: score, Snippet: snippet(c.Text), Source: SourceMemory,
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
	err := x.ensureLoaded()
	dims := 0
	if err == nil {
		dims = x.m.state.Dims
	}
	x.mu.Unlock()
	if err != nil {
		return resp, err
	}

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
	for attempt := 0; ; attempt++ {
		if err = x.ensureLoaded(); err != nil {
			return resp, err
		}
		resp.Results, err = x.rank(terms, qv, min(n, MaxResultsCap), minScore, q.Only)
		switch {
		case errors.Is(err, errStale) && attempt < maxStale:
			x.m = nil // another node wrote the index since it was read: read it again
		case errors.Is(err, errDamaged) && attempt < maxStale:
			if err = x.rebuildDamaged(err); err == nil {
				err = x.syncLocked(ctx, true, 0)
			}
			if err != nil {
				return resp, err
			}
		default:
			return resp, err
		}
	}
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

// rank scores every document and returns the best n at or above minScore: by score (to
// three decimals), then the newer daily note, then path and line. It reads the postings of
// the query's terms, the vectors and the records of the documents in the running, where
// they lie in the store (one read transaction); errStale says another node wrote the index
// since the mirror was read. x.mu is held.
func (x *Index) rank(terms []string, qv []float32, n int, minScore float64, only func(string) bool) ([]Result, error) {
	var out []Result
	err := x.store.View(func(r persistence.Reader) error {
		st, ok, err := readState(r, x.b)
		if err != nil {
			return err
		}
		if !ok || st.Gen != x.m.state.Gen {
			return errStale
		}
		text, err := x.bm25(r, terms)
		if err != nil {
			return err
		}
		var vec []float32
		if qv != nil {
			if vec, err = x.vectorScores(r, qv); err != nil {
				return err
			}
		}
		top, err := x.best(r, x.fuse(terms, text, vec, minScore), n, only)
		if err != nil {
			return err
		}
		out = make([]Result, 0, len(top.hits))
		for _, h := range top.hits {
			c, ok, err := readChunk(r, x.b, h.chunk)
			if err != nil || !ok {
				return cmp.Or(err, fmt.Errorf("%w: chunk %q missing", errDamaged, h.chunk))
			}
			out = append(out, result(c, float64(h.key)/1000))
		}
		return nil
	})
	return out, err
}

// vectorScores returns each document's cosine with qv (a unit vector), read from the
// store's vectors where they lie: they are not kept in memory.
func (x *Index) vectorScores(r persistence.Reader, qv []float32) ([]float32, error) {
	scores := make([]float32, len(x.m.dl))
	buf := make([]float32, 0, len(qv))
	err := r.Scan(x.b.vectors, "", func(k string, v []byte) error {
		id, ok := docID(k)
		if !ok || !x.m.hasVec(id) || len(v) != 4*len(qv) {
			return fmt.Errorf("%w: vector %q", errDamaged, k)
		}
		scores[id] = dot(qv, viewVector(v, buf))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory: read vectors: %w", err)
	}
	return scores, nil
}

// bm25 returns each document's keyword score: its BM25 over the query terms divided by the
// sum of their idf (what a document holding each term once, at average length, scores),
// capped at 1: about the share of the query's weight the document matches.
func (x *Index) bm25(r persistence.Reader, terms []string) ([]float64, error) {
	const k1, b = 1.2, 0.75
	m := x.m
	scores := make([]float64, len(m.dl))
	if len(terms) == 0 || m.live == 0 {
		return scores, nil
	}
	// A small corpus makes every term it holds look common: count at least minCorpus docs,
	// so one shared rare word still weighs against the query's unmatched ones.
	const minCorpus = 100
	N := max(float64(m.live), minCorpus)
	avgLen := m.avgLen()
	var norm float64
	var blocks []postings
	for _, t := range terms {
		var err error
		if blocks, err = readPostings(r, x.b, t, len(m.dl), blocks[:0]); err != nil {
			return nil, err
		}
		nt := 0
		for _, p := range blocks {
			nt += p.count()
		}
		idf := math.Log(1 + (N-float64(nt)+0.5)/(float64(nt)+0.5))
		norm += idf
		for _, p := range blocks {
			err := p.each(func(doc, tf uint32) error {
				if !m.has(doc) {
					return fmt.Errorf("%w: term %q names document %d", errDamaged, t, doc)
				}
				tf64, dl := float64(tf), float64(m.dl[doc]-1)
				scores[doc] += idf * tf64 * (k1 + 1) / (tf64 + k1*(1-b+b*dl/avgLen))
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	for i := range scores {
		scores[i] = min(1, scores[i]/norm)
	}
	return scores, nil
}

// snippet is a chunk's text, trimmed and capped at SnippetRunes.
func snippet(s string) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= SnippetRunes {
		return s
	}
	return string([]rune(s)[:SnippetRunes]) + "…"
}
