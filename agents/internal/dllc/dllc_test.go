package dllc

import (
	"math"
	"testing"
)

// The study's worked example (seeds-digest §002): loads A=50 %, B=30 %,
// C=70 %, connections 10, 8, 12: products 1000, 480, 1680, so B.
func TestPickWorkedExample(t *testing.T) {
	loads := []int64{500, 300, 700}
	conns := []uint64{10, 8, 12}
	var cands []Candidate
	for i := range loads {
		cands = append(cands, Candidate{Conns: conns[i], Load: Effective(loads[i]), Weight: 1})
	}
	if got := Pick(cands); got != 1 {
		t.Fatalf("Pick = %d, want 1 (B)", got)
	}
	// The same with IPVS's overhead (active × 256) and equal weights.
	for i := range cands {
		cands[i].Conns = Overhead(uint32(conns[i]), 0)
	}
	if got := Pick(cands); got != 1 {
		t.Fatalf("Pick with overheads = %d, want 1 (B)", got)
	}
}

func TestPick(t *testing.T) {
	tests := []struct {
		name  string
		cands []Candidate
		want  int
	}{
		{"none", nil, -1},
		{"all drained", []Candidate{{Conns: 1, Load: 100, Weight: 0}, {Load: 100}}, -1},
		{"drained skipped though idle", []Candidate{{Conns: 9, Load: 900, Weight: 1}, {Load: 100, Weight: 0}}, 0},
		{"weight biases", []Candidate{{Conns: 4, Load: 500, Weight: 3}, {Conns: 2, Load: 500, Weight: 1}}, 0},
		{"idle pool goes by load", []Candidate{{Load: 700, Weight: 1}, {Load: 300, Weight: 1}, {Load: 500, Weight: 1}}, 1},
		{"idle pool, load per weight", []Candidate{{Load: 300, Weight: 1}, {Load: 500, Weight: 2}}, 1},
		{"full tie goes to the first", []Candidate{{Conns: 2, Load: 300, Weight: 1}, {Conns: 2, Load: 300, Weight: 1}}, 0},
		{"no overflow at the bounds", []Candidate{
			{Conns: 1 << 40, Load: MaxLoad, Weight: math.MaxUint32},
			{Conns: 1 << 40, Load: MaxLoad, Weight: math.MaxUint32 - 1},
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Pick(tt.cands); got != tt.want {
				t.Errorf("Pick = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestCompareScaledAgainstFloat(t *testing.T) {
	xs := []uint64{0, 1, 255, 1 << 31, 1<<40 + 7, math.MaxUint64 / 3, math.MaxUint64}
	ws := []uint32{0, 1, 3, 1 << 16, math.MaxUint32}
	for _, x := range xs {
		for _, wx := range ws {
			for _, y := range xs {
				for _, wy := range ws {
					want := bigCompare(x, wx, y, wy)
					if got := compareScaled(x, wx, y, wy); got != want {
						t.Fatalf("compareScaled(%d, %d, %d, %d) = %d, want %d", x, wx, y, wy, got, want)
					}
				}
			}
		}
	}
}

// bigCompare is compareScaled the slow, obvious way.
func bigCompare(x uint64, wx uint32, y uint64, wy uint32) int {
	a := new(bigInt).mul(x, wx)
	b := new(bigInt).mul(y, wy)
	return a.cmp(b)
}

func TestAgentPercentAndIPVSWeight(t *testing.T) {
	for _, tt := range []struct {
		load            int64
		percent, weight int
	}{
		{0, 100, 256}, {100, 100, 256}, {300, 33, 85}, {500, 20, 51}, {700, 14, 37},
		{1000, 10, 26}, {20000, 1, 1}, {MaxLoad * 10, 1, 1},
	} {
		if got := AgentPercent(tt.load); got != tt.percent {
			t.Errorf("AgentPercent(%d) = %d, want %d", tt.load, got, tt.percent)
		}
		if got := IPVSWeight(1, tt.load); got != tt.weight {
			t.Errorf("IPVSWeight(1, %d) = %d, want %d", tt.load, got, tt.weight)
		}
	}
	if got := IPVSWeight(0, 500); got != 0 {
		t.Errorf("IPVSWeight(0, 500) = %d, want 0 (drained stays drained)", got)
	}
	if got := IPVSWeight(3, 500); got != 154 {
		t.Errorf("IPVSWeight(3, 500) = %d, want 154", got)
	}
}

// HAProxy's leastconn with the agent's percentages, and wlc with
// IPVSWeight, pick B in the worked example too.
func TestWorkedExampleThroughWeights(t *testing.T) {
	loads := []int64{500, 300, 700}
	conns := []uint64{10, 8, 12}
	var haproxy, wlc []Candidate
	for i, l := range loads {
		// HAProxy: configured weight 256, effective weight 256 × percent / 100.
		haproxy = append(haproxy, Candidate{Conns: conns[i], Load: 1, Weight: uint32(256 * AgentPercent(l) / 100)})
		wlc = append(wlc, Candidate{Conns: Overhead(uint32(conns[i]), 0), Load: 1, Weight: uint32(IPVSWeight(1, l))})
	}
	if got := Pick(haproxy); got != 1 {
		t.Errorf("leastconn with agent weights picks %d, want 1 (B)", got)
	}
	if got := Pick(wlc); got != 1 {
		t.Errorf("wlc with load weights picks %d, want 1 (B)", got)
	}
}

func TestFill(t *testing.T) {
	got := Fill([]int64{500, 0, 300, 90}, []bool{true, false, true, true})
	want := []uint32{500, 300, 300, 100} // mean of 500, 300, 100
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Fill = %v, want %v", got, want)
		}
	}
	none := Fill([]int64{500, 700}, []bool{false, false})
	if none[0] != FullLoad || none[1] != FullLoad {
		t.Errorf("Fill with nothing known = %v, want all %d", none, FullLoad)
	}
}
