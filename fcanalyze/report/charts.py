"""The report's charts, drawn with matplotlib (no pyplot, no global state) into `Chart` objects that the
page inlines as SVG and ``--png`` writes as PNG files.

Each chart is a function of the run's data returning a `Chart`, or None when the run has nothing to draw
(no proof, no solution)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter, PercentFormatter

from fcanalyze import published
from fcanalyze.report.data import RunData

#: The charts' style, applied while they are drawn and saved (never to the process's own settings).
#: Reproducible files: ids from a fixed salt, no date in the metadata; text as paths (no font needed).
STYLE = {
    "svg.hashsalt": "fcanalyze-report",
    "svg.fonttype": "path",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
}

SIZE = (7.5, 3.4)  # inches: 750 x 340 pixels at PNG_DPI
PNG_DPI = 100
COLORS = {
    "easy": "#4c9a2a",
    "normal": "#3a76b0",
    "hard": "#e08a1e",
    "unsolvable": "#c0392b",
    "undecided": "#8c8c8c",
    "solved": "#3a76b0",
}
OURS = "#3a76b0"
#: One colour per cell count (qualitative: neighbouring counts stay apart).
CELL_COLORS = ("#6a3d9a", "#1f78b4", "#33a02c", "#ff7f00", "#e31a1c", "#b15928", "#666666")
#: Ranks marked on the curve of the time in the heaviest deals.
TOP = (1, 10, 100, 1000)


@dataclass
class Chart:
    """A drawn chart: `name` (the PNG's file name without suffix), a title and a one-line caption."""

    name: str
    title: str
    caption: str
    figure: Figure

    def svg(self) -> str:
        """The chart as an inline ``<svg>`` element, its ids prefixed with its name (several in a page)."""
        buf = io.StringIO()
        with matplotlib.rc_context(STYLE):
            self.figure.savefig(buf, format="svg", metadata={"Date": None})
        text = buf.getvalue()
        text = text[text.index("<svg") :]
        text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, flags=re.S)  # RDF: nothing a page needs
        text = re.sub(r'\bid="([^"]+)"', rf'id="{self.name}-\1"', text)
        text = re.sub(r"url\(#([^)]+)\)", rf"url(#{self.name}-\1)", text)
        text = re.sub(r'xlink:href="#([^"]+)"', rf'xlink:href="#{self.name}-\1"', text)
        return text

    def write_png(self, directory: Path) -> Path:
        path = directory / f"{self.name}.png"
        with matplotlib.rc_context(STYLE):
            self.figure.savefig(path, format="png", dpi=PNG_DPI, metadata={"Software": None})
        return path


def _figure(ncols: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=SIZE, layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _thousands(ax_axis) -> None:
    ax_axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def _log_counts(ax, top: float) -> None:
    """A log scale of counts on the y axis, labelled in plain numbers: every one of a short axis, then
    1, 2, 5, 10..., then powers of ten."""
    ax.set_yscale("log")
    if top < 1000:
        subs = tuple(range(1, 10)) if top < 10 else (1, 2, 5)
        ax.yaxis.set_major_locator(LogLocator(10, subs=[float(k) for k in subs]))
    _thousands(ax.yaxis)
    ax.yaxis.set_minor_formatter(NullFormatter())


def _published_rows(data: RunData, prefix: str) -> dict | None:
    """The rows {key: (ours, published)} of the summary's published block whose title starts `prefix`,
    when its figures are the whole run's (a block of deals 1-32,000 within a larger run is not)."""
    for block in data.stats.get("published") or []:
        if block["what"].startswith(prefix) and block.get("whole", True):
            return {str(r["key"]): (r["ours"], r["published"]) for r in block["rows"]}
    return None


def _paired_bars(ax, keys: list[str], ours: list[int], theirs: list[float] | None, colors: list[str]) -> None:
    """Bars of this run's counts, labelled, and the published counts as black marks across them."""
    x = np.arange(len(keys))
    bars = ax.bar(x, ours, 0.6, color=colors)
    ax.bar_label(bars, labels=[f"{v:,}" for v in ours], fontsize=7, padding=1)
    if theirs is not None:
        ax.plot(x, theirs, linestyle="none", marker="_", markersize=26, markeredgewidth=2, color="#111111")
        ax.plot(
            [],
            [],
            linestyle="none",
            marker="_",
            markersize=12,
            markeredgewidth=2,
            color="#111111",
            label="published",
        )
        ax.legend(frameon=False, fontsize=8, loc="upper right")
    ax.set_xticks(x, keys)
    ax.tick_params(axis="x", labelsize=8)
    ax.margins(y=0.15)
    _thousands(ax.yaxis)


def classes_chart(data: RunData) -> Chart:
    """``analyze``: the classes and the exact minimum cells, beside the published figures when they exist."""
    fig, (left, right) = _figure(2)
    stats = data.stats
    classes = list(stats["classes"])
    pub = _published_rows(data, "classes")
    _paired_bars(
        left,
        classes,
        [stats["classes"][c] for c in classes],
        [pub.get(c, (0, 0))[1] for c in classes] if pub else None,
        [COLORS[c] for c in classes],
    )
    left.tick_params(axis="x", labelrotation=20)
    left.set_title("classes")
    left.set_ylabel("deals")
    cells_pub = _published_rows(data, "min cells")
    keys = sorted(
        {int(k) for k in stats["min_cells"]} | ({int(k) for k in cells_pub} if cells_pub else set())
    )
    ours = [stats["min_cells"].get(k, 0) for k in keys]
    if cells_pub:
        ours = [cells_pub[str(k)][0] if str(k) in cells_pub else o for k, o in zip(keys, ours, strict=True)]
    _paired_bars(
        right,
        [str(k) for k in keys],
        ours,
        [cells_pub[str(k)][1] if str(k) in cells_pub else 0 for k in keys] if cells_pub else None,
        [COLORS[_class_of_cells(k)] for k in keys],
    )
    right.set_title("minimum free cells (exact)")
    right.set_xlabel("free cells")
    caption = "Deals per class and per exact minimum number of free cells"
    caption += "; the black marks are the published figures (SPEC §6)." if pub or cells_pub else "."
    return Chart("classes", "Classes and minimum free cells", caption, fig)


def _class_of_cells(k: int) -> str:
    return "easy" if k <= 1 else "normal" if k == 2 else "hard" if k <= 4 else "unsolvable"


def outcomes_chart(data: RunData) -> Chart:
    """``verify-unsolvable``: solved, unsolvable and undecided with 4 cells (log scale), and the published
    count of unsolvable deals in the range."""
    fig, (ax,) = _figure()
    outcomes = data.stats["outcomes"]
    keys = list(outcomes)
    pub = _published_rows(data, "unsolvable")
    # Only the unsolvable deals are published (the others are not counts of a list of their own).
    theirs = [len(pub["deals"][1]) if k == "unsolvable" else np.nan for k in keys] if pub else None
    _paired_bars(ax, keys, [outcomes[k] for k in keys], theirs, [COLORS[k] for k in keys])
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylabel("deals (log scale)")
    ax.set_title("outcomes with 4 free cells")
    caption = "Outcome of every deal with 4 free cells"
    caption += "; the black mark is the published count of unsolvable deals (SPEC §6)." if pub else "."
    return Chart("outcomes", "Outcomes with 4 free cells", caption, fig)


def _log_bins(values: np.ndarray, n: int = 40) -> np.ndarray:
    lo = max(float(values[values > 0].min()) if (values > 0).any() else 1.0, 1e-3)
    hi = max(float(values.max()), lo * 10)
    return np.geomspace(lo, hi * 1.0001, n + 1)


def proof_sizes_chart(data: RunData) -> Chart | None:
    """The positions of every finished proof (unsolvable search), log scale, by cell count; one bar per
    proof when there are few."""
    proofs = data.proofs()
    if proofs.num_rows == 0:
        return None
    fig, (ax,) = _figure()
    positions = proofs["positions"].to_numpy()
    cells = proofs["cells"].to_numpy()
    deals = proofs["deal"].to_numpy()
    if proofs.num_rows <= 20:
        order = np.argsort(positions)
        labels = [f"{deals[i]} ({cells[i]} cells)" for i in order]
        bars = ax.barh(np.arange(len(order)), positions[order], color=COLORS["unsolvable"])
        ax.bar_label(bars, labels=[f"{positions[i]:,}" for i in order], fontsize=7, padding=2)
        ax.set_yticks(np.arange(len(order)), labels, fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("positions examined by the proof (log scale)")
        ax.margins(x=0.15)
    else:
        bins = _log_bins(positions.astype(float))
        ks = sorted(set(cells.tolist()))
        # One outline per cell count, not stacked: stacked bars mislead on a log scale.
        top = 1.0
        for i, k in enumerate(ks):
            counts, _, _ = ax.hist(
                positions[cells == k],
                bins=bins,
                histtype="step",
                linewidth=1.6,
                color=CELL_COLORS[i % len(CELL_COLORS)],
                label=f"{k} cells ({int((cells == k).sum()):,})",
            )
            top = max(top, float(np.max(counts)))
        ax.set_xscale("log")
        _log_counts(ax, top)
        ax.set_xlabel("positions examined by the proof (log scale)")
        ax.set_ylabel("proofs (log scale)")
        ax.legend(frameon=False, fontsize=8, title="proof with", title_fontsize=8)
    ax.set_title("proof sizes")
    caption = (
        f"{proofs.num_rows:,} finished proofs (searches that ended unsolvable): every reachable position, "
        f"largest {positions.max():,}."
    )
    return Chart("proof_sizes", "Proof sizes", caption, fig)


def cpu_chart(data: RunData) -> Chart:
    """The search time per deal (all its searches), log-log histogram, with its median and 99th percentile."""
    fig, (ax,) = _figure()
    ms = data.per_deal["ms"].to_numpy()
    counts, _, _ = ax.hist(ms, bins=_log_bins(ms, 50), color=OURS)
    ax.set_xscale("log")
    _log_counts(ax, float(counts.max()))
    for q, style in ((50, "--"), (99, ":")):
        v = float(np.percentile(ms, q))
        ax.axvline(v, color="#333333", linestyle=style, linewidth=1, label=f"p{q}: {duration(v)}")
    ax.legend(frameon=False, fontsize=8)
    ax.set_xlabel("search time per deal, ms (log scale)")
    ax.set_ylabel("deals (log scale)")
    ax.set_title("Search time per deal")
    caption = (
        f"Search time per deal (elapsed), all its searches summed, over {len(ms):,} deals: "
        f"{ms.sum() / 1e3:,.1f} s in all, the slowest {duration(float(ms.max()))}."
    )
    return Chart("cpu_per_deal", "Search time per deal", caption, fig)


def duration(ms: float) -> str:
    """A time in milliseconds as text: ``0.13 ms``, ``45 ms``, ``1.2 s``, ``82.8 min``."""
    if ms >= 60_000:
        return f"{ms / 60_000:,.1f} min"
    if ms >= 1000:
        return f"{ms / 1000:,.1f} s"
    return f"{ms:,.2f} ms" if ms < 10 else f"{ms:,.0f} ms"


def time_share(data: RunData) -> list[tuple[int, float]]:
    """The share (0-1) of the run's search time in its heaviest 1, 10, 100, 1000 deals (those it has)."""
    ms = data.per_deal["ms"].to_numpy()
    total = ms.sum() or 1.0
    cum = np.cumsum(ms) / total
    return [(n, float(cum[n - 1])) for n in TOP if n <= len(ms)]


def time_share_chart(data: RunData) -> Chart:
    """The cumulative share of the run's search time against the number of heaviest deals (log scale)."""
    fig, (ax,) = _figure()
    ms = data.per_deal["ms"].to_numpy()
    cum = np.cumsum(ms) / (ms.sum() or 1.0)
    ranks = np.unique(np.geomspace(1, len(ms), min(len(ms), 400)).astype(np.int64))
    ax.plot(ranks, cum[ranks - 1], color=OURS, linewidth=1.8)
    for n, share in time_share(data):
        ax.plot([n], [share], "o", color="#c0392b", markersize=4)
        ax.annotate(
            f"top {n:,}: {share:.0%}",
            (n, share),
            textcoords="offset points",
            xytext=(4, -12),
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    _thousands(ax.xaxis)
    ax.set_xlabel("heaviest deals (log scale)")
    ax.set_ylabel("share of the run's search time")
    ax.set_title("where the time went")
    ax.grid(True, alpha=0.3)
    shares = ", ".join(f"top {n:,} {s:.1%}" for n, s in time_share(data))
    caption = f"Share of the search time spent in the heaviest deals: {shares}."
    return Chart("time_share", "Where the time went", caption, fig)


def moves_chart(data: RunData) -> Chart | None:
    """Solution lengths (player moves), histogram up to the 99.9th percentile, mean marked (and, for a
    4-cell run, the published near-optimal mean)."""
    moves = data.moves()
    if len(moves) == 0:
        return None
    fig, (ax,) = _figure()
    # The longest 0.1% of a large run would squeeze the rest into a few bins: they are counted, not drawn.
    top = int(np.percentile(moves, 99.9)) if len(moves) >= 1000 else int(moves.max())
    top = max(top, int(moves.min()) + 1)
    width = max(1, int(np.ceil((top - moves.min() + 1) / 80)))
    bins = np.arange(int(moves.min()), top + width + 1, width)
    ax.hist(moves[moves <= top], bins=bins, color=OURS)
    mean = float(moves.mean())
    ax.axvline(mean, color="#333333", linestyle="--", linewidth=1, label=f"mean {mean:.1f}")
    if not data.is_analyze:
        near = published.NEAR_OPTIMAL_MEAN_MOVES
        ax.axvline(near, color="#c0392b", linestyle=":", linewidth=1, label=f"near-optimal mean {near}")
    ax.legend(frameon=False, fontsize=8)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    _thousands(ax.yaxis)
    ax.set_xlabel("player moves (automatic moves not counted, a supermove once)")
    ax.set_ylabel("solutions")
    ax.set_title("solution lengths" + (" at the minimum number of cells" if data.is_analyze else ", 4 cells"))
    longer = int((moves > top).sum())
    caption = f"{len(moves):,} solutions, median {np.median(moves):,.0f} moves"
    caption += (
        f"; {longer:,} longer than {top:,} moves (up to {int(moves.max()):,}) not drawn." if longer else "."
    )
    return Chart("moves", "Solution lengths", caption, fig)


#: The charts of a report, in page order.
CHARTS: tuple[Callable[[RunData], Chart | None], ...] = (
    lambda d: classes_chart(d) if d.is_analyze else outcomes_chart(d),
    cpu_chart,
    time_share_chart,
    proof_sizes_chart,
    moves_chart,
)


def draw(data: RunData) -> dict[str, Chart]:
    """Every chart the run has something for, by name."""
    with matplotlib.rc_context(STYLE):
        charts = [make(data) for make in CHARTS]
    return {c.name: c for c in charts if c is not None}
