"""The summary of a test run (tests/run-tiers.sh): each tier's result, wall time and tests.

run-tiers.sh records one line per tier in ``tests/artifacts/tiers.tsv`` (tier, result, start
and end in seconds since the run began) and each tier leaves its test results in
``tests/artifacts/results/<tier>/``: JUnit XML files (pytest, vitest, gotestsum, the QEMU
guest's runner) and ``checks.tsv``, one line per check run as a step (a lint tool, the
kernel module's host test, the packaging script). This counts them, prints the table and
writes ``tests/artifacts/tiers.json``.

    python -m tests.harness.tiers summary      # the table; writes tiers.json
    python -m tests.harness.tiers junit FILE SUITE NAME RESULT [SECONDS]   # one testcase
"""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
RESULTS = ARTIFACTS / "results"


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    skipped: int = 0

    def tally(self, result: str) -> None:
        """One test's result: ok, skipped, anything else failed."""
        if result == "ok":
            self.passed += 1
        elif result == "skipped":
            self.skipped += 1
        else:
            self.failed += 1

    def add(self, other: Counts) -> None:
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped


@dataclass
class Tier:
    tier: str
    result: str
    start_s: int
    end_s: int
    counts: Counts = field(default_factory=Counts)

    @property
    def seconds(self) -> int:
        return self.end_s - self.start_s


def junit_counts(path: Path) -> Counts:
    """Test cases in a JUnit XML file: failed (a failure or an error), skipped, else passed."""
    counts = Counts()
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        counts.failed += 1  # a runner that died while writing: that is a failure too
        return counts
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        counts.tally("failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "ok")
    return counts


def check_counts(path: Path) -> Counts:
    """checks.tsv: ``name<TAB>ok|failed|skipped`` lines."""
    counts = Counts()
    for line in path.read_text().splitlines():
        counts.tally(line.split("\t")[1] if "\t" in line else "")
    return counts


def tier_counts(directory: Path) -> Counts:
    counts = Counts()
    for path in sorted(directory.glob("*.xml")):
        counts.add(junit_counts(path))
    if (directory / "checks.tsv").exists():
        counts.add(check_counts(directory / "checks.tsv"))
    return counts


def read_tiers() -> list[Tier]:
    tiers = []
    for line in (ARTIFACTS / "tiers.tsv").read_text().splitlines():
        name, result, start, end = line.split("\t")
        tier = Tier(name, result, int(start), int(end))
        tier.counts = tier_counts(RESULTS / name)
        tiers.append(tier)
    return sorted(tiers, key=lambda t: (t.start_s, t.end_s))


def table(tiers: list[Tier], total_s: int) -> str:
    lines = [f"{'tier':<10} {'result':<7} {'start':>6} {'wall':>6} {'passed':>7} {'failed':>7} {'skipped':>8}"]
    for t in tiers:
        c = t.counts
        lines.append(
            f"{t.tier:<10} {t.result:<7} {t.start_s:>5}s {t.seconds:>5}s {c.passed:>7} {c.failed:>7} {c.skipped:>8}"
        )
    total = Counts()
    for t in tiers:
        total.add(t.counts)
    lines.append(f"{'total':<10} {'':<7} {'':>6} {total_s:>5}s {total.passed:>7} {total.failed:>7} {total.skipped:>8}")
    return "\n".join(lines)


def summary() -> int:
    tiers = read_tiers()
    total_s = int(os.environ.get("FULCRUM_RUN_SECONDS") or max((t.end_s for t in tiers), default=0))
    print(table(tiers, total_s))
    document = {
        "total_s": total_s,
        "result": "ok" if all(t.result == "ok" for t in tiers) else "FAILED",
        "load_average_at_start": os.environ.get("FULCRUM_LOAD_AT_START", ""),
        "load_average_at_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "cpus": os.cpu_count(),
        "tiers": [
            {**{k: v for k, v in asdict(t).items() if k != "counts"}, "seconds": t.seconds, **asdict(t.counts)}
            for t in tiers
        ],
    }
    (ARTIFACTS / "tiers.json").write_text(json.dumps(document, indent=1) + "\n")
    return 0


def junit(path: str, suite: str, name: str, result: str, seconds: str = "0") -> int:
    """Write a one-testcase JUnit file (the QEMU guest's tests, which have no runner of their own)."""
    suite_el = ET.Element("testsuite", name=suite, tests="1")
    case = ET.SubElement(suite_el, "testcase", classname=suite, name=name, time=seconds)
    if result == "skipped":
        ET.SubElement(case, "skipped")
    elif result != "ok":
        ET.SubElement(case, "failure", message=result)
    ET.ElementTree(suite_el).write(path, encoding="unicode", xml_declaration=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["summary"]:
        return summary()
    if argv[:1] == ["junit"] and len(argv) in (5, 6):
        return junit(*argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
