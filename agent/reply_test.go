package agent

import "testing"

func TestIsSilent(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"NO_REPLY", true},
		{"  NO_REPLY\n", true},
		{"NO_REPLY.", true},
		{"**NO_REPLY**", true},
		{"`NO_REPLY`", true},
		{"\"NO_REPLY\"!", true},
		{"", false},
		{"no_reply", false},
		{"NO_REPLY, but here is the answer", false},
		{"Sure. NO_REPLY", false},
		{"NO_REPLY_NEEDED", false},
		{"NO REPLY", false},
		{"Hello", false},
	}
	for _, tt := range tests {
		if got := IsSilent(tt.text); got != tt.want {
			t.Errorf("IsSilent(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestHeartbeatEmpty(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    bool
	}{
		{"empty", "", true},
		{"blank lines", "\n  \n\t\n", true},
		{"headings", "# Heartbeat\n## Tasks\n", true},
		{"comment block", "<!-- add tasks\n- like this\n-->\n", true},
		{"empty list items", "# Tasks\n-\n- [ ]\n* \n", true},
		{"task", "- check the inbox\n", false},
		{"task after comment", "<!-- note -->\nWater the plants.\n", false},
		{"task on the comment's line", "<!-- note --> Water the plants.\n", false},
		{"task before comment", "Water the plants. <!-- note -->\n", false},
		{"unclosed comment hides the rest", "<!-- oops\n- task\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HeartbeatEmpty(tt.content); got != tt.want {
				t.Errorf("HeartbeatEmpty(%q) = %v, want %v", tt.content, got, tt.want)
			}
		})
	}
}
