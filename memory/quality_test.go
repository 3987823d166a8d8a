package memory

import (
	"context"
	"testing"

	pmem "github.com/reefgw/reef/persistence/memory"
)

// qualityNotes are the fixed notes of the quality set: English and Chinese (and a little
// Japanese and Korean), daily notes and topic files, ids, dates, names.
var qualityNotes = map[string]string{
	"memory/2025-01-06.md":      "Dentist appointment moved to Friday 10:00 at Dr. Chen's clinic.\n",
	"memory/2025-01-12.md":      "周末和妈妈去杭州旅行，住在西湖边的酒店。\n",
	"memory/2025-02-03.md":      "Deploy of billing-service v2.3.1 failed: migration 0042 timed out on Postgres.\n",
	"memory/2025-02-14.md":      "情人节给妻子买了一束郁金香，她更喜欢黄色的。\n",
	"memory/people/alice.md":    "# Alice Wang\n\nAlice is the product lead at Northwind. She prefers async updates over meetings. Birthday: 1990-07-21.\n",
	"memory/people/laowang.md":  "# 老王\n\n老王是我大学室友，现在在深圳做硬件创业，喜欢喝普洱茶。\n",
	"memory/projects/falcon.md": "# Project Falcon\n\nLaunch date 2025-03-14. Owner: Alice. Risks: the payment SDK is not certified yet.\n",
	"memory/projects/haiyan.md": "# 海燕项目\n\n目标：把推荐系统的延迟降到 50 毫秒以内。负责人：小李。\n",
	"memory/preferences.md":     "用户目前正在学习 Rust。喜欢用 Neovim 写代码。\n",
	"MEMORY.md":                 "# About the user\n\n- Prefers tea over coffee.\n- Allergic to peanuts.\n- Works from Berlin, timezone Europe/Berlin.\n",
	"memory/2025-03-01.md":      "Salary negotiation: asked for 95k EUR, HR offered 88k.\n",
	"memory/2025-03-05.md":      "猫咪年糕今天去打了疫苗，下次是九月。\n",
	"memory/2025-03-09.md":      "Ticket INV-2024-017 still open: the invoice PDF renders the wrong VAT number.\n",
	"memory/travel/tokyo.md":    "# Tokyo trip\n\nFlight NH204 on 2025-04-02, hotel in Shinjuku. 東京で寿司を食べたい。\n",
	"memory/health.md":          "# 健康\n\n对花粉过敏，春天要带药。每周跑步三次。\n",
	"memory/2025-03-20.md":      "Budget for Q2 marketing approved: 40,000 USD, split between ads and events.\n",
	"memory/2025-03-22.md":      "数据库从 MySQL 迁移到 PostgreSQL 的方案已经确定，下个月开始。\n",
	"memory/recipes.md":         "# Recipes\n\nGrandma's dumplings: pork, chives, ginger; boil 8 minutes.\n",
	"memory/2025-04-10.md":      "Password manager switched to Bitwarden; the old 1Password vault is archived.\n",
	"memory/books.md":           "# 读书\n\n正在读《三体》第二部，黑暗森林理论很有意思。\n",
	"memory/2025-04-15.md":      "Daughter's school play is on May 8th, she plays the fox.\n",
	"memory/car.md":             "Car: 2019 Skoda Octavia, plate B-RF 2042, next service at 90,000 km.\n",
	"memory/2025-04-18.md":      "和小李开会讨论海燕项目的缓存方案，决定用 Redis。\n",
	"memory/hobbies.md":         "Learning to play the cello since January; teacher is Mrs. Becker, lessons on Tuesdays.\n",
	"memory/2025-04-25.md":      "Release 3.0 of the mobile app shipped to the App Store; crash rate 0.3%.\n",
	"memory/korean.md":          "한국어 공부: 매일 단어 20개를 외운다.\n",
	"memory/2025-05-02.md":      "Bought a standing desk from IKEA, model BEKANT, 160x80.\n",
	"memory/pets.md":            "# Pets\n\nOur dog Bruno needs his heartworm pill on the first of each month.\n",
	"memory/2025-05-10.md":      "老婆生日是六月十二号，要提前订餐厅。\n",
	"memory/network.md":         "Home router admin is at 192.168.1.1; Wi-Fi network name is reef-home-5G.\n",
}

// qualityQueries are the quality set's queries and the file each must find: exact words,
// ids and dates, paraphrases, and questions in one language about notes in another.
var qualityQueries = []struct{ q, want string }{
	{"when is the dentist", "memory/2025-01-06.md"},
	{"杭州旅行", "memory/2025-01-12.md"},
	{"billing service deploy failure", "memory/2025-02-03.md"},
	{"妻子喜欢什么颜色的花", "memory/2025-02-14.md"},
	{"Alice birthday", "memory/people/alice.md"},
	{"老王喜欢喝什么茶", "memory/people/laowang.md"},
	{"Falcon launch date", "memory/projects/falcon.md"},
	{"推荐系统延迟目标", "memory/projects/haiyan.md"},
	{"用户在学什么编程语言", "memory/preferences.md"},
	{"coffee or tea", "MEMORY.md"},
	{"how much salary did HR offer", "memory/2025-03-01.md"},
	{"年糕疫苗", "memory/2025-03-05.md"},
	{"INV-2024-017", "memory/2025-03-09.md"},
	{"flight to Tokyo", "memory/travel/tokyo.md"},
	{"花粉过敏", "memory/health.md"},
	{"Q2 marketing budget", "memory/2025-03-20.md"},
	{"数据库迁移", "memory/2025-03-22.md"},
	{"dumpling recipe", "memory/recipes.md"},
	{"which password manager", "memory/2025-04-10.md"},
	{"三体", "memory/books.md"},
	{"school play", "memory/2025-04-15.md"},
	{"license plate of the car", "memory/car.md"},
	{"海燕项目缓存用什么", "memory/2025-04-18.md"},
	{"cello lessons", "memory/hobbies.md"},
	{"mobile app release crash rate", "memory/2025-04-25.md"},
	{"한국어 단어", "memory/korean.md"},
	{"standing desk", "memory/2025-05-02.md"},
	{"dog medicine", "memory/pets.md"},
	{"wifi name", "memory/network.md"},
	{"what programming language am I learning", "memory/preferences.md"},
}

// TestQualityRecallAt5 reports recall@5 of keyword, vector and hybrid ranking on the quality
// set (the fake embedder: hashed character n-grams and a small bilingual lexicon) and
// asserts that hybrid is at least as good as each alone.
func TestQualityRecallAt5(t *testing.T) {
	if len(qualityNotes) < 30 || len(qualityQueries) < 30 {
		t.Fatalf("the quality set has %d notes and %d queries, want 30 each", len(qualityNotes), len(qualityQueries))
	}
	ws := t.TempDir()
	for p, text := range qualityNotes {
		writeNote(t, ws, p, text)
	}
	e := &fakeEmbedder{dims: 256}
	x := newIndex(t, ws, pmem.New(), e)
	ctx := context.Background()
	if err := x.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	hits := map[string]int{}
	for _, qq := range qualityQueries {
		vecs, err := x.embed(ctx, []string{qq.q}, x.cfg.QueryTimeout, 256)
		if err != nil {
			t.Fatal(err)
		}
		terms := uniqueTerms(qq.q)
		runs := map[string][]Result{}
		x.mu.Lock()
		for mode, args := range map[string]struct {
			terms []string
			qv    []float32
		}{ModeFTS: {terms, nil}, ModeVector: {nil, vecs[0]}, ModeHybrid: {terms, vecs[0]}} {
			if runs[mode], err = x.rank(args.terms, args.qv, 5, 0, nil); err != nil {
				t.Fatal(err)
			}
		}
		x.mu.Unlock()
		for mode, res := range runs {
			found := false
			for _, r := range res {
				found = found || r.Path == qq.want
			}
			if found {
				hits[mode]++
			} else {
				t.Logf("%-6s missed %q (want %s)", mode, qq.q, qq.want)
			}
		}
	}
	n := float64(len(qualityQueries))
	t.Logf("recall@5 over %d queries: fts %.2f, vector %.2f, hybrid %.2f",
		len(qualityQueries), float64(hits[ModeFTS])/n, float64(hits[ModeVector])/n, float64(hits[ModeHybrid])/n)
	if hits[ModeHybrid] < hits[ModeFTS] || hits[ModeHybrid] < hits[ModeVector] {
		t.Errorf("hybrid finds %d, fts %d, vector %d: hybrid must be at least as good as each", hits[ModeHybrid], hits[ModeFTS], hits[ModeVector])
	}
	// And through Search, with the default minimum scores, with and without embeddings.
	for _, idx := range []*Index{x, newIndex(t, ws, pmem.New(), nil)} {
		found := 0
		mode := ""
		for _, qq := range qualityQueries {
			resp := search(t, idx, qq.q)
			mode = resp.Mode
			hit := false
			for _, r := range resp.Results[:min(5, len(resp.Results))] {
				hit = hit || r.Path == qq.want
			}
			if hit {
				found++
			} else {
				t.Logf("Search (%s) missed %q", mode, qq.q)
			}
		}
		t.Logf("recall@5 of Search with its defaults, mode %s: %.2f", mode, float64(found)/n)
		if want := hits[mode] * 8 / 10; found < want {
			t.Errorf("mode %s: the default minScore drops too much: %d found, want at least %d", mode, found, want)
		}
	}
}
