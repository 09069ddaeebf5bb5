"""posenc.lib.extension: position interpolation, NTK-aware base, YaRN's ramp, frequencies and temperature."""

import math

import pytest
import torch

from posenc.lib.extension import (
    extension_settings,
    interpolated_positions,
    interpolation_scale,
    ntk_base,
    yarn_attention_factor,
    yarn_code_ramp,
    yarn_frequencies,
    yarn_logit_scale,
    yarn_ramp,
)
from posenc.lib.rotary import rotary_frequencies


def test_position_interpolation_squeezes_the_new_window_into_the_old():
    assert interpolation_scale(2048, 8192) == 0.25
    positions = interpolated_positions(torch.arange(8192), 2048, 8192)
    assert positions.dtype == torch.float64 and positions.max() < 2048 and positions[4] == 1.0
    with pytest.raises(ValueError, match="positive"):
        interpolation_scale(0, 10)


@pytest.mark.parametrize("d,scale", [(128, 2.0), (64, 8.0), (16, 3.0)])
def test_ntk_base_slows_the_slowest_pair_exactly_like_interpolation(d, scale):
    base = ntk_base(10000.0, scale, d)
    assert base == pytest.approx(10000.0 * scale ** (d / (d - 2)))
    plain, stretched = rotary_frequencies(d), rotary_frequencies(d, base)
    assert stretched[0] == plain[0] == 1.0                       # the fastest pair is left alone
    assert stretched[-1].item() == pytest.approx(plain[-1].item() / scale, rel=1e-12)
    assert torch.all(stretched[1:] < plain[1:]) and torch.all(stretched[1:-1] > plain[1:-1] / scale)


def test_ntk_base_of_yarns_table():
    assert round(ntk_base(10000.0, 2.0, 128)) == 20221          # "NTK (theta = 20k)" for s = 2, d = 128


@pytest.mark.parametrize("args", [(10000.0, 2.0, 2), (10000.0, 2.0, 7), (10000.0, 0.0, 8), (10000.0, -1.0, 8)])
def test_ntk_base_rejects_bad_input(args):
    with pytest.raises(ValueError):
        ntk_base(*args)


def test_yarn_ramp_ends_and_middle():
    r = torch.tensor([0.0, 0.5, 1.0, 16.5, 32.0, 40.0])
    torch.testing.assert_close(yarn_ramp(r), torch.tensor([0.0, 0.0, 0.0, 0.5, 1.0, 1.0], dtype=torch.float64))
    assert yarn_ramp(torch.tensor(3.0), alpha=2.0, beta=6.0).item() == 0.25
    with pytest.raises(ValueError, match="alpha < beta"):
        yarn_ramp(torch.tensor(1.0), alpha=4.0, beta=4.0)


def test_yarn_frequencies_by_hand():
    # d = 8: omega = 1, 0.1, 0.01, 0.001; over L = 400 positions the pairs turn r = 400 omega / (2 pi) times:
    # 63.7 (> beta = 32: kept), 6.37 (on the ramp), 0.64 and 0.064 (< alpha = 1: divided by s)
    s = 4.0
    h = yarn_frequencies(8, s, 400)
    gamma = (400 * 0.1 / (2 * math.pi) - 1) / 31
    expected = [1.0, (1 - gamma) * 0.1 / s + gamma * 0.1, 0.01 / s, 0.001 / s]
    torch.testing.assert_close(h, torch.tensor(expected, dtype=torch.float64))


def test_yarn_frequencies_for_llama_2():
    d, s, L = 128, 16.0, 4096
    omega, h = rotary_frequencies(d), yarn_frequencies(d, s, L)
    kept, interpolated = h == omega, torch.isclose(h, omega / s, rtol=1e-12, atol=0)
    assert torch.all(kept[:21]) and not kept[21:].any()             # pairs 0..20 turn more than 32 times
    assert torch.all(interpolated[46:]) and not interpolated[:46].any()     # pairs 46..63 turn less than once
    assert torch.all(h <= omega) and torch.all(h >= omega / s)


def test_the_code_ramp_by_hand():
    """The YaRN repository's find_correction_range and linear_ramp_mask, as Hugging Face copies them: the pair
    that turns r times over L is i(r) = d ln(L / (2 pi r)) / (2 ln b); ends floor(i(32)), ceil(i(1))."""
    # Llama 2: i(32) = 20.94, i(1) = 45.03, so pairs 0..20 are kept, 46.. interpolated, linear in i between
    gamma = yarn_code_ramp(128, 4096)
    assert torch.all(gamma[:21] == 1) and torch.all(gamma[46:] == 0)
    assert gamma[30].item() == pytest.approx(1 - (30 - 20) / (46 - 20))
    # chapter 7's heads (d = 8, L = 16): i(32) = -1.10 -> 0 and i(1) = 0.41 -> 1, so pair 0 is kept
    torch.testing.assert_close(yarn_code_ramp(8, 16), torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64))
    # L = 4: i(1) = -0.20 rounds up to 0 = the lower end, which is nudged by 0.001: pair 0 still kept
    torch.testing.assert_close(yarn_code_ramp(8, 4), torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64))


def test_the_paper_and_the_code_agree_at_the_ends_for_llama_2_and_differ_between():
    d, L = 128, 4096
    paper = yarn_ramp(L * rotary_frequencies(d) / (2 * math.pi))
    code = yarn_code_ramp(d, L)
    assert torch.equal(paper == 1, code == 1) and torch.equal(paper == 0, code == 0)
    gap = (code - paper).abs()
    assert int(gap.argmax()) == 30 and round(gap.max().item(), 2) == 0.37           # chapter 7's numbers
    ratio = yarn_frequencies(d, 16, L, ramp="code") / yarn_frequencies(d, 16, L)
    assert int(ratio.argmax()) == 38 and round(ratio.max().item(), 1) == 3.0


@pytest.mark.parametrize("d,L", [(8, 16), (8, 64), (16, 16), (64, 16), (128, 4096), (128, 2048)])
def test_the_code_keeps_the_fastest_pair_whatever_the_length(d, L):
    assert yarn_code_ramp(d, L)[0] == 1
    torch.testing.assert_close(yarn_frequencies(d, 4, L, ramp="code")[0], torch.tensor(1.0, dtype=torch.float64))


def test_at_chapter_7s_size_the_code_is_the_papers_ramp_with_alpha_1_and_beta_2():
    """Chapter 7's exercise on alpha and beta: at d = 8, L = 16 the code's defaults give the same gamma as the
    paper's equation with alpha = 1, beta = 2 (pair 0 kept, the others interpolated)."""
    for scale in (2, 4):
        torch.testing.assert_close(yarn_frequencies(8, scale, 16, ramp="code"),
                                   yarn_frequencies(8, scale, 16, alpha=1.0, beta=2.0))


def test_the_code_ramp_rejects_bad_input():
    for args, match in (((7, 16), "even"), ((8, 0), "positive"), ((8, 16, 10000.0, 4.0, 4.0), "alpha < beta")):
        with pytest.raises(ValueError, match=match):
            yarn_code_ramp(*args)
    with pytest.raises(ValueError, match="ramp"):
        yarn_frequencies(8, 2, 16, ramp="hf")


def test_yarn_temperature():
    assert yarn_attention_factor(8.0) == pytest.approx(0.1 * math.log(8) + 1) == pytest.approx(1.208, abs=1e-3)
    assert yarn_attention_factor(16.0) == pytest.approx(1.277, abs=1e-3)
    assert yarn_logit_scale(16.0) == pytest.approx(1.631, abs=1e-3)
    assert yarn_attention_factor(1.0) == yarn_attention_factor(0.5) == 1.0


def test_extension_settings_for_every_method():
    d, base, s, L = 16, 10000.0, 4.0, 32
    plain = extension_settings("none", s, d, base)
    torch.testing.assert_close(plain["omega"], rotary_frequencies(d, base))
    assert plain["position_scale"] == plain["logit_scale"] == 1.0
    pi = extension_settings("pi", s, d, base)
    assert pi["position_scale"] == 0.25 and pi["logit_scale"] == 1.0
    ntk = extension_settings("ntk", s, d, base)
    torch.testing.assert_close(ntk["omega"], rotary_frequencies(d, ntk_base(base, s, d)))
    yarn = extension_settings("yarn", s, d, base, train_length=L)
    torch.testing.assert_close(yarn["omega"], yarn_frequencies(d, s, L, base))
    assert yarn["position_scale"] == 1.0 and yarn["logit_scale"] == yarn_logit_scale(s)
    code = extension_settings("yarn", s, d, base, train_length=L, ramp="code")
    torch.testing.assert_close(code["omega"], yarn_frequencies(d, s, L, base, ramp="code"))
    assert code["logit_scale"] == yarn["logit_scale"] and not torch.equal(code["omega"], yarn["omega"])


@pytest.mark.parametrize("args,kwargs,match", [(("rope",), {}, "method"), (("yarn", 2.0, 8), {}, "train_length"),
                                               (("pi", 0.0, 8), {}, "scale")])
def test_extension_settings_reject_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        extension_settings(*args, **kwargs)
