package haproxy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseServerStats(t *testing.T) {
	// Trimmed from HAProxy 2.6's answer: the real one has ~100 columns.
	out := "# pxname,svname,qcur,scur,weight,status,type,agent_status,\n" +
		"pool-app,BACKEND,0,3,320,UP,1,,\n" +
		"pool-app,big,0,2,256,UP,2,L7OK,\n" +
		"pool-app,small,0,1,64,DRAIN,2,,\n" +
		"fe,FRONTEND,,5,,OPEN,0,,\n"
	got, err := ParseServerStats(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ServerStat{
		"pool-app/big":   {Current: 2, Weight: 256, Status: "UP", AgentStatus: "L7OK"},
		"pool-app/small": {Current: 1, Weight: 64, Status: "DRAIN"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if _, err := ParseServerStats("# pxname,svname\n"); err == nil {
		t.Error("no error for an answer without scur")
	}
}
