"""The DLLC benchmark's report: medians over repetitions, the goal at saturation, the
markdown tables, the JSON of every run and the plot (matplotlib, SVG).

Pure functions over the points ``dllcbench.measure_point`` returns, except ``write``.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.bench.dllcplan import GOAL_RR, GOAL_VS_RR, GOAL_VS_WLC, GOAL_WLC, REFERENCE_WLC, ROWS


@dataclass
class Cell:
    """One row at one request rate: medians (and extremes) over the repetitions."""

    row: str
    rate: float
    repeats: int
    reply_rate: float
    reply_rate_min: float
    reply_rate_max: float
    error_percent: float
    response_ms: float | None
    fast_share: float  # of the connections HAProxy sent to the servers
    utilisation: dict[str, float]  # each server's CPU time over its quota
    agent_weight: dict[str, float]  # DLLC: the mean weight the agent set, per server


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(points: list[dict]) -> dict[tuple[str, float], Cell]:
    by_cell: dict[tuple[str, float], list[dict]] = {}
    for point in points:
        by_cell.setdefault((point["row"], point["rate"]), []).append(point)
    cells = {}
    for (row, rate), runs in by_cell.items():
        replies = [p["httperf"]["reply_rate"] for p in runs]
        shares = [
            p["servers"]["fast"]["sessions"] / total
            for p in runs
            if (total := sum(s["sessions"] for s in p["servers"].values()))
        ]
        names = runs[0]["servers"]
        cells[(row, rate)] = Cell(
            row=row,
            rate=rate,
            repeats=len(runs),
            reply_rate=statistics.median(replies),
            reply_rate_min=min(replies),
            reply_rate_max=max(replies),
            error_percent=statistics.median(p["httperf"]["error_percent"] for p in runs),
            response_ms=_median([p["httperf"]["response_time_ms"] for p in runs if p["httperf"]["response_time_ms"]]),
            fast_share=_median(shares) or 0.0,
            utilisation={n: statistics.median(p["servers"][n]["utilisation"] for p in runs) for n in names},
            agent_weight={
                n: w
                for n in names
                if (
                    w := _median(
                        [p["servers"][n]["agent_weight_mean"] for p in runs if "agent_weight_mean" in p["servers"][n]]
                    )
                )
                is not None
            },
        )
    return cells


def rows_and_rates(points: list[dict]) -> tuple[list[str], list[float]]:
    rows = [key for key in ROWS if any(p["row"] == key for p in points)]
    return rows, sorted({p["rate"] for p in points})


@dataclass
class Goal:
    name: str
    measured: str
    met: bool | None


def row_labels(facts: dict) -> dict[str, str]:
    """The rows' names; a run may rename some (IPVS has a plain LC beside WLC)."""
    return {key: facts.get("labels", {}).get(key, row.label) for key, row in ROWS.items()}


def goals(cells: dict[tuple[str, float], Cell], rows: list[str], rate: float, labels: dict[str, str]) -> list[Goal]:
    """The issue's goal at ``rate`` (the top of the sweep)."""
    if "dllc" not in rows:
        return [Goal("DLLC at saturation", "DLLC not measured in this run", None)]
    dllc = cells[("dllc", rate)]
    found = []
    for other, factor in ((GOAL_WLC, GOAL_VS_WLC), (GOAL_RR, GOAL_VS_RR)):
        if other in rows:
            ratio = dllc.reply_rate / cells[(other, rate)].reply_rate
            name = f"DLLC reply rate >= {factor:g}x {labels[other]}'s"
            found.append(
                Goal(
                    name,
                    f"{ratio:.2f}x ({dllc.reply_rate:.1f} vs {cells[(other, rate)].reply_rate:.1f})",
                    ratio >= factor,
                )
            )
    others = {key: cells[(key, rate)].error_percent for key in rows if key != "dllc"}
    lowest = min(others, key=others.get)
    found.append(
        Goal(
            "DLLC has the lowest error rate",
            f"DLLC {dllc.error_percent:.1f} %, lowest other {labels[lowest]} {others[lowest]:.1f} %",
            dllc.error_percent <= others[lowest],
        )
    )
    return found


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}".replace(",", " ")


def _table(cells, rows, rates, labels, title: str, value) -> str:
    head = f"| {title} | " + " | ".join(f"{r:g}/s" for r in rates) + " |"
    lines = [head, "| --- |" + " ---: |" * len(rates)]
    for key in rows:
        lines.append(f"| {labels[key]} | " + " | ".join(value(cells[(key, r)]) for r in rates) + " |")
    return "\n".join(lines)


def render_tables(facts: dict, points: list[dict]) -> str:
    cells = summarize(points)
    rows, rates = rows_and_rates(points)
    labels = row_labels(facts)
    n = facts["settings"]["repeats"]
    top = rates[-1]
    parts = [
        _table(
            cells,
            rows,
            rates,
            labels,
            f"reply rate, replies/s (median of {n}) at request rate",
            lambda c: _number(c.reply_rate),
        ),
        _table(cells, rows, rates, labels, "error rate, % of connections", lambda c: _number(c.error_percent)),
        _table(
            cells, rows, rates, labels, "response time, ms (successful connections)", lambda c: _number(c.response_ms)
        ),
        _table(
            cells,
            rows,
            rates,
            labels,
            "connections to the fast server (utilisation fast / slow)",
            lambda c: f"{c.fast_share:.0%} ({c.utilisation['fast']:.0%} / {c.utilisation['slow']:.0%})",
        ),
    ]
    if "dllc" in rows and any(cells[("dllc", r)].agent_weight for r in rates):
        parts.append(
            _table(
                cells,
                ["dllc"],
                rates,
                labels,
                "DLLC: mean agent weight fast / slow",
                lambda c: " / ".join(_number(c.agent_weight.get(s), 0) for s in ("fast", "slow")),
            )
        )
    ratios = []
    for other in (GOAL_WLC, REFERENCE_WLC, GOAL_RR):
        if "dllc" in rows and other in rows:
            each = ", ".join(
                f"{r:g}/s: {cells[('dllc', r)].reply_rate / cells[(other, r)].reply_rate:.2f}" for r in rates[-2:]
            )
            ratios.append(f"- DLLC ÷ {labels[other]} (reply rate): {each}")
    if ratios:
        parts.append("\n".join(ratios))
    parts.append(goal_table(cells, rows, top, labels, f"goal at saturation ({top:g}/s, the top of the sweep)"))
    capacity = sum(c["reply_rate"] for c in facts.get("capacity", {}).values())
    knee = min((r for r in rates if r >= capacity), default=top)
    if knee != top:
        title = f"the same at {knee:g}/s, the first rate above both servers' capacity ({capacity:.0f}/s)"
        parts.append(goal_table(cells, rows, knee, labels, title))
    return "\n\n".join(parts)


def goal_table(cells, rows, rate: float, labels: dict[str, str], title: str) -> str:
    lines = [f"| {title} | measured | met |", "| --- | --- | --- |"]
    for goal in goals(cells, rows, rate, labels):
        met = "not measured" if goal.met is None else ("yes" if goal.met else "**no**")
        lines.append(f"| {goal.name} | {goal.measured} | {met} |")
    return "\n".join(lines)


def plot(path: Path, points: list[dict], facts: dict) -> None:
    """Reply rate, error rate and response time against the request rate, one line per row."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "fulcrum-dllc"  # stable ids: the SVG diffs cleanly
    cells = summarize(points)
    rows, rates = rows_and_rates(points)
    labels = row_labels(facts)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    panels = (
        ("reply rate (replies/s)", lambda c: c.reply_rate),
        ("error rate (% of connections)", lambda c: c.error_percent),
        ("response time (ms)", lambda c: c.response_ms),
    )
    for ax, (label, value) in zip(axes, panels, strict=True):
        for key in rows:
            ys = [value(cells[(key, r)]) for r in rates]
            style = "-" if key in ("dllc", GOAL_WLC, GOAL_RR) else "--"
            ax.plot(rates, [y if y is not None else float("nan") for y in ys], style, marker="o", label=labels[key])
        ax.set_xlabel("request rate (connections/s)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].plot(rates, rates, ":", color="grey", label="offered")
    if facts.get("capacity"):
        capacity = sum(c["reply_rate"] for c in facts["capacity"].values())
        axes[0].axhline(capacity, color="grey", linewidth=0.8, label="both servers' capacity")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Seed 002 through {facts['balancer']}: two servers, CPU quota 2:1 (medians)")
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def markdown(facts: dict, points: list[dict]) -> str:
    """The report: how it was measured (from ``facts``), the tables, the plot."""
    s = facts["settings"]
    groups = facts["cgroups"]
    limit = "v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (v1's form of v2's `cpu.max`)"
    if facts["cgroup_version"] == 2:
        limit = "v2 `cpu.max`"
    capacity = ", ".join(
        f"{name} {c['reply_rate']:.1f} replies/s (nominal {c['nominal']:.0f}, offered {c['offered']:g}/s)"
        for name, c in facts.get("capacity", {}).items()
    )
    httperf_share = max(p["httperf"]["httperf_cpu_s"] / p["elapsed_s"] for p in points)
    unconstrained = f"httperf, which polls, used at most {httperf_share:.0%} of a CPU in a run"
    if all("haproxy_cpu_share" in p for p in points):
        haproxy_share = max(p["haproxy_cpu_share"] for p in points)
        unconstrained = f"HAProxy used at most {haproxy_share:.0%} of a CPU in a run; " + unconstrained
    lines = [
        f"# Seed 002, the DLLC experiment through {facts['balancer']} — {facts['date']}",
        "",
        f"Generated by {facts['generated_by']}; method in tests/bench/README.md.",
        "",
        f"- Machine: {facts['cpus']} CPUs ({facts['cpu_model']}), kernel {facts['kernel']}, "
        f"{facts['balancer_version']}, httperf {facts['httperf']}, Python {facts['python']}. Load average "
        f"{facts['load_average_at_start'][0]:.2f} at the start, {facts['load_average_at_end'][0]:.2f} at the end "
        "(other work shares the machine).",
        f"- Servers: `tests/bench/dllcserver.py`, {s['workers']} worker{'s' * (s['workers'] != 1)} and a queue of "
        f"{s['queue']} each, "
        f"{facts['work_units']} work units ({facts['work_units'] * facts['cpu_us_per_unit'] / 1000:.1f} ms of "
        f"CPU at calibration) per request. CPU limit by cgroup {limit}: fast `{groups['fast']['files']}` "
        f"({groups['fast']['cpus']:g} CPU), slow `{groups['slow']['files']}` ({groups['slow']['cpus']:g} CPU).",
        f"- Capacity of each server alone (httperf straight to it, twice its nominal rate): {capacity}. "
        f"Request rates: {', '.join(f'{r:g}' for r in facts['rates'])} /s "
        f"({', '.join(f'{x:g}' for x in s['loads'])} x the sum)."
        if not s.get("rates")
        else f"- Capacity of each server alone: {capacity}.",
        f"- Load: httperf, one request per connection, {s['seconds']:g} s per point "
        f"(`--num-conns` = rate x {s['seconds']:g}), `--timeout {s['timeout']:g}`, "
        f"{s['repeats']} repetitions; rows rotated at every point. Medians over the repetitions.",
        f"- Unconstrained: {unconstrained}.",
        "- reply rate = 2xx replies / (connections / rate); error rate = connections without a 2xx reply / "
        "connections (timeouts, resets, the servers' 503s); response time = httperf's mean connection time of "
        "the successful connections.",
        *(f"- {note}" for note in facts.get("notes", [])),
        f"- Command: {facts['command']}.",
    ]
    if facts.get("dllc_note"):
        lines.append(f"- **DLLC row not measured**: {facts['dllc_note']}")
    lines += ["", render_tables(facts, points), "", f"![reply rate, error rate, response time]({facts['plot']})", ""]
    return "\n".join(lines)


def write(stem: Path, facts: dict, points: list[dict]) -> list[Path]:
    """``stem``.md, .json and .svg (the plot left out, with a note, without matplotlib)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    svg = stem.with_suffix(".svg")
    try:
        plot(svg, points, facts)
        written.append(svg)
        facts["plot"] = svg.name
    except ImportError:
        facts["plot"] = "(no plot: matplotlib is not installed in the venv; `make deps`)"
    cells = summarize(points)
    data = {"environment": facts, "cells": [asdict(c) for c in cells.values()], "runs": points}
    stem.with_suffix(".json").write_text(json.dumps(data, indent=1, default=str) + "\n")
    stem.with_suffix(".md").write_text(markdown(facts, points))
    return [stem.with_suffix(".md"), stem.with_suffix(".json"), *written]


def main(argv: list[str] | None = None) -> int:
    """Render a report from a saved JSON (the guest's IPVS run, or a host run again)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.bench.dllcreport", description=main.__doc__)
    parser.add_argument("json", type=Path, help="a JSON with 'environment' and 'runs'")
    parser.add_argument("stem", type=Path, help="write STEM.md, STEM.json, STEM.svg")
    parser.add_argument("--note", action="append", default=[], help="one more line for the report")
    args = parser.parse_args(argv)
    data = json.loads(args.json.read_text())
    data["environment"].setdefault("notes", []).extend(args.note)
    for path in write(args.stem, data["environment"], data["runs"]):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
