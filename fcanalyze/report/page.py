"""The report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched."""

from __future__ import annotations

import json
import re
from html import escape
from typing import Any

import pyarrow.compute as pc

from fcanalyze.report.charts import Chart, duration, time_share
from fcanalyze.report.data import RunData
from fcanalyze.summary import pass_text, verdict

#: Rows of the table of the heaviest deals.
HEAVIEST = 20

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: #222; background: #fff; margin: 0 auto; padding: 1.5em 2em 4em; max-width: 1000px; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; }
.lead { color: #555; margin-top: 0; }
figure { margin: 1em 0; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e4e4e4; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
.match { color: #2e7d32; font-weight: bold; }
.within { color: #8a6d00; font-weight: bold; }
.differs { color: #c62828; font-weight: bold; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.9em; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; white-space: pre-wrap; }
.prov { font-size: 0.92em; }
nav a { margin-right: 1em; }
"""


def render(data: RunData, charts: dict[str, Chart]) -> str:
    """The whole page."""
    sections = [
        _header(data),
        _classes(data, charts),
        _time(data, charts),
        _proofs(data, charts),
        _moves(data, charts),
        _unsolvable(data),
        _configuration(data),
    ]
    title = f"fcanalyze report: deals {data.run['range']} ({data.run['job']})"
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(s for s in sections if s)
        + "\n</body>\n</html>\n"
    )


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}".rstrip("0").rstrip(".")
    return f"{v:,}" if isinstance(v, int) else escape(str(v))


def _table(head: list[str], rows: list[list[Any]], numeric: set[int] = frozenset()) -> str:
    def cell(tag: str, i: int, v: Any) -> str:
        cls = ' class="n"' if i in numeric else ""
        text = v if isinstance(v, _Html) else _num(v)
        return f"<{tag}{cls}>{text}</{tag}>"

    lines = ["<table>", "<tr>" + "".join(cell("th", i, h) for i, h in enumerate(head)) + "</tr>"]
    lines += ["<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows]
    return "\n".join([*lines, "</table>"])


class _Html(str):
    """Text already escaped for the page."""


def _figure(charts: dict[str, Chart], name: str) -> str:
    chart = charts.get(name)
    if chart is None:
        return ""
    return (
        f'<figure id="chart-{chart.name}">\n{chart.svg()}\n'
        f"<figcaption>{escape(chart.caption)}</figcaption>\n</figure>"
    )


def _header(data: RunData) -> str:
    s = data.stats
    job = "analyze" if data.is_analyze else "verify-unsolvable"
    state = "complete" if s["complete"] else "not complete"
    if s["pass"]:
        state += f"; {pass_text(s['pass'])}"
    lead = (
        f"<code>fcanalyze {job}</code> of deals {escape(data.run['range'])}, read from "
        f"<code>{escape(str(data.out))}</code>: {s['deals_done']:,} of {s['deals']:,} deals with a row "
        f"({state}); "
        f"search time {s['cpu_s']:,.1f} s (each search's elapsed time, summed)."
    )
    links = [("classes", "Classes" if data.is_analyze else "Outcomes"), ("time", "Time")]
    links += [("proofs", "Proofs"), ("moves", "Solutions"), ("unsolvable", "Unsolvable")]
    links += [("configuration", "Configuration")]
    nav = " ".join(f'<a href="#{a}">{t}</a>' for a, t in links)
    return (
        f"<h1>fcanalyze report: deals {escape(data.run['range'])}</h1>\n"
        f'<p class="lead">{lead}</p>\n<nav>{nav}</nav>'
    )


def _verdict(row: dict[str, Any]) -> _Html:
    text = verdict(row)
    if not text:
        return _Html("")
    css = "match" if row["match"] else "within" if row.get("within") else "differs"
    return _Html(f'<span class="{css}">{escape(text)}</span>')


def _listed(v: Any) -> Any:
    return ", ".join(map(str, v)) or "none" if isinstance(v, list) else v


def _published(data: RunData) -> str:
    blocks = data.stats.get("published")
    if blocks is None:
        return "<p>Compared with the published figures (SPEC §6) once every deal has been searched.</p>"
    if not blocks:
        return "<p>No published figures cover this range (SPEC §6).</p>"
    parts = ["<h3>Against the published figures (SPEC §6)</h3>"]
    for block in blocks:
        rows = [[r["key"], _listed(r["ours"]), _listed(r["published"]), _verdict(r)] for r in block["rows"]]
        parts += [f"<p>{escape(block['what'])}:</p>", _table(["", "this run", "published", ""], rows, {1, 2})]
    return "\n".join(parts)


def _classes(data: RunData, charts: dict[str, Chart]) -> str:
    s = data.stats
    if data.is_analyze:
        tables = _table(["class", "deals"], [[c, n] for c, n in s["classes"].items()], {1}) + _table(
            ["min cells", "deals"],
            [[k, n] for k, n in s["min_cells"].items()] + [["bounds only", s["bounds_only"]]],
            {0, 1},
        )
        head = '<h2 id="classes">Classes and minimum free cells</h2>'
        chart = _figure(charts, "classes")
    else:
        tables = _table(["outcome", "deals"], [[k, v] for k, v in s["outcomes"].items()], {1})
        head = '<h2 id="classes">Outcomes with 4 free cells</h2>'
        chart = _figure(charts, "outcomes")
    return "\n".join([head, chart, tables, _published(data)])


def _heaviest(data: RunData) -> str:
    per = data.per_deal.slice(0, HEAVIEST)
    total = float(pc.sum(data.per_deal["ms"]).as_py() or 0) or 1.0
    top = per["deal"].to_pylist()
    searches = data.searches.filter(pc.is_in(data.searches["deal"], value_set=per["deal"].combine_chunks()))
    detail: dict[int, list[str]] = {d: [] for d in top}
    for r in searches.sort_by([("deal", "ascending"), ("cells", "ascending")]).to_pylist():
        detail[r["deal"]].append(f"{r['cells']}: {r['outcome']}")
    classes = {}
    if data.deals is not None:
        sub = data.deals.filter(pc.is_in(data.deals["deal"], value_set=per["deal"].combine_chunks()))
        classes = dict(zip(sub["deal"].to_pylist(), sub["difficulty"].to_pylist(), strict=True))
    rows, cum = [], 0.0
    for i, (d, ms, pos) in enumerate(
        zip(top, per["ms"].to_pylist(), per["positions"].to_pylist(), strict=True), 1
    ):
        cum += ms
        row = [i, str(d), duration(ms), f"{ms / total:.1%}", f"{cum / total:.1%}", pos, "; ".join(detail[d])]
        rows.append([*row, classes[d]] if classes else row)
    head = ["#", "deal", "search time", "share", "cumulative", "positions", "searches (cells: outcome)"]
    return _table([*head, "class"] if classes else head, rows, {0, 1, 2, 3, 4, 5})


def _time(data: RunData, charts: dict[str, Chart]) -> str:
    q = data.stats["ms_per_deal"]
    shares = ", ".join(f"the heaviest {n:,}: {s:.1%}" for n, s in time_share(data))
    return "\n".join(
        [
            '<h2 id="time">Where the time went</h2>',
            "<p>Search time per deal (ms): " + ", ".join(f"{k} {_num(v)}" for k, v in q.items()) + ".</p>",
            _figure(charts, "cpu_per_deal"),
            f"<p>Share of the run's search time in its heaviest deals: {shares}.</p>",
            _figure(charts, "time_share"),
            f"<h3>The {min(HEAVIEST, data.per_deal.num_rows)} heaviest deals</h3>",
            _heaviest(data),
        ]
    )


def _proofs(data: RunData, charts: dict[str, Chart]) -> str:
    rows = []
    for r in data.stats["searches"]:
        p = r["positions"]
        counts = [r["cells"], r["solved"], r["unsolvable"], r["undecided"]]
        rows.append([*counts, p["p50"], p["p90"], p["p99"], p["max"], round(r["cpu_s"], 1)])
    head = ["cells", "solved", "unsolvable", "undecided", "positions p50", "p90", "p99", "max", "search s"]
    return "\n".join(
        [
            '<h2 id="proofs">Searches and proof sizes</h2>',
            _figure(charts, "proof_sizes") or "<p>No search ended unsolvable: no proof to show.</p>",
            "<h3>Searches per cell count</h3>",
            _table(head, rows, set(range(9))),
        ]
    )


def _moves(data: RunData, charts: dict[str, Chart]) -> str:
    q = data.stats.get("moves") or {}
    text = ", ".join(f"{k} {_num(v)}" for k, v in q.items())
    return "\n".join(
        [
            '<h2 id="moves">Solution lengths</h2>',
            f"<p>Player moves (automatic moves not counted, a supermove once): {text or 'no solution'}.</p>",
            _figure(charts, "moves"),
        ]
    )


def _unsolvable(data: RunData) -> str:
    s = data.stats
    parts = ['<h2 id="unsolvable">Unsolvable and undecided deals</h2>']
    if data.unsolvable is not None and data.unsolvable.num_rows:
        rows = [
            [str(r["deal"]), r["positions"], "-" if r["min_cells"] is None else r["min_cells"]]
            for r in data.unsolvable.to_pylist()
        ]
        parts += [
            "<p>Proven unsolvable with 4 free cells (the <code>unsolvable</code> table):</p>",
            _table(["deal", "positions of the proof", "min cells"], rows, {0, 1, 2}),
        ]
    else:
        deals = ", ".join(map(str, s["unsolvable_deals"])) or "none"
        parts.append(f"<p>Proven unsolvable with 4 free cells: {deals}.</p>")
    agreement = [b for b in s.get("published") or [] if b["what"].startswith("unsolvable")]
    for block in agreement:
        for r in block["rows"]:
            verdict = "agree" if r["match"] else "differ by open deals" if r.get("within") else "DIFFER"
            parts.append(
                f"<p>Against the published list ({escape(block['what'])}): {_verdict(r)}; "
                f"this run and the list {verdict} (published: {escape(_listed(r['published']))}).</p>"
            )
    if not agreement:
        parts.append("<p>No comparison with the published list: the run is not complete or not in range.</p>")
    parts.append(f"<p>Undecided: {escape(', '.join(map(str, s['undecided_deals'])) or 'none')}.</p>")
    return "\n".join(parts)


def _configuration(data: RunData) -> str:
    run = data.run
    rows = [[k, _Html(f"<code>{escape(json.dumps(v))}</code>")] for k, v in run["config"].items()]
    facts = [
        ["job", run["job"]],
        ["range", run["range"]],
        ["deals", run["deals"]],
        ["complete", str(run.get("complete", False)).lower()],
        ["shards", len(run.get("shards", {}))],
        ["versions", ", ".join(f"{k} {v}" for k, v in run.get("versions", {}).items())],
        ["rules", run.get("rules", "")],
    ]
    for r in run.get("budgets_raised", []):
        raised = ", ".join(f"{k} {r['from'][k]} -> {v}" for k, v in r["to"].items())
        facts.append(["budgets raised", f"{r['at']}: {raised}"])
    parts = [
        '<h2 id="configuration">Configuration and provenance</h2>',
        "<p>From <code>run.json</code>:</p>",
        _table(["run", ""], facts),
        _table(["configuration", "value"], rows),
    ]
    if data.provenance:
        parts += [
            "<p>From <code>PROVENANCE.md</code>:</p>",
            f'<div class="prov">{markdown(data.provenance)}</div>',
        ]
    return "\n".join(parts)


def markdown(text: str) -> str:
    """The little Markdown of a PROVENANCE.md as HTML: headings, list items, paragraphs, code spans."""

    def inline(s: str) -> str:
        s = escape(s)
        s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
        return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)

    html, para, items = [], [], []

    def flush() -> None:
        if para:
            html.append(f"<p>{inline(' '.join(para))}</p>")
            para.clear()
        if items:
            html.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in items) + "</ul>")
            items.clear()

    for line in text.splitlines():
        heading = re.match(r"(#{1,4})\s+(.*)", line)
        if heading:
            flush()
            level = min(len(heading.group(1)) + 2, 6)
            html.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif line.startswith(("- ", "* ")):
            if para:
                flush()
            items.append(line[2:])
        elif not line.strip():
            flush()
        elif items:
            items[-1] += " " + line.strip()
        else:
            para.append(line.strip())
    flush()
    return "\n".join(html)
