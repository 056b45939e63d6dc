"""`fxmlir report --html DIR`: one self-contained HTML page per dump run.

A run's page shows its round trips as `fxmlir report`'s table does, then
each graph's stages: ops before and after by name, the fused ops and JIT
regions in the output (and which this round trip made), the regions left to
eager and why, what a forward saves for backward, the time of each step,
and the op graph (graph.svg, inline) or why there is none; a fallback shows
its reason and its folder (repro.py). The page needs no other file: inline
CSS, no script, no URL, so it can be mailed or attached to an issue.

The index.json files are read by fxmlir.report. Imports neither torch nor
the core, so the command answers fast.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any, Iterable, NamedTuple

from fxmlir.op_kinds import JIT_OP
from fxmlir.report import (COLUMNS, RoundTripRecord, error_text, find_indexes, read_index,
                           read_text, record_rows, report)

# System fonts: the page downloads nothing.
CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1, h2, h3 { margin-bottom: 0.3em; }
h2 { border-bottom: 2px solid #888; }
section.stage { border: 1px solid #ccc; border-radius: 4px; padding: 0 1em 1em;
                margin: 1em 0; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #bbb; padding: 2px 8px; text-align: left; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
/* Ten columns: a narrow window scrolls the table, not the page. */
div.wide { overflow-x: auto; }
table.overview { font-size: 13px; }
th { background: #eee; }
tr.fused td { background: #e6f4e6; }
code, td.name { font-family: ui-monospace, monospace; }
.fallback { background: #fdecea; border-left: 4px solid #c62828; padding: 0.5em 1em; }
.note { color: #666; font-style: italic; }
figure { margin: 0.5em 0; overflow: auto; }
figure svg { max-width: 100%; height: auto; }
"""


class Run(NamedTuple):
    """One run folder, as read."""

    name: str
    folder: Path
    index: dict[str, Any]  # its index.json
    records: list[RoundTripRecord]  # the table's rows, one per entry


def write_pages(dump: Path, out: Path) -> tuple[list[Path], list[str]]:
    """Writes out/<run>.html for each run under `dump`, and out/index.html
    linking them when there are several; returns the pages written and why
    each run whose index could not be read was skipped. Raises
    FileNotFoundError when there is no run, as `fxmlir report` does."""
    indexes = find_indexes(dump)
    if not indexes:
        report(dump)  # raises FileNotFoundError, saying why there is no dump
    runs, skipped = [], []
    for index_path in indexes:
        try:
            run, records = read_index(index_path)
            # read_index checked the index and made the table's records; the
            # page also shows the fields the table sums up (ops by name, time
            # by pass), the regions left to eager and the graph notes.
            index = json.loads(read_text(index_path))
        except (OSError, ValueError) as e:
            skipped.append(error_text(e))
            continue
        runs.append(Run(run, index_path.parent.resolve(), index, records))
    pages, names = [], set()
    if runs:  # none readable: an error, that leaves no empty DIR behind
        out.mkdir(parents=True, exist_ok=True)
    for run in runs:
        page = out / _file_name(run.name, names)
        page.write_text(run_page(run))
        pages.append(page)
    if len(pages) > 1:
        page = out / "index.html"
        page.write_text(index_page(dump, [(page.name, run) for page, run in zip(pages, runs)]))
        pages.append(page)
    return pages, skipped


def _file_name(run: str, taken: set[str]) -> str:
    """<run>.html, with what a file name cannot hold replaced, and a suffix
    if another run (a copied folder keeps its run name) took it."""
    stem = re.sub(r"[^\w.-]", "_", run).lstrip(".") or "run"
    name, suffix = f"{stem}.html", 1
    while name in taken or name == "index.html":
        suffix += 1
        name = f"{stem}-{suffix}.html"
    taken.add(name)
    return name


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


# The page loads nothing and runs nothing: what an SVG copied into a dump
# might hold (a script, a link to fetch) is blocked, not run.
POLICY = "default-src 'none'; style-src 'unsafe-inline'"


def _document(title: str, body: Iterable[str]) -> str:
    return "\n".join(["<!DOCTYPE html>", '<html lang="en">', "<head>",
                      '<meta charset="utf-8">',
                      f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
                      f"<title>{_e(title)}</title>",
                      f"<style>{CSS}</style>", "</head>", "<body>", *body,
                      "</body>", "</html>", ""])


def _table(columns: Iterable[str], rows: list[tuple[str, ...]], css: str,
           numbers: Iterable[int] = (), row_css: list[str] | None = None,
           link_first: bool = False) -> str:
    """An HTML table of text cells (escaped here): `numbers` are the indexes
    of right-aligned columns, `row_css` a class per row, and `link_first`
    makes each first cell a link to the element with that id."""
    numbers = set(numbers)
    head = "".join(f"<th>{_e(c)}</th>" for c in columns)
    lines = [f'<table class="{css}">', f"<tr>{head}</tr>"]
    for row, cls in zip(rows, row_css or [""] * len(rows)):
        cells = []
        for i, cell in enumerate(row):
            text = _e(cell)
            if i == 0 and link_first:
                text = f'<a href="#{text}">{text}</a>'
            cells.append(f'<td class="{"n" if i in numbers else "name" if i == 0 else ""}">'
                         f"{text}</td>")
        lines.append(f'<tr class="{cls}">{"".join(cells)}</tr>')
    lines.append("</table>")
    return "\n".join(lines)


def _totals(records: list[RoundTripRecord]) -> str:
    # The same counts as `fxmlir report`'s line: a fused op in the stage that made it.
    fused = sum(r.fused_count for r in records)
    fallbacks = sum(r.fallback is not None for r in records)
    return f"{len(records)} round trips, {fused} fused ops, {fallbacks} fallbacks"


def run_page(run: Run) -> str:
    """The page of one run: its table, then each graph's stages."""
    about = ", ".join(f"{key} {_e(run.index[key])}" for key in ("fxmlir", "pid", "rank")
                      if run.index.get(key) is not None)
    body = [f"<h1>fxmlir run {_e(run.name)}</h1>",
            f"<p>Folder <code>{_e(run.folder)}</code>{'; ' + about if about else ''}</p>",
            f"<p><strong>{_e(_totals(run.records))}</strong></p>"]
    # A row's first cell (graph/label, the stage's folder) links to the
    # stage's section below.
    numbers = [i for i, c in enumerate(COLUMNS) if c in ("passes", "ops before", "ops after",
                                                         "ms")]
    body += ['<div class="wide">', _table(COLUMNS, record_rows(run.records), "overview",
                                          numbers, link_first=True), "</div>"]
    graphs: dict[str, list[tuple[RoundTripRecord, dict[str, Any]]]] = {}
    # zip: a live run may have added entries since read_index read it.
    for record, entry in zip(run.records, run.index["entries"]):
        # The folder is <graph id>/<label>; read_index made sure there is one.
        graphs.setdefault(entry["folder"].rpartition("/")[0], []).append((record, entry))
    for graph, stages in graphs.items():
        body.append(f'<section class="graph" id="{_e(graph)}">')
        body.append(f"<h2>Graph {_e(graph)}</h2>")
        body.extend(_stage(run.folder, record, entry) for record, entry in stages)
        body.append("</section>")
    return _document(f"fxmlir run {run.name}", body)


def _stage(run_folder: Path, record: RoundTripRecord, entry: dict[str, Any]) -> str:
    folder = run_folder / entry["folder"]
    label, stage = entry.get("label", record.stage), record.stage
    title = label if label == stage else f"{label} (stage {stage})"
    parts = [f'<section class="stage" id="{_e(entry["folder"])}">', f"<h3>{_e(title)}</h3>"]
    if record.fallback is not None:
        files = entry.get("files") or []
        rerun = (f"; <code>fxmlir repro {_e(folder)}</code> runs it again"
                 if "repro.py" in files else "")
        parts += ['<div class="fallback">',
                  "<p><strong>Fallback</strong>: the original graph was kept.</p>",
                  f"<p>Reason: <code>{_e(record.fallback)}</code></p>",
                  f"<p>Folder: <code>{_e(folder)}</code> (files: "
                  f"{_e(', '.join(map(str, files)) or 'none')}{rerun})</p>",
                  "</div>", "</section>"]
        return "\n".join(parts)
    summary = entry["summary"]
    parts.append(f"<p>{record.passes} passes, {record.ops_before} ops before, "
                 f"{record.ops_after} after, {record.time_ms:.1f} ms"
                 + (f"; saved for backward: {_e(record.saved_text)}"
                    if record.saved_tensors is not None else "") + "</p>")
    parts += ["<h4>Fused ops and JIT regions</h4>", _fused(record, summary)]
    parts += ["<h4>Regions left to eager</h4>", _left_to_eager(summary)]
    parts += ["<h4>Ops</h4>", _ops(summary)]
    parts += ["<h4>Time (ms)</h4>", _times(summary)]
    parts += ["<h4>Op graph</h4>", _graph_picture(folder, summary, entry), "</section>"]
    return "\n".join(parts)


def _name(op: str) -> str:
    return op.removeprefix("fxmlir.")


def _fused(record: RoundTripRecord, summary: dict[str, Any]) -> str:
    """Those in the stage's output: how many this round trip made, and how
    many came in with its input (fusions of an earlier stage)."""
    fused = summary["fused_ops"]
    if not fused:
        return '<p class="note">none</p>'
    made = dict(record.fused_ops)
    rows = [(_name(op), "JIT region" if op == JIT_OP else "fused op", str(count),
             str(made.get(op, 0)), str(count - made.get(op, 0)))
            for op, count in sorted(fused.items())]
    return _table(("op", "kind", "in the output", "made here", "from earlier stages"), rows,
                  "fused", numbers=(2, 3, 4))


def _left_to_eager(summary: dict[str, Any]) -> str:
    regions = summary.get("regions_left_to_eager")
    if regions is None:  # dumps older than the field
        return '<p class="note">not recorded in this dump</p>'
    if not regions:
        return '<p class="note">none</p>'
    return _table(("JIT region", "why"), sorted(regions.items()), "eager")


def _ops(summary: dict[str, Any]) -> str:
    before, after = summary["ops_before"], summary["ops_after"]
    names = sorted(set(before) | set(after))
    rows = [(_name(op), str(before.get(op, 0)), str(after.get(op, 0))) for op in names]
    fused = ["fused" if op in summary["fused_ops"] else "" for op in names]
    return _table(("op", "before", "after"), rows, "ops", numbers=(1, 2), row_css=fused)


def _times(summary: dict[str, Any]) -> str:
    # In the order they ran: import, the passes, the JIT compiles, export.
    times = summary["time_ms"]
    order = ["import", *summary["passes"], "jit", "export"]
    steps = [s for s in order if s in times] + sorted(set(times) - set(order))
    rows = [(step, f"{times[step]:.3f}") for step in steps]
    rows.append(("total", f"{sum(times.values()):.3f}"))
    return _table(("step", "ms"), rows, "times", numbers=(1,))


# What comes before the <svg> element (the XML declaration, a DOCTYPE naming
# the SVG DTD's URL, graphviz's comment) is no HTML, and the namespace
# attributes are implied inside HTML: both go, so the page names no URL.
_SVG_TAG = re.compile(r"<svg\b[^>]*>")
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


def _graph_picture(folder: Path, summary: dict[str, Any], entry: dict[str, Any]) -> str:
    svg_path = folder / "graph.svg"
    try:
        text = read_text(svg_path) if svg_path.is_file() else None
    except (OSError, ValueError) as e:
        return f'<p class="note">{_e(error_text(e))}</p>'
    if text is None:
        note = (summary.get("svg") or entry.get("svg_skipped")
                or f"no graph.svg in {folder}")
        return f'<p class="note">{_e(note)}</p>'
    tag = _SVG_TAG.search(text)
    if tag is None:
        return f'<p class="note">{_e(svg_path)}: no &lt;svg&gt; element in it</p>'
    svg = _XMLNS.sub("", tag[0]) + text[tag.end():]
    return f'<figure class="graph">\n{svg.strip()}\n</figure>'


def index_page(dump: Path, pages: list[tuple[str, Run]]) -> str:
    """The page linking each run's page: (its file name, the run)."""
    items = [f'<li><a href="{_e(name)}">{_e(run.name)}</a>: {_e(_totals(run.records))}</li>'
             for name, run in pages]
    return _document(f"fxmlir runs in {dump}",
                     [f"<h1>fxmlir runs in <code>{_e(dump.resolve())}</code></h1>",
                      "<ul>", *items, "</ul>"])
