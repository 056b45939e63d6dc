"""The command line: `fxmlir` / `python -m fxmlir` (report, show, explain,
passes) and `fxmlir-opt` on PATH, run on a dump this test makes."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn

import fxmlir
import fxmlir.dump
from fxmlir import _C


def installed_script(name: str) -> Path:
    """Where pip installed a console script of the package (the
    environment's scripts folder, on PATH once it is activated)."""
    (script,) = [f for f in importlib.metadata.files("fxmlir")
                 if f.name == name and f.parent.name == "bin"]
    return Path(script.locate()).resolve()


HAS_DOT = shutil.which("dot") is not None


def fxmlir_cli(*args: str, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fxmlir", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> Path:
    """A dump of a model whose GELU fuses with the bias add before it."""
    folder = tmp_path_factory.mktemp("dumps")
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(folder)))
    compiled(torch.randn(4, 8)).sum().backward()
    torch._dynamo.reset()
    assert fxmlir.dump.wait_for_renders(timeout=120)  # graph.svg renders in the background
    return folder


def test_console_scripts_are_installed():
    result = subprocess.run([installed_script("fxmlir-opt"), "--help"], capture_output=True,
                            text=True)
    assert result.returncode == 0 and "fxmlir-fuse-bias-add-activation" in result.stdout
    result = subprocess.run([installed_script("fxmlir"), "passes"], capture_output=True,
                            text=True)
    assert result.returncode == 0 and "fxmlir-recompose" in result.stdout


def test_report_tables_the_round_trips(dump):
    result = fxmlir_cli("report", str(dump))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    # The gelu fused before autodiff, counted there only (it was counted
    # again in the forward graph and as its gradient: "3 fused ops").
    assert "3 round trips, 1 fused ops, 0 fallbacks" in out
    rows = {line.split()[0]: line for line in out.splitlines() if line.startswith("graph_")}
    assert sorted(rows) == [f"graph_0_0_0/{stage}"
                            for stage in ("backward", "before_autodiff", "forward")]
    header = next(line for line in out.splitlines() if line.startswith("graph "))
    made, earlier = header.index("fused ops"), header.index("fused earlier")

    def cells(stage: str) -> tuple[str, str]:
        row = rows[f"graph_0_0_0/{stage}"]
        return row[made:earlier].strip(), row[earlier:].split("  ")[0].strip()

    assert cells("before_autodiff") == ("fused_bias_act x1", "-")
    assert cells("forward") == ("-", "fused_bias_act x1")
    assert cells("backward") == ("-", "fused_bias_act_grad x1")
    # One run folder works as well as the dump directory.
    (run,) = dump.iterdir()
    assert fxmlir_cli("report", str(run)).stdout == out


def test_a_fused_op_counts_in_the_stage_that_created_it():
    """Each stage's summary lists the fused ops of its output; those its
    input had are an earlier stage's (issue: "98 ops -> 98 ops
    (fused_bias_dropout_add x4)" in the forward line, and counted twice)."""
    from fxmlir.report import RoundTripRecord

    def record(stage, before, after):
        fused = {k: v for k, v in after.items() if k.startswith("fxmlir.")}
        return RoundTripRecord.from_summary({
            "graph": "graph_0_0_0", "label": stage, "stage": stage, "passes": ["cse"],
            "ops_before": before, "ops_after": after, "fused_ops": fused,
            "time_ms": {"import": 1.0}})

    first = record("before_autodiff", {"aten.add": 4, "aten.dropout": 4},
                   {"fxmlir.fused_bias_dropout_add": 4})
    assert first.fused_ops == (("fxmlir.fused_bias_dropout_add", 4),) and first.fused_count == 4
    assert first.fused_earlier == ()
    forward = record("forward", {"fxmlir.fused_bias_dropout_add": 4, "aten.gelu": 2,
                                 "aten.add": 2},
                     {"fxmlir.fused_bias_dropout_add": 4, "fxmlir.fused_bias_act": 2})
    assert forward.fused_ops == (("fxmlir.fused_bias_act", 2),)
    assert forward.fused_earlier == (("fxmlir.fused_bias_dropout_add", 4),)
    # One more of a kind the input had: only the new one is the stage's.
    more = record("backward", {"fxmlir.packed_mask_scale": 1},
                  {"fxmlir.packed_mask_scale": 3})
    assert more.fused_ops == (("fxmlir.packed_mask_scale", 2),)
    assert more.fused_earlier == (("fxmlir.packed_mask_scale", 1),)


def assert_one_line_error(result: subprocess.CompletedProcess, *parts: str) -> None:
    """Exit status 2 and one line on stderr, no traceback, with each part."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for part in parts:
        assert part in result.stderr, (part, result.stderr)


def test_report_of_a_folder_without_dumps_says_so(tmp_path):
    assert_one_line_error(fxmlir_cli("report", str(tmp_path)),
                          f"fxmlir report: {tmp_path}: no fxmlir dump")
    assert_one_line_error(fxmlir_cli("report", str(tmp_path / "missing")),
                          f"{tmp_path / 'missing'}: no fxmlir dump (no such file")
    (tmp_path / "notes.txt").write_text("")
    assert_one_line_error(fxmlir_cli("report", str(tmp_path / "notes.txt")),
                          f"{tmp_path / 'notes.txt'}: no fxmlir dump (a file, neither a dump "
                          "folder nor an index.json)")


@pytest.mark.parametrize("text, problem", [
    ("{}", "no 'run' string"),
    ('{"run": "r"}', "no 'entries' list"),
    ("[]", "a JSON list, not an object"),
    ("", "empty file"),
    ('{"run": "r", "entries": [', "invalid JSON"),
    ('{"run": "r", "entries": [{"folder": "g"}]}', "entry 0 has no 'stage'"),
    ('{"run": "r", "entries": [{"summary": 3}]}', "entry 0 is malformed"),
    ('{"run": "r", "entries": [7]}', "entry 0 is malformed (int 7, not an object)"),
])
def test_report_of_a_corrupt_index_names_it(tmp_path, text, problem):
    index = tmp_path / "run" / "index.json"
    index.parent.mkdir()
    index.write_text(text)
    for path in (index.parent, index):  # the run folder, or its index itself
        assert_one_line_error(fxmlir_cli("report", str(path)),
                              f"fxmlir report: {index}: not an fxmlir dump index: {problem}")


def test_report_skips_a_corrupt_run_and_reports_the_others(dump, tmp_path):
    (run,) = dump.iterdir()
    shutil.copytree(run, tmp_path / run.name)
    (tmp_path / "0-corrupt").mkdir()
    (tmp_path / "0-corrupt" / "index.json").write_bytes(b"\xff\xfe")
    result = fxmlir_cli("report", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == (f"fxmlir report: skipped {tmp_path}/0-corrupt/index.json: "
                                      "not UTF-8 text (byte 0: invalid start byte)")
    assert "3 round trips, 1 fused ops, 0 fallbacks" in result.stdout


def test_show_and_explain_name_the_bad_file(tmp_path):
    (tmp_path / "empty.mlir").write_text("")
    (tmp_path / "empty.dot").write_text("")
    (tmp_path / "bad.mlir").write_text("func.func @f( {")
    (tmp_path / "graph.txt").write_text("digraph {}")
    (tmp_path / "stage").mkdir()
    cases = [
        (("show", "empty.mlir"), "fxmlir show: empty.mlir: empty file"),
        (("show", "empty.dot"), "fxmlir show: empty.dot: empty file"),
        (("show", "bad.mlir"), "fxmlir show: bad.mlir: not a valid fxmlir module"),
        (("show", "missing.dot"), "fxmlir show: missing.dot: No such file or directory"),
        (("show", "stage"), "fxmlir show: stage/graph.dot: No such file or directory"),
        (("show", "graph.txt"), "fxmlir show: graph.txt: expected a dump's stage folder"),
        (("explain", "missing.py"), "fxmlir explain: missing.py: no such file"),
    ]
    for args, message in cases:
        assert_one_line_error(fxmlir_cli(*args, cwd=tmp_path), message)


def test_show_of_a_module_without_functions_says_so(tmp_path):
    (tmp_path / "m.mlir").write_text("module {}\n")
    assert_one_line_error(fxmlir_cli("show", "m.mlir", cwd=tmp_path),
                          "fxmlir show: m.mlir: no function in the module")


@pytest.mark.skipif(not HAS_DOT, reason="graphviz's dot is not installed")
def test_show_svg_of_a_bad_dot_file_says_what_dot_said(tmp_path):
    (tmp_path / "bad.dot").write_text("digraph { a -> }")
    result = fxmlir_cli("show", "--svg", "bad.dot", cwd=tmp_path)
    assert_one_line_error(result, "fxmlir show: bad.dot: graphviz's dot could not render it: ",
                          "syntax error")
    assert not (tmp_path / "bad.svg").exists()


def test_show_prints_the_dot_with_fx_names(dump):
    (stage,) = dump.glob("*/graph_0_0_0/forward")
    result = fxmlir_cli("show", str(stage))
    assert result.returncode == 0, result.stderr
    dot = result.stdout
    assert dot.startswith("digraph")
    # The parameter labelled by its name in the model, its FX name on hover.
    assert '"0.weight\\l' in dot and 'tooltip="primals_1"' in dot
    assert "tensor<4x16xf32, cpu>" in dot  # full types
    assert "fxmlir.fused_bias_act" in dot and "#ffcc80" in dot  # fused, highlighted


@pytest.mark.skipif(not HAS_DOT, reason="graphviz's dot is not installed")
def test_show_renders_svg_and_dumps_have_one(dump, tmp_path):
    (stage,) = dump.glob("*/graph_0_0_0/forward")
    assert "<svg" in (stage / "graph.svg").read_text()
    svg = tmp_path / "g.svg"
    result = fxmlir_cli("show", str(stage / "final.mlir"), "--svg", "-o", str(svg))
    assert result.returncode == 0, result.stderr
    assert "<svg" in svg.read_text()


def test_show_without_graphviz_says_what_is_missing(dump, tmp_path):
    (stage,) = dump.glob("*/graph_0_0_0/forward")
    # A PATH with python but no dot.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(tmp_path / "bin")}
    result = fxmlir_cli("show", str(stage), "--svg", env=env)
    assert_one_line_error(result, "graphviz's `dot` is not installed")


SCRIPT = textwrap.dedent("""
    import torch, torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(8, 16)
            self.fc2 = nn.Linear(8, 16)

        def forward(self, x):
            h = self.fc1(x)
            y = nn.functional.gelu(self.fc2(x))   # fuses
            return nn.functional.gelu(h) + h + y  # h is used twice: cannot fuse

    torch.manual_seed(0)
    model = torch.compile(Block())  # no backend named: explain routes it
    model(torch.randn(4, 8)).sum().backward()
""")


def test_explain_names_the_closest_pattern_and_the_failed_check(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    result = fxmlir_cli("explain", str(script), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "FuseBiasAddGeluPattern" in line]
    # The unfused gelu before autodiff; the fused one is no site, nor is the
    # forward graph's, which a JIT region took with the adds after it.
    (line,) = lines
    assert "before_autodiff" in line and "gelu " in line
    assert "used elsewhere too: fusing would compute it twice" in line
    # An op left out of the regions says why, without an empty "(at )".
    left_out = [line for line in result.stdout.splitlines() if "JIT region" in line]
    assert left_out and all("(at )" not in line for line in left_out), result.stdout
    assert any("a lone op: no lowerable op next to it" in line for line in left_out)


def test_region_takes_a_jit_function_out_of_a_dump_for_fxmlir_opt(tmp_path):
    # docs/jit-regions.md's recipe ran the JIT pipeline on a whole dump,
    # which fails on its first GEMM or view; one region's function lowers.
    torch._dynamo.reset()
    torch.manual_seed(0)
    # Sigmoid has no fused bias kernel: its backward chain is a region.
    model = nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), nn.Linear(16, 4))
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=str(tmp_path)))
    compiled(torch.randn(4, 8)).mul(2.0).sigmoid().sum().backward()
    final = next(tmp_path.glob("*/graph_*/backward/final.mlir"))
    listed = fxmlir_cli("region", str(final))
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    assert names and all(n.startswith("jit_") for n in names)
    region = fxmlir_cli("region", str(final), names[0])
    assert region.returncode == 0 and region.stdout.startswith(f"func.func private @{names[0]}(")
    opt = Path(fxmlir.__file__).with_name("fxmlir-opt")
    lowered = subprocess.run([str(opt), "-", "--fxmlir-jit-cpu"], input=region.stdout,
                             capture_output=True, text=True, timeout=300)
    assert lowered.returncode == 0, lowered.stderr
    assert "llvm.func" in lowered.stdout
    missing = fxmlir_cli("region", str(final), "jit_nothing")
    assert missing.returncode == 2 and "no JIT region @jit_nothing" in missing.stderr
    # Cut in the middle of the region: listing and extracting both say so
    # (they listed it, and extracting it said "substring not found").
    cut = tmp_path / "cut.mlir"
    text = final.read_text()
    cut.write_text(text[:text.index(f"func.func private @{names[0]}(") + 200])
    for args in ((), (names[0],)):
        assert_one_line_error(fxmlir_cli("region", str(cut), *args),
                              f"fxmlir region: {cut}: truncated: the text ends in JIT region "
                              f"@{names[0]}")


TENSOR = 'tensor<4xf32, #fxmlir.device<"cpu">>'
REGION = textwrap.dedent(f"""\
    func.func private @jit_neg_exp(%x: {TENSOR}) -> {TENSOR} {{
      %neg = fxmlir.aten.neg %x : ({TENSOR}) -> {TENSOR}
      %exp = fxmlir.aten.exp %neg : ({TENSOR}) -> {TENSOR}
      return %exp : {TENSOR}
    }}
""")
MODULE = "module {\n" + textwrap.indent(REGION, "  ") + "}\n"


@pytest.mark.parametrize("text, problem", [
    ("", "empty file"),
    (" \n\n", "empty file"),
    ("hello world\n", "not MLIR the core can parse (line 1:1: custom op 'hello' is unknown"),
    (MODULE.replace("fxmlir.aten.exp", "fxmlir.aten.nope"),
     "not MLIR the core can parse (line 4:"),
    (MODULE[:MODULE.index("%exp")], "truncated: the text ends in JIT region @jit_neg_exp"),
    (MODULE[:-2], "truncated: the text ends in JIT region @jit_neg_exp"),
], ids=["empty", "blank", "not-mlir", "unknown-op", "cut-in-region", "cut-at-end"])
def test_region_of_a_bad_file_names_it(tmp_path, text, problem):
    # Each of these printed no region or its regions, exit status 0, or
    # failed with "substring not found".
    (tmp_path / "f.mlir").write_text(text)
    for args in ((), ("jit_neg_exp",)):
        assert_one_line_error(fxmlir_cli("region", "f.mlir", *args, cwd=tmp_path),
                              f"fxmlir region: f.mlir: {problem}")


def test_region_of_a_module_without_regions_says_so(tmp_path):
    (tmp_path / "f.mlir").write_text(MODULE.replace("func.func private", "func.func"))
    result = fxmlir_cli("region", "f.mlir", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "f.mlir: no JIT region\n"


def test_region_takes_a_function_out_of_any_layout(tmp_path):
    """The core gives the region's text, whatever the file's layout: in a
    module as dumps print it, or hand-written at top level (once "substring
    not found")."""
    printed = []
    for name, text in (("module.mlir", MODULE), ("top.mlir", REGION)):
        (tmp_path / name).write_text(text)
        listed = fxmlir_cli("region", name, cwd=tmp_path)
        assert listed.returncode == 0 and listed.stdout == "jit_neg_exp\n", listed.stderr
        region = fxmlir_cli("region", name, "jit_neg_exp", cwd=tmp_path)
        assert region.returncode == 0, region.stderr
        printed.append(region.stdout)
    assert printed[0] == printed[1]
    assert printed[0].startswith("func.func private @jit_neg_exp(%arg0: ")
    assert printed[0].endswith("\n}\n")
    # All an mlir_jit call needs: it parses and compiles alone.
    _C.jit_compile_cpu(printed[0], "jit_neg_exp")