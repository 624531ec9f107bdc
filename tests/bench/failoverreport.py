"""The failover benchmark's report: summaries, markdown tables, the JSON of every failover
and a plot (matplotlib, SVG). Pure functions of the facts ``failover.run`` gathered, so
``python -m tests.bench.failoverreport <json> <stem>`` re-renders a report."""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

MODE_LABELS = {
    "keepalived": "keepalived SIGKILL",
    "link": "front link down",
    "standby": "standby (handover via the API)",
}
# Published failover times, for context only (not measured here).
KEEPALIVED_DEFAULT = "keepalived defaults (advert 1 s: 3 x 1 s + skew)"
ANCHORS = {
    KEEPALIVED_DEFAULT: 3500,
    "Google Seesaw": 1500,  # 1.5-2 s
    "Kemp LoadMaster": 3000,  # 3-15 s
}
GOAL_ADVERT_MS, GOAL_GAP_MS = 200, 1000


@dataclass
class Cell:
    """One advert interval and failure mode: gaps and takeover times of its failovers."""

    advert_ms: int
    mode: str
    count: int
    gap_median_ms: float
    gap_max_ms: float
    gap_min_ms: float
    takeover_median_s: float
    takeover_max_s: float


def master_down_s(advert_ms: int, backup_priority: int) -> float:
    """RFC 5798's Master_Down_Interval: 3 adverts plus the skew of the backup's priority."""
    advert = advert_ms / 1000
    return 3 * advert + (256 - backup_priority) / 256 * advert


def summarize(failovers: list[dict]) -> list[Cell]:
    cells = []
    keys = sorted(
        {(f["advert_ms"], f["mode"]) for f in failovers}, key=lambda k: (-k[0], list(MODE_LABELS).index(k[1]))
    )
    for advert_ms, mode in keys:
        runs = [f for f in failovers if (f["advert_ms"], f["mode"]) == (advert_ms, mode)]
        gaps = [f["gap_ms"] for f in runs]
        takeovers = [f["takeover_s"] for f in runs]
        cells.append(
            Cell(
                advert_ms,
                mode,
                len(runs),
                statistics.median(gaps),
                max(gaps),
                min(gaps),
                statistics.median(takeovers),
                max(takeovers),
            )
        )
    return cells


def _ms(value: float) -> str:
    return "never" if value == float("inf") else f"{value:,.0f}".replace(",", " ")


def gap_table(cells: list[Cell]) -> str:
    adverts = sorted({c.advert_ms for c in cells}, reverse=True)
    modes = [m for m in MODE_LABELS if any(c.mode == m for c in cells)]
    lines = [
        "| failover gap, ms: median / max (n) | " + " | ".join(MODE_LABELS[m] for m in modes) + " |",
        "| --- |" + " ---: |" * len(modes),
    ]
    for advert in adverts:
        row = []
        for mode in modes:
            cell = next((c for c in cells if (c.advert_ms, c.mode) == (advert, mode)), None)
            row.append(f"{_ms(cell.gap_median_ms)} / {_ms(cell.gap_max_ms)} ({cell.count})" if cell else "-")
        low, high = master_down_s(advert, 150), master_down_s(advert, 100)
        lines.append(f"| advert {advert} ms (master-down {low:.2f}-{high:.2f} s) | " + " | ".join(row) + " |")
    return "\n".join(lines)


def takeover_table(cells: list[Cell]) -> str:
    lines = [
        "| advert, mode | peer held the VIP alone after, s: median / max | gap median ÷ advert-1000 median |",
        "| --- | ---: | ---: |",
    ]
    for cell in cells:
        base = next((c for c in cells if (c.advert_ms, c.mode) == (1000, cell.mode)), None)
        ratio = f"{cell.gap_median_ms / base.gap_median_ms:.2f}" if base and base.gap_median_ms else "-"
        lines.append(
            f"| {cell.advert_ms} ms, {MODE_LABELS[cell.mode]} | "
            f"{cell.takeover_median_s:.2f} / {cell.takeover_max_s:.2f} | {ratio} |"
        )
    return "\n".join(lines)


def rest_table(rest: list[dict]) -> str:
    lines = [
        "| at rest (no fault) | seconds | VIP moves | keepalived state changes | failed requests |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for r in rest:
        lines.append(
            f"| advert {r['advert_ms']} ms | {r['seconds']:.0f} | {r['holder_changes']} | "
            f"{r['keepalived_state_changes']} | {r['failed']} of {r['requests']} |"
        )
    return "\n".join(lines)


def goal_lines(cells: list[Cell], rest: list[dict]) -> list[str]:
    """The issue's goal: under 1 s at 0.2 s adverts, no false failover at rest."""
    out = []
    for cell in (c for c in cells if c.advert_ms == GOAL_ADVERT_MS):
        met = "yes" if cell.gap_max_ms < GOAL_GAP_MS else "no"
        out.append(
            f"- {MODE_LABELS[cell.mode]} at {GOAL_ADVERT_MS} ms: max gap {_ms(cell.gap_max_ms)} ms "
            f"(median {_ms(cell.gap_median_ms)}) < {GOAL_GAP_MS} ms: **{met}**"
        )
    for r in (r for r in rest if r["advert_ms"] == GOAL_ADVERT_MS):
        quiet = r["holder_changes"] == 0 and r["keepalived_state_changes"] == 0
        out.append(
            f"- no false failover at rest at {GOAL_ADVERT_MS} ms ({r['seconds']:.0f} s): **{'yes' if quiet else 'no'}**"
        )
    return out


def anchor_lines(cells: list[Cell]) -> list[str]:
    default = ANCHORS[KEEPALIVED_DEFAULT]
    out = [f"- {name}: about {_ms(ms)} ms" for name, ms in ANCHORS.items()]
    for cell in cells:
        if cell.mode != "standby" and 0 < cell.gap_median_ms < float("inf"):
            out.append(
                f"- {MODE_LABELS[cell.mode]} at {cell.advert_ms} ms: median {_ms(cell.gap_median_ms)} ms, "
                f"{default / cell.gap_median_ms:.1f}x shorter than keepalived's defaults"
            )
    return out


def markdown(facts: dict) -> str:
    env = facts["environment"]
    cells = summarize(facts["failovers"])
    parts = [
        f"# Failover gap by VRRP advert interval ({env['date'][:10]})",
        "",
        f"{env['cpus']} CPUs, kernel {env['kernel']}, {env['keepalived']}, {env['haproxy']}; "
        f"load average {env['loadavg_start'][0]:.2f} at the start, {env.get('loadavg_end', [0])[0]:.2f} at the end; "
        f"{env.get('seconds', 0)} s. Request loop: a new connection every {env['settings']['interval_ms']:.0f} ms, "
        f"{env['settings']['timeout_ms']:.0f} ms to answer. Gap = longest run of failed requests, from the first "
        "failure's start to the next success's start.",
        "",
        gap_table(cells),
        "",
        takeover_table(cells),
        "",
        rest_table(facts["rest"]),
        "",
        "Goal (issue 6):",
        "",
        *goal_lines(cells, facts["rest"]),
        "",
        "Published figures, for context (not measured here):",
        "",
        *anchor_lines(cells),
        "",
    ]
    return "\n".join(parts)


def plot(path: Path, facts: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "fulcrum-failover"  # stable ids: the SVG diffs cleanly
    failovers = facts["failovers"]
    modes = [m for m in MODE_LABELS if any(f["mode"] == m for f in failovers)]
    adverts = sorted({f["advert_ms"] for f in failovers}, reverse=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / max(1, len(modes))
    for i, mode in enumerate(modes):
        for j, advert in enumerate(adverts):
            gaps = [f["gap_ms"] for f in failovers if (f["mode"], f["advert_ms"]) == (mode, advert)]
            x = j + (i - (len(modes) - 1) / 2) * width
            ax.scatter(
                [x] * len(gaps), gaps, s=12, alpha=0.6, color=f"C{i}", label=MODE_LABELS[mode] if j == 0 else None
            )
            if gaps:
                ax.hlines(statistics.median(gaps), x - width / 2.5, x + width / 2.5, color=f"C{i}")
    ax.axhline(GOAL_GAP_MS, color="grey", linestyle="--", linewidth=0.8, label="goal at 200 ms: 1 s")
    ax.set_xticks(range(len(adverts)), [f"advert {a} ms" for a in adverts])
    ax.set_ylabel("failover gap, ms (dots: failovers, bars: medians)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def write(stem: Path, facts: dict) -> list[Path]:
    """``stem``.md, .json and .svg (the plot left out, with a note, without matplotlib)."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        plot(stem.with_suffix(".svg"), facts)
        written.append(stem.with_suffix(".svg"))
    except ImportError:
        facts["plot"] = "(no plot: matplotlib is not installed in the venv; `make deps`)"
    facts["summary"] = [asdict(c) for c in summarize(facts["failovers"])]
    stem.with_suffix(".json").write_text(json.dumps(facts, indent=1) + "\n")
    stem.with_suffix(".md").write_text(markdown(facts))
    return [stem.with_suffix(".md"), stem.with_suffix(".json"), *written]


if __name__ == "__main__":
    source, stem = Path(sys.argv[1]), Path(sys.argv[2])
    for written in write(stem, json.loads(source.read_text())):
        print(written)
