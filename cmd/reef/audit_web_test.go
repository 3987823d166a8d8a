package main

import (
	"strings"
	"testing"

	"github.com/reefgw/reef/configs"
)

func TestAuditWeb(t *testing.T) {
	for _, tt := range []struct {
		allow   []string
		problem string // "" when none
	}{
		{nil, ""},
		{[]string{"192.168.1.0/24", "nas.lan"}, ""},
		{[]string{"127.0.0.0/8"}, "may reach 127.0.0.1"},
		{[]string{"0.0.0.0/0"}, "may reach 127.0.0.1, 169.254.169.254"},
		{[]string{"::/0"}, "may reach ::1, fd00:ec2::254"},
		{[]string{"localhost"}, "may reach localhost"},
	} {
		cfg := &configs.Config{}
		cfg.Tools.Web.AllowPrivate = tt.allow
		a := &audit{}
		auditWeb(a, cfg)
		switch {
		case tt.problem == "" && len(a.Problems) > 0:
			t.Errorf("%v: problems %+v, want none", tt.allow, a.Problems)
		case tt.problem == "" && len(a.Posture) != 1:
			t.Errorf("%v: posture %+v, want one fact", tt.allow, a.Posture)
		case tt.problem != "" && (len(a.Problems) != 1 || !strings.Contains(a.Problems[0].Problem, tt.problem)):
			t.Errorf("%v: problems %+v, want one with %q", tt.allow, a.Problems, tt.problem)
		}
	}
}
