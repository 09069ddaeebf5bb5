"""The course's tasks (posenc.lib.tasks), chapter 7's among them: the targets follow each task's rule, are
seeded, and depend only on what a causal model may read."""

from __future__ import annotations

import pytest
import torch

from posenc.lib.tasks import IGNORE, Copy, FirstToken, LocalMax, ShiftedCopy


def batch(task, n=64, length=20, seed=0):
    return task.batch(n, length, torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------------------------------------------
# Tasks


@pytest.mark.parametrize("window", [2, 3, 5])
def test_local_max_is_the_max_of_the_last_window_tokens(window):
    tokens, targets = batch(LocalMax(12, window))
    for t in range(tokens.shape[1]):
        if t < window - 1:
            assert torch.all(targets[:, t] == IGNORE)
        else:
            assert torch.equal(targets[:, t], tokens[:, t - window + 1:t + 1].max(dim=1).values)


def test_first_token_targets_are_the_first_token_everywhere_but_position_0():
    tokens, targets = batch(FirstToken(9))
    assert torch.all(targets[:, 0] == IGNORE)
    assert torch.equal(targets[:, 1:], tokens[:, :1].expand(-1, tokens.shape[1] - 1))


@pytest.mark.parametrize("length", [3, 4, 9, 10, 31])
def test_copy_repeats_the_string_after_the_separator_and_scores_only_the_copy(length):
    task = Copy(7)
    tokens, targets = batch(task, length=length)
    n = (length - 1) // 2
    string = tokens[:, :n]
    assert torch.all(string < task.separator) and torch.all(tokens[:, n] == task.separator)
    assert torch.equal(tokens[:, n + 1:2 * n + 1], string)
    assert torch.equal(targets[:, n:2 * n], string)                 # SEP predicts x_0, copy of x_k predicts x_k+1
    scored = targets != IGNORE
    assert scored.sum().item() == tokens.shape[0] * n and tokens.shape[1] == length
    if length % 2 == 0:
        assert torch.all(tokens[:, -1] == 0) and torch.all(targets[:, -1] == IGNORE)


def test_streaming_targets_depend_only_on_the_prefix():
    """For a streaming task the target at t is the rule applied to tokens 0..t, so the first positions of a
    long test sequence are a test at every shorter length."""
    for task in (LocalMax(10, 3), FirstToken(10)):
        assert task.streaming
        tokens, targets = batch(task, length=30)
        for t in (0, 1, 2, 7, 29):
            prefix = tokens[:, :t + 1]
            rule = {LocalMax: lambda p: p[:, -3:].max(dim=1).values if p.shape[1] >= 3 else None,
                    FirstToken: lambda p: p[:, 0] if p.shape[1] >= 2 else None}[type(task)](prefix)
            if rule is None:
                assert torch.all(targets[:, t] == IGNORE)
            else:
                assert torch.equal(targets[:, t], rule)
    assert not Copy().streaming


def test_tasks_are_seeded_and_have_a_chance_level():
    for task in (LocalMax(), FirstToken(), Copy()):
        first, again = batch(task, seed=3), batch(task, seed=3)
        assert all(torch.equal(a, b) for a, b in zip(first, again))
        assert not torch.equal(batch(task, seed=4)[0], first[0])
        assert 0 < task.chance < 1
    assert Copy(16).chance == 1 / 15 and LocalMax(16).chance == 1 / 16


@pytest.mark.parametrize("make, length", [(lambda: Copy(2), 5), (lambda: LocalMax(8, 1), 5),
                                          (lambda: Copy(8), 2), (lambda: FirstToken(8), 0)])
def test_bad_task_settings_are_refused(make, length):
    with pytest.raises(ValueError):
        make().batch(2, length, torch.Generator().manual_seed(0))


def test_shifted_copy_is_unchanged():
    tokens, targets = batch(ShiftedCopy(16, 1), length=8)
    assert torch.all(targets[:, 0] == IGNORE) and torch.equal(targets[:, 1:], tokens[:, :-1])
