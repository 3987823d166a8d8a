package access

import "testing"

func TestPrefix(t *testing.T) {
	tests := []struct {
		command, want string
		ok            bool
	}{
		{"git status --short", "git status", true},
		{"go test ./...", "go test", true},
		{"ls -la /tmp", "ls", true},
		{"npm run build", "npm run build", true},
		{"npm run build extra words", "npm run build", true},
		{"./deploy.sh staging", "./deploy.sh staging", true},
		{"  cat   notes.txt ", "cat", true},
		{"echo 'hi there'", "echo", true},
		{"git status; rm -rf ~", "", false},
		{"ls && rm x", "", false},
		{"echo $(id)", "", false},
		{"echo `id`", "", false},
		{"cat < /etc/passwd", "", false},
		{"ls\nrm x", "", false},
		{"   ", "", false},
	}
	for _, tt := range tests {
		got, ok := Prefix(tt.command)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Prefix(%q) = %q, %v; want %q, %v", tt.command, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		command, prefix string
		want            bool
	}{
		{"git status", "git status", true},
		{"git status --short", "git status", true},
		{"git  status", "git status", true},
		{"git statusx", "git status", false},
		{"git", "git status", false},
		{"git push", "git status", false},
		{"git status; rm -rf ~", "git status", false},
		{"git status | sh", "git status", false},
		{"git status $(rm x)", "git status", false},
		{"ls", "", false},
	}
	for _, tt := range tests {
		if got := Matches(tt.command, tt.prefix); got != tt.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", tt.command, tt.prefix, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	cmd, wd, ok := Describe(`{"command":"ls -la","workdir":"src"}`)
	if !ok || cmd != "ls -la" || wd != "src" {
		t.Errorf("Describe = %q, %q, %v", cmd, wd, ok)
	}
	for _, bad := range []string{`{}`, `not json`, `{"command":"  "}`} {
		if _, _, ok := Describe(bad); ok {
			t.Errorf("Describe(%s) ok, want not", bad)
		}
	}
}
