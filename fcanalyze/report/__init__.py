"""``fcanalyze report``: a run's figures as one self-contained HTML page with charts.

- `data`: what the page shows, read through the library's readers (run file, tables, summary);
- `charts`: the charts, drawn with matplotlib, inlined as SVG or written as PNG;
- `page`: the HTML (inline CSS and SVG, no script, nothing fetched from the network).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fcanalyze import atomic
from fcanalyze.report import charts, data, page

__all__ = ["DEFAULT_NAME", "Report", "build"]

#: The page's name in the run's directory unless ``-o`` says otherwise.
DEFAULT_NAME = "report.html"


@dataclass
class Report:
    """What `build` wrote."""

    path: Path
    bytes: int
    charts: list[str]
    pngs: list[Path] = field(default_factory=list)


def build(out: Path, html: Path | None = None, png_dir: Path | None = None) -> Report:
    """Write the report of the run in `out` to `html` (default ``out/report.html``) and, with `png_dir`,
    each chart as a PNG there. `ValueError` (one line) when `out` holds no run with a finished shard."""
    run = data.load(Path(out))
    drawn = charts.draw(run)
    text = page.render(run, drawn)
    html = Path(html) if html is not None else Path(out) / DEFAULT_NAME
    html.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(html, text)
    pngs = []
    if png_dir is not None:
        png_dir = Path(png_dir)
        png_dir.mkdir(parents=True, exist_ok=True)
        pngs = [c.write_png(png_dir) for c in drawn.values()]
    return Report(html, html.stat().st_size, list(drawn), pngs)
