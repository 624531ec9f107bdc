"""Report maths and tables: medians over rounds, ratios between systems, the issue's targets.

Pure functions over ``Measurement`` and ``MuxResult`` lists. Ratios are taken between the
medians of systems measured in the same run (never against numbers from another run);
the median of the per-round ratios (each round runs the systems back to back) is kept
beside it as a check on drift.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from tests.bench.loads import Measurement
from tests.bench.multiplex import MuxResult
from tests.bench.plan import SYSTEM_LABELS, SYSTEMS

TARGET_VS_HAPROXY = 0.97
TARGET_VS_NGINX = 1.2
TARGET_RULE_COST = 0.02
TARGET_MUX_RATIO = 346.0
TARGET_MUX_THINK_MS = 60_000


@dataclass
class RowSummary:
    """One row of a table: each system's median rate over the measured rounds."""

    section: str
    row: str
    rounds: int
    medians: dict[str, float]
    minimums: dict[str, float]
    maximums: dict[str, float]
    ratio_to_haproxy: float | None = None
    ratio_to_nginx: float | None = None
    ratio_to_host: float | None = None  # the shipped HAProxy over the host's, same configuration
    paired_ratio_to_haproxy: float | None = None
    paired_ratio_to_nginx: float | None = None
    # The proxy's own CPU time per request or connection: less sensitive than throughput to
    # other work on the machine, and what a dedicated appliance would be limited by.
    cpu_us_per_op: dict[str, float] = field(default_factory=dict)


@dataclass
class Target:
    name: str
    measured: str
    met: bool | None  # None: not measured in this run
    note: str = ""


@dataclass
class Costs:
    """Throughput change, per system: rate(changed) / rate(base) - 1 (negative = slower)."""

    change: str
    base_row: str
    changed_row: str
    by_system: dict[str, float] = field(default_factory=dict)
    cpu_by_system: dict[str, float] = field(default_factory=dict)  # change of proxy CPU per request


def _paired_ratio(runs: list[Measurement], system: str, other: str) -> float | None:
    by_round: dict[int, dict[str, float]] = {}
    for run in runs:
        by_round.setdefault(run.round, {})[run.system] = run.rate
    ratios = [rates[system] / rates[other] for rates in by_round.values() if system in rates and rates.get(other)]
    return statistics.median(ratios) if ratios else None


def summarize(measurements: list[Measurement]) -> list[RowSummary]:
    """Rows in the order they were first measured; warm-up runs (round 0) left out."""
    rows: dict[tuple[str, str], list[Measurement]] = {}
    for m in measurements:
        if m.round > 0:
            rows.setdefault((m.section, m.row), []).append(m)
    summaries = []
    for (section, row), runs in rows.items():
        rates: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        for run in runs:
            rates.setdefault(run.system, []).append(run.rate)
            if run.cpu_us_per_op is not None:
                cpu.setdefault(run.system, []).append(run.cpu_us_per_op)
        summary = RowSummary(
            section=section,
            row=row,
            rounds=max(len(r) for r in rates.values()),
            medians={s: statistics.median(r) for s, r in rates.items()},
            minimums={s: min(r) for s, r in rates.items()},
            maximums={s: max(r) for s, r in rates.items()},
            cpu_us_per_op={s: statistics.median(c) for s, c in cpu.items()},
        )
        fulcrum = summary.medians.get("fulcrum")
        if fulcrum is not None and summary.medians.get("haproxy"):
            summary.ratio_to_haproxy = fulcrum / summary.medians["haproxy"]
            summary.paired_ratio_to_haproxy = _paired_ratio(runs, "fulcrum", "haproxy")
        if fulcrum is not None and summary.medians.get("fulcrum-host"):
            summary.ratio_to_host = fulcrum / summary.medians["fulcrum-host"]
        if fulcrum is not None and summary.medians.get("nginx"):
            summary.ratio_to_nginx = fulcrum / summary.medians["nginx"]
            summary.paired_ratio_to_nginx = _paired_ratio(runs, "fulcrum", "nginx")
        summaries.append(summary)
    return summaries


def costs(summaries: list[RowSummary], changes: list[tuple[str, str, str]]) -> list[Costs]:
    """``changes``: (label, base row, changed row) within the l7 section."""
    by_row = {s.row: s for s in summaries if s.section == "l7"}
    out = []
    for label, base, changed in changes:
        if base not in by_row or changed not in by_row:
            continue
        cost = Costs(label, base, changed)
        for system in SYSTEMS:
            b, c = by_row[base].medians.get(system), by_row[changed].medians.get(system)
            if b and c is not None:
                cost.by_system[system] = c / b - 1
            b, c = by_row[base].cpu_us_per_op.get(system), by_row[changed].cpu_us_per_op.get(system)
            if b and c is not None:
                cost.cpu_by_system[system] = c / b - 1
        out.append(cost)
    return out


def targets(
    summaries: list[RowSummary],
    rule_cost: Costs | None,
    mux: list[MuxResult],
    webbench_row: str,
) -> list[Target]:
    """The issue's targets, each met, missed, or not measured in this run."""
    found = []
    compared = [s for s in summaries if s.ratio_to_haproxy is not None]
    worst = min(compared, key=lambda s: s.ratio_to_haproxy, default=None)
    mux_pairs = mux_ratio_to_haproxy(mux)
    if worst is not None or mux_pairs:
        missed = sum(1 for s in compared if s.ratio_to_haproxy < TARGET_VS_HAPROXY)
        parts = (
            [f"lowest {worst.ratio_to_haproxy:.3f} ({worst.row}); {missed} of {len(compared)} rows below"]
            if worst
            else []
        )
        if mux_pairs:
            parts.append("multiplexing ratio " + ", ".join(f"{r:.3f} ({t} ms)" for t, r in mux_pairs.items()))
        measured = "; ".join(parts)
        met = missed == 0 and all(r >= TARGET_VS_HAPROXY for r in mux_pairs.values())
        found.append(Target(f"Fulcrum >= {TARGET_VS_HAPROXY}x hand-written HAProxy on every row", measured, met))
    webbench = next((s for s in summaries if s.section == "l7" and s.row == webbench_row), None)
    if webbench is not None and webbench.ratio_to_nginx is not None:
        l7 = [s for s in summaries if s.section == "l7" and s.ratio_to_nginx is not None]
        others = ", ".join(f"{s.row} {s.ratio_to_nginx:.2f}" for s in l7 if s is not webbench)
        found.append(
            Target(
                f"Fulcrum >= {TARGET_VS_NGINX}x nginx on the WebBench mix ({webbench_row})",
                f"{webbench.ratio_to_nginx:.2f}" + (f" (other rows: {others})" if others else ""),
                webbench.ratio_to_nginx >= TARGET_VS_NGINX,
            )
        )
    if rule_cost is not None and "fulcrum" in rule_cost.by_system:
        change = rule_cost.by_system["fulcrum"]
        found.append(
            Target(
                f"5,000 rules cost Fulcrum at most {TARGET_RULE_COST:.0%} against 3 rules",
                f"{change:+.1%} throughput",
                change >= -TARGET_RULE_COST,
            )
        )
    found.append(_mux_target(mux))
    return found


@dataclass
class MuxSummary:
    """One multiplexing cell over its rounds: the median of the rounds' median ratios."""

    think_ms: int
    row: str
    system: str
    runs: list[MuxResult]

    @property
    def ratio(self) -> float:
        return statistics.median(m.median_ratio for m in self.runs)

    @property
    def server_connections(self) -> float:
        return statistics.median(statistics.median(m.server_connections) for m in self.runs)


def mux_summaries(mux: list[MuxResult]) -> list[MuxSummary]:
    """Cells in the order first measured, each with its rounds."""
    cells: dict[tuple[int, str, str], list[MuxResult]] = {}
    for m in mux:
        cells.setdefault((m.think_ms, m.row, m.system), []).append(m)
    return [MuxSummary(think, row, system, runs) for (think, row, system), runs in cells.items()]


def mux_ratio_to_haproxy(mux: list[MuxResult]) -> dict[int, float]:
    """Per think time: Fulcrum's multiplexing ratio over hand-written HAProxy's (same settings)."""
    by_key = {(s.think_ms, s.row, s.system): s for s in mux_summaries(mux)}
    pairs = {}
    for think_ms in dict.fromkeys(m.think_ms for m in mux):
        fulcrum, haproxy = by_key.get((think_ms, "mux", "fulcrum")), by_key.get((think_ms, "mux", "haproxy"))
        if fulcrum and haproxy:
            pairs[think_ms] = fulcrum.ratio / haproxy.ratio
    return pairs


def _mux_target(mux: list[MuxResult]) -> Target:
    name = f"multiplexing >= {TARGET_MUX_RATIO:.0f}:1 at {TARGET_MUX_THINK_MS // 1000} s think time"
    fulcrum = [s for s in mux_summaries(mux) if s.system == "fulcrum"]
    if not fulcrum:
        return Target(name, "not run", None)
    best = max(fulcrum, key=lambda s: (s.think_ms, s.ratio))
    clients = best.runs[0].clients
    measured = f"{best.ratio:.1f}:1 ({best.row}, {clients} clients, {best.think_ms} ms think)"
    if best.think_ms < TARGET_MUX_THINK_MS:
        return Target(name, measured, None, f"think time {best.think_ms} ms, not {TARGET_MUX_THINK_MS} ms")
    return Target(name, measured, best.ratio >= TARGET_MUX_RATIO)


# -- tables -----------------------------------------------------------------------------------


def number(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}".replace(",", " ")


def ratio(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def rate_table(summaries: list[RowSummary], section: str, title: str) -> str:
    header = ["| " + title, *(SYSTEM_LABELS[s] for s in SYSTEMS), "Fulcrum ÷ HAProxy", "Fulcrum ÷ nginx"]
    header.append("Fulcrum, shipped ÷ host HAProxy |")
    lines = [" | ".join(header), "| --- |" + " ---: |" * (len(SYSTEMS) + 3)]
    for s in summaries:
        if s.section != section or not set(SYSTEMS) & set(s.medians):
            continue
        cells = [s.row, *(number(s.medians.get(system)) for system in SYSTEMS)]
        cells += [ratio(s.ratio_to_haproxy), ratio(s.ratio_to_nginx, 2), ratio(s.ratio_to_host, 2)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def direct_table(summaries: list[RowSummary], direct: float) -> str:
    """Each system's WebBench throughput as a share of the direct path's (client to one
    server, no proxy), on the same CPUs: what putting the proxy in the path costs."""
    header = ["| share of the direct path", *(SYSTEM_LABELS[s] for s in SYSTEMS)]
    lines = [" | ".join(header) + " |", "| --- |" + " ---: |" * len(SYSTEMS)]
    for s in summaries:
        if s.section != "l7" or not set(SYSTEMS) & set(s.medians):
            continue
        shares = (f"{s.medians[system] / direct:.0%}" if system in s.medians else "-" for system in SYSTEMS)
        lines.append(f"| {s.row} | " + " | ".join(shares) + " |")
    return "\n".join(lines)


def cpu_table(summaries: list[RowSummary], section: str, title: str) -> str:
    """Proxy CPU per operation; the ratio is Fulcrum's cost over hand-written HAProxy's."""
    header = ["| " + title, *(SYSTEM_LABELS[s] for s in SYSTEMS), "Fulcrum ÷ HAProxy |"]
    lines = [" | ".join(header), "| --- |" + " ---: |" * (len(SYSTEMS) + 1)]
    for s in summaries:
        if s.section != section or not set(SYSTEMS) & set(s.cpu_us_per_op):
            continue
        cpu = s.cpu_us_per_op
        cost = cpu["fulcrum"] / cpu["haproxy"] if cpu.get("fulcrum") and cpu.get("haproxy") else None
        cells = [s.row, *(number(cpu.get(system), 1) for system in SYSTEMS), ratio(cost)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def costs_table(found: list[Costs]) -> str:
    lines = [
        "| throughput change (proxy CPU per request) with | " + " | ".join(SYSTEM_LABELS[s] for s in SYSTEMS) + " |"
    ]
    lines.append("| --- |" + " ---: |" * len(SYSTEMS))
    for cost in found:
        cells = []
        for s in SYSTEMS:
            cell = f"{cost.by_system[s]:+.1%}" if s in cost.by_system else "-"
            cells.append(cell + (f" ({cost.cpu_by_system[s]:+.1%})" if s in cost.cpu_by_system else ""))
        lines.append(f"| {cost.change} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def mux_table(results: list[MuxResult], settings: dict[tuple[str, str], str]) -> str:
    """One line per cell: medians over its rounds, and each round's ratio."""
    lines = [
        "| system | setting | clients (think) | client conns | server conns, median (max) "
        "| client : server, median | each round | req/s |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for cell in mux_summaries(results):
        runs = cell.runs
        clients = statistics.median(statistics.median(m.client_connections) for m in runs)
        most = max(max(m.server_connections) for m in runs)
        rounds = ", ".join(f"{m.median_ratio:.1f}" for m in runs)
        lines.append(
            f"| {SYSTEM_LABELS[cell.system]} | {settings.get((cell.row, cell.system), cell.row)} "
            f"| {runs[0].clients} ({cell.think_ms} ms) | {number(clients)} "
            f"| {number(cell.server_connections)} ({most}) | {cell.ratio:.1f} : 1 | {rounds} "
            f"| {number(statistics.median(m.requests_per_s for m in runs))} |"
        )
    return "\n".join(lines)


def builds_table(builds: dict[str, str]) -> str:
    lines = ["| system | daemon (TLS library, threads) |", "| --- | --- |"]
    lines += [f"| {SYSTEM_LABELS[system]} | {build} |" for system, build in builds.items()]
    return "\n".join(lines)


def targets_table(found: list[Target]) -> str:
    lines = ["| target | measured | met |", "| --- | --- | --- |"]
    for t in found:
        verdict = {True: "yes", False: "**no**", None: "not measured"}[t.met]
        lines.append(f"| {t.name} | {t.measured}{' — ' + t.note if t.note else ''} | {verdict} |")
    return "\n".join(lines)
