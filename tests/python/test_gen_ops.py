"""The schema rule (fxmlir.schema) and the op generator built on it
(tools/gen_ops.py): ATen ops, fused ops, their torch registrations."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import torch

from fxmlir import schema
from fxmlir.schema import ArgKind, AttrKind, ResultKind

aten = torch.ops.aten
ROOT = Path(__file__).resolve().parents[2]


def _load_tool():
    spec = importlib.util.spec_from_file_location("gen_ops", ROOT / "tools" / "gen_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_tool()


def _args(op) -> dict[str, schema.ArgRule]:
    sig = schema.op_signature(op)
    assert sig is not None, schema.unsupported_reason(op)
    return {a.name: a for a in sig.args}


def test_committed_files_are_current() -> None:
    files, _ = gen.generate()
    committed = (ROOT / gen.ATEN_OPS).read_text()
    recorded = next(line.removeprefix(gen.VERSION_LINE)
                    for line in committed.splitlines()
                    if line.startswith(gen.VERSION_LINE))
    for path, text in files.items():
        if path in (gen.ATEN_OPS, gen.OPS_DOC) and recorded != torch.__version__:
            continue  # they follow the torch they were generated from
        assert text == (ROOT / path).read_text(), f"{path}: run python tools/gen_ops.py"


@pytest.mark.skipif(not (ROOT / gen.ATEN_OPS).read_text().count(torch.__version__),
                    reason="AtenOps.td was generated from another torch version")
def test_aten_ops_are_current_for_this_torch() -> None:
    files, _ = gen.generate()
    assert files[gen.ATEN_OPS] == (ROOT / gen.ATEN_OPS).read_text()


def test_check_reports_a_stale_file(tmp_path: Path, capsys) -> None:
    assert gen.main(["--root", str(tmp_path), "--check"]) == 1
    assert "is stale" in capsys.readouterr().err
    assert gen.main(["--root", str(tmp_path)]) == 0
    assert gen.main(["--root", str(tmp_path), "--check"]) == 0
    (tmp_path / gen.FUSED_ODS).write_text("// stale\n")
    assert gen.main(["--root", str(tmp_path), "--check"]) == 1
    assert "FusedOps.td is stale" in capsys.readouterr().err


def test_names() -> None:
    assert schema.mlir_op_name(aten.addmm.default) == "fxmlir.aten.addmm"
    assert schema.mlir_op_name(aten.add.Tensor) == "fxmlir.aten.add.Tensor"
    assert schema.ods_def_name(aten.sum.dim_IntList) == "Aten_SumDimIntListOp"
    assert schema.ods_def_name(aten._softmax.default) == "Aten_UnderscoreSoftmaxOp"
    assert schema.ods_def_name(aten.softmax.int) == "Aten_SoftmaxIntOp"


def test_addmm() -> None:
    sig = schema.op_signature(aten.addmm.default)
    assert [a.ods_name for a in sig.operands] == ["self", "mat1", "mat2"]
    assert all(a.kind is ArgKind.TENSOR for a in sig.operands)
    beta = sig.attributes[0]
    assert (beta.name, beta.attr, beta.optional, beta.default, beta.kwarg_only) == \
        ("beta", AttrKind.SCALAR, False, 1, True)
    assert beta.ods_constraint == "Fxmlir_ScalarAttr"
    assert [(r.ods_name, r.kind) for r in sig.results] == [("result", ResultKind.TENSOR)]
    assert sig.is_pure


def test_native_dropout_optional_bool_and_two_results() -> None:
    sig = schema.op_signature(aten.native_dropout.default)
    train = _args(aten.native_dropout.default)["train"]
    assert (train.attr, train.optional, train.has_default) == (AttrKind.BOOL, True, False)
    assert train.ods_constraint == "OptionalAttr<BoolAttr>"
    assert [r.ods_name for r in sig.results] == ["result0", "result1"]
    assert not sig.is_pure  # nondeterministic_seeded: never merged or moved


def test_native_layer_norm_three_results() -> None:
    args = _args(aten.native_layer_norm.default)
    assert args["normalized_shape"].attr is AttrKind.INT_LIST
    assert args["weight"].kind is ArgKind.OPTIONAL_TENSOR
    assert args["eps"].attr is AttrKind.FLOAT
    sig = schema.op_signature(aten.native_layer_norm.default)
    assert [r.ods_name for r in sig.results] == ["result0", "result1", "result2"]


def test_convolution_int_lists_and_optional_bias() -> None:
    args = _args(aten.convolution.default)
    assert args["bias"].kind is ArgKind.OPTIONAL_TENSOR
    assert args["bias"].ods_constraint == "Fxmlir_OptionalTensor"
    assert args["stride"].ods_constraint == "DenseI64ArrayAttr"
    assert args["groups"].attr is AttrKind.INT  # SymInt
    assert args["transposed"].attr is AttrKind.BOOL


def test_sum_optional_int_list_and_dtype() -> None:
    args = _args(aten.sum.dim_IntList)
    assert args["dim"].ods_constraint == "OptionalAttr<DenseI64ArrayAttr>"
    assert not args["dim"].has_default
    assert args["dtype"].ods_constraint == "OptionalAttr<Fxmlir_DTypeAttr>"
    assert args["dtype"].default is None
    assert args["keepdim"].default is False


def test_tensor_lists() -> None:
    assert _args(aten.cat.default)["tensors"].kind is ArgKind.TENSOR_LIST
    assert _args(aten.cat.default)["dim"].default == 0
    assert _args(aten.index.Tensor)["indices"].kind is ArgKind.OPTIONAL_TENSOR_LIST
    sig = schema.op_signature(aten.split.Tensor)
    assert [r.kind for r in sig.results] == [ResultKind.TENSOR_LIST]


def test_number_result() -> None:
    sig = schema.op_signature(aten.sym_size.int)
    assert [r.kind for r in sig.results] == [ResultKind.SCALAR]


def test_enum_defaults_are_torch_objects() -> None:
    assert _args(aten.randperm.default)["dtype"].default is torch.int64
    args = _args(aten.contiguous.default)
    assert args["memory_format"].attr is AttrKind.MEMORY_FORMAT
    assert args["memory_format"].default is torch.contiguous_format


@pytest.mark.parametrize("op, reason", [
    (aten.add.out, "out= variant"),
    (aten.add_.Tensor, "mutates 'self'"),
    (aten._native_batch_norm_legit.default, "mutates 'running_mean'"),
    (aten.bernoulli.p, "argument 'generator'"),
    (aten._assert_async.default, "returns nothing"),
    (aten.qscheme.default, "result of type QScheme"),
])
def test_unsupported(op, reason: str) -> None:
    assert schema.op_signature(op) is None
    assert reason in schema.unsupported_reason(op)


@pytest.fixture(scope="module")
def renamed_op():
    lib = torch.library.Library("fxmlir_schema_test", "DEF")
    lib.define("renamed(Tensor operands, str name, int type, bool default) -> Tensor")
    lib.define("clash(Tensor self, int result) -> Tensor")
    yield torch.ops.fxmlir_schema_test
    del lib


def test_reserved_names_get_a_trailing_underscore(renamed_op) -> None:
    args = _args(renamed_op.renamed.default)
    assert {a.name: a.ods_name for a in args.values()} == {
        "operands": "operands_", "name": "name_", "type": "type_",
        "default": "default_"}
    args = _args(renamed_op.clash.default)
    assert args["result"].ods_name == "result_"
    assert [r.ods_name for r in schema.op_signature(renamed_op.clash.default).results] \
        == ["result"]


def test_typed_ops() -> None:
    ops = schema.typed_aten_ops()
    names = [schema.mlir_op_name(op) for op in ops]
    assert names == sorted(set(names))
    assert len({schema.ods_def_name(op) for op in ops}) == len(ops)
    for name in ("addmm", "linear", "native_layer_norm_backward", "sum.dim_IntList",
                 "_scaled_dot_product_flash_attention_for_cpu", "convolution_backward"):
        assert f"fxmlir.aten.{name}" in names
    assert all(schema.op_signature(op) is not None for op in ops)


def test_generated_op() -> None:
    text = gen.op_def(schema.op_signature(aten.index_put.default))
    assert text == (
        'def Aten_IndexPutOp : Aten_Op<"index_put", [Pure]> {\n'
        '  let summary = "aten::index_put(Tensor self, Tensor?[] indices, '
        'Tensor values, bool accumulate=False) -> Tensor";\n'
        "  let arguments = (ins\n"
        "    Fxmlir_Tensor:$self,\n"
        "    Fxmlir_OptionalTensorList:$indices,\n"
        "    Fxmlir_Tensor:$values,\n"
        "    BoolAttr:$accumulate\n"
        "  );\n"
        "  let results = (outs Fxmlir_Tensor:$result);\n"
        '  let assemblyFormat = "$self `,` `[` $indices `]` `,` $values attr-dict '
        '`:` functional-type(operands, results)";\n'
        "}\n")


def test_op_from_mlir_name() -> None:
    for op in (aten.addmm.default, aten.add.Tensor, aten.sum.dim_IntList):
        assert schema.op_from_mlir_name(schema.mlir_op_name(op)) is op
    assert schema.op_from_mlir_name("fxmlir.aten.no_such_op") is None
    assert schema.op_from_mlir_name("fxmlir.aten.add.no_such_overload") is None
    assert schema.op_from_mlir_name("func.call") is None


def _int_inputs(op) -> tuple[list, dict]:
    """Small int32 arguments for every tensor argument of `op`, schema
    defaults elsewhere (enough to reach the kernel's dtype check)."""
    x = torch.ones(2, 3, dtype=torch.int32)
    examples = {"normalized_shape": [3], "p": 0.5, "train": True, "dim": 1,
                "half_to_float": False, "input_dtype": torch.int32, "eps": 1e-5,
                "output_mask": [True, True, True]}
    args, kwargs = [], {}
    for a in op._schema.arguments:
        if "Tensor" in str(a.type):
            value = torch.ones(3, dtype=torch.int32) if a.name in ("weight", "bias") else \
                torch.ones(2, 1, dtype=torch.int32) if a.name in ("mean", "rstd") else x
        else:
            value = examples.get(a.name, a.default_value)
        if a.kwarg_only:
            kwargs[a.name] = value
        else:
            args.append(value)
    return args, kwargs


@pytest.mark.parametrize("qualified", sorted(schema.FLOATING_POINT_OPS))
def test_floating_point_ops_reject_integers_in_torch(qualified: str) -> None:
    op = schema.resolve(qualified)
    assert op is not None and schema.op_signature(op) is not None
    assert schema.VerifyRule.FLOATING_POINT_OPERANDS in schema.op_signature(op).verify_rules
    args, kwargs = _int_inputs(op)
    with pytest.raises(RuntimeError, match="not implemented for 'Int'|can't be cast"):
        op(*args, **kwargs)


def test_str_enums_are_what_torch_accepts() -> None:
    x = torch.randn(4)
    for value in schema.STR_ENUMS["approximate"]:
        aten.gelu(x, approximate=value)
    with pytest.raises(RuntimeError):
        aten.gelu(x, approximate="erf")
    for value in schema.STR_ENUMS["rounding_mode"]:
        aten.div.Tensor_mode(x, x, rounding_mode=value)
    with pytest.raises(RuntimeError):
        aten.div.Tensor_mode(x, x, rounding_mode="round")
    gelu = _args(aten.gelu.default)["approximate"]
    assert gelu.enum == "approximate"
    assert gelu.ods_constraint == "Fxmlir_ApproximateAttr"
    assert _args(aten.clone.default)["memory_format"].ods_constraint == \
        "OptionalAttr<Fxmlir_MemoryFormatAttr>"


def test_verify_rules_by_op_family() -> None:
    rules = {op: schema.op_signature(op).verify_rules
             for op in (aten.add.Tensor, aten.gelu.default, aten.mm.default,
                        aten.sum.dim_IntList)}
    assert rules[aten.add.Tensor] == (schema.VerifyRule.BROADCAST_SHAPES,)
    assert rules[aten.gelu.default] == (schema.VerifyRule.BROADCAST_SHAPES,
                                        schema.VerifyRule.FLOATING_POINT_OPERANDS)
    assert rules[aten.mm.default] == (schema.VerifyRule.HAND_WRITTEN,)
    assert rules[aten.sum.dim_IntList] == ()
    text = gen.op_def(schema.op_signature(aten.mm.default))
    assert "let hasVerifier = 1;" in text


def test_fused_ops_table_is_what_torch_and_the_dialect_register() -> None:
    import fxmlir.jit_ops  # noqa: F401  (loads mlir_jit's library)
    import fxmlir.ops  # noqa: F401  (loads the op library)
    from fxmlir import _C
    from fxmlir.fused_ops import FUSED_OPS

    registered = {name.split("::")[1] for name in torch._C._dispatch_get_all_op_names()
                  if name.startswith("fxmlir::")}
    assert registered == {op.name for op in FUSED_OPS}
    dialect = set(_C.Context().dialect_ops())
    for op in FUSED_OPS:
        overload = getattr(torch.ops.fxmlir, op.name).default
        assert overload._schema == op.function_schema, op.name
        if op.in_dialect:
            assert schema.mlir_op_name(overload) in dialect
            # The exporter reads the op back to the same torch overload.
            assert schema.op_from_mlir_name(f"fxmlir.{op.name}") is overload
        else:
            assert schema.mlir_op_name(overload) not in dialect
        for device in ("Meta", *op.devices):
            if device == "CUDA" and not torch.cuda.is_available():
                continue
            assert torch._C._dispatch_has_kernel_for_dispatch_key(
                f"fxmlir::{op.name}", device), (op.name, device)


def test_fused_op_definitions_follow_the_schema_rule() -> None:
    from fxmlir.fused_ops import ACTIVATIONS, by_name

    text = gen.fused_op_def(by_name()["fused_bias_add_mask_scale"])
    assert "def Fxmlir_FusedBiasAddMaskScaleOp : Fxmlir_Op<\"fused_bias_add_mask_scale\", [Pure]>" in text
    assert "Fxmlir_Tensor:$mask" in text and "F64Attr:$scale" in text
    assert '{"mask", getMask(), true}' in text  # bool, checked as i1
    act = gen.fused_op_def(by_name()["fused_bias_act"])
    names = ", ".join(f'"{a.name}"' for a in ACTIVATIONS)
    assert f'verifyStrEnum(*this, "activation", getActivation(), {{{names}}})' in act
    mask = gen.fused_op_def(by_name()["random_mask_like"])
    assert "[]>" in mask.splitlines()[0]  # nondeterministic: not Pure
    assert "OptionalAttr<BoolAttr>:$eager_random" in mask  # bool?: absent is None
    files = gen.registrations()
    schemas = files[Path("csrc/ops/FusedOpsRegistration.inc")]
    assert 'm.def("random_mask_like(Tensor like, float p, bool? eager_random=None) -> Tensor", ' \
           '{at::Tag::nondeterministic_seeded});' in schemas
    cuda = files[Path("csrc/ops/cuda/FusedOpsCUDARegistration.inc")]
    assert "TORCH_FN(fusedBiasAct<Device::CUDA>)" in cuda


def test_each_registration_in_one_unit_that_includes_it() -> None:
    # The table decides which unit registers what: every op's schema, Meta
    # kernel and device kernels appear in exactly one generated file, and
    # that file's unit includes it with no FXMLIR_REGISTER_* switches.
    from fxmlir.fused_ops import FUSED_OPS

    files = gen.registrations()
    seen: dict[str, int] = {}
    for path, text in files.items():
        for line in text.splitlines():
            if line.startswith("TORCH_LIBRARY_IMPL(fxmlir, "):
                part = line.split(", ")[1]
            elif line.startswith("TORCH_LIBRARY_FRAGMENT("):
                part = "schemas"
            elif line.startswith(("  m.def(", "  m.impl(")):
                name = line.split('"')[1].split("(")[0]
                seen[f"{part} {name}"] = seen.get(f"{part} {name}", 0) + 1
        stem = ROOT / path.parent / path.name.removesuffix("Registration.inc")
        unit = next(u for u in (stem.with_suffix(".cpp"), stem.with_suffix(".cu")) if u.exists())
        source = unit.read_text()
        assert f'#include "{path.name}"' in source, unit
        assert "FXMLIR_REGISTER" not in source, unit
    expected = {f"{part} {op.name}" for op in FUSED_OPS
                for part in ("schemas", "Meta", *op.devices)}
    assert seen == dict.fromkeys(expected, 1)


def test_unchanged_files_keep_their_time_stamps(tmp_path: Path) -> None:
    # Rewriting FusedOpsRegistration.inc as it was cost a 7-minute rebuild.
    assert gen.main(["--root", str(tmp_path)]) == 0
    target = tmp_path / "csrc/ops/FusedOpsRegistration.inc"
    os.utime(target, (1, 1))
    assert gen.main(["--root", str(tmp_path)]) == 0
    assert target.stat().st_mtime == 1
