package plan

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/reefgw/reef/messages"
	"github.com/reefgw/reef/tools"
)

func TestUpdatePlan(t *testing.T) {
	res, err := New().Run(context.Background(), tools.Call{Args: []byte(`{"steps":[
		{"id":"a","title":"Fetch","status":"done","progress":100},
		{"id":"b","title":"Write","status":"running","progress":30,"notes":"half"},
		{"id":"c","title":"Send","status":"pending"}],"explanation":"started"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := &tools.Plan{Explanation: "started", Steps: []messages.PlanStep{
		{ID: "a", Title: "Fetch", Status: "done", Progress: 100},
		{ID: "b", Title: "Write", Status: "running", Progress: 30, Notes: "half"},
		{ID: "c", Title: "Send", Status: "pending"}}}
	if diff := cmp.Diff(want, res.Plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if res.IsError || !strings.Contains(res.Content, "3 steps (1 done, 1 running, 1 pending") {
		t.Errorf("result = %+v", res)
	}
}

func TestUpdatePlanRefusesBadPlans(t *testing.T) {
	tests := map[string]struct{ args, want string }{
		"no steps":       {`{"steps":[]}`, "steps is required"},
		"bad status":     {`{"steps":[{"id":"a","title":"A","status":"maybe"}]}`, "not one of"},
		"no title":       {`{"steps":[{"id":"a","status":"done"}]}`, "id and title are required"},
		"duplicate id":   {`{"steps":[{"id":"a","title":"A","status":"done"},{"id":"a","title":"B","status":"done"}]}`, "used twice"},
		"progress > 100": {`{"steps":[{"id":"a","title":"A","status":"done","progress":101}]}`, "between 0 and 100"},
		"extra field":    {`{"steps":[{"id":"a","title":"A","status":"done"}],"x":1}`, "x"},
		"not JSON":       {`{"steps":`, ""},
		"too many steps": {`{"steps":[` + strings.Repeat(`{"id":"a","title":"A","status":"done"},`, MaxSteps) + `{"id":"z","title":"Z","status":"done"}]}`, "too many steps"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			res, err := New().Run(context.Background(), tools.Call{Args: []byte(tc.args)})
			if err == nil {
				t.Fatalf("no error; result %+v", res)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if res.Plan != nil {
				t.Errorf("a refused call reported a plan: %+v", res.Plan)
			}
		})
	}
}
