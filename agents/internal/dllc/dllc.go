// Package dllc is the dynamic least load and connection rule (DLLC,
// seeds-digest §002) as the agents compute it. The kernel module
// appliance/kernel/ip_vs_dllc implements the same choice in C for IPVS; this
// package is the reference for everything in user space:
//
//   - Pick, the choice itself, used by tests of every implementation;
//   - AgentPercent, what fulcrum-loadd answers HAProxy's agent-check with, so
//     that HAProxy's leastconn chooses as DLLC does;
//   - IPVSWeight, the weights the node agent gives IPVS when the module is
//     missing and weighted least connection (wlc) stands in for it.
//
// The study sends the next connection to the server with the smallest
// C_i × Lr_i, where Lr_i = L_i / avg(L) × 100. The average is common to every
// server, so it cancels: the smallest C_i × L_i is the same server. Weights
// still let an operator bias or drain a server, hence C_i × L_i / W_i.
//
// Loads are integers in milli-loads: 1000 is one fully busy server (every
// CPU busy, nothing waiting); more means work is queueing. Every
// implementation first clamps a load with Effective: loads below MinLoad
// count as MinLoad, so that idle servers compare as equals instead of one at
// 0.1 % taking every connection from one at 0.2 %, and so that a product
// C_i × L_i is never 0 for a server with connections.
package dllc

import "math"

// Load bounds, in milli-loads.
const (
	// FullLoad is the load of one fully busy server.
	FullLoad = 1000
	// MinLoad is the smallest load the rule distinguishes (10 % busy).
	MinLoad = 100
	// MaxLoad is the largest (1000 × fully busy); larger loads count as it.
	MaxLoad = 1_000_000
)

// Effective clamps a measured load (milli-loads) into [MinLoad, MaxLoad].
func Effective(milli int64) uint32 {
	return uint32(min(max(milli, MinLoad), MaxLoad))
}

// Overhead is IPVS's connection count of a destination as mainline's
// ip_vs_dest_conn_overhead defines it: an active connection costs 256
// inactive ones. The module calls the kernel's own helper, so a kernel that
// weighs them otherwise (Debian's 6.12.107 counts an active one 257 times)
// stays consistent there; this function serves the tests of the maths.
func Overhead(active, inactive uint32) uint64 {
	return uint64(active)<<8 + uint64(inactive)
}

// Candidate is one server as Pick sees it.
type Candidate struct {
	// Conns is C_i: the connection count (IPVS: Overhead; HAProxy: the
	// server's current connections).
	Conns uint64
	// Load is L_i, already Effective.
	Load uint32
	// Weight is W_i; 0 means the server takes no new connections.
	Weight uint32
}

// Pick returns the index of the candidate with the smallest
// Conns × Load / Weight, or -1 when every weight is 0. Equal products go to
// the smaller Load / Weight (an idle pool goes by load), then to the first.
// It compares by cross-multiplication, in 128 bits, without division, as the
// kernel module does.
func Pick(candidates []Candidate) int {
	best := -1
	for i, c := range candidates {
		if c.Weight == 0 {
			continue
		}
		if best < 0 || better(c, candidates[best]) {
			best = i
		}
	}
	return best
}

// better reports whether a's product is smaller than b's, or equal with a
// smaller Load / Weight.
func better(a, b Candidate) bool {
	ka, kb := a.Conns*uint64(a.Load), b.Conns*uint64(b.Load) // < 2^64: Conns < 2^40, Load < 2^20
	switch cmp := compareScaled(ka, b.Weight, kb, a.Weight); {
	case cmp != 0:
		return cmp < 0
	default:
		return compareScaled(uint64(a.Load), b.Weight, uint64(b.Load), a.Weight) < 0
	}
}

// compareScaled compares x × wx with y × wy without overflow: -1, 0 or 1.
func compareScaled(x uint64, wx uint32, y uint64, wy uint32) int {
	xhi, xlo := mul64x32(x, wx)
	yhi, ylo := mul64x32(y, wy)
	switch {
	case xhi != yhi:
		return sign(xhi < yhi)
	case xlo != ylo:
		return sign(xlo < ylo)
	}
	return 0
}

// mul64x32 returns x × w as a 96-bit number split into its high 32 and low
// 64 bits.
func mul64x32(x uint64, w uint32) (hi uint64, lo uint64) {
	lo32 := (x & math.MaxUint32) * uint64(w)
	hi32 := (x >> 32) * uint64(w)
	lo = lo32 + hi32<<32
	carry := uint64(0)
	if lo < lo32 {
		carry = 1
	}
	return hi32>>32 + carry, lo
}

func sign(less bool) int {
	if less {
		return -1
	}
	return 1
}

// AgentPercent is the weight fulcrum-loadd reports to HAProxy's agent-check
// for a load (milli-loads): 100 × MinLoad / Effective(load), rounded, at
// least 1 (0 would drain the server). HAProxy sets the server's weight to
// that percentage of its configured weight and leastconn then picks the
// smallest connections / weight, that is connections × load / configured
// weight: DLLC, up to HAProxy's integer weights (1 to 256).
func AgentPercent(milli int64) int {
	return max(1, int(math.Round(100*float64(MinLoad)/float64(Effective(milli)))))
}

// IPVSWeight is the weight the node agent gives an IPVS destination of
// configured weight w and load milli when wlc stands in for dllc:
// w × 256 × MinLoad / Effective(load), at least 1 unless w is 0. wlc then
// picks the smallest overhead / weight, proportional to overhead × load / w.
func IPVSWeight(w int, milli int64) int {
	if w <= 0 {
		return 0
	}
	return max(1, int(math.Round(float64(w)*256*MinLoad/float64(Effective(milli)))))
}

// Fill returns the loads the rule uses for loads measured as loads[i] when
// known[i]: an unknown (missing or stale) load counts as the mean of the
// known ones, so a server whose agent stopped answering is neither favoured
// nor starved. With no load known every server counts as FullLoad and the
// rule is weighted least connection.
func Fill(loads []int64, known []bool) []uint32 {
	var sum, n int64
	for i, l := range loads {
		if known[i] {
			sum += int64(Effective(l))
			n++
		}
	}
	mean := int64(FullLoad)
	if n > 0 {
		mean = (sum + n/2) / n
	}
	out := make([]uint32, len(loads))
	for i, l := range loads {
		if known[i] {
			out[i] = Effective(l)
		} else {
			out[i] = Effective(mean)
		}
	}
	return out
}
