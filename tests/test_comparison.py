"""posenc.lib.comparison: the lens (plain_and_method_logits) and the measured costs."""

import time

import pytest
import torch

from posenc.lib import comparison as cmp
from posenc.lib.attention import METHODS
from posenc.lib.relative import alibi_slopes, relative_positions
from tests.test_models import one_thread  # noqa: F401  (autouse: tiny models run fastest on one thread)


def model(method, causal=False, **kwargs):
    return cmp.tiny_model(method, max_len=64, causal=causal, **kwargs).eval()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("causal", [False, True])
def test_the_two_terms_add_up_to_the_logits(method, causal):
    net = model(method, causal)
    tokens = torch.randint(0, 16, (2, 12))
    plain, term = cmp.plain_and_method_logits(net, tokens, layer=1)
    logits = net.attention_logits(tokens, layer=1)
    finite = torch.isfinite(logits)
    torch.testing.assert_close((plain + term)[finite], logits[finite])
    assert torch.isfinite(term).all() and (term[~finite] == 0).all()
    if method in ("none", "sinusoidal", "learned"):
        assert (term == 0).all()                      # the attention adds nothing: position is inside x
    else:
        assert term.abs().max() > 0


def test_alibis_term_is_its_bias():
    n = 10
    _, term = cmp.plain_and_method_logits(model("alibi"), torch.randint(0, 16, (1, n)))
    expected = -alibi_slopes(2)[:, None, None].float() * relative_positions(n, n).abs()
    torch.testing.assert_close(term[0], expected)


def test_saved_tensor_bytes_counts_each_storage_once():
    x = torch.randn(100, requires_grad=True)
    assert cmp.saved_tensor_bytes(lambda: (x * x).sum()) == 100 * 4      # x saved twice, one storage
    assert cmp.saved_tensor_bytes(lambda: x.exp().sum()) == 100 * 4      # exp saves its result
    with torch.no_grad():
        assert cmp.saved_tensor_bytes(lambda: x.exp().sum()) == 0


def test_the_timed_forward_pass_runs_without_gradients_and_the_step_with_them():
    """Chapter 5's cost table times "a forward pass without gradients": no tensor of it needs one, T5's
    learned bias included, while the training step builds the graph."""
    t5 = cmp.tiny_model("t5", max_len=16).train()
    seen = []
    t5.register_forward_hook(lambda module, args, out: seen.append((torch.is_grad_enabled(), out.requires_grad)))
    tokens = torch.randint(0, 16, (2, 16), generator=torch.Generator().manual_seed(0))
    assert cmp.forward_seconds(t5, tokens) > 0 and seen.pop() == (False, False)
    assert cmp.training_step_seconds(t5, tokens) > 0 and seen.pop() == (True, True)
    assert t5.position.relative_attention_bias.weight.grad is not None


def test_cpu_seconds_leaves_out_time_spent_waiting():
    assert cmp.cpu_seconds(time.sleep, 0.05) < 0.02                    # asleep: the wall clock runs, the CPU not
    assert cmp.cpu_seconds(sum, range(200_000)) > 0


def test_method_costs_time_on_one_thread_and_restore_the_count(monkeypatch):
    seen, original = [], cmp.forward_seconds
    monkeypatch.setattr(cmp, "forward_seconds",
                        lambda model, tokens: seen.append(torch.get_num_threads()) or original(model, tokens))
    torch.set_num_threads(2)
    cmp.method_costs(methods=("sinusoidal",), lengths=(8,), batch_size=2, rounds=1)
    assert seen and set(seen) == {1} and torch.get_num_threads() == 2


def test_method_costs_measure_what_the_methods_keep():
    rows = cmp.method_costs(methods=("sinusoidal", "learned", "alibi", "t5", "shaw"), lengths=(8, 16),
                            batch_size=2, rounds=1)
    by = {(r["method"], r["length"]): r for r in rows}
    heads = 2
    for n in (8, 16):
        assert by[("sinusoidal", n)]["extra_bytes"] == by[("learned", n)]["extra_bytes"] == 0
        assert by[("alibi", n)]["extra_bytes"] == heads * n * n * 4           # its float mask, kept for backward
        assert by[("shaw", n)]["extra_bytes"] > by[("t5", n)]["extra_bytes"] > by[("alibi", n)]["extra_bytes"]
        assert all(by[(m, n)][key] > 0 for m in ("alibi", "t5", "shaw") for key in ("forward_seconds", "step_seconds"))
        assert by[("sinusoidal", n)]["forward_ratio"] == by[("sinusoidal", n)]["step_ratio"] == 1
    assert by[("learned", 8)]["parameters"] == 16 * 32      # max_len = the longest length measured and by[("t5", 8)]["parameters"] == 32 * heads
    assert by[("alibi", 8)]["parameters"] == by[("sinusoidal", 8)]["parameters"] == 0
    with pytest.raises(ValueError, match="unknown methods"):
        cmp.method_costs(methods=("xpos",))
