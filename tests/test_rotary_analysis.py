"""posenc.lib.rotary_analysis: the halves table, turning pairs, precision and pair ablation."""

import math

import numpy as np
import pytest
import torch

from posenc import encoding_at, frequencies
from posenc.lib import rotary_analysis as ra
from posenc.lib.models import TinyTransformer
from posenc.lib.rotary import apply_rotary, layout_permutation
from posenc.lib.tasks import ShiftedCopy


def test_halves_frequencies_run_exactly_from_one_to_one_over_base():
    omega = ra.halves_frequencies(64, 10000.0)
    assert omega[0] == 1 and math.isclose(omega[-1], 1e-4, rel_tol=1e-12)
    assert np.allclose(np.diff(np.log(omega)), -math.log(10000.0) / 31)
    assert ra.halves_frequencies(2).tolist() == [1.0]
    for bad in (3, 0, True, 4.0):
        with pytest.raises(ValueError):
            ra.halves_frequencies(bad)


def test_halves_table_is_the_paper_table_permuted_when_the_grids_agree():
    positions = np.arange(-5, 40)
    paper = encoding_at(positions, 16)
    halves = ra.sinusoidal_halves(positions, 16, omega=frequencies(16))
    assert np.array_equal(paper[:, layout_permutation(16).numpy()], halves)
    t2t = ra.sinusoidal_halves(positions, 16)
    assert np.allclose(t2t[:, :8], np.sin(positions[:, None] * ra.halves_frequencies(16)))
    assert np.allclose(t2t[:, 8:], np.cos(positions[:, None] * ra.halves_frequencies(16)))


def test_turning_pairs_counts_full_turns_by_hand():
    # d = 4, base 10000: theta = 1 and 0.01; a full turn takes 2 pi = 6.28 and 628.3 positions.
    assert [ra.turning_pairs(c, 4) for c in (6, 7, 628, 629)] == [0, 1, 1, 2]
    assert ra.turning_pairs(4096, 128, 5e5) < ra.turning_pairs(4096, 128, 1e4)


def test_angle_error_by_format():
    positions = np.arange(0, 3000)
    assert ra.angle_error(positions, 16, dtype=torch.float64).max() == 0
    bf16, f16, f32 = (ra.angle_error(positions, 64, dtype=d) for d in (torch.bfloat16, torch.float16, torch.float32))
    assert f32.max() < 1e-3 < f16.max() < bf16.max()
    assert ra.angle_error([0], 64).item() == 0                       # position 0: the angle is exactly 0
    assert np.isinf(ra.angle_error([70_000], 64, dtype=torch.float16)).all()
    # bfloat16 holds every integer up to 256, and theta_0 = 1 exactly: pair 0 alone is exact there
    assert ra.angle_error(np.arange(257), 2).max() == 0 and ra.angle_error([257], 2).item() == 1


def test_rotation_error_counts_the_turn_not_the_storage():
    x = torch.nn.functional.normalize(torch.randn(8, 32, dtype=torch.float64), dim=-1)
    positions = np.array([1, 100, 4096])
    assert ra.rotation_error(x, positions, dtype=torch.float64).max() < 1e-14
    low = ra.rotation_error(x, positions, dtype=torch.bfloat16)
    careful = ra.rotation_error(x, positions, dtype=torch.bfloat16, angle_dtype=torch.float32)
    assert careful.max() < 0.02 and low[-1] > 0.2 and low.shape == (3,)


def test_pair_coordinates_in_both_layouts():
    assert ra.pair_coordinates(8, [0, 3]).tolist() == [0, 1, 6, 7]
    assert ra.pair_coordinates(8, [0, 3], "half").tolist() == [0, 4, 3, 7]
    assert ra.pair_coordinates(16, [1], "half", fraction=0.5).tolist() == [1, 5]
    for bad in ([4], [-1]):
        with pytest.raises(ValueError):
            ra.pair_coordinates(8, bad)
    with pytest.raises(ValueError):
        ra.pair_coordinates(8, [0], "sideways")


def _rope_model(layout="interleaved", seed=0):
    torch.manual_seed(seed)
    return TinyTransformer(16, 32, 2, 2, position="rope", causal=True,
                           position_options={"layout": layout}).eval()


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_ablated_pairs_add_nothing_to_the_logits(layout):
    model = _rope_model(layout)
    tokens = torch.randint(0, 16, (3, 12))
    pairs = [1, 6]
    attention, x, context, _ = model.attention_input(tokens, 0)          # the first layer's input is shared
    q, k, _ = attention.project(x, context)
    keep = torch.ones(16)
    keep[ra.pair_coordinates(16, pairs, layout)] = 0
    by_hand = (q * keep) @ (k * keep).transpose(-1, -2) / math.sqrt(16)
    by_hand = by_hand + torch.triu(torch.full((12, 12), float("-inf")), 1)
    ablated = ra.ablated_copy(model, pairs)
    assert torch.allclose(ablated.attention_logits(tokens, 0), by_hand, atol=1e-5)
    assert torch.allclose(ra.ablated_copy(model, [])(tokens), model(tokens))
    assert type(model.position).__name__ == "RotaryPosition"             # the original is left alone


def test_every_pair_ablated_gives_uniform_attention():
    model = _rope_model()
    weights = ra.ablated_copy(model, range(8)).attention_weights(torch.randint(0, 16, (2, 6)))
    assert torch.allclose(weights[0, 0, 5], torch.full((6,), 1 / 6))


def test_unrotated_pairs_lose_position_but_keep_content():
    model = _rope_model()
    frozen = ra.unrotated_copy(model, range(8))
    torch.manual_seed(0)
    nope = TinyTransformer(16, 32, 2, 2, position="none", causal=True).eval()
    nope.load_state_dict(model.state_dict())
    tokens = torch.randint(0, 16, (2, 10))
    assert torch.allclose(frozen(tokens), nope(tokens), atol=1e-6)
    assert not torch.allclose(model(tokens), nope(tokens), atol=1e-3)
    assert model.position.omega.min() > 0                                  # the original still turns
    with pytest.raises(ValueError):
        ra.unrotated_copy(model, [8])
    with pytest.raises(ValueError, match="rotary"):
        ra.unrotated_copy(nope, [0])


def test_pair_norms_are_the_lengths_of_the_pairs():
    model = _rope_model("half")
    tokens = torch.randint(0, 16, (4, 9))
    norms = ra.pair_norms(model, tokens, layer=0)
    attention, x, context, _ = model.attention_input(tokens, 0)
    q, k, _ = attention.project(x, context)
    pair_2 = torch.stack([q[..., 2], q[..., 10]], dim=-1).norm(dim=-1).mean(dim=(0, 2))
    assert norms["query"].shape == norms["key"].shape == (2, 8)
    assert np.allclose(norms["query"][:, 2], pair_2.detach().numpy(), atol=1e-6)


def test_mean_loss_is_the_cross_entropy_on_a_fixed_batch():
    model = _rope_model()
    task = ShiftedCopy()
    tokens, targets = task.batch(32, 10, torch.Generator().manual_seed(5))
    with torch.no_grad():
        expected = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(),
                                                     ignore_index=-100)
    assert math.isclose(ra.mean_loss(model, task, 10, 32, seed=5), expected.item(), rel_tol=1e-6)


def test_apply_rotary_partial_leaves_the_rest():                           # what chapter 6 shows
    x = torch.randn(5, 96, dtype=torch.float64)
    turned = apply_rotary(x, torch.arange(5) * 100, fraction=0.25)
    assert torch.equal(turned[:, 24:], x[:, 24:])


def test_no_column_permutation_maps_the_paper_table_onto_tensor2tensors():
    # book/notation.md: a permutation maps one layout onto the other only when both use the same frequencies.
    positions = np.arange(64)
    paper, t2t = encoding_at(positions, 16), ra.sinusoidal_halves(positions, 16)
    unmatched = [c for c in range(16) if not any(np.allclose(t2t[:, c], paper[:, p]) for p in range(16))]
    assert len(unmatched) == 14          # all but the two columns of pair 0, whose frequency 1 both share
