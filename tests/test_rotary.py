"""posenc.lib.rotary: the RoPE theorem, the complex form, the two layouts, partial rotation, the decay bound."""

import doctest
import math

import numpy as np
import pytest
import torch

from posenc import frequencies
from posenc.lib import rotary
from posenc.lib.rotary import (
    apply_rotary,
    apply_rotary_complex,
    convert_projection,
    decay_bound,
    layout_permutation,
    rotary_angles,
    rotary_cos_sin,
    rotate,
    rotated_width,
)
from posenc.lib.rotation import rotary as chapter2_rotary
from posenc.lib.rotation import shift_operator


def test_docstring_examples():
    assert doctest.testmod(rotary).failed == 0


def rotation_matrix(pos: float, d: int, base: float = 10000.0) -> np.ndarray:
    """R_pos of RoFormer eq. (15): block-diagonal, [[cos, -sin], [sin, cos]] on pairs (2i, 2i + 1)."""
    matrix = np.zeros((d, d))
    for i, omega in enumerate(frequencies(d, base)):
        c, s = math.cos(pos * omega), math.sin(pos * omega)
        matrix[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, -s], [s, c]]
    return matrix


@pytest.mark.parametrize("d,base", [(2, 10000.0), (8, 10000.0), (16, 500000.0)])
def test_apply_rotary_is_the_block_diagonal_rotation(d, base):
    x = torch.randn(7, d, dtype=torch.float64)
    positions = torch.tensor([0, 1, 5, 33, 250, 4096, -3])
    turned = apply_rotary(x, positions, base)
    for row, pos in enumerate(positions.tolist()):
        np.testing.assert_allclose(turned[row].numpy(), rotation_matrix(pos, d, base) @ x[row].numpy(), atol=1e-12)


def test_chapter_2s_rotary_turns_the_other_way():
    x = torch.randn(5, 8, dtype=torch.float64)
    positions = torch.arange(5) * 7
    torch.testing.assert_close(chapter2_rotary(x, positions), apply_rotary(x, -positions))
    for row in range(5):     # chapter 2's T(t) is R_{-t} in RoFormer's sense
        np.testing.assert_allclose(shift_operator(7 * row, 8), rotation_matrix(-7 * row, 8), atol=1e-12)


def test_the_rope_theorem_logits_depend_on_the_offset_only():
    torch.manual_seed(0)
    d_model, d_head = 12, 8
    w_q, w_k = torch.randn(2, d_head, d_model, dtype=torch.float64)
    x_query, x_key = torch.randn(2, d_model, dtype=torch.float64)
    positions = torch.arange(60)
    q = apply_rotary((w_q @ x_query).expand(60, d_head), positions)        # the same token at every position
    k = apply_rotary((w_k @ x_key).expand(60, d_head), positions)
    logits = q @ k.T                                                       # [m, n]
    for offset in range(-59, 60):
        diagonal = torch.diagonal(logits, offset)
        expected = x_query @ w_q.T @ torch.from_numpy(rotation_matrix(offset, d_head)) @ w_k @ x_key
        torch.testing.assert_close(diagonal, expected.expand_as(diagonal))
    assert logits.std() > 0.1                                              # not trivially constant


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_complex_form_equals_the_real_one(dtype):
    x = torch.randn(2, 3, 40, 16, dtype=dtype)
    positions = torch.arange(40) * 3
    tolerance = {"atol": 1e-5, "rtol": 1e-5} if dtype == torch.float32 else {}
    torch.testing.assert_close(apply_rotary_complex(x, positions), apply_rotary(x, positions), **tolerance)
    assert apply_rotary_complex(x).dtype == dtype


def test_complex_form_refuses_half_precision():
    with pytest.raises(ValueError, match="float32"):
        apply_rotary_complex(torch.zeros(2, 4, dtype=torch.bfloat16))


def test_layout_permutation_matches_the_llama_converter():
    # Meta's pair (2p, 2p + 1) lands at Hugging Face's (p, p + d/2): new rows take old rows 0,2,4,6,1,3,5,7
    assert layout_permutation(8, "interleaved", "half").tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert layout_permutation(8, "half", "interleaved").tolist() == [0, 4, 1, 5, 2, 6, 3, 7]
    assert layout_permutation(8, "half", "half").tolist() == list(range(8))
    assert layout_permutation(8, fraction=0.5).tolist() == [0, 2, 1, 3, 4, 5, 6, 7]
    x = torch.randn(10)
    there = x[layout_permutation(10, "interleaved", "half")]
    torch.testing.assert_close(there[layout_permutation(10, "half", "interleaved")], x)


def test_a_turned_vector_in_one_layout_is_the_permuted_turned_vector_in_the_other():
    x = torch.randn(9, 12, dtype=torch.float64)
    perm = layout_permutation(12, "interleaved", "half")
    torch.testing.assert_close(apply_rotary(x, layout="interleaved")[:, perm], apply_rotary(x[:, perm], layout="half"))


@pytest.mark.parametrize("fraction", [1.0, 0.5, 0.25])
def test_converted_weights_give_identical_logits_and_unconverted_ones_do_not(fraction):
    torch.manual_seed(1)
    n_heads, d_head, d_model, n = 2, 16, 10, 30
    w_q, w_k = torch.randn(2, n_heads * d_head, d_model, dtype=torch.float64)
    x = torch.randn(n, d_model, dtype=torch.float64)

    def logits(w_q, w_k, layout):
        q = (x @ w_q.T).unflatten(-1, (n_heads, d_head)).transpose(0, 1)        # (heads, n, d_head)
        k = (x @ w_k.T).unflatten(-1, (n_heads, d_head)).transpose(0, 1)
        return apply_rotary(q, layout=layout, fraction=fraction) @ apply_rotary(k, layout=layout,
                                                                                 fraction=fraction).transpose(-1, -2)

    meta = logits(w_q, w_k, "interleaved")
    converted = [convert_projection(w, n_heads, "interleaved", "half", fraction) for w in (w_q, w_k)]
    torch.testing.assert_close(logits(*converted, "half"), meta)
    assert (logits(w_q, w_k, "half") - meta).abs().max() > 0.1                  # runs, but wrong
    back = [convert_projection(w, n_heads, "half", "interleaved", fraction) for w in converted]
    torch.testing.assert_close(back, [w_q, w_k])


def test_convert_projection_handles_biases_and_rejects_a_bad_split():
    bias = torch.arange(16.0)
    assert convert_projection(bias, 2).tolist() == [0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15]
    with pytest.raises(ValueError, match="heads"):
        convert_projection(torch.zeros(10, 4), 3)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_partial_rotation_turns_only_the_first_fraction(layout):
    x = torch.randn(5, 16, dtype=torch.float64)
    positions = torch.arange(5) + 3
    turned = apply_rotary(x, positions, layout=layout, fraction=0.25)
    torch.testing.assert_close(turned[:, 4:], x[:, 4:])
    torch.testing.assert_close(turned[:, :4], apply_rotary(x[:, :4], positions, layout=layout))   # omega over d_rot
    assert not torch.allclose(turned[:, :4], x[:, :4])
    torch.testing.assert_close(apply_rotary(x, positions, fraction=0.0), x)
    assert rotated_width(96, 0.25) == 24                                         # GPT-NeoX-20B's heads


@pytest.mark.parametrize("args,match", [((16, 0.1875), "odd"), ((16, 1.5), "fraction"), ((0, 1.0), "d_head")])
def test_rotated_width_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        rotated_width(*args)


def test_bad_layout_and_frequencies_are_clear_errors():
    with pytest.raises(ValueError, match="layout"):
        apply_rotary(torch.zeros(3, 4), layout="halves")
    with pytest.raises(ValueError, match="omega"):
        apply_rotary(torch.zeros(3, 4), omega=torch.ones(3))
    with pytest.raises(ValueError, match="coordinates"):
        rotate(torch.zeros(3, 4), torch.ones(3, 3), torch.zeros(3, 3))


def test_omega_override_and_fractional_positions():
    x = torch.randn(6, 8, dtype=torch.float64)
    omega = torch.tensor([1.0, 0.5, 0.0, 0.0], dtype=torch.float64)             # the slowest pairs switched off
    turned = apply_rotary(x, torch.arange(6) / 4, omega=omega)
    torch.testing.assert_close(turned[:, 4:], x[:, 4:])
    c, s = math.cos(0.25), math.sin(0.25)
    torch.testing.assert_close(turned[1, :2], torch.tensor([c * x[1, 0] - s * x[1, 1], s * x[1, 0] + c * x[1, 1]],
                                                          dtype=torch.float64))


def test_positions_broadcast_over_batch_and_heads():
    x = torch.randn(2, 3, 5, 8)
    torch.testing.assert_close(apply_rotary(x)[1, 2], apply_rotary(x[1, 2]))


def test_angles_in_low_precision_lose_whole_radians():
    positions = torch.arange(1000, 1024)                         # bfloat16 steps by 4 in [512, 1024)
    omega = torch.ones(1)
    exact = rotary_angles(positions, omega)
    assert exact.dtype == torch.float64 and torch.equal(exact[:, 0], positions.double())
    error = (rotary_angles(positions, omega, torch.bfloat16).double() - exact).abs()
    assert error.max() == 2.0                                  # every fourth number near 1000
    assert (rotary_angles(positions, omega, torch.float32).double() - exact).abs().max() == 0
    cos, sin = rotary_cos_sin(positions, omega, dtype=torch.bfloat16)
    assert cos.dtype == sin.dtype == torch.bfloat16
    assert (cos.double() - exact.cos()).abs().max() < 0.01     # computed exactly, then rounded


def test_decay_bound_starts_at_its_maximum_and_decays_on_average_not_monotonically():
    d = 64
    bound = decay_bound(np.arange(0, 256), d)
    assert bound[0] == pytest.approx((d / 2 + 1) / 2) == bound.max()
    np.testing.assert_allclose(decay_bound([20, 50, 100], d), [8.01, 5.73, 7.47], atol=0.01)
    assert bound[50] < bound[100]                                  # not monotone
    assert bound[:16].mean() > bound[16:64].mean() > bound[64:].mean()
    np.testing.assert_allclose(decay_bound([-37], d), decay_bound([37], d))
    np.testing.assert_allclose(decay_bound([5], d, mean=False), d / 2 * decay_bound([5], d))


def test_the_decay_bound_bounds_rope_logits():
    torch.manual_seed(2)
    d = 32
    offsets = np.arange(-200, 201)
    total = decay_bound(offsets, d, mean=False)
    for _ in range(20):
        q, k = torch.randn(2, d, dtype=torch.float64)
        h = torch.view_as_complex(q.reshape(-1, 2).contiguous()) * torch.view_as_complex(k.reshape(-1, 2).contiguous()).conj()
        steps = torch.cat([h, torch.zeros(1, dtype=h.dtype)]).diff().abs().max().item()   # max |h_{i+1} - h_i|
        queries = apply_rotary(q.expand(len(offsets), d), torch.zeros(len(offsets)))
        keys = apply_rotary(k.expand(len(offsets), d), torch.from_numpy(offsets))          # n - m = offset
        logits = (queries * keys).sum(-1).numpy()
        assert np.all(np.abs(logits) <= steps * total + 1e-9)


def test_decay_bound_needs_an_even_width():
    with pytest.raises(ValueError, match="even"):
        decay_bound([1], 7)


def test_quiz_bound_on_the_error_of_cos_and_sin_for_an_angle_off_by_one_radian():
    # book/quizzes/ch06.json, question 4: |cos(a + 1) - cos(a)| and |sin(a + 1) - sin(a)| reach 2 sin(1/2) = 0.96.
    import json

    from posenc.paths import QUIZZES

    angles = np.linspace(0, 2 * np.pi, 100_001)
    worst = max(np.abs(np.cos(angles + 1) - np.cos(angles)).max(), np.abs(np.sin(angles + 1) - np.sin(angles)).max())
    assert math.isclose(worst, 2 * math.sin(0.5), rel_tol=1e-9)
    feedback = json.loads((QUIZZES / "ch06.json").read_text())[3]["answers"][2]["feedback"]
    assert "2 sin(1/2)" in feedback and f"≈ {worst:.2f}" in feedback


def test_chapter_1_alt_text_states_the_computed_wavelengths():
    # Alt text cannot glue: the numbers that fig-bits-vs-sines' alt text states are computed here.
    import json

    import posenc
    from posenc.paths import ROOT

    notebook = json.loads((ROOT / "notebooks" / "01_binary_counters_to_sinusoids.ipynb").read_text())
    alt = next(cell["metadata"]["mystnb"]["image"]["alt"] for cell in notebook["cells"]
               if cell["metadata"].get("mystnb", {}).get("figure", {}).get("name") == "fig-bits-vs-sines")
    shown = posenc.wavelengths(16)[[0, 2, 4, 6]]                  # pairs 0, 2, 4 and 6 of a 16-wide encoding
    assert f"{shown[0]:.1f}, {shown[1]:.0f}, {shown[2]:.0f} and {shown[3]:.0f} positions" in alt
    assert np.allclose(shown[1:] / shown[:-1], 10) and "tenfold" in alt
    turns = 64 / shown                                              # over the 64 positions of the figure
    assert round(turns[0]) == 10 and round(turns[1]) == 1 and turns[3] < 0.02
    assert "pair 0 turns about ten times, pair 2 about once" in alt
