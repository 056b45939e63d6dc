"""fxmlir._C: the core API from Python (parse, print, verify, transform)."""

import json

import pytest

from fxmlir import _C
from fxmlir.explain import in_user_words

BIAS_GELU = """
func.func @forward(%x: tensor<2x4xf32, #fxmlir.device<"cpu">>,
                   %b: tensor<4xf32, #fxmlir.device<"cpu">>)
    -> tensor<2x4xf32, #fxmlir.device<"cpu">> {
  %0 = fxmlir.fused_bias_act %x, %b {activation = "gelu", axis = 1 : i64}
      : (tensor<2x4xf32, #fxmlir.device<"cpu">>, tensor<4xf32, #fxmlir.device<"cpu">>)
      -> tensor<2x4xf32, #fxmlir.device<"cpu">>
  return %0 : tensor<2x4xf32, #fxmlir.device<"cpu">>
}
"""


@pytest.fixture
def context() -> _C.Context:
    return _C.Context()


def test_dialect_registers_generated_and_hand_written_ops(context):
    ops = context.dialect_ops()
    assert "fxmlir.fused_bias_act" in ops
    assert "fxmlir.aten.gelu" in ops
    assert context.is_registered_op("fxmlir.call")
    assert not context.is_registered_op("fxmlir.no_such_op")


def test_print_reparses_to_the_same_text(context):
    module = context.parse(BIAS_GELU)
    text = str(module)
    assert "fxmlir.fused_bias_act" in text
    assert str(context.parse(text)) == text
    generic = module.print(generic=True)
    assert '"fxmlir.fused_bias_act"' in generic
    assert str(context.parse(generic)) == text


def test_malformed_input_is_a_located_error(context):
    with pytest.raises(_C.Error, match=r"bad\.mlir:3:\d+: .*expected"):
        context.parse("func.func @f() {\n  return\n  %0 = \n}", "bad.mlir")


def test_verifier_error_names_the_problem(context):
    bad = BIAS_GELU.replace('"gelu"', '"fast"')
    with pytest.raises(ValueError, match='activation must be "none", "gelu", "gelu_tanh"'):
        context.parse(bad)


def test_pipeline_runs_and_rejects_unknown_pass(context):
    module = context.parse(BIAS_GELU)
    module.run_pipeline("canonicalize,cse")
    assert module.op_counts() == {"fxmlir.fused_bias_act": 1,
                                  "func.return": 1}
    with pytest.raises(_C.Error, match="no-such-pass"):
        module.run_pipeline("no-such-pass")


def test_json_export_describes_the_graph(context):
    graph = json.loads(context.parse(BIAS_GELU).to_json())
    (func,) = graph["functions"]
    assert func["name"] == "forward"
    assert [a["type"]["shape"] for a in func["arguments"]] == [[2, 4], [4]]
    (op,) = func["ops"]
    assert op["name"] == "fxmlir.fused_bias_act"
    assert op["attributes"]["axis"] == {"int": 1}
    assert op["attributes"]["activation"] == {"str": "gelu"}
    assert op["results"][0]["type"]["device"] == "cpu"
    assert func["returns"] == [op["results"][0]["id"]]


def test_explain_reports_nothing_for_a_fused_module(context):
    assert context.parse(BIAS_GELU).explain_fusions("fxmlir-forward") == []


def test_explain_names_the_pattern_and_the_failed_check(context):
    # The bias_add feeds the gelu and the return: fusing would compute it twice.
    text = """
func.func @forward(%x: tensor<2x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %s = fxmlir.bias_add %x, %b {axis = 1 : i64}
      : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("add")
  %g = fxmlir.aten.gelu %s {approximate = "none"} : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("gelu")
  return %g, %s : tensor<2x4xf32>, tensor<2x4xf32>
}
"""
    (site,) = context.parse(text).explain_fusions("fxmlir-fuse-bias-add-activation")
    assert (site.pass_name, site.op, site.location) == (
        "fxmlir-fuse-bias-add-activation", "fxmlir.aten.gelu", "gelu")
    assert site.pattern == "FuseBiasAddGeluPattern"
    assert "'has one use'" in site.reason and site.others == []
    assert in_user_words(site.op, site.reason, site.reason_op) == \
        "gelu's input is used elsewhere too: fusing would compute it twice"


def test_explain_says_why_in_pytorch_words(context):
    # A linear layer without bias feeds the silu: DRR says "castedOp1 is not
    # BiasAddOp type", which names its matcher, not the user's ops.
    text = """
func.func @forward(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %m = fxmlir.aten.mm %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32> loc("mm")
  %s = fxmlir.aten.silu %m : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("silu")
  return %s : tensor<2x4xf32>
}
"""
    (site,) = context.parse(text).explain_fusions("fxmlir-fuse-bias-add-activation")
    assert (site.location, site.reason_location, site.reason_op) == ("silu", "mm", "fxmlir.aten.mm")
    assert in_user_words(site.op, site.reason, site.reason_op) == \
        "silu's input comes from mm, not bias_add: nothing to fuse"
    # A check a C++ pattern words itself stays as it is.
    assert in_user_words("fxmlir.aten.dropout", "not a training dropout", "") == \
        "not a training dropout"


_CPU = '#fxmlir.device<"cpu">'


def test_explain_leaves_out_what_a_later_pass_fused_and_other_devices_patterns(context):
    # On the CPU the GEMM epilogue (a CUDA pattern) does not take the GELU,
    # the bias fusion after it does; the bias gradient's column sum is no
    # site either (its fusion is CUDA's). Explain used to list both.
    text = f"""
func.func @forward(%x: tensor<2x4xf32, {_CPU}>, %b: tensor<4xf32, {_CPU}>)
    -> (tensor<2x4xf32, {_CPU}>, tensor<1x4xf32, {_CPU}>) {{
  %s = fxmlir.bias_add %x, %b {{axis = 1 : i64}}
      : (tensor<2x4xf32, {_CPU}>, tensor<4xf32, {_CPU}>) -> tensor<2x4xf32, {_CPU}> loc("add")
  %g = fxmlir.aten.gelu %s {{approximate = "tanh"}}
      : (tensor<2x4xf32, {_CPU}>) -> tensor<2x4xf32, {_CPU}> loc("gelu")
  %c = fxmlir.aten.sum.dim_IntList %x {{dim = array<i64: 0>, keepdim = true}}
      : (tensor<2x4xf32, {_CPU}>) -> tensor<1x4xf32, {_CPU}> loc("colsum")
  return %g, %c : tensor<2x4xf32, {_CPU}>, tensor<1x4xf32, {_CPU}>
}}
"""
    module = context.parse(text)
    assert module.explain_fusions("fxmlir-forward") == []
    module.run_pipeline("fxmlir-forward")
    assert "fxmlir.fused_bias_act" in str(module)


def test_explain_says_why_ops_stayed_out_of_jit_regions(context):
    # A tanh alone before an op the JIT cannot lower (erfinv), which splits
    # it from the tanh and mul after it; those two form a region: no site.
    t = f"tensor<8x64xf32, {_CPU}>"
    text = f"""
func.func @forward(%a: {t}, %b: {t}) -> {t} {{
  %0 = fxmlir.aten.tanh %a : ({t}) -> {t} loc("tanh")
  %1 = "fxmlir.call"(%0) {{target = "aten::erfinv", args = [#fxmlir.operand<0>], kwargs = {{}}}}
      : ({t}) -> {t} loc("erfinv")
  %2 = fxmlir.aten.tanh %1 : ({t}) -> {t} loc("tanh_1")
  %3 = fxmlir.aten.mul.Tensor %2, %b : ({t}, {t}) -> {t} loc("mul")
  return %3 : {t}
}}
"""
    sites = [s for s in context.parse(text).explain_stage("forward")
             if s.pass_name == "fxmlir-outline-jit-regions"]
    assert [(s.location, s.pattern) for s in sites] == [
        ("tanh", "JIT region"), ("erfinv", "JIT region")]
    assert sites[0].reason.startswith("a lone op")
    assert sites[1].reason.startswith("not lowerable by the JIT")
    # Without JIT regions in the stage there is no verdict.
    without = context.parse(text).explain_stage("forward",
                                                remove=["fxmlir-outline-jit-regions"])
    assert without and all(s.pattern != "JIT region" for s in without)


def test_explain_names_patterns_whole(context):
    # An eval-mode dropout after a bias + GELU: the dropout fusion, a
    # template, is named with its argument (it was cut to "DropoutOp>").
    text = f"""
func.func @forward(%x: tensor<2x4xf32, {_CPU}>, %b: tensor<4xf32, {_CPU}>)
    -> tensor<2x4xf32, {_CPU}> {{
  %s = fxmlir.fused_bias_act %x, %b {{activation = "gelu", axis = 1 : i64}}
      : (tensor<2x4xf32, {_CPU}>, tensor<4xf32, {_CPU}>) -> tensor<2x4xf32, {_CPU}> loc("gelu")
  %d = fxmlir.aten.dropout %s {{p = 0.1 : f64, train = false}}
      : (tensor<2x4xf32, {_CPU}>) -> tensor<2x4xf32, {_CPU}> loc("dropout")
  return %d : tensor<2x4xf32, {_CPU}>
}}
"""
    (site,) = context.parse(text).explain_fusions("fxmlir-fuse-mask-draws")
    assert site.location == "dropout"
    assert site.pattern == "FuseActivationDropout<DropoutOp>"
    assert site.reason == "not a training dropout"


@pytest.mark.parametrize("args, message", [
    ((None,), "parse\\(\\): text must be str, not NoneType"),
    ((123,), "parse\\(\\): text must be str, not int"),
    ((b"func.func @f() { return }",), "text must be str, not bytes"),
    ((BIAS_GELU, None), "parse\\(\\): name must be str, not NoneType"),
])
def test_wrong_argument_types_are_type_errors(context, args, message):
    with pytest.raises(TypeError, match=message):
        context.parse(*args)


def test_wrong_argument_types_elsewhere_are_type_errors(context):
    module = context.parse(BIAS_GELU)
    with pytest.raises(TypeError, match="pipeline must be str, not list"):
        module.run_pipeline(["cse"])
    with pytest.raises(TypeError, match="name must be str, not int"):
        context.is_registered_op(1)
    with pytest.raises(TypeError):
        _C.Module()  # only parse() makes modules


def test_text_utf8_cannot_hold_is_a_value_error(context):
    with pytest.raises(UnicodeEncodeError):
        context.parse("func.func @f\ud800() { return }")


def test_modules_outlive_their_context():
    module = _C.Context().parse(BIAS_GELU)
    copy = module.clone()
    import gc
    gc.collect()
    assert "fused_bias_act" in str(module)
    copy.run_pipeline("canonicalize")


@pytest.mark.parametrize("text", [
    "func.func @f() attributes {a = " + "[" * 7000 + "]" * 7000 + "} { return }",
    "func.func @f(%x: " + "tuple<" * 20000 + "i32" + ">" * 20000 + ") { return }",
    "func.func @f() {" + '"fxmlir.call"() ({' * 2500
    + '}) {target = "t", args = [], kwargs = {}} : () -> ()' * 2500 + " return }",
])
def test_deep_nesting_is_refused_not_a_crash(context, text):
    with pytest.raises(_C.Error, match=f"more than {_C.MAX_NESTING_DEPTH} levels deep"):
        context.parse(text, "deep.mlir")


def test_integers_wider_than_64_bits_do_not_export(context):
    module = context.parse('func.func @f() { "fxmlir.call"() {target = "t", '
                           'args = [18446744073709551621 : i128], kwargs = {}} '
                           ': () -> ()\n return }')
    with pytest.raises(_C.Error, match="18446744073709551621 : i128 does not fit in 64 bits"):
        module.to_json()
