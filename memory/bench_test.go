package memory

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/reefgw/reef/persistence/bolt"
)

// instantEmbedder returns stored pseudo-random vectors at no cost, so a benchmark measures
// reef's side and not the embedding calls.
type instantEmbedder struct{ dims int }

func (e instantEmbedder) Embed(_ context.Context, _ string, input []string) ([][]float32, error) {
	out := make([][]float32, len(input))
	for i, s := range input {
		r := rand.New(rand.NewPCG(uint64(len(s)), uint64(i)))
		v := make([]float32, e.dims)
		for j := range v {
			v[j] = r.Float32() - 0.5
		}
		out[i] = v
	}
	return out, nil
}

// benchWorkspace writes about 5 MB of Markdown in 1,000 files, English and Chinese mixed.
func benchWorkspace(b *testing.B) string {
	ws := b.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	en := strings.Fields("project meeting deploy budget release database travel invoice customer design review " +
		"alice bob carol server latency cache queue migration schedule contract payment report")
	zh := []string{"项目", "会议", "部署", "预算", "发布", "数据库", "旅行", "发票", "客户", "设计", "缓存", "迁移"}
	for f := range 1000 {
		var sb strings.Builder
		for sb.Len() < 5000 {
			fmt.Fprintf(&sb, "## Section %d\n\n", r.IntN(1000))
			for range 12 {
				if r.IntN(3) == 0 {
					sb.WriteString(zh[r.IntN(len(zh))])
				} else {
					sb.WriteString(en[r.IntN(len(en))] + " ")
				}
			}
			fmt.Fprintf(&sb, "ticket T-%05d.\n\n", r.IntN(100000))
		}
		p := filepath.Join(ws, "memory", fmt.Sprintf("%04d", f/100), fmt.Sprintf("2025-%02d-%02d-%d.md", 1+f%12, 1+f%28, f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(sb.String()), 0o644)
		old := time.Now().Add(-time.Hour) // older than the two seconds a fresh mtime is distrusted
		os.Chtimes(p, old, old)
	}
	return ws
}

func benchIndex(b *testing.B, ws string, dims int) (*Index, *bolt.Store, string) {
	dbPath := filepath.Join(b.TempDir(), "reef.db")
	st, err := bolt.Open(dbPath, bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	cfg := Config{AgentID: "main", Workspace: ws, ChunkTokens: 128, OverlapTokens: 24}
	if dims > 0 {
		cfg.Embedder, cfg.Model, cfg.Provider = instantEmbedder{dims}, "bench", "bench"
	}
	x := New(cfg, st, zerolog.Nop())
	b.Cleanup(func() { x.Close() })
	return x, st, dbPath
}

// BenchmarkMemoryIndex indexes ~5 MB of Markdown into ~10,000 chunks (embedding calls
// excluded: the embedder is instant), with no vectors and with 256 or 1536 dimensions;
// floor is reading and tokenizing the same files, without chunking or the store.
func BenchmarkMemoryIndex(b *testing.B) {
	ws := benchWorkspace(b)
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
				if d != nil && !d.IsDir() {
					data, _ := os.ReadFile(p)
					Tokenize(string(data))
				}
				return nil
			})
		}
	})
	for _, dims := range []int{0, 256, 1536} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			var chunks int
			var size int64
			for b.Loop() {
				b.StopTimer()
				x, _, path := benchIndex(b, ws, dims)
				b.StartTimer()
				if err := x.Sync(context.Background()); err != nil {
					b.Fatal(err)
				}
				chunks = x.m.live
				info, _ := os.Stat(path)
				size = info.Size()
			}
			b.ReportMetric(float64(chunks), "chunks")
			b.ReportMetric(float64(size)/(1<<20), "db-MB")
		})
	}
}

// BenchmarkMemorySearch measures search latency over ~15,000 chunks (the query's embedding
// excluded: the embedder is instant), p50 and p99, of a whole Search (with the stat scan of
// the 1,000 files that keeps the index current) and of the ranking alone; heap-MB is the
// heap the index adds, measured after a GC while it is ready to search. The floor is what
// brute force cannot avoid: one dot product per chunk over vectors already in memory, laid
// one after the other, with the same dot.
func BenchmarkMemorySearch(b *testing.B) {
	ws := benchWorkspace(b)
	queries := []string{"deploy migration latency", "数据库迁移", "alice budget review", "T-04217", "客户发票 payment"}
	// scan: the stat scan of every note before each search instead of the watcher (as
	// before #17's watcher; what a system without inotify does every ScanEvery).
	for _, v := range []struct {
		dims int
		scan bool
	}{{0, false}, {0, true}, {256, false}, {1536, false}} {
		name := fmt.Sprintf("dims=%d", v.dims)
		if v.scan {
			name += "/scan-each-search"
		}
		dims := v.dims
		b.Run(name, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			x, _, _ := benchIndex(b, ws, dims)
			x.cfg.NoWatch, x.cfg.ScanEvery = v.scan, time.Nanosecond
			ctx := context.Background()
			if _, err := x.Search(ctx, Query{Text: "warm"}); err != nil {
				b.Fatal(err)
			}
			runtime.GC() // twice: bbolt's page pool (a sync.Pool) holds a big commit's buffers for one more cycle
			runtime.GC()
			runtime.ReadMemStats(&after)
			var whole, ranked []time.Duration
			e := instantEmbedder{dims}
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				t0 := time.Now()
				if _, err := x.Search(ctx, Query{Text: q}); err != nil {
					b.Fatal(err)
				}
				whole = append(whole, time.Since(t0))
				var qv []float32
				if dims > 0 {
					vs, _ := e.Embed(ctx, "", []string{q})
					qv = vs[0]
					normalize(qv)
				}
				t0 = time.Now()
				x.mu.Lock()
				_, err := x.rank(uniqueTerms(q), qv, DefaultMaxResults, 0.1, nil)
				x.mu.Unlock()
				ranked = append(ranked, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(pct(whole, 50), "p50-ms")
			b.ReportMetric(pct(whole, 99), "p99-ms")
			b.ReportMetric(pct(ranked, 50), "rank-p50-ms")
			b.ReportMetric(pct(ranked, 99), "rank-p99-ms")
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "heap-MB")
			b.ReportMetric(float64(x.m.live), "chunks")
		})
	}
	b.Run("floor-dot-1536", func(b *testing.B) {
		// Random values, not zeros: never-written pages all map one page of zeros, which
		// stays in the cache and would make the floor a fiction.
		all := make([]float32, 15000*1536)
		r := rand.New(rand.NewPCG(7, 8))
		for i := range all {
			all[i] = r.Float32() - 0.5
		}
		vecs := make([][]float32, 15000)
		for i := range vecs {
			vecs[i] = all[i*1536 : (i+1)*1536]
		}
		q := make([]float32, 1536)
		var lat []time.Duration
		for b.Loop() {
			t0 := time.Now()
			var sum float32
			for _, v := range vecs { // the loop the search runs
				sum += dot(q, v)
			}
			lat = append(lat, time.Since(t0))
			_ = sum
		}
		b.ReportMetric(pct(lat, 50), "p50-ms")
		b.ReportMetric(pct(lat, 99), "p99-ms")
	})
}

func pct(d []time.Duration, p int) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[min(len(s)-1, len(s)*p/100)].Microseconds()) / 1000
}

// dotBytes is how vectors were scored before: decoded from their little-endian bytes as
// they are multiplied, four running sums. Kept to measure against.
func dotBytes(a []float32, b []byte) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		s1 += a[i+1] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i+4:]))
		s2 += a[i+2] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i+8:]))
		s3 += a[i+3] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i+12:]))
	}
	for ; i < len(a); i++ {
		s0 += a[i] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s0 + s1 + s2 + s3
}

// BenchmarkMemoryDot scores 15,000 stored 1536-dim vectors (bytes in memory, as bbolt maps
// them, at odd addresses as bbolt packs them) against one query: decoded as they are
// multiplied (first), viewed in place and multiplied in plain Go with four running sums
// (dotGo, until AVX2), viewed in place and multiplied by dot (AVX2 where the CPU has it:
// now), and the floor: dot over []float32 already in memory, laid one after the other. Each iteration runs every variant, each round starting with the next, so a loaded
// machine slows them alike; the metrics are each variant's p50 and p99.
func BenchmarkMemoryDot(b *testing.B) {
	const n, dims = 15000, 1536
	raw := make([][]byte, n)
	vecs := make([][]float32, n)
	all := make([]float32, n*dims) // the floor's vectors, one after the other
	r := rand.New(rand.NewPCG(3, 4))
	for i := range raw {
		v := all[i*dims : (i+1)*dims : (i+1)*dims]
		for j := range v {
			v[j] = r.Float32() - 0.5
		}
		vecs[i] = v
		buf := make([]byte, 4*dims+3)
		off := i % 4 // unaligned like most bbolt values
		copy(buf[off:], encodeVector(v))
		raw[i] = buf[off : off+4*dims]
	}
	q := vecs[0]
	buf := make([]float32, 0, dims)
	variants := []struct {
		name  string
		score func(i int) float32
	}{
		{"decode-4sums-before", func(i int) float32 { return dotBytes(q, raw[i]) }},
		{"view-go", func(i int) float32 { return dotGo(q, viewVector(raw[i], buf)) }},
		{"view-now", func(i int) float32 { return dot(q, viewVector(raw[i], buf)) }},
		{"floor-float32", func(i int) float32 { return dot(q, vecs[i]) }},
	}
	lat := make([][]time.Duration, len(variants))
	var sum float32
	round := 0
	for b.Loop() {
		round++
		for j := range variants { // in turn, each starting a round: none always runs first
			k := (round + j) % len(variants)
			v := variants[k]
			t0 := time.Now()
			for i := range n {
				sum += v.score(i)
			}
			lat[k] = append(lat[k], time.Since(t0))
		}
	}
	_ = sum
	for k, v := range variants {
		b.ReportMetric(pct(lat[k], 50), v.name+"-p50-ms")
		b.ReportMetric(pct(lat[k], 99), v.name+"-p99-ms")
	}
}
