package agent

import (
	"reflect"
	"testing"
)

func TestParseReply(t *testing.T) {
	tests := []struct {
		name, raw string
		want      Reply
	}{
		{"plain", "hello", Reply{Text: "hello"}},
		{"reply to current", "[[reply_to_current]] Sure, done.", Reply{Text: "Sure, done.", ReplyToCurrent: true}},
		{"spaced directive", "[[ reply_to_current ]]\nSure.", Reply{Text: "Sure.", ReplyToCurrent: true}},
		{"reply to id", "Here it is [[reply_to:42:7]] again", Reply{Text: "Here it is again", ReplyTo: "42:7"}},
		{"reply to spaced id", "[[reply_to: om_abc ]] ok", Reply{Text: "ok", ReplyTo: "om_abc"}},
		{"final only", "<think>plan</think>Let me think.<final>The answer is 4.</final>", Reply{Text: "The answer is 4."}},
		{"two finals", "<final>a</final> noise <final>b</final>", Reply{Text: "a\n\nb"}},
		{"unclosed final", "draft <final>The end", Reply{Text: "The end"}},
		{"final with directive", "thinking <final>[[reply_to_current]] yes</final>", Reply{Text: "yes", ReplyToCurrent: true}},
		{"silent", "NO_REPLY", Reply{Text: "NO_REPLY", Silent: true}},
		{"silent in final", "I will stay quiet. <final>NO_REPLY</final>", Reply{Text: "NO_REPLY", Silent: true}},
		{"directive then silent", "[[reply_to_current]] NO_REPLY", Reply{Text: "NO_REPLY", ReplyToCurrent: true, Silent: true}},
		{"in a fence stays", "Write:\n```\n[[reply_to_current]]\n```", Reply{Text: "Write:\n```\n[[reply_to_current]]\n```"}},
		{"other brackets stay", "see [[wiki link]]", Reply{Text: "see [[wiki link]]"}},
		{"media lines", "Here is the chart.\nMEDIA: charts/week.png\n  MEDIA: `https://example.com/a.pdf`", Reply{Text: "Here is the chart.",
			Media: []string{"charts/week.png", "https://example.com/a.pdf"}}},
		{"media in a fence stays", "```\nMEDIA: x.png\n```", Reply{Text: "```\nMEDIA: x.png\n```"}},
		{"media only", "MEDIA: out.csv", Reply{Media: []string{"out.csv"}}},
		{"media word in text stays", "The MEDIA: tag is how you send files", Reply{Text: "The MEDIA: tag is how you send files"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseReply(tt.raw); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseReply(%q)\n got %+v\nwant %+v", tt.raw, got, tt.want)
			}
		})
	}
}

func TestShownText(t *testing.T) {
	tests := []struct{ partial, want string }{
		{"Looking it up", "Looking it up"},
		{"[[reply_to_current]] Looking", "Looking"},
		{"Looking [[reply_to", "Looking"},
		{"Plan <fin", "Plan"},
		{"Plan <final>Ans", "Ans"},
		{"NO_RE", ""},
		{"NO_REPLY", ""},
	}
	for _, tt := range tests {
		if got := ShownText(tt.partial); got != tt.want {
			t.Errorf("ShownText(%q) = %q, want %q", tt.partial, got, tt.want)
		}
	}
}
