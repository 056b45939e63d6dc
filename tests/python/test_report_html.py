"""`fxmlir report --html DIR DUMP_DIR`: one self-contained page per run,
read back by html.parser and, where Chromium is installed, as a headless
browser renders it (its DOM, a screenshot, its console), against what the
dumps' summary.json and index.json files hold."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import fxmlir
import fxmlir.dump
from fxmlir.report import RoundTripRecord

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def fxmlir_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fxmlir", *args], capture_output=True,
                          text=True, timeout=300)


def _model() -> nn.Module:
    # The GELU and dropout fuse (the backward gets their gradients' fused
    # ops); the layer norm and softmax make a JIT region.
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.1), nn.Linear(16, 16),
                         nn.LayerNorm(16), nn.Softmax(-1))


def _train_step(folder: Path) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(_model(), backend=fxmlir.backend(dump_dir=str(folder)))
    compiled(torch.randn(4, 8)).sum().backward()
    torch._dynamo.reset()
    assert fxmlir.dump.wait_for_renders(timeout=120)  # graph.svg renders in the background


# A reason with markup in it: the page must show it as text.
REASON = "injected <b>&amp;</b>"


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, Path]:
    """A clean training step's dump, and one whose backward export fails (a
    fallback) and whose JIT regions do not compile (left to eager)."""
    import fxmlir.exporter
    import fxmlir.roundtrip
    from fxmlir import _C

    clean = tmp_path_factory.mktemp("clean")
    _train_step(clean)
    export = fxmlir.roundtrip.export_graph

    def fail_in_backward(module_json, imported, gm, regions, **kwargs):
        if imported.func_name == "backward":
            raise fxmlir.exporter.ExportFailure(REASON)
        return export(module_json, imported, gm, regions, **kwargs)

    def no_code(text, name):
        raise _C.Error(f"no code for @{name}")

    failing = tmp_path_factory.mktemp("failing")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fxmlir.roundtrip, "export_graph", fail_in_backward)
        patch.setattr(_C, "jit_compile_cpu", no_code)
        with pytest.warns(fxmlir.roundtrip.FallbackWarning):
            _train_step(failing)
    # A stage whose picture is missing shows why instead.
    (next(failing.glob("*/graph_*/before_autodiff")) / "graph.svg").unlink(missing_ok=True)
    return {"clean": clean, "failing": failing}


@pytest.fixture(scope="module")
def pages(dumps, tmp_path_factory) -> dict[str, Path]:
    """Each dump's page, written by the command."""
    found = {}
    for case, dump in dumps.items():
        out = tmp_path_factory.mktemp(f"html-{case}")
        result = fxmlir_cli("report", "--html", str(out), str(dump))
        assert result.returncode == 0, result.stderr
        (page,) = map(Path, result.stdout.split())  # one run: no index.html
        assert page.parent == out and page.suffix == ".html"
        found[case] = page
    return found


# Elements that load something, and attributes that name what to load or
# link to (a link within the page, "#id", loads nothing).
LOADING = ("script", "link", "img", "iframe", "object", "embed", "image", "use")
URLS = ("src", "href", "xlink:href", "action", "data")


class Page(HTMLParser):
    """What a report page shows: by stage section (its id, the stage's
    folder), its text, its tables' rows (by the table's class), its
    fallback box's and notes' texts and its inline SVGs; and every element
    that loads or links to something outside the page."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.stage_text: dict[str, list[str]] = {}
        self.tables: dict[tuple[str, str], list[list[str]]] = {}
        self.boxes: dict[tuple[str, str], list[str]] = {}  # (stage, "fallback"/"note")
        self.svgs: dict[str, int] = {}
        self.loads: list[str] = []
        self.text: list[str] = []
        self._sections: list[str | None] = []  # the stage of each open section
        self._table: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._box: tuple[tuple[str, str], str] | None = None  # its key and tag
        self._svg = 0  # depth inside an <svg>: its labels are the picture's
        self.feed(text)
        self.close()

    @property
    def stage(self) -> str | None:
        return next((s for s in reversed(self._sections) if s is not None), None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in LOADING or any(name in URLS and not (value or "").startswith("#")
                                 for name, value in attrs):
            self.loads.append(self.get_starttag_text() or tag)
        if tag == "svg":
            self._svg += 1
            if self._svg == 1 and self.stage is not None:
                self.svgs[self.stage] = self.svgs.get(self.stage, 0) + 1
        elif tag == "section":
            self._sections.append(a.get("id") if "stage" in (a.get("class") or "") else None)
        elif tag == "table" and self.stage is not None:
            self._table = self.tables.setdefault((self.stage, a.get("class") or ""), [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = []
        elif (a.get("class") or "") in ("fallback", "note") and self.stage is not None:
            key = (self.stage, a["class"])
            self.boxes.setdefault(key, []).append("")
            self._box = (key, tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._svg -= 1
        elif tag == "section" and self._sections:
            self._sections.pop()
        elif tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._cell is not None and self._table:
            if tag == "td":  # the header's cells are not data
                self._table[-1].append("".join(self._cell).strip())
            self._cell = None
        elif self._box is not None and tag == self._box[1]:
            self._box = None

    def handle_data(self, data: str) -> None:
        if self._svg:
            return
        self.text.append(data)
        if self.stage is not None:
            self.stage_text.setdefault(self.stage, []).append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._box is not None:
            key = self._box[0]
            self.boxes[key][-1] += data

    def rows(self, stage: str, table: str) -> dict[str, list[str]]:
        """A table's data rows by their first cell."""
        return {row[0]: row for row in self.tables.get((stage, table), []) if row}

    def stage_words(self, stage: str) -> str:
        return " ".join("".join(self.stage_text.get(stage, [])).split())


def run_folder(dump: Path) -> Path:
    (index,) = dump.glob("*/index.json")
    return index.parent


def check_page(page: Page, run: Path) -> None:
    """The page shows what the run's summary.json files and index hold."""
    index = json.loads((run / "index.json").read_text())
    summaries = [json.loads(p.read_text()) for p in run.glob("graph_*/*/summary.json")]
    assert summaries
    assert page.loads == []  # self-contained: nothing to load, no link out
    assert f"fxmlir run {index['run']}" in " ".join("".join(page.text).split())
    for summary in summaries:
        stage = f"{summary['graph']}/{summary['label']}"
        fused = page.rows(stage, "fused")
        for op, count in summary["fused_ops"].items():
            assert fused[op.removeprefix("fxmlir.")][2] == str(count), (stage, op, fused)
        assert len(fused) == len(summary["fused_ops"])
        ops = page.rows(stage, "ops")
        for op in {*summary["ops_before"], *summary["ops_after"]}:
            assert ops[op.removeprefix("fxmlir.")][1:] == [
                str(summary["ops_before"].get(op, 0)), str(summary["ops_after"].get(op, 0))]
        eager = page.rows(stage, "eager")
        assert {name: row[1] for name, row in eager.items()} == summary["regions_left_to_eager"]
        times = page.rows(stage, "times")
        for step, ms in summary["time_ms"].items():
            assert times[step][1] == f"{ms:.3f}"
        saved = RoundTripRecord.from_summary(summary).saved_text
        assert ("saved_for_backward" not in summary) or saved in page.stage_words(stage)
        if (run / stage / "graph.svg").is_file():
            assert page.svgs.get(stage) == 1, stage
        else:
            assert stage not in page.svgs
            note = summary.get("svg") or f"no graph.svg in {run / stage}"
            assert note in page.boxes[(stage, "note")], page.boxes
    for entry in index["entries"]:
        if "fallback" in entry:
            (box,) = page.boxes[(entry["folder"], "fallback")]
            assert entry["fallback"] in box and str(run / entry["folder"]) in box


def _check_dumps(dumps: dict[str, Path]) -> None:
    """The dumps hold what the pages are checked on: fused ops, a JIT
    region left to eager, a fallback whose reason has markup."""
    def summaries(case: str) -> list[dict]:
        return [json.loads(p.read_text())
                for p in dumps[case].glob("*/graph_*/*/summary.json")]

    fused = {op for s in summaries("clean") for op in s["fused_ops"]}
    assert {"fxmlir.fused_bias_dropout_add", "fxmlir.mlir_jit"} <= fused
    assert any(s["regions_left_to_eager"] for s in summaries("failing"))
    index = json.loads((run_folder(dumps["failing"]) / "index.json").read_text())
    assert any(REASON in e.get("fallback", "") for e in index["entries"])


@pytest.mark.parametrize("case", ["clean", "failing"])
def test_the_page_shows_the_dumps(dumps, pages, case):
    _check_dumps(dumps)
    check_page(Page(pages[case].read_text()), run_folder(dumps[case]))
    assert "<b>" not in pages[case].read_text()  # the reason's markup is text


def test_several_runs_get_an_index_page(dumps, tmp_path):
    # Copies of one run keep its name: their pages must not overwrite each other.
    both = tmp_path / "dumps"
    for case, dump in dumps.items():
        for copy in ("a", "b"):
            shutil.copytree(run_folder(dump), both / f"{case}-{copy}")
    out = tmp_path / "html"
    result = fxmlir_cli("report", "--html", str(out), str(both))
    assert result.returncode == 0, result.stderr
    written = [Path(line) for line in result.stdout.split()]
    assert len(set(written)) == 5 and written[-1] == out / "index.html"
    index = Page((out / "index.html").read_text())
    links = [tag for tag in index.loads if "<a " in tag]
    assert len(links) == 4 and all(f'href="{page.name}"' in "".join(links)
                                   for page in written[:-1])
    for page, folder in zip(written, sorted(both.iterdir())):
        check_page(Page(page.read_text()), folder)


def test_no_dump_is_an_error(tmp_path):
    result = fxmlir_cli("report", "--html", str(tmp_path / "html"), str(tmp_path))
    assert result.returncode == 2 and "no fxmlir dump" in result.stderr
    assert not (tmp_path / "html").exists()


def _chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    # As root (containers, CI) Chromium runs only without its sandbox; its
    # own profile, so that parallel runs do not share one.
    return subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox",
                           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
                           *args, page.as_uri()],
                          capture_output=True, text=True, timeout=120)


def _console_errors(stderr: str, page: Path) -> list[str]:
    """Console messages about the page: an uncaught error, a blocked load
    (the page's content security policy), anything logged."""
    return [line for line in stderr.splitlines()
            if "Uncaught" in line or "ERROR:CONSOLE" in line
            or (":CONSOLE" in line and page.as_uri() in line)]


@pytest.mark.parametrize("case", ["clean", "failing"])
def test_chromium_renders_the_page(dumps, pages, case, tmp_path):
    if CHROMIUM is None:
        pytest.skip("no chromium or chromium-browser executable (apt-get install chromium)")
    page = pages[case]
    shown = _chromium(page, tmp_path / "profile", "--dump-dom")
    assert shown.returncode == 0, shown.stderr[-2000:]
    # The DOM as rendered: what the browser shows, checked as the file is.
    check_page(Page(shown.stdout), run_folder(dumps[case]))
    assert _console_errors(shown.stderr, page) == []
    screenshot = tmp_path / f"{case}.png"
    shot = _chromium(page, tmp_path / "profile", f"--screenshot={screenshot}",
                     "--window-size=1200,2000")
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert _console_errors(shot.stderr, page) == []
    assert screenshot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    print(f"screenshot of {page}: {screenshot}")
