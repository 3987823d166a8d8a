package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// gbkNewsPage is laid out as Chinese news sites are: an XHTML doctype, the charset declared
// only in <meta http-equiv> (gb2312, which means GBK), navigation before the article. 镕 is
// in GBK but not in GB2312.
const gbkNewsPage = `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=gb2312" />
<title>珊瑚礁保护区今日开放_新闻中心</title>
<meta name="keywords" content="珊瑚礁,保护区,新闻" />
<link rel="stylesheet" type="text/css" href="/css/news.css" />
<script type="text/javascript">var pageType = "article";</script>
</head>
<body>
<div class="top-nav"><a href="/">首页</a> | <a href="/news/">新闻</a> | <a href="/sports/">体育</a></div>
<div class="main"><h1>珊瑚礁保护区今日开放</h1>
<div class="info">2026年12月06日 08:00 来源：本站 记者 朱镕</div>
<div id="artibody"><p>海洋保护区今日向游客开放，游客可乘船参观珊瑚礁。</p></div></div>
</body>
</html>`

func encodePage(t *testing.T, e encoding.Encoding, page string) string {
	t.Helper()
	b, err := e.NewEncoder().String(page)
	if err != nil {
		t.Fatalf("encode test page: %v", err)
	}
	return b
}

// TestFetchLegacyCharsets: pages in GBK, Big5 and Shift_JIS are read in their charset,
// whether it is declared in a <meta> only or in the header only; an undeclared UTF-8 page
// whose first kilobytes are ASCII stays UTF-8 (#33.8).
func TestFetchLegacyCharsets(t *testing.T) {
	longASCII := "<html><head><title>reef</title><script>" + strings.Repeat("var x = 1;\n", 300) + "</script></head><body><p>珊瑚礁 café</p></body></html>"
	pages := map[string]struct{ contentType, body string }{
		"/gbk-news":     {"text/html", encodePage(t, simplifiedchinese.GBK, gbkNewsPage)},
		"/big5-meta":    {"text/html", encodePage(t, traditionalchinese.Big5, `<html><head><meta charset="big5"><title>珊瑚礁觀光</title></head><body><p>珊瑚礁觀光船今日啟航。</p></body></html>`)},
		"/sjis-header":  {"text/html; charset=Shift_JIS", encodePage(t, japanese.ShiftJIS, `<html><head><title>サンゴ礁</title></head><body><p>サンゴ礁の観光船が出航しました。</p></body></html>`)},
		"/sjis-plain":   {"text/plain; charset=shift_jis", encodePage(t, japanese.ShiftJIS, "サンゴ礁の観光船")},
		"/utf8-no-decl": {"text/html", longASCII},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", p.contentType)
		w.Write([]byte(p.body))
	}))
	t.Cleanup(srv.Close)
	f := newTestFetch(t, Config{}, "127.0.0.1/32")
	for path, want := range map[string][]string{
		"/gbk-news":     {"珊瑚礁保护区今日开放_新闻中心", "海洋保护区今日向游客开放，游客可乘船参观珊瑚礁。", "记者 朱镕"},
		"/big5-meta":    {"珊瑚礁觀光", "珊瑚礁觀光船今日啟航。"},
		"/sjis-header":  {"サンゴ礁", "サンゴ礁の観光船が出航しました。"},
		"/sjis-plain":   {"サンゴ礁の観光船"},
		"/utf8-no-decl": {"珊瑚礁 café"},
	} {
		t.Run(path, func(t *testing.T) {
			out, res := run(t, f, urlArgs(srv.URL+path))
			if res.IsError {
				t.Fatal(res.Content)
			}
			got := out.Title + "\n" + out.Text
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			if strings.ContainsRune(got, '\uFFFD') {
				t.Errorf("replacement characters in:\n%s", got)
			}
		})
	}
}
