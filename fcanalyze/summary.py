"""Summaries of a run's tables: counts per class and cell count, cost distributions, and the comparison
with the published figures of SPEC §6 for the range analysed."""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from fcanalyze import journal, published, records, runfile, shards
from fcanalyze.checker import MAX_CELLS
from fcanalyze.deals import parse_range, within_spans


def _quantiles(values: pa.Array | pa.ChunkedArray, qs=(0.5, 0.9, 0.99)) -> dict[str, float]:
    if len(values) == 0:
        return {}
    out = {
        f"p{round(q * 100)}": float(v)
        for q, v in zip(qs, pc.quantile(values, q=list(qs)).to_pylist(), strict=True)
    }
    out["mean"] = float(pc.mean(values).as_py())
    out["max"] = float(pc.max(values).as_py())
    return out


def _compare(
    ours: dict[Any, int], theirs: dict[Any, int], open_: dict[Any, int] | None = None
) -> list[dict[str, Any]]:
    """Rows of our counts against the published ones. `open_` counts, per key, the deals not decided
    exactly (a budget ran out) whose proven bounds allow that key: a row whose published count lies
    between ours and ours plus those deals is ``within`` them rather than a difference."""
    rows = []
    for k, v in theirs.items():
        mine, could = ours.get(k, 0), (open_ or {}).get(k, 0)
        row = {"key": k, "ours": mine, "published": v, "match": mine == v}
        if mine != v and could:
            row["open"] = could
            row["within"] = mine <= v <= mine + could
        rows.append(row)
    return rows


def verdict(row: dict[str, Any]) -> str:
    """A comparison row's verdict: ``match``, ``within N open deals``, ``DIFFERS``, or none."""
    if row["match"] is None:
        return ""
    if row["match"]:
        return "match"
    if row.get("within"):
        return f"within {row['open']:,} open deal{'s' if row['open'] != 1 else ''}"
    return "DIFFERS"


def summarize(out: Path) -> dict[str, Any]:
    """Figures of the (complete or partial) run in `out`."""
    out = Path(out)
    run = runfile.read(out)
    if run is None:
        raise ValueError(f"{out} holds no fcanalyze run")
    if not run.get("shards"):
        raise ValueError(f"the run in {out} has no finished shard yet")
    runfile.verify(out, run)
    spans = parse_range(run["range"])
    stats: dict[str, Any] = {
        "range": run["range"],
        "job": run["job"],
        "config": run["config"],
        "budgets_raised": run.get("budgets_raised", []),
        "complete": run.get("complete", False),
    }
    searches = shards.read_table(out, "searches")
    stats["deals"] = run["deals"]
    stats.update(_search_figures(searches))
    # The deals with a row as the tables stand: a later pass keeps the rows of the shards it searches
    # again until it replaces them (they are out of the run file meanwhile).
    stats["deals_done"] = len(pc.unique(searches["deal"]))
    if run["job"] == "analyze":
        deals = shards.read_table(out, "deals")
        stats["deals_done"] = len(pc.unique(deals["deal"]))
        stats.update(_deal_figures(deals))
        stats["published"] = _published_analyze(spans, stats, run, deals)
        # Left open, as a pass over the deals left open takes them (`fcanalyze.jobs.analyze.left_open`):
        # the class undecided, or any search.
        undecided = pc.equal(searches["outcome"], "undecided")
        open_deals = sorted(
            set(deals.filter(pc.equal(deals["difficulty"], "undecided"))["deal"].to_pylist())
            | set(searches.filter(undecided)["deal"].to_pylist())
        )
    else:
        stats.update(_outcome_figures(searches))
        stats["published"] = _published_unsolvable(spans, stats) + _published_moves(stats)
        open_deals = None
    stats["pass"] = _pass_figures(out, run, open_deals)
    return stats


def _pass_figures(out: Path, run: dict[str, Any], open_deals: list[int] | None) -> dict[str, int] | None:
    """Where an unfinished pass over the deals left open stands (``--redo-undecided``; the run file numbers
    it, ``redo_pass``, and each shard it writes): its shards done (written by it, or with no deal left
    open before it), in progress (a journal, the shard out of the run file) and still to search. None
    outside such a pass. `open_deals`: the deals an ``analyze`` run left open, sorted (a
    ``verify-unsolvable`` run's shards say how many they left undecided)."""
    n = run.get("redo_pass")
    if not n or run.get("complete"):
        return None

    def left_open(block: str, entry: dict[str, Any]) -> bool:
        if open_deals is None:
            return entry["counts"].get("undecided", 0) > 0
        first, last = (int(x) for x in block.split("-"))
        i = bisect_left(open_deals, first)
        return i < len(open_deals) and open_deals[i] <= last

    in_progress = {p.stem for p in (out / journal.DIR).glob("*.jsonl")} - set(run["shards"])
    to_go = sum(1 for b, e in run["shards"].items() if e.get("pass") != n and left_open(b, e))
    total = len(run["shards"]) + len(in_progress)
    return {
        "number": n + 1,
        "shards": total,
        "done": total - to_go - len(in_progress),
        "in_progress": len(in_progress),
        "to_go": to_go,
    }


def pass_text(p: dict[str, int]) -> str:
    """The state of a pass over the deals left open (`_pass_figures`) in words."""
    return (
        f"pass {p['number']} over the deals left open: {p['done']:,} of {p['shards']:,} shards done, "
        f"{p['in_progress']:,} in progress, {p['to_go']:,} to go"
    )


def _count(column: pa.ChunkedArray, value: Any) -> int:
    return int(pc.sum(pc.equal(column, value)).as_py() or 0)


def _search_figures(searches: pa.Table) -> dict[str, Any]:
    """Per cell count: outcomes, positions and search time (elapsed, summed); the time per deal and the
    slowest deals."""
    per_cells = []
    for k in sorted(set(searches["cells"].to_pylist())):
        s = searches.filter(pc.equal(searches["cells"], k))
        row: dict[str, Any] = {"cells": k}
        for outcome in ("solved", "unsolvable", "undecided"):
            row[outcome] = _count(s["outcome"], outcome)
        row["positions"] = _quantiles(s["positions"])
        row["cpu_s"] = float(pc.sum(s["elapsed_ms"]).as_py() or 0) / 1e3
        per_cells.append(row)
    per_deal_ms = searches.group_by("deal").aggregate([("elapsed_ms", "sum")])
    slow = per_deal_ms.sort_by([("elapsed_ms_sum", "descending")]).slice(0, 10)
    return {
        "searches": per_cells,
        "cpu_s": float(pc.sum(searches["elapsed_ms"]).as_py() or 0) / 1e3,
        "ms_per_deal": _quantiles(per_deal_ms["elapsed_ms_sum"]),
        "slowest": [
            {"deal": d, "ms": round(m, 1)}
            for d, m in zip(slow["deal"].to_pylist(), slow["elapsed_ms_sum"].to_pylist(), strict=True)
        ],
    }


def _deal_figures(deals: pa.Table) -> dict[str, Any]:
    """An ``analyze`` run's classes, exact minimum cells, solution lengths, unsolvable and undecided deals."""
    exact = deals.filter(pc.is_valid(deals["min_cells"]))
    undecided = deals.filter(pc.equal(deals["difficulty"], "undecided"))
    bounds_only = deals.filter(pc.is_null(deals["min_cells"]))
    open_bounds = Counter(
        f"{lo}-{'?' if hi is None else hi}"
        for lo, hi in zip(
            bounds_only["min_cells_lower"].to_pylist(),
            bounds_only["min_cells_upper"].to_pylist(),
            strict=True,
        )
    )
    return {
        "classes": {c: _count(deals["difficulty"], c) for c in records.CLASSES},
        "min_cells": {int(k): int(v) for k, v in zip(*_value_counts(exact["min_cells"]), strict=True)},
        "bounds_only": deals.num_rows - exact.num_rows,
        # The deals not decided exactly, counted by their bounds on the minimum of cells ("lo-hi").
        "open_bounds": dict(sorted(open_bounds.items())),
        "moves": _quantiles(deals.filter(pc.is_valid(deals["moves"]))["moves"]),
        "unsolvable_deals": deals.filter(pc.equal(deals["difficulty"], "unsolvable"))["deal"].to_pylist(),
        "undecided_deals": undecided["deal"].to_pylist(),
        # What is proven of each undecided deal: its least and largest possible minimum of cells.
        "undecided_bounds": {
            d: [lo, hi]
            for d, lo, hi in zip(
                undecided["deal"].to_pylist(),
                undecided["min_cells_lower"].to_pylist(),
                undecided["min_cells_upper"].to_pylist(),
                strict=True,
            )
        },
    }


def _outcome_figures(searches: pa.Table) -> dict[str, Any]:
    """A ``verify`` run's outcomes, proofs, undecided deals and solution lengths."""
    bad = searches.filter(pc.equal(searches["outcome"], "unsolvable"))
    moves = searches.filter(pc.is_valid(searches["moves"]))["moves"]
    return {
        "outcomes": {o: _count(searches["outcome"], o) for o in ("solved", "unsolvable", "undecided")},
        "unsolvable_deals": bad["deal"].to_pylist(),
        "proof_positions": dict(zip(bad["deal"].to_pylist(), bad["positions"].to_pylist(), strict=True)),
        "undecided_deals": searches.filter(pc.equal(searches["outcome"], "undecided"))["deal"].to_pylist(),
        "moves": _quantiles(moves),
        "moves_histogram": _histogram(moves),
    }


def _histogram(moves: pa.ChunkedArray, width: int = 10) -> list[dict[str, int]]:
    """Counts of solution lengths in buckets of `width` moves."""
    if len(moves) == 0:
        return []
    buckets = pc.multiply(pc.divide(pc.cast(moves, pa.int64()), width), width)
    return [{"from": int(v), "deals": int(n)} for v, n in zip(*_value_counts(buckets), strict=True)]


def _value_counts(arr: pa.ChunkedArray) -> tuple[list[Any], list[int]]:
    vc = pc.value_counts(arr).to_pylist()
    vc.sort(key=lambda x: x["values"])
    return [x["values"] for x in vc], [x["counts"] for x in vc]


def _published_analyze(
    spans: list[tuple[int, int]], stats: dict[str, Any], run: dict[str, Any], deals: pa.Table
) -> list[dict] | None:
    """The comparisons with the published figures that cover the range; None until every deal has its
    row (a first pass in progress: a later pass over the deals left open keeps every row)."""
    if deals.num_rows < run["deals"]:
        return None
    out: list[dict[str, Any]] = []
    if within_spans(1, 32000, spans):
        part, whole = stats, published.covers(spans, 1, 32000)
        if not whole:
            part = _deal_figures(deals.filter(pc.less_equal(deals["deal"], 32000)))
        out += [dict(block, whole=whole) for block in _published_32k(part, run)]
    for published_count in published.CELL_COUNTS:
        if within_spans(published_count.first, published_count.last, spans):
            out.append(_published_cells(published_count, deals))
    return out + _published_unsolvable(spans, stats, whole=True)


def _published_32k(stats: dict[str, Any], run: dict[str, Any]) -> list[dict[str, Any]]:
    """T. Pringle's minimum cells and the classes over 1-32,000, against ``stats`` of those deals."""
    ours = dict(stats["min_cells"])
    if run["config"]["max_cells"] < 5:
        # 11982-like deals are only bounded below by 5 when the search stops at 4 cells.
        ours[5] = ours.get(5, 0) + stats["classes"]["unsolvable"]
    bounds = [_bounds_of(b) for b in stats.get("open_bounds", {})]
    counts = list(stats.get("open_bounds", {}).values())
    cells_open = {
        k: sum(n for (lo, hi), n in zip(bounds, counts, strict=True) if lo <= k <= hi)
        for k in published.MIN_CELLS_32K
    }
    undecided = [tuple(b) for b in stats.get("undecided_bounds", {}).values()]
    classes_open = {
        c: sum(1 for lo, hi in undecided if any(lo <= k <= (MAX_CELLS if hi is None else hi) for k in ks))
        for c, ks in CLASS_CELLS.items()
    }
    return [
        {
            "what": "min cells, deals 1-32,000 (T. Pringle)",
            "rows": _compare(ours, published.MIN_CELLS_32K, cells_open),
        },
        {
            "what": "classes, deals 1-32,000",
            "rows": _compare(stats["classes"], published.CLASSES_32K, classes_open),
        },
    ]


def _published_cells(count: published.CellCount, deals: pa.Table) -> dict[str, Any]:
    """Our deals of ``count``'s range proven solvable with its cells (a solution with at most that many)
    and proven unsolvable (a proof with at least that many), against the published counts, both over
    the deals the publication decided; then what we know of each deal it left open (a deal decided here
    that it left open is no difference)."""
    k = count.cells
    inside = deals.filter(
        pc.and_(pc.greater_equal(deals["deal"], count.first), pc.less_equal(deals["deal"], count.last))
    )
    left_open = pc.is_in(inside["deal"], value_set=pa.array(count.open, inside["deal"].type))
    decided = inside.filter(pc.invert(left_open))
    upper, lower = decided["min_cells_upper"], decided["min_cells_lower"]
    solvable = int(pc.sum(pc.fill_null(pc.less_equal(upper, k), False)).as_py() or 0)
    unsolvable = int(pc.sum(pc.greater(lower, k)).as_py() or 0)
    undecided = decided.num_rows - solvable - unsolvable
    theirs = count.counts()
    rows = _compare(
        {"solvable": solvable, "unsolvable": unsolvable},
        {"solvable": theirs["solvable"], "unsolvable": theirs["unsolvable"]},
        {"solvable": undecided, "unsolvable": undecided},
    )
    known = {d: (lo, hi) for d, lo, hi in zip(*(inside[c].to_pylist() for c in _BOUNDS), strict=True)}
    for deal in count.open:
        lo, hi = known.get(deal, (0, None))
        ours = "solvable" if hi is not None and hi <= k else "unsolvable" if lo > k else "open"
        rows.append({"key": f"deal {deal}", "ours": ours, "published": "open", "match": None})
    where = f"{count.first:,}-{count.last:,}"
    apart = f"; {', '.join(map(str, count.open))} apart" if count.open else ""
    what = f"{k} free cell{'s' if k != 1 else ''}, deals {where} ({count.source}{apart})"
    return {"what": what, "rows": rows}


#: The columns of a deal and its proven bounds on the minimum of cells.
_BOUNDS = ("deal", "min_cells_lower", "min_cells_upper")


#: The minimum cells each class holds (SPEC §4; unsolvable: more than 4).
CLASS_CELLS: dict[str, range] = {
    "easy": range(0, 2),
    "normal": range(2, 3),
    "hard": range(3, 5),
    "unsolvable": range(5, MAX_CELLS + 1),
}


def _bounds_of(text: str) -> tuple[int, int]:
    """``"1-2"`` -> (1, 2); an open upper bound (``"2-?"``) reaches 8 cells."""
    lo, hi = text.split("-")
    return int(lo), MAX_CELLS if hi == "?" else int(hi)


def _published_unsolvable(
    spans: list[tuple[int, int]], stats: dict[str, Any], whole: bool | None = None
) -> list[dict[str, Any]]:
    """The deals proven unsolvable with 4 cells against the published list, once the run has every deal
    (`whole`: by default when it is complete); a listed deal an ``analyze`` run left undecided without
    a 4-cell line is open, not a difference."""
    if not (stats["complete"] if whole is None else whole) or not any(a <= 1_000_000 for a, _ in spans):
        return []
    known = published.known_unsolvable_in(spans)
    inside = [d for d in stats["unsolvable_deals"] if d <= 1_000_000]
    row: dict[str, Any] = {"key": "deals", "ours": inside, "published": known, "match": inside == known}
    bounds = stats.get("undecided_bounds", {})

    def left_open(d: int) -> bool:  # undecided here, and no line with 4 cells (or fewer) either
        hi = bounds[d][1] if d in bounds else 0
        return hi is None or hi > 4

    could = [d for d in known if d not in inside and left_open(d)]
    if not row["match"] and could:
        row["open"] = len(could)
        row["within"] = sorted([*inside, *could]) == known
    return [{"what": "unsolvable with 4 cells within 1-1,000,000 (Pringle & Fish)", "rows": [row]}]


def _published_moves(stats: dict[str, Any]) -> list[dict[str, Any]]:
    if not stats["moves"]:
        return []
    return [
        {
            "what": "mean solution length (macroxue/freecell, near-optimal, 1-1,000,000)",
            "rows": [
                {
                    "key": "mean moves",
                    "ours": round(stats["moves"]["mean"], 2),
                    "published": published.NEAR_OPTIMAL_MEAN_MOVES,
                    "match": None,
                }
            ],
        }
    ]


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:,.2f}".rstrip("0").rstrip(".")


def render(stats: dict[str, Any]) -> str:
    """The summary as Markdown."""
    lines = _render_run(stats)
    if "classes" in stats:
        lines += _render_classes(stats)
    if "outcomes" in stats:
        lines += _render_outcomes(stats)
    lines += _render_searches(stats)
    if stats.get("published"):
        lines += _render_published(stats["published"])
    return "\n".join(lines).rstrip() + "\n"


def _render_run(stats: dict[str, Any]) -> list[str]:
    lines = [f"# fcanalyze summary: deals {stats['range']} ({stats['job']})", ""]
    cfg = stats["config"]
    lines.append(f"- configuration: {', '.join(f'{k} {v}' for k, v in cfg.items())}")
    for r in stats["budgets_raised"]:
        raised = ", ".join(f"{k} {r['from'][k]} -> {v}" for k, v in r["to"].items())
        lines.append(f"- budgets raised for the deals left undecided ({r['at']}): {raised}")
    lines.append(
        f"- deals with a row: {stats['deals_done']:,} of {stats['deals']:,}"
        + ("" if stats["complete"] else " (run not complete)")
    )
    if stats["pass"]:
        lines.append(f"- {pass_text(stats['pass'])}")
    lines.append(
        f"- search time (each search's elapsed time, summed): {stats['cpu_s']:,.1f} s; per deal (ms): "
        + ", ".join(f"{k} {_fmt(v)}" for k, v in stats["ms_per_deal"].items())
    )
    return lines


def _render_classes(stats: dict[str, Any]) -> list[str]:
    lines = ["", "## Classes", "", "| class | deals |", "| --- | ---: |"]
    lines += [f"| {c} | {n:,} |" for c, n in stats["classes"].items()]
    lines += ["", "## Minimum free cells (exact)", "", "| min cells | deals |", "| ---: | ---: |"]
    lines += [f"| {k} | {n:,} |" for k, n in stats["min_cells"].items()]
    lines.append(f"| bounds only | {stats['bounds_only']:,} |")
    if stats["moves"]:
        lines += [
            "",
            "Solution length at the minimum number of cells (player moves, automatic moves not "
            "counted, supermoves once): " + ", ".join(f"{k} {_fmt(v)}" for k, v in stats["moves"].items()),
        ]
    lines += [
        "",
        f"Unsolvable with 4 cells: {', '.join(map(str, stats['unsolvable_deals'])) or 'none'}.",
        f"Undecided (the minimum of cells lies between the bounds proven): {_bounds(stats) or 'none'}.",
    ]
    return lines


#: The most deals the Markdown summary lists by number (the JSON form and the tables have every one).
LISTED = 500


def _few(items: list[str], table: str) -> str:
    """`items` joined, the first `LISTED` of them when there are more, saying how many more `table` has."""
    shown = ", ".join(items[:LISTED])
    if len(items) > LISTED:
        shown += f", and {len(items) - LISTED:,} more ({table})"
    return shown


def _bounds(stats: dict[str, Any]) -> str:
    """The undecided deals with their bounds on the minimum of cells, e.g. ``27 (2-3)``; an upper bound
    of none (no line found within the cells searched) is shown as ``2-?``."""
    bounds = stats.get("undecided_bounds", {})
    out = []
    for d in stats["undecided_deals"]:
        lo, hi = bounds.get(d, (None, None))
        out.append(f"{d} ({lo}-{'?' if hi is None else hi})" if lo is not None else str(d))
    return _few(out, "the deals table has each: difficulty undecided, with its bounds")


def _render_outcomes(stats: dict[str, Any]) -> list[str]:
    lines = ["", "## Outcomes with 4 free cells", "", "| outcome | deals |", "| --- | ---: |"]
    lines += [f"| {k} | {v:,} |" for k, v in stats["outcomes"].items()]
    proofs = ", ".join(f"{d} ({p:,} positions)" for d, p in stats["proof_positions"].items())
    lines += [
        "",
        f"Proven unsolvable: {proofs or 'none'}.",
        f"Undecided: {_few(list(map(str, stats['undecided_deals'])), 'the searches table') or 'none'}.",
    ]
    if stats["moves"]:
        lines += [
            "",
            "Solution length (player moves, automatic moves not counted, supermoves once): "
            + ", ".join(f"{k} {_fmt(v)}" for k, v in stats["moves"].items()),
            "",
            "| moves | deals |",
            "| ---: | ---: |",
        ]
        lines += [f"| {b['from']}-{b['from'] + 9} | {b['deals']:,} |" for b in stats["moves_histogram"]]
    return lines


def _render_searches(stats: dict[str, Any]) -> list[str]:
    lines = [
        "",
        "## Searches per cell count",
        "",
        "| cells | solved | unsolvable | undecided | positions p50 | p90 | p99 | max | search s |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in stats["searches"]:
        p = r["positions"]
        lines.append(
            f"| {r['cells']} | {r['solved']:,} | {r['unsolvable']:,} | {r['undecided']:,} | "
            f"{_fmt(p['p50'])} | {_fmt(p['p90'])} | {_fmt(p['p99'])} | {_fmt(p['max'])} | {r['cpu_s']:,.1f} |"
        )
    lines += [
        "",
        "Slowest deals (all searches, ms): "
        + ", ".join(f"{s['deal']} ({_fmt(s['ms'])})" for s in stats["slowest"]),
    ]
    return lines


def _listed(value: Any) -> Any:
    """A list of deals as text (``none`` when empty); any other value as it is."""
    return ", ".join(map(str, value)) or "none" if isinstance(value, list) else value


def _render_published(blocks: list[dict[str, Any]]) -> list[str]:
    lines = ["", "## Against the published figures (SPEC §6)", ""]
    for block in blocks:
        lines += [f"{block['what']}:", "", "| | ours | published | |", "| --- | ---: | ---: | --- |"]
        for r in block["rows"]:
            theirs = (
                ", ".join(map(str, r["published"])) if isinstance(r["published"], list) else r["published"]
            )
            lines.append(f"| {r['key']} | {_listed(r['ours'])} | {theirs} | {verdict(r)} |")
        lines.append("")
    return lines
