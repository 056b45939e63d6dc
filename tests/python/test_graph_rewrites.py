"""Rewrites of the graphs around the round trip: sums into a dying addend
(fxmlir.inplace_sums), the joint graph's common subexpressions
(fxmlir.joint_cse) and mixed-dtype layer norms' statistics typed as the
CPU kernel makes them (fxmlir.layer_norm_stats)."""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

import fxmlir
from fxmlir.inplace_sums import sum_in_place
from fxmlir.joint_cse import eliminate_common_subexpressions
from fxmlir.layer_norm_stats import fix_statistics
from fxmlir.memory import step_peak

aten = torch.ops.aten


def _traced(fn, *args) -> torch.fx.GraphModule:
    return make_fx(fn, tracing_mode="fake")(*args)


def _in_place(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    sum_in_place(gm.graph)
    gm.recompile()
    return gm


def _adds(gm: torch.fx.GraphModule) -> list:
    return [n.target for n in gm.graph.nodes if n.target in (aten.add.Tensor, aten.add_.Tensor)]


def test_a_sum_writes_into_an_addend_only_the_sum_reads():
    def grads(a, b, c):
        return aten.mm(a, b) + aten.mm(b, c)  # both products die in the sum

    a, b, c = (torch.randn(4, 4) for _ in range(3))
    gm = _in_place(_traced(grads, a, b, c))
    assert _adds(gm) == [aten.add_.Tensor]
    torch.testing.assert_close(gm(a, b, c), grads(a, b, c))


def test_a_sum_leaves_inputs_views_broadcasts_and_read_addends_alone():
    def sums(x, y, row):
        p = aten.mm(x, y)
        return (x + y,  # graph inputs: the caller's memory
                aten.t(aten.mm(x, y)) + y,  # a view of a product
                aten.mm(x, y)[:1] + row,  # a broadcast row
                p + y, p * 2)  # p is read again after the sum

    x, y, row = torch.randn(4, 4), torch.randn(4, 4), torch.randn(4)
    gm = _in_place(_traced(sums, x, y, row))
    assert _adds(gm) == [aten.add.Tensor] * 4
    for got, want in zip(gm(x, y, row), sums(x, y, row)):
        torch.testing.assert_close(got, want)


def test_a_sum_leaves_an_unsafe_view_of_a_value_read_again_alone():
    """`_unsafe_view`'s schema says its result is new, yet it shares its
    input's memory: writing the sum into it would change the product that
    is read again (a LLaMA gate projection's, in SwiGLU's backward)."""
    def sums(x, y):
        p = aten.mm(x, y)
        return aten._unsafe_view(p, [16]) + aten.view(y, [16]), p * 2

    x, y = torch.randn(4, 4), torch.randn(4, 4)
    gm = _in_place(_traced(sums, x, y))
    assert _adds(gm) == [aten.add.Tensor]
    for got, want in zip(gm(x, y), sums(x, y)):
        torch.testing.assert_close(got, want)


def test_a_pointwise_region_writes_into_an_input_only_it_reads(tmp_path):
    """A tied weight's gradient sum with the LM head's bf16 gradient cast in,
    as GPT-2's backward makes it: the region's result takes the dying
    product's buffer (mlir_jit_into), as an unfused sum would (add_), and the
    call needs one buffer, not two (measured); a product read again keeps
    its own."""
    def tied(g, x, w):
        return g.float() + aten.mm(x, w)  # the product dies in the region

    def read_again(g, x, w):
        p = aten.mm(x, w)
        return g.float() + p, p * 2

    g, x, w = torch.randn(512, 512).bfloat16(), torch.randn(512, 64), torch.randn(64, 512)
    mib = 2**20  # a 512 x 512 float32 buffer
    for fn, into in ((tied, 1), (read_again, 0)):
        torch._dynamo.reset()
        dumps = tmp_path / fn.__name__
        compiled = torch.compile(fn, backend=fxmlir.backend(codegen=True, strict=True,
                                                            dump_dir=str(dumps)))
        with torch.no_grad():
            got = compiled(g, x, w)
            peak = step_peak(lambda: compiled(g, x, w))
        (code,) = dumps.glob("*/*/inference/fx_after.py")
        assert code.read_text().count("fxmlir.mlir_jit_into.default(") == into, fn.__name__
        want = fn(g, x, w)
        for a, b in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            torch.testing.assert_close(a, b)
        if fn is tied:
            assert peak.extra < 1.5 * mib, peak


def _calls(gm: torch.fx.GraphModule, target) -> int:
    return len(gm.graph.find_nodes(op="call_function", target=target))


def test_repeated_pure_calls_become_one_and_the_rest_stay():
    def joint(x, w):
        a = aten.mm(x, aten.t(w))
        b = aten.mm(x, aten.t(w))  # the same product
        noise = aten.rand_like(x), aten.rand_like(x)  # two draws
        out = aten.relu(a), aten.relu(a)  # returned: two tensors
        return aten.add(a, b), *noise, *out

    x, w = torch.randn(4, 4), torch.randn(4, 4)
    gm = _traced(joint, x, w)
    eliminate_common_subexpressions(gm.graph)
    gm.recompile()
    assert (_calls(gm, aten.mm.default), _calls(gm, aten.t.default)) == (1, 1)
    assert _calls(gm, aten.rand_like.default) == 2
    assert _calls(gm, aten.relu.default) == 2
    total, _, _, r1, r2 = gm(x, w)
    torch.testing.assert_close(total, 2 * x @ w.t())
    assert r1.data_ptr() != r2.data_ptr()


def test_a_graph_that_writes_in_place_keeps_its_repeats():
    def writes(x):
        a, b = aten.relu(x), aten.relu(x)
        a.add_(1)  # merged, b would see it
        return aten.sub(a, b)

    x = torch.randn(4)
    gm = _traced(writes, x)
    eliminate_common_subexpressions(gm.graph)
    gm.recompile()
    assert _calls(gm, aten.relu.default) == 2
    torch.testing.assert_close(gm(x), torch.ones(4))


def test_a_mixed_dtype_layer_norms_statistics_are_typed_as_the_cpu_kernel_makes_them():
    x = torch.randn(8, 16, dtype=torch.bfloat16)
    w, b = torch.randn(16), torch.randn(16)
    real = aten.native_layer_norm(x, [16], w, b, 1e-5)
    gm = _traced(lambda x, w, b: aten.native_layer_norm(x, [16], w, b, 1e-5), x, w, b)
    fix_statistics(gm)
    (norm,) = gm.graph.find_nodes(op="call_function", target=aten.native_layer_norm.default)
    assert [v.dtype for v in norm.meta["val"]] == [t.dtype for t in real]
    stats = [u for u in norm.users if u.target is operator.getitem and u.args[1] > 0]
    assert {u.meta["val"].dtype for u in stats} == {torch.float32}


def test_a_bf16_layer_norm_with_float32_weights_trains_compiled():
    """As BERT's masked-LM head under autocast: its statistics, saved for
    backward, reach the backward's JIT region in the dtype the region was
    compiled for (it fell back before)."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    h = torch.randn(64, 32, requires_grad=True)
    w, decoder = torch.randn(32, 32, requires_grad=True), torch.randn(96, 32, requires_grad=True)
    b, decoder_b = torch.randn(32, requires_grad=True), torch.randn(96, requires_grad=True)
    ln_w, ln_b = torch.randn(32, requires_grad=True), torch.randn(32, requires_grad=True)
    target = torch.randint(0, 96, (64,))

    def step(x, weight, bias, norm_weight, norm_bias, decoder, decoder_bias):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = F.layer_norm(F.gelu(F.linear(x, weight, bias)), (32,), norm_weight, norm_bias)
            logits = F.linear(y, decoder, decoder_bias)
            return F.cross_entropy(logits.view(-1, 96), target), logits

    compiled = torch.compile(step, backend=fxmlir.backend(strict=True))
    inputs = (h, w, b, ln_w, ln_b, decoder, decoder_b)
    got = torch.autograd.grad(compiled(*inputs)[0], inputs)
    want = torch.autograd.grad(step(*inputs)[0], inputs)
    for g, e in zip(got, want):
        torch.testing.assert_close(g, e, rtol=2e-2, atol=4e-2 * e.abs().max().item())
