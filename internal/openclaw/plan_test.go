package openclaw

import (
	"fmt"
	"testing"
	"time"
)

func TestDump(t *testing.T) {
	in, err := Read("testdata/openclaw")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(in, Options{ReefHome: "/tmp/reefhome", KnownTools: []string{"read", "write", "exec", "web_fetch"}, Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(string(p.YAML))
	for _, l := range p.Report.Imported {
		fmt.Println("+", l)
	}
	for _, s := range p.Report.Skipped {
		fmt.Println("-", s.What, ":", s.Why)
	}
	for _, c := range p.Copies {
		fmt.Println("cp", c.From, c.To)
	}
	for _, j := range p.Jobs {
		fmt.Printf("job %s %+v\n", j.AgentID, j.Input)
	}
}
