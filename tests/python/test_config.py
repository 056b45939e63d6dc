"""Settings are checked where they are given, and errors name the setting;
the fallback path never raises."""

from __future__ import annotations

import json
import re
import tempfile
import warnings

import pytest
import torch
import torch.nn as nn

import fxmlir
import fxmlir.config
import fxmlir.dump
from fxmlir import _C
from fxmlir.config import Options
from fxmlir.roundtrip import FallbackWarning


@pytest.mark.parametrize("option, value, error, message", [
    ("passes", 123, TypeError, "option 'passes' must be .* got int 123"),
    ("passes", None, TypeError, "option 'passes' must be .* got NoneType"),
    ("passes", [1, 2], TypeError, r"option 'passes' must be .* got list \[1, 2\]"),
    ("passes", b"cse", TypeError, "option 'passes' must be .* got bytes"),
    ("passes", {"cse": 1}, TypeError, "option 'passes' must be .* got dict"),
    ("passes", "", ValueError, "option 'passes'='' has an empty pass name"),
    ("passes", ",", ValueError, "option 'passes'=',' has an empty pass name"),
    ("passes", "-cse,canonicalize", ValueError, "mixes edits of the default pipeline"),
    ("passes", "none,cse", ValueError, "'none' must stand alone"),
    ("passes", "fuse-everything", ValueError, "unknown pass 'fuse-everything'"),
    ("passes", ["cse", "cse"], ValueError, r"option 'passes'=\['cse', 'cse'\] names pass 'cse' "
                                           "twice"),
    ("stages", None, TypeError, "option 'stages' must be .* got NoneType"),
    ("stages", 123, TypeError, "option 'stages' must be .* got int 123"),
    ("stages", ["forward", 5], TypeError, r"option 'stages' must be .* got list"),
    ("stages", "", ValueError, "option 'stages'='' selects no stage"),
    ("stages", "sideways", ValueError, "option 'stages'='sideways' is invalid: it has "
                                       "'sideways', not a stage; accepted"),
    ("dump_dir", 123, TypeError, "option 'dump_dir' must be a directory path"),
    ("cudagraphs", 1, TypeError, "option 'cudagraphs' must be True or False, got int 1"),
    ("cudagraphs", "maybe", ValueError, "option 'cudagraphs'='maybe' is invalid; accepted "
                                        r"values: 1, true, yes, on, 0, false, no, off \(any case\)"),
    ("codegen", None, TypeError, "option 'codegen' must be True or False, got NoneType"),
    ("strict", 1, TypeError, "option 'strict' must be True or False, got int 1"),
    ("graph_programs", "fast", ValueError, "option 'graph_programs'='fast' is invalid; "
                                           "accepted values: 1, true"),
    ("speed", 11, ValueError, "unknown fxmlir option 'speed'; accepted options: passes"),
    ("dump_dri", "/tmp", ValueError, r"unknown fxmlir option 'dump_dri' \(did you mean "
                                     r"'dump_dir'\?\); accepted options: passes"),
    ("cuda_graphs", True, ValueError, r"'cuda_graphs' \(did you mean 'cudagraphs'\?\)"),
])
def test_bad_options_are_errors_naming_the_option(option, value, error, message):
    with pytest.raises(error, match=message):
        fxmlir.backend(**{option: value})


@pytest.mark.parametrize("when", ["given", "after the backend was made"])
def test_a_dump_dir_that_cannot_be_made_warns_and_the_compile_goes_on(tmp_path, monkeypatch,
                                                                       when):
    """It was a ValueError naming the option, and torch.compile failed with it
    (BackendCompilerFailed) each time a graph compiled."""
    monkeypatch.setattr(fxmlir.dump, "_stopped", {}, raising=False)  # as in a new process
    file = tmp_path / "file"
    dumps = file / "dumps" if when == "given" else tmp_path / "dumps"
    if when == "given":
        file.write_text("")
    assert Options.from_env({"FXMLIR_DUMP_DIR": str(dumps)}).dump_dir == dumps
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    compiled = torch.compile(model, backend=fxmlir.backend(dump_dir=dumps))
    if when != "given":
        dumps.write_text("")
    x = torch.randn(4, 8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = compiled(x)
    messages = [str(w.message) for w in caught if "fxmlir" in str(w.message)]
    assert len(messages) == 1 and f"dumps to {dumps} stopped" in messages[0], messages
    torch.testing.assert_close(out, model(x))


@pytest.mark.parametrize("variable, value, message", [
    ("FXMLIR_PASSES", "", "FXMLIR_PASSES='' has an empty pass name"),
    ("FXMLIR_PASSES", ",", "FXMLIR_PASSES=',' has an empty pass name"),
    ("FXMLIR_PASSES", "-cse,canonicalize", "FXMLIR_PASSES='-cse,canonicalize' mixes edits"),
    ("FXMLIR_STAGES", "", "FXMLIR_STAGES='' selects no stage"),
    ("FXMLIR_CUDA_GRAPHS", "maybe", "FXMLIR_CUDA_GRAPHS='maybe' is invalid; accepted values: "
                                    "1, true, yes, on, 0, false, no, off"),
    ("FXMLIR_STRICT", "", "FXMLIR_STRICT='' is invalid; accepted values"),
])
def test_empty_or_ambiguous_env_values_are_errors(variable, value, message):
    with pytest.raises(ValueError, match=message):
        Options.from_env({variable: value})


@pytest.mark.parametrize("value, message", [
    ("default,default", "names 'default' twice"),
    ("cse,cse", "names pass 'cse' twice"),
    ("default,cse,-cse", "names pass 'cse' twice"),
    ("+cse,-cse", "names pass 'cse' twice"),
    ("--cse", r"has '--cse': an edit is one \+ or - before a pass name"),
    ("+-cse", r"has '\+-cse': an edit is one \+ or - before a pass name"),
    ("default,+", r"has '\+': an edit is one \+ or - before a pass name"),
    ("-default", "edits 'default' .* only passes are added or removed"),
    ("default,fuse-everything", "names unknown pass 'fuse-everything'"),
])
def test_bad_pass_lists_are_errors_quoting_the_value(value, message):
    with pytest.raises(ValueError, match=re.escape(f"FXMLIR_PASSES={value!r} ") + message):
        Options.from_env({"FXMLIR_PASSES": value})
    with pytest.raises(ValueError, match=re.escape(f"option 'passes'={value!r} ") + message):
        fxmlir.backend(passes=value)


@pytest.mark.parametrize("value, message", [
    ("forward,", "is invalid: it has an empty stage name"),
    ("forward,,backward", "is invalid: it has an empty stage name"),
    ("forward,forward", "is invalid: it names 'forward' twice"),
    ("forward,sideways", "is invalid: it has 'sideways', not a stage"),
])
def test_bad_stage_lists_are_errors_quoting_the_value(value, message):
    with pytest.raises(ValueError, match=re.escape(f"FXMLIR_STAGES={value!r} ") + message):
        Options.from_env({"FXMLIR_STAGES": value})


def test_default_combines_with_pass_names_and_edits():
    def passes(spec, stage):
        return Options.from_env({"FXMLIR_PASSES": spec}).passes.for_stage(stage)

    gelu = "fxmlir-approximate-gelu"
    for stage in fxmlir.passes.stages():
        default = fxmlir.passes.default_pipeline(stage)
        plus_gelu = tuple(p for p in fxmlir.passes.registry() if p in default or p == gelu)
        assert gelu not in default
        assert passes(f"default,{gelu}", stage) == passes(f"+{gelu}", stage) == \
            passes(f"default,+{gelu}", stage) == plus_gelu
        assert passes(f"default,-cse,{gelu}", stage) == passes(f"default,-cse,+{gelu}", stage) \
            == tuple(p for p in plus_gelu if p != "cse")
        assert passes(gelu, stage) == (gelu,)  # a name without 'default': only it


def test_default_plus_a_pass_still_fuses(tmp_path):
    """passes="default,X" once ran only X: no fusion in any stage."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4))
    compiled = torch.compile(model, backend=fxmlir.backend(
        passes="default,fxmlir-approximate-gelu", dump_dir=str(tmp_path)))
    compiled(torch.randn(4, 8)).sum().backward()
    (index,) = tmp_path.glob("*/index.json")
    entries = json.loads(index.read_text())["entries"]
    assert len(entries) == 3
    for entry in entries:
        summary = entry["summary"]
        assert "fxmlir-approximate-gelu" in summary["passes"] and "cse" in summary["passes"]
        assert summary["fused_ops"], entry


def test_good_selections():
    def passes(spec, stage="forward"):
        return Options().updated({"passes": spec}).passes.for_stage(stage)

    assert passes("none") == ()
    assert passes(["cse"]) == ("cse",) == passes(["cse"], "before_autodiff")
    for stage in fxmlir.passes.stages():
        default = fxmlir.passes.default_pipeline(stage)
        assert passes("default", stage) == default
        assert passes("default,-cse", stage) == passes("-cse", stage) == \
            tuple(p for p in default if p != "cse")
    # Opt-in passes run only when added.
    assert "fxmlir-approximate-gelu" not in passes("default", "before_autodiff")
    assert "fxmlir-approximate-gelu" in passes("+fxmlir-approximate-gelu", "backward")
    assert Options().updated({"stages": ("forward",)}).stages == {"forward"}


def test_selections_run_the_registered_stage_pipelines_with_options():
    def selection(spec):
        return Options().updated({"passes": spec}).passes

    def pipeline(spec, stage, **extra):
        return _C.stage_pipeline(stage, **selection(spec).stage_options(stage), **extra)

    assert pipeline("default", "before_autodiff") == "fxmlir-before-autodiff"
    assert pipeline("-cse,+fxmlir-approximate-gelu", "forward") == \
        "fxmlir-forward{add=fxmlir-approximate-gelu remove=cse}"
    assert pipeline("cse,canonicalize", "backward") == "fxmlir-backward{only=canonicalize,cse}"
    assert pipeline("default", "forward", region_device_types=["cpu", "cuda"]) == \
        "fxmlir-forward{region-device-types=cpu,cuda}"
    # The core's pipeline runs exactly the passes the selection lists.
    text = "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { return %x : tensor<4xf32> }"
    for spec in ("default", "-cse,+fxmlir-eager-random", "cse,canonicalize"):
        for stage in fxmlir.passes.stages():
            module = _C.Context().parse(text, "f.mlir")
            runs = module.run_stage(stage, **selection(spec).stage_options(stage))
            assert tuple(run.pass_name for run in runs) == selection(spec).for_stage(stage), \
                (spec, stage)
    with pytest.raises(ValueError, match="runs no pass in the forward stage"):
        selection("none").stage_options("forward")
    with pytest.raises(_C.Error, match="unknown pass 'no-such-pass' in option 'add'"):
        _C.stage_pipeline("forward", add=["no-such-pass"])
    with pytest.raises(_C.Error, match="unknown stage 'sideways'"):
        _C.Context().parse(text).run_stage("sideways")


def _failing_compile(monkeypatch, **options):
    """A compiled embedding model whose export is made to fail."""
    import fxmlir.roundtrip

    def failing_export(*args, **kwargs):
        raise fxmlir.exporter.ExportFailure("injected")

    monkeypatch.setattr(fxmlir.roundtrip, "export_graph", failing_export)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 2))
    ids = torch.randint(0, 10, (3, 5))
    return model(ids), torch.compile(model, backend=fxmlir.backend(**options)), ids


def test_fallback_survives_an_unwritable_failure_folder(tmp_path, monkeypatch):
    # No dump folder: failures go to $TMPDIR/fxmlir-failures, here a file.
    (tmp_path / "fxmlir-failures").write_text("in the way")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    expected, compiled, ids = _failing_compile(monkeypatch)
    with pytest.warns(FallbackWarning, match="graph kept as is: .*no dump written to"):
        out = compiled(ids)
    assert torch.equal(out, expected)


def test_fallback_survives_dump_writes_that_fail(tmp_path, monkeypatch):
    # The dump folder is valid, but a graph's folder in it is taken by a
    # file: the round trip's dumps fail, and so do the fallback's.
    dumps = tmp_path / "dumps"
    (fxmlir.dump.run(dumps).folder / "graph_0_0_0").write_text("in the way")
    expected, compiled, ids = _failing_compile(monkeypatch, dump_dir=str(dumps))
    with pytest.warns(FallbackWarning, match="no dump written to"):
        out = compiled(ids)
    assert torch.equal(out, expected)


def test_readme_and_config_list_the_same_settings():
    import re
    from pathlib import Path

    import fxmlir.config

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    settings = readme[readme.index("## Settings"):readme.index("## Logs")]
    in_readme = set(re.findall(r"^\| `(FXMLIR_\w+)` \| `?(\w*)`?", settings, re.M))
    in_config = set(re.findall(r"^\| (FXMLIR_\w+) +\| (\w*) ", fxmlir.config.__doc__, re.M))
    assert in_readme == in_config


def test_cuda_graphs_setting():
    assert not Options.from_env({}).cudagraphs
    assert Options.from_env({"FXMLIR_CUDA_GRAPHS": "1"}).cudagraphs
    assert not Options.from_env({"FXMLIR_CUDA_GRAPHS": "1"}).updated(
        {"cudagraphs": False}).cudagraphs


@pytest.mark.parametrize("variable, field", [
    ("FXMLIR_CODEGEN_FUSERS", "codegen"), ("FXMLIR_CUDA_GRAPHS", "cudagraphs"),
    ("FXMLIR_STRICT", "strict"), ("FXMLIR_GRAPH_PROGRAMS", "graph_programs"),
])
def test_switches_accept_the_usual_spellings(variable, field):
    """FXMLIR_CODEGEN_FUSERS=true was refused: only 0 and 1 were."""
    for value in ("1", "true", "True", "YES", "on"):
        assert getattr(Options.from_env({variable: value}), field), value
        assert getattr(Options().updated({field: value}), field), value
    for value in ("0", "false", "FALSE", "no", "Off"):
        assert not getattr(Options.from_env({variable: value}), field), value
        assert not getattr(Options().updated({field: value}), field), value
    assert fxmlir.config.round_trip_enabled({"FXMLIR_ROUND_TRIP": "Yes"})
    assert not fxmlir.config.round_trip_enabled({"FXMLIR_ROUND_TRIP": "off"})


@pytest.mark.parametrize("where", ["environment", "option"])
def test_removed_settings_warn_once_and_are_ignored(monkeypatch, where):
    """FXMLIR_LOG_LEVEL and log_level were errors that stopped the compile."""
    import fxmlir.config

    monkeypatch.setattr(fxmlir.config, "_warned_removed", set())  # as in a new process
    name = "FXMLIR_LOG_LEVEL" if where == "environment" else "log_level"
    with pytest.warns(fxmlir.config.RemovedSettingWarning,
                      match=f"fxmlir: {name} was removed and is ignored: .*TORCH_LOGS=fxmlir"):
        if where == "environment":
            options = Options.from_env({name: "info"})
        else:
            options = Options().updated({name: "debug", "passes": "none"})
            assert options.passes.for_stage("forward") == ()  # the others still apply
    assert options.stages == frozenset(fxmlir.config.STAGES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process
        Options.from_env({name: "info"}) if where == "environment" else \
            Options().updated({name: "debug"})


def test_bad_options_are_errors_at_torch_compile():
    """They were errors only at the first call, inside Dynamo's
    BackendCompilerFailed ("... reporting a bug to PyTorch")."""
    model = nn.Linear(4, 2)
    with pytest.raises(ValueError, match=r"unknown fxmlir option 'dump_dri' \(did you mean "
                                         r"'dump_dir'\?\)"):
        torch.compile(model, backend="fxmlir", options={"dump_dri": "/tmp/x"})
    with pytest.raises(TypeError, match="option 'codegen' must be True or False, got int 1"):
        torch.compile(backend="fxmlir", options={"codegen": 1})(model)
    # Good options still compile; another backend's options are its own.
    x = torch.randn(3, 4)
    compiled = torch.compile(model, backend="fxmlir", options={"passes": "none", "codegen": "0"})
    torch.testing.assert_close(compiled(x), model(x))
    torch.compile(model, backend="eager", options={"dump_dri": 1})


def test_strict_setting():
    assert not Options.from_env({}).strict
    assert Options.from_env({"FXMLIR_STRICT": "1"}).strict
    assert not Options.from_env({"FXMLIR_STRICT": "1"}).updated({"strict": False}).strict
    assert Options().updated({"strict": True}).strict
    with pytest.raises(TypeError, match="option 'strict' must be True or False, got int 1"):
        fxmlir.backend(strict=1)
