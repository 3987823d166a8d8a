package memory

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/persistence"
)

var updateRanking = flag.Bool("update-ranking", false, "write testdata/ranking.golden.json from this code")

// rankingCorpus writes a fixed corpus of 400 notes (daily notes and topic files, long and
// short, English and Chinese, many ties at the score cap) and two conversations, so the
// ranking's every rule (BM25, the cap, the fused score, recency, path order, sessions) is
// exercised.
func rankingCorpus(t *testing.T, ws string, store persistence.Store) {
	r := rand.New(rand.NewPCG(7, 40))
	en := strings.Fields("deploy kafka budget meeting release invoice travel design review server latency cache " +
		"queue migration schedule contract payment report alice bob carol falcon harbour boat")
	zh := []string{"项目", "会议", "部署", "预算", "发布", "数据库", "旅行", "发票", "客户", "设计", "缓存", "迁移"}
	for i := range 400 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d\n\n", i)
		for line := range 1 + r.IntN(40) {
			for range 3 + r.IntN(10) {
				if r.IntN(4) == 0 {
					b.WriteString(zh[r.IntN(len(zh))])
				} else {
					b.WriteString(en[r.IntN(len(en))] + " ")
				}
			}
			fmt.Fprintf(&b, "T-%04d\n", r.IntN(500))
			if line%9 == 8 {
				b.WriteString("\n## More\n\n")
			}
		}
		rel := fmt.Sprintf("memory/topic/n%03d.md", i)
		if i%3 == 0 {
			rel = fmt.Sprintf("memory/2025-%02d-%02d-%d.md", 1+i%12, 1+i%28, i)
		}
		writeNote(t, ws, rel, b.String())
	}
	at := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	for c := range 2 {
		key := fmt.Sprintf("agent:main:telegram:dm:%d", c)
		var msgs []messages.ChatMessage
		for k := range 6 {
			msgs = append(msgs, user(fmt.Sprintf("how is the kafka deploy going, round %d for %s?", k, en[(c+k)%len(en)])),
				assistant(fmt.Sprintf("The %s review is scheduled; budget %d.", en[(3*c+k)%len(en)], 100*k)))
		}
		convo(t, store, "main", key, at.Add(time.Duration(c)*time.Hour), msgs...)
	}
}

// rankingQueries are searched with and without embeddings, with no minimum score.
var rankingQueries = []string{"kafka deploy", "budget", "falcon harbour boat", "部署 预算", "T-0042", "review of the design",
	"latency cache queue migration", "项目会议", "alice", "the", "payment contract report", "nothing-matches-this",
	"kafka zebra quokka narwhal okapi", "T-0001 T-0002 T-0003 T-0004 T-0005 T-0006 T-0007", "部署 zebra unicorn yeti", "round 3 bob"}

type rankedResult struct {
	Path       string
	Start, End int
	Score      float64
	Turn       int
	Snippet    string
}

// TestRankingUnchanged compares every result of rankingQueries, in order, with their score
// and snippet, against testdata/ranking.golden.json, which the in-heap index of 521063b..
// ca93122 wrote (go test -run TestRankingUnchanged -update-ranking). A change of the index's
// storage must not change a ranking.
// It runs on every store (storeKinds): they all rank alike.
func TestRankingUnchanged(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) { testRanking(t, func() persistence.Store { return openStore(t, kind) }) })
	}
}

func testRanking(t *testing.T, open func() persistence.Store) {
	got := map[string][]rankedResult{}
	for _, mode := range []string{"fts", "hybrid"} {
		ws := t.TempDir()
		store := open()
		rankingCorpus(t, ws, store)
		var e *fakeEmbedder
		if mode == "hybrid" {
			e = &fakeEmbedder{}
		}
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		x := sessionIndex(t, store, ws, e, &now)
		zero := 0.0
		for _, q := range rankingQueries {
			resp, err := x.Search(context.Background(), Query{Text: q, MaxResults: 12, MinScore: &zero})
			if err != nil {
				t.Fatal(err)
			}
			var rs []rankedResult
			for _, r := range resp.Results {
				rs = append(rs, rankedResult{Path: r.Path, Start: r.StartLine, End: r.EndLine, Score: r.Score, Turn: r.Turn, Snippet: capText(r.Snippet, 60)})
			}
			got[mode+": "+q] = rs
		}
		guest := func(p string) bool { return p == SessionPrefix+"agent:main:telegram:dm:1" }
		for _, q := range []string{"kafka deploy", "budget review"} {
			resp, err := x.Search(context.Background(), Query{Text: q, MaxResults: 5, MinScore: &zero, Only: guest})
			if err != nil {
				t.Fatal(err)
			}
			var rs []rankedResult
			for _, r := range resp.Results {
				rs = append(rs, rankedResult{Path: r.Path, Start: r.StartLine, End: r.EndLine, Score: r.Score, Turn: r.Turn})
			}
			got[mode+", one conversation: "+q] = rs
		}
	}
	golden := filepath.Join("testdata", "ranking.golden.json")
	if *updateRanking {
		raw, _ := json.MarshalIndent(got, "", " ")
		if err := os.WriteFile(golden, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string][]rankedResult
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rankings changed (-golden +now):\n%s", diff)
	}
}
