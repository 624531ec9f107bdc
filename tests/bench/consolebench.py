"""The console at scale (``make bench-console``): how fast the built console loads its services
list and filters it, at 1,000 virtual services (or ``--services``), in Debian's Chromium, against
a static page with the same rows measured in the same run. Both show a page of PAGE_ROWS.

    .venv/bin/python -m tests.bench.consolebench [--quick] [--runs N] [--services N] ...

The real API (tests/harness/stack.py, API only: gunicorn + PostgreSQL, serving the built
console from webui/dist) is loaded with the services and one pool each (two members) through
the ORM; the baseline is a plain HTML table of the same rows with a ten-line filter script,
served by a tiny static server (Python's http.server) on loopback. tests/bench/consolemeasure.mjs
drives Chromium (Playwright, from webui/node_modules) and takes the times in the page.
Medians over the runs; ratios are the console's median over the static page's. Runs whose
row counts are wrong fail the benchmark; the numbers themselves are never asserted.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from datetime import date
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.bench.loads import BenchError

REPO_ROOT = Path(__file__).resolve().parents[2]
WEBUI = REPO_ROOT / "webui"
MEASURE_SCRIPT = Path(__file__).with_name("consolemeasure.mjs")
RESULTS = Path(__file__).with_name("results")
QUICK_OUTPUT = REPO_ROOT / "tests" / "artifacts" / "bench" / "console"
CHROMIUM = "/usr/bin/chromium"
# Narrows 1,000 -> 1,000 (s, v, c, -, 0) -> 100 (9) -> 10 (9) -> 1 (9), then the box is cleared.
FILTER = "svc-0999"
NAME_PREFIX = "bench-svc-"
# The rows a page of the console's services list holds (webui ServicesPage: LIST_SPEC.pageSize);
# the static page shows as many.
PAGE_ROWS = 100


# -- the rows ---------------------------------------------------------------------------------


def service_rows(count: int) -> list[dict]:
    """What the benchmark loads: service i on VIP 10.200.<i/250>.<i%250+1>, its own pool."""
    rows = []
    for i in range(count):
        rows.append(
            {
                "name": f"{NAME_PREFIX}{i:04d}",
                "vip": f"10.200.{i // 250}.{i % 250 + 1}",
                "port": 443 if i % 4 == 3 else 80,
                "protocol": "tcp" if i % 4 == 3 else "http",
                "pool": f"bench-pool-{i:04d}",
                "members": [(f"m{j}", f"10.201.{i // 250}.{i % 250 + 1}", 8080 + j) for j in range(2)],
            }
        )
    return rows


LOAD_CODE = """
import json, sys
from django.db import transaction
from services.models import Member, Pool, VirtualService
rows = json.loads(sys.stdin.read())
with transaction.atomic():
    pools = Pool.objects.bulk_create([Pool(name=r["pool"]) for r in rows])
    Member.objects.bulk_create(
        [Member(pool=p, name=n, address=a, port=port) for p, r in zip(pools, rows) for n, a, port in r["members"]]
    )
    VirtualService.objects.bulk_create(
        [VirtualService(name=r["name"], vip=r["vip"], port=r["port"], protocol=r["protocol"], default_pool=p)
         for p, r in zip(pools, rows)]
    )
print(VirtualService.objects.count())
"""


def load_services(stack, rows: list[dict]) -> None:
    """Insert the services, pools and members in one transaction (seconds, not minutes)."""
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", LOAD_CODE],
        cwd=REPO_ROOT / "api",
        env=stack.env,
        input=json.dumps(rows),
        text=True,
        capture_output=True,
        check=True,
        timeout=300,
    )
    if int(done.stdout.strip().splitlines()[-1]) != len(rows):
        raise BenchError(f"loaded {done.stdout.strip()} services, wanted {len(rows)}")


# -- the baseline -----------------------------------------------------------------------------

STATIC_FILTER_SCRIPT = """
const box = document.querySelector('input[type="search"]');
const body = document.querySelector('tbody');
const rows = JSON.parse(document.getElementById('rows').textContent);
const texts = rows.map((row) => row.toLowerCase());
const count = document.querySelector('[role="status"]');
box.addEventListener('input', () => {
  const words = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
  const shown = rows.filter((row, i) => words.every((word) => texts[i].includes(word)));
  body.innerHTML = shown.slice(0, PAGE_ROWS).join('');
  count.textContent = words.length ? `${shown.length} of ${rows.length} virtual services` : `${rows.length} virtual services`;
});
"""


def static_row(i: int, r: dict) -> str:
    return (
        f'<tr><th scope="row"><a href="/services/{i + 1}">{html.escape(r["name"])}</a></th>'
        f'<td class="mono">{r["vip"]}:{r["port"]}</td><td>{r["protocol"].upper()}<div>HAProxy proxy</div></td>'
        f'<td><a href="/pools/{i + 1}">{html.escape(r["pool"])}</a></td><td><span>enabled</span></td></tr>'
    )


def static_page(rows: list[dict]) -> str:
    """The same table as the console's list (columns, links, badges) as one static HTML file:
    every row in the file, the first page of them in the table, and a filter script that
    shows the first page of the rows that match."""
    html_rows = [static_row(i, r) for i, r in enumerate(rows)]
    first_page = "\n".join(html_rows[:PAGE_ROWS])
    data = json.dumps(html_rows).replace("</", "<\\/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Virtual services</title>
<style>body{{font-family:system-ui,sans-serif;margin:2rem}}table{{border-collapse:collapse;width:100%}}
th,td{{padding:.6rem .9rem;text-align:left;border-bottom:1px solid #dde1e7}}.mono{{font-family:monospace}}</style>
</head><body><main><h1>Virtual services</h1>
<label for="q">Filter virtual services</label> <input id="q" type="search" autocomplete="off">
<p role="status">{len(rows)} virtual services</p>
<table><caption>Virtual services</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Listener</th><th scope="col">Protocol</th>
<th scope="col">Pool</th><th scope="col">State</th></tr></thead>
<tbody>
{first_page}
</tbody></table></main>
<script type="application/json" id="rows">{data}</script>
<script>const PAGE_ROWS = {PAGE_ROWS};{STATIC_FILTER_SCRIPT}</script>
</body></html>
"""


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextmanager
def static_server(directory: Path):
    """Serve ``directory`` on a free loopback port; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(QuietHandler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


# -- measuring --------------------------------------------------------------------------------


def measure(plan: dict, timeout: float = 1800) -> dict:
    """Run consolemeasure.mjs with ``plan``; its JSON answer."""
    done = subprocess.run(
        ["node", str(MEASURE_SCRIPT)],
        input=json.dumps(plan),
        text=True,
        capture_output=True,
        timeout=timeout,
        env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
    )
    if done.returncode != 0:
        raise BenchError(f"consolemeasure.mjs failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def matching(names: list[str], query: str) -> int:
    """How many services a filter of ``query`` leaves: the names are what the typed text narrows."""
    return sum(query.lower() in name.lower() for name in names) if query else len(names)


def expected_visible(names: list[str], query: str) -> int:
    """The rows shown for ``query``: a page of those that match."""
    return min(PAGE_ROWS, matching(names, query))


def expected_after_each_key(names: list[str], query: str) -> list[int]:
    """The rows visible after each key of ``query``, then after clearing the box."""
    return [expected_visible(names, query[: i + 1]) for i in range(len(query))] + [expected_visible(names, "")]


def check_run(run: dict, rows: int, names: list[str], query: str) -> None:
    """Refuse a run whose table did not hold what it should (numbers from a broken page lie)."""
    for phase in ("cold", "warm"):
        loaded = run[phase]
        if loaded["rendered"] != rows:
            raise BenchError(f"{run['page']} {phase}: {loaded['rendered']} rows rendered, wanted {rows}")
        if not (0 <= loaded["firstRow"] <= loaded["allRows"] <= loaded["allRowsPainted"]):
            raise BenchError(f"{run['page']} {phase}: marks out of order: {loaded}")
    typed = ""
    for key in run["keys"]:
        typed = "" if key["key"] == "clear" else typed + key["key"]
        if key["visible"] != expected_visible(names, typed):
            raise BenchError(
                f"{run['page']}: after {typed!r} {key['visible']} rows visible, wanted {expected_visible(names, typed)}"
            )
        if key["ms"] < 0:
            raise BenchError(f"{run['page']}: keystroke {key['key']!r} measured {key['ms']} ms")


def median(values: list[float]) -> float:
    return statistics.median(values)


def keystroke_metrics(run: dict) -> dict[str, float]:
    """Per run: the median keystroke, the heaviest narrowing one, and clearing the box."""
    typed = [key for key in run["keys"] if key["key"] != "clear"]
    clear = [key for key in run["keys"] if key["key"] == "clear"]
    metrics = {"key_median_ms": median([key["ms"] for key in typed]), "key_max_ms": max(key["ms"] for key in typed)}
    if clear:
        metrics["clear_ms"] = clear[0]["ms"]
    return metrics


def run_metrics(run: dict) -> dict[str, float]:
    cold, warm = run["cold"], run["warm"]
    bytes_ = cold["bytes"]
    return {
        "cold_dom_content_loaded_ms": bytes_["domContentLoaded"],
        "cold_api_start_ms": bytes_["apiStart"],
        "cold_api_end_ms": bytes_["apiEnd"],
        "cold_first_row_ms": cold["firstRow"],
        "cold_all_rows_ms": cold["allRowsPainted"],
        "warm_all_rows_ms": warm["allRowsPainted"],
        **keystroke_metrics(run),
        "document_bytes": bytes_["document"]["transfer"],
        "js_bytes": bytes_["js"]["transfer"],
        "css_bytes": bytes_["css"]["transfer"],
        "api_bytes": bytes_["api"]["transfer"],
    }


def summarise(runs: list[dict]) -> dict[str, dict[str, float]]:
    """``{page: {metric: median over runs}}``."""
    by_page: dict[str, list[dict]] = {}
    for run in runs:
        by_page.setdefault(run["page"], []).append(run_metrics(run))
    return {
        page: {
            metric: median([m[metric] for m in metrics if m.get(metric) is not None] or [None]) for metric in metrics[0]
        }
        for page, metrics in by_page.items()
    }


def api_requests(runs: list[dict], page: str = "console") -> list[dict]:
    """The API requests of the page's cold loads: per URL, median start, end and bytes."""
    by_url: dict[str, list[dict]] = {}
    for run in runs:
        if run["page"] == page:
            for request in run["cold"]["bytes"].get("apiRequests", []):
                by_url.setdefault(request["url"], []).append(request)
    rows = [
        {
            "url": url,
            "start_ms": median([r["start"] for r in requests]),
            "end_ms": median([r["end"] for r in requests]),
            "bytes": median([r["transfer"] for r in requests]),
        }
        for url, requests in by_url.items()
    ]
    return sorted(rows, key=lambda row: row["start_ms"])


# -- the report -------------------------------------------------------------------------------

ROWS = (
    ("cold_dom_content_loaded_ms", "(a) first load, cold cache: navigation → DOMContentLoaded", "ms"),
    ("cold_api_start_ms", "(a) first load, cold cache: navigation → first API request", "ms"),
    ("cold_api_end_ms", "(a) first load, cold cache: navigation → last API answer", "ms"),
    ("cold_first_row_ms", "(a) first load, cold cache: navigation → first row", "ms"),
    ("cold_all_rows_ms", "(b) first load, cold cache: navigation → all rows painted", "ms"),
    ("warm_all_rows_ms", "(b) reload, warm cache: navigation → all rows painted", "ms"),
    ("key_median_ms", "(b) filter keystroke → list updated and painted, median key", "ms"),
    ("key_max_ms", "(b) filter keystroke, slowest key of the query", "ms"),
    ("clear_ms", "(b) clearing the filter (1 → all rows)", "ms"),
    ("document_bytes", "(a) HTML transferred", "bytes"),
    ("js_bytes", "(a) JavaScript transferred", "bytes"),
    ("css_bytes", "(a) CSS transferred", "bytes"),
    ("api_bytes", "(a) API answers transferred", "bytes"),
)


def number(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "bytes":
        return f"{value / 1024:,.1f} KiB" if value else "0"
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def ratio(console: float | None, static: float | None) -> str:
    if not console or not static:
        return "—"
    value = console / static
    return f"{value:.1f}x" if value >= 1 else f"{value:.2f}x"


def narrowing(names: list[str], query: str) -> str:
    """The rows each key of the query leaves, from the full list: `1,000 → 1,000 (5 keys) → 100 → 10 → 1`."""
    steps: list[list[int]] = []
    for i in range(len(query)):
        count = matching(names, query[: i + 1])
        if steps and steps[-1][0] == count:
            steps[-1][1] += 1
        else:
            steps.append([count, 1])
    return " → ".join(
        [f"{len(names):,}"] + [f"{count:,}" + (f" ({keys} keys)" if keys > 1 else "") for count, keys in steps]
    )


def report(result: dict) -> str:
    """The markdown report: one table, console vs static, medians and ratios."""
    console, static = result["summary"]["console"], result["summary"]["static"]
    lines = [
        f"# Console benchmark, {result['date']}",
        "",
        f"`make bench-console`: {result['services']:,} virtual services (one pool of two members each) in the real API;",
        f"Chromium {result['browser']} (Playwright, headless), {result['runs']} runs, medians; ratio = console / static page.",
        f"Machine: {result['machine']}; load average {result['load_before']} before, {result['load_after']} after.",
        "",
        f"Filter typed: `{result['filter']}` one key at a time ({result['narrowing']} rows), then cleared.",
        "Times from navigation start (the page's clock) to the frame after the DOM held the rows;",
        "a keystroke from the key event to the frame after the last DOM change it caused.",
        "",
        "| measure | console | static HTML | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for key, label, unit in ROWS:
        lines.append(
            f"| {label} ({unit}) | {number(console.get(key), unit)} | {number(static.get(key), unit)} | {ratio(console.get(key), static.get(key))} |"
        )
    if result.get("api_requests"):
        lines += [
            "",
            "The console's API requests on a cold load (medians; times from navigation start):",
            "",
            "| request | start (ms) | answered (ms) | transferred |",
            "| --- | ---: | ---: | ---: |",
        ]
        for request in result["api_requests"]:
            lines.append(
                f"| `{request['url']}` | {number(request['start_ms'], 'ms')} | {number(request['end_ms'], 'ms')} "
                f"| {number(request['bytes'], 'bytes')} |"
            )
    lines += [
        "",
        f"Per-run values are in the JSON beside this file. Both pages show {PAGE_ROWS} rows at most: the console",
        "asks the API for that page, searched and sorted there, once typing pauses; the static page holds",
        "every row in its HTML and filters them in the browser.",
        "",
    ]
    return "\n".join(lines)


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# -- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None, environ: dict[str, str] | None = None) -> argparse.Namespace:
    environ = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(prog="consolebench", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: 2 runs of 200 services ($FULCRUM_BENCH_CONSOLE_QUICK=1)"
    )
    parser.add_argument("--runs", type=int, help="runs per page ($FULCRUM_BENCH_CONSOLE_RUNS; default 5)")
    parser.add_argument("--services", type=int, help="virtual services ($FULCRUM_BENCH_CONSOLE_SERVICES; default 1000)")
    parser.add_argument("--output", type=Path, help="report path without suffix ($FULCRUM_BENCH_CONSOLE_OUTPUT)")
    parser.add_argument("--prefix", default=None, help="the stack's name, and so its database (default consolebench)")
    args = parser.parse_args(argv)
    args.quick = args.quick or environ.get("FULCRUM_BENCH_CONSOLE_QUICK", "0") not in ("", "0")
    args.runs = args.runs or int(environ.get("FULCRUM_BENCH_CONSOLE_RUNS") or (2 if args.quick else 5))
    args.services = args.services or int(environ.get("FULCRUM_BENCH_CONSOLE_SERVICES") or (200 if args.quick else 1000))
    today = date.today().isoformat()
    default_output = (QUICK_OUTPUT if args.quick else RESULTS) / f"console-{today}"
    args.output = args.output or Path(environ.get("FULCRUM_BENCH_CONSOLE_OUTPUT") or default_output)
    args.prefix = args.prefix or environ.get("FULCRUM_BENCH_CONSOLE_PREFIX") or "consolebench"
    if args.runs < 1 or args.services < 1:
        parser.error("--runs and --services must be at least 1")
    return args


def preflight() -> None:
    missing = [
        what
        for what, ok in (
            ("the built console (make build-console)", (WEBUI / "dist" / "index.html").is_file()),
            (f"Chromium at {CHROMIUM} (make deps-test)", Path(CHROMIUM).is_file()),
            ("node", shutil.which("node") is not None),
            (
                "playwright-core in webui/node_modules (make deps)",
                (WEBUI / "node_modules" / "playwright-core").is_dir(),
            ),
        )
        if not ok
    ]
    if missing:
        raise BenchError("missing: " + ", ".join(missing))


def run(args: argparse.Namespace) -> dict:
    from tests.harness.stack import Stack

    rows = service_rows(args.services)
    names = [row["name"] for row in rows]
    expected = expected_after_each_key(names, FILTER)
    load_before = load_average()
    with Stack(prefix=args.prefix) as stack, tempfile.TemporaryDirectory(prefix="consolebench-") as site:
        load_services(stack, rows)
        (Path(site) / "services.html").write_text(static_page(rows))
        with static_server(Path(site)) as static_url:
            plan = {
                "chromium": CHROMIUM,
                "runs": args.runs,
                "login": {
                    "url": f"{stack.url}/api/v1/auth/login/",
                    "username": "admin",
                    "password": stack.admin_password,
                },
                "pages": [
                    {
                        "name": "console",
                        "url": f"{stack.url}/services",
                        "rows": expected_visible(names, ""),
                        "filter": FILTER,
                        "expectedVisible": expected,
                        "session": True,
                    },
                    {
                        "name": "static",
                        "url": f"{static_url}/services.html",
                        "rows": expected_visible(names, ""),
                        "filter": FILTER,
                        "expectedVisible": expected,
                        "session": False,
                    },
                ],
            }
            measured = measure(plan)
    for one in measured["runs"]:
        check_run(one, expected_visible(names, ""), names, FILTER)
    return {
        "date": date.today().isoformat(),
        "services": len(rows),
        "runs": args.runs,
        "filter": FILTER,
        "narrowing": narrowing(names, FILTER),
        "browser": measured["browser"],
        "machine": f"{os.cpu_count()} CPUs, {platform.platform()}",
        "load_before": load_before,
        "load_after": load_average(),
        "summary": summarise(measured["runs"]),
        "api_requests": api_requests(measured["runs"]),
        "raw": measured["runs"],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.monotonic()
    try:
        preflight()
        result = run(args)
    except BenchError as err:
        print(f"consolebench: {err}", file=sys.stderr)
        return 1
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    args.output.with_suffix(".md").write_text(report(result))
    print(report(result))
    print(f"wrote {args.output}.md and .json in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
