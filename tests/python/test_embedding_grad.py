"""An embedding's weight gradient in a reused CPU block
(fxmlir-reuse-embedding-grads and torch.ops.fxmlir.embedding_grad): ATen's
sums bit for bit, its block reused across steps (and given back by
fxmlir.memory.release_reused_blocks), in a compiled training step."""

from __future__ import annotations

import copy
import resource
from pathlib import Path

import pytest
import torch
from torch import nn

import fxmlir
from fxmlir.memory import release_reused_blocks

ops = torch.ops.fxmlir
aten = torch.ops.aten


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("padding_idx", [-1, 3])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("threads", [1, 2])
def test_the_op_is_atens_gradient_bit_for_bit(dtype, padding_idx, index_dtype, threads):
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(0)
        # Many repeats of few rows (each rounded sum in ATen's order), and
        # 3000 weights: more than one thread's share of rows.
        grad = torch.randn(4, 300, 64, dtype=dtype)
        indices = torch.randint(0, 12, (4, 300), dtype=index_dtype)
        indices[1, ::3] = 2999
        want = aten.embedding_dense_backward(grad, indices, 3000, padding_idx, False)
        got = ops.embedding_grad(grad, indices, 3000, padding_idx)
    finally:
        torch.set_num_threads(previous)
    assert got.dtype == want.dtype and got.shape == want.shape and got.is_contiguous()
    assert torch.equal(got, want)
    if padding_idx >= 0:
        assert not got[padding_idx].any()


def test_a_non_contiguous_gradient_and_no_indices():
    grad = torch.randn(64, 6).t()  # [6, 64], strided
    indices = torch.tensor([0, 5, 5, 1, 0, 5])
    want = aten.embedding_dense_backward(grad, indices, 8, -1, False)
    assert torch.equal(ops.embedding_grad(grad, indices, 8, -1), want)
    empty = ops.embedding_grad(torch.randn(0, 4), torch.zeros(0, dtype=torch.long), 5, -1)
    assert torch.equal(empty, torch.zeros(5, 4))


def test_meta_tensors_give_the_shape():
    grad = torch.empty(2, 7, 16, device="meta", dtype=torch.bfloat16)
    out = ops.embedding_grad(grad, torch.empty(2, 7, device="meta", dtype=torch.long), 100, -1)
    assert out.shape == (100, 16) and out.dtype == torch.bfloat16 and out.device.type == "meta"


@pytest.mark.parametrize("grad, indices, num_weights, message", [
    (torch.randn(2, 4), torch.tensor([0, 9]), 5, "index 9 at position 1 is out of range for 5"),
    (torch.randn(2, 4), torch.tensor([0, -2]), 5, "index -2 at position 1 is out of range"),
    (torch.randn(2, 4), torch.tensor([0.0, 1.0]), 5, "indices must be int64 or int32, got Float"),
    (torch.randn(2, 4), torch.tensor([0, 1, 2]), 5, "must have grad's leading dims"),
    (torch.ones(2, 4, dtype=torch.long), torch.tensor([0, 1]), 5, "grad must be a floating-point"),
    (torch.randn(2, 4), torch.tensor([0, 1]), -1, "num_weights must be at least 0, got -1"),
], ids=["index-too-large", "negative-index", "float-indices", "shape", "integer-grad",
        "negative-num-weights"])
def test_bad_input_is_an_error_naming_the_problem(grad, indices, num_weights, message):
    with pytest.raises(RuntimeError, match=f"embedding_grad: .*{message}"):
        ops.embedding_grad(grad, indices, num_weights, -1)


def test_a_large_gradient_reuses_a_freed_block_and_never_a_live_one():
    # [16384, 1024] float32: 64 MiB, above ReusedBlocks' 32 MiB floor.
    grad = torch.randn(8, 1024)
    indices = torch.tensor([0, 7, 7, 16383, 2, 0, 9, 7])
    want = aten.embedding_dense_backward(grad, indices, 16384, -1, False)
    first = ops.embedding_grad(grad, indices, 16384, -1)
    first.fill_(5.0)  # the next result must be zeroed, not this
    live = ops.embedding_grad(grad, indices, 16384, -1)
    assert live.data_ptr() != first.data_ptr()
    assert torch.equal(live, want)
    freed = first.data_ptr()
    del first
    # 16384 faults of 4 KiB pages for a new block.
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    again = ops.embedding_grad(grad, indices, 16384, -1)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    assert again.data_ptr() == freed
    assert faults < 2048, faults
    assert torch.equal(again, want)


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="needs Linux's /proc")
def test_releasing_the_kept_blocks_gives_their_memory_back():
    grad = torch.randn(8, 1024)
    indices = torch.tensor([0, 7, 7, 16383, 2, 0, 9, 7])
    want = aten.embedding_dense_backward(grad, indices, 16384, -1, False)
    del_me = ops.embedding_grad(grad, indices, 16384, -1)
    live = ops.embedding_grad(grad, indices, 16384, -1)
    del del_me  # its 64 MiB block is kept, resident (zeroed when made)
    resident = _resident_bytes()
    freed = release_reused_blocks()
    assert freed >= 64 << 20  # (and whatever other tests left)
    assert resident - _resident_bytes() >= 60 << 20
    assert release_reused_blocks() == 0
    assert torch.equal(live, want)  # a live result is not touched
    del live
    assert release_reused_blocks() == 64 << 20
    assert torch.equal(ops.embedding_grad(grad, indices, 16384, -1), want)


class _TinyLM(nn.Module):
    """An embedding (a padding row), a layer and a tied head, as small
    language models are built."""

    def __init__(self, vocab: int = 300, hidden: int = 32, padding_idx: int | None = 1):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden, padding_idx=padding_idx)
        self.position = nn.Embedding(64, hidden)
        self.layer = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1], device=ids.device))
        logits = self.head(torch.tanh(self.layer(x)))
        return nn.functional.cross_entropy(logits.float().flatten(0, 1), ids.flatten())


def _embedding_calls(run) -> dict[str, int]:
    with torch.profiler.profile() as profile:
        run()
    names = ("fxmlir::embedding_grad", "aten::embedding_dense_backward")
    return {e.key: e.count for e in profile.key_averages() if e.key in names}


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="CUDA is not available"))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("autocast", [False, True], ids=["f32", "bf16-autocast"])
def test_a_compiled_training_step_computes_embedding_gradients_like_eager(device, autocast):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _TinyLM().to(device)
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, backend=fxmlir.backend(strict=True))
    ids = torch.randint(0, 300, (2, 24), device=device)
    ids[0, :4] = 1  # padding

    def step(net) -> torch.Tensor:
        for p in net.parameters():
            p.grad = None
        with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
            loss = net(ids)
        loss.backward()
        return loss.detach()

    for _ in range(2):  # the second step takes the first's freed blocks
        got, want = step(compiled), step(eager)
        tolerance = dict(rtol=1.6e-2, atol=1e-2) if autocast else dict(rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(got, want, **tolerance)
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, **tolerance, msg=name)
    assert not model.embed.weight.grad[1].any()  # the padding row
    # On CPU both embeddings' gradients are the fused op's, none ATen's; CUDA's
    # caching allocator reuses blocks already: ATen's stay.
    fused = {"fxmlir::embedding_grad": 2} if device == "cpu" else {
        "aten::embedding_dense_backward": 2}
    assert _embedding_calls(lambda: step(compiled)) == fused


def test_a_loop_whose_length_changes_every_step_keeps_the_op_and_eager_numerics():
    # Dynamic shapes (the sequence length symbolic), an eval step under
    # no_grad between training steps.
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _TinyLM()
    eager = copy.deepcopy(model)
    compiled = torch.compile(model, dynamic=True, backend=fxmlir.backend(strict=True))
    compiled(torch.randint(0, 300, (2, 6))).backward()  # compiled once, lengths symbolic
    for length in (9, 5, 12, 7):
        ids = torch.randint(0, 300, (2, length))
        for net in (model, eager):
            for p in net.parameters():
                p.grad = None
        calls = _embedding_calls(lambda: compiled(ids).backward())
        eager(ids).backward()
        assert calls == {"fxmlir::embedding_grad": 2}, length
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-6, msg=name)
        with torch.no_grad():
            torch.testing.assert_close(compiled(ids[:1]), eager(ids[:1]))


def test_the_pass_can_be_turned_off():
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = _TinyLM(padding_idx=None)
    compiled = torch.compile(model, backend=fxmlir.backend(
        strict=True, passes="-fxmlir-reuse-embedding-grads"))
    ids = torch.randint(0, 300, (2, 8))
    compiled(ids).backward()
    assert _embedding_calls(lambda: compiled(ids).backward()) == {
        "aten::embedding_dense_backward": 2}
