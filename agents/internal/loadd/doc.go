// Package loadd is fulcrum-loadd, the load agent of a real server: it
// measures the server's load and serves it to HAProxy's agent-check and as
// JSON (for the node agent, which writes it into the ip_vs_dllc module).
//
// # Load
//
// A load is busy + waiting, reported in milli-loads (package dllc): 1000 is
// one fully busy server, more means work is queueing. busy is the share of
// the server's CPU capacity in use (0 to 1), waiting how much work waited for
// a CPU (0 and up). Both are taken over a sliding window (Meter): every
// sample contributes a numerator and a denominator (Sample) and the window's
// value is the sum of the numerators over the sum of the denominators, so a
// counter source gives exactly the rate over the window and a gauge source
// the mean of its readings.
//
// The sources (Spec):
//
//   - system, the whole host, from /proc/stat:
//     busy = 1 − Δ(idle + iowait) / Δtotal over the window, where total sums
//     user, nice, system, idle, iowait, irq, softirq and steal (guest time is
//     already in user and nice);
//     waiting = the mean over the window's samples of
//     max(0, procs_running − 1 − cores) / cores, where procs_running is the
//     kernel's count of runnable tasks when the sample is read, minus 1 for
//     loadd's own thread reading it, and cores the online CPUs (the "cpuN"
//     lines of /proc/stat).
//
//   - cgroup:PATH, one control group (a container; in tests, a "server"):
//     busy = ΔCPU usage / (Δtime × allowance), at most 1, where the
//     allowance in CPUs is quota / period, or the group's CPUs when it has no
//     quota (cgroup v2: cpuset.cpus.effective if present; otherwise the
//     host's online CPUs).
//     cgroup v2 (PATH holds cgroup.controllers): usage is usage_usec of
//     cpu.stat, quota and period are cpu.max ("max 100000": no quota), and
//     waiting = Δ(cpu.pressure "some" total) / Δtime, the share of the
//     time at least one of the group's tasks waited for a CPU (0 where the
//     kernel has no pressure accounting).
//     cgroup v1 (PATH is the group in the cpu or the cpuacct hierarchy, the
//     other one found through /proc/self/mountinfo): usage is
//     cpuacct.usage, quota and period cpu.cfs_quota_us (−1: none) and
//     cpu.cfs_period_us, and waiting = Δnr_throttled / Δnr_periods of
//     cpu.stat, the share of the group's active periods in which it used up
//     its quota and was held back (0 without a quota: v1 does not account
//     run-queue waits per group).
//
//   - file:PATH, a load written by something else: the file holds a decimal
//     number (1.0 = fully busy), read at every sample; busy = min(load, 1),
//     waiting = load − busy, both averaged over the window.
//
//   - command:CMD, the same number printed on the standard output of
//     /bin/sh -c CMD, run at every sample with a timeout.
//
// Loads above dllc.MaxLoad count as it.
//
// # Failures and the first value
//
// A counter source (system, cgroup) needs two readings for a value, so the
// first value is available one sample after start; a gauge source (file,
// command) has one after its first reading. Until then nothing is answered.
//
// When a source fails (unreadable file, bad number, command failing or timing
// out), the window keeps its last value for at most one window after the
// last good sample; after that the load is unknown: the agent-check closes
// the connection without a reply and GET /v1/load answers 503. HAProxy
// shows the agent check failed (agent status L7RSP, "TCPCHK got an empty
// response") and changes nothing: the server stays up (only an agent's
// explicit down, fail or stopped takes it down) with the weight the last good
// load gave it, exactly as when fulcrum-loadd is not running at all. A reply,
// any reply, would be worse: the configured weight (100%) would make a
// server of unknown load look idle and draw every new connection, and a
// made-up low weight would starve it. A counter source takes a new baseline
// after a failure, so a value after recovery never spans the outage.
//
// # Protocols
//
// AgentCheck answers HAProxy's agent-check: on connect it writes one line,
// "<percent>%\n" with percent = dllc.AgentPercent(load), and closes. Only
// the weight: never up, down, ready, drain or maint, which would fight the
// operator's own drain and health checks. What HAProxy sends (agent-send) is
// read and discarded, never interpreted.
//
// NewHandler serves GET /v1/load (Report, or 503 with {"error": "..."}) and
// GET /healthz. Both refuse clients outside the Allowlist.
package loadd
