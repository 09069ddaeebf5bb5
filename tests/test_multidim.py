"""posenc.lib.multidim: grids in raster order, 2-D tables and their interpolation, rotary with a frequency
matrix (raster, axial, mixed, M-RoPE), the grid-aware modules and the grid task."""

import numpy as np
import pytest
import torch

from posenc import encoding_at, frequencies
from posenc.lib import multidim as md
from posenc.lib.models import TinyTransformer
from posenc.lib.rotary import apply_rotary
from posenc.lib.tasks import IGNORE


def test_raster_order_reads_row_after_row():
    coords = md.grid_coordinates(3, 4)
    assert coords.shape == (12, 2)
    assert coords[:4].tolist() == [[0, 0], [1, 0], [2, 0], [3, 0]]        # (x, y): the first row, left to right
    assert coords[4].tolist() == [0, 1]
    assert torch.equal(md.raster_index(coords, 4), torch.arange(12))


def test_the_2d_sinusoidal_table_is_one_half_for_x_and_one_for_y():
    table = md.sinusoidal_grid_table(3, 5, 16)
    coords = md.grid_coordinates(3, 5).numpy()
    np.testing.assert_array_equal(table[:, :8], encoding_at(coords[:, 0], 8))
    np.testing.assert_array_equal(table[:, 8:], encoding_at(coords[:, 1], 8))
    with pytest.raises(ValueError, match="multiple of 4"):
        md.sinusoidal_grid_table(3, 5, 18)


def test_interpolating_a_table_reads_it_at_the_same_fraction_of_the_image():
    # A table linear in (x, y) is reproduced exactly by bilinear resizing wherever the new cell reads the old
    # table inside its grid: the new cell x' reads x = (x' + 1/2) W / W' - 1/2.
    old, new = (4, 6), (8, 9)
    coords = md.grid_coordinates(*old).double()
    table = torch.stack([coords[:, 0], coords[:, 1], 2 * coords[:, 0] - coords[:, 1] + 1], dim=1)
    resized = md.interpolate_grid_table(table, old, new, mode="bilinear")
    assert resized.shape == (72, 3)
    new_coords = md.grid_coordinates(*new).numpy()
    x = md.interpolated_coordinate(new_coords[:, 0], old[1], new[1])
    y = md.interpolated_coordinate(new_coords[:, 1], old[0], new[0])
    inside = (x >= 0) & (x <= old[1] - 1) & (y >= 0) & (y <= old[0] - 1)
    assert inside.sum() > 30
    np.testing.assert_allclose(resized[inside, 0].numpy(), x[inside], atol=1e-12)
    np.testing.assert_allclose(resized[inside, 1].numpy(), y[inside], atol=1e-12)
    assert md.interpolate_grid_table(table, old, old) is table
    with pytest.raises(ValueError, match="one row per cell"):
        md.interpolate_grid_table(table[:-1], old, new)


def test_raster_rotary_is_1d_rotary_of_the_raster_index():
    x = torch.randn(20, 8, dtype=torch.float64)
    coords = torch.randint(0, 9, (20, 2))
    for width in (5, 9):
        turned = md.apply_grid_rotary(x, coords, md.raster_frequencies(8, width))
        torch.testing.assert_close(turned, apply_rotary(x, md.raster_index(coords, width)))


def logit(q, k, p_q, p_k, matrix):
    return (md.apply_grid_rotary(q, p_q, matrix) * md.apply_grid_rotary(k, p_k, matrix)).sum(-1)


@pytest.mark.parametrize("name", ["axial", "mixed", "raster"])
def test_every_frequency_matrix_gives_logits_that_depend_on_the_offset_only(name):
    g = torch.Generator().manual_seed(1)
    matrix = {"axial": md.axial_frequencies(16), "mixed": md.mixed_frequencies(16, 1, generator=g)[0],
              "raster": md.raster_frequencies(16, 7)}[name]
    q, k = torch.randn(2, 1, 16, dtype=torch.float64, generator=g)
    p_q, p_k, shift = torch.randint(-50, 50, (3, 200, 2), generator=g)
    torch.testing.assert_close(logit(q, k, p_q + shift, p_k + shift, matrix), logit(q, k, p_q, p_k, matrix))
    at_origin = logit(q, k, torch.zeros_like(p_q), p_k - p_q, matrix)
    torch.testing.assert_close(at_origin, logit(q, k, p_q, p_k, matrix))


def test_axial_turns_half_the_pairs_with_x_and_half_with_y_at_base_100():
    matrix = md.axial_frequencies(16)
    omega = torch.from_numpy(frequencies(8, 100.0))
    assert torch.equal(matrix[0, :4], omega) and torch.equal(matrix[1, 4:], omega)
    assert not matrix[0, 4:].any() and not matrix[1, :4].any()


def test_raster_rotary_reads_one_row_up_as_an_offset_of_the_width_and_axial_does_not():
    q, k = torch.randn(2, 1, 16, dtype=torch.float64)
    query = torch.tensor([[3, 3]])
    above = torch.tensor([[3, 2]])
    raster = [logit(q, k, query, above, md.raster_frequencies(16, w)) for w in (6, 9)]
    axial = [logit(q, k, query, above, md.axial_frequencies(16)) for _ in (6, 9)]
    assert not torch.allclose(raster[0], raster[1]) and torch.equal(axial[0], axial[1])
    six_back = apply_rotary(k, torch.tensor([-6]))                      # 1-D offset -W on a width of 6
    torch.testing.assert_close(raster[0], (q * six_back).sum(-1))


def test_mixed_starts_from_perpendicular_directions_with_the_axial_sizes_at_base_10():
    matrix = md.mixed_frequencies(16, 3, generator=torch.Generator().manual_seed(0))
    assert matrix.shape == (3, 2, 8)
    sizes = matrix.norm(dim=1)
    torch.testing.assert_close(sizes, torch.from_numpy(frequencies(8, 10.0)).repeat(2).expand(3, -1))
    first, second = matrix[:, :, :4], matrix[:, :, 4:]
    torch.testing.assert_close((first * second).sum(1), torch.zeros(3, 4, dtype=torch.float64), atol=1e-15, rtol=0)
    assert not torch.allclose(matrix[0], matrix[1])                      # every head its own direction


def test_mrope_turns_text_exactly_as_1d_rotary_in_the_half_layout():
    x = torch.randn(2, 11, 32, dtype=torch.float64)
    ids = md.mrope_position_ids([("text", 11)])
    assert torch.equal(ids, torch.arange(11).expand(3, -1))
    torch.testing.assert_close(md.apply_mrope(x, ids, (4, 6, 6), base=1e6), apply_rotary(x, None, 1e6, layout="half"))


def test_mrope_position_ids_follow_qwen2_vls_rule():
    ids = md.mrope_position_ids([("text", 2), ("image", (2, 3)), ("text", 2)])
    assert ids.tolist() == [[0, 1, 2, 2, 2, 2, 2, 2, 5, 6],
                            [0, 1, 2, 2, 2, 3, 3, 3, 5, 6],
                            [0, 1, 2, 3, 4, 2, 3, 4, 5, 6]]
    video = md.mrope_position_ids([("video", (3, 1, 2)), ("text", 1)])
    assert video.tolist() == [[0, 0, 1, 1, 2, 2, 3], [0, 0, 0, 0, 0, 0, 3], [0, 1, 0, 1, 0, 1, 3]]


def test_mrope_sections_split_the_pairs_among_the_axes():
    matrix = md.mrope_frequencies(8, (1, 1, 2))
    omega = torch.from_numpy(frequencies(8))
    assert torch.equal(matrix.sum(0), omega) and (matrix != 0).sum(0).tolist() == [1, 1, 1, 1]
    assert matrix[0, 0] == omega[0] and matrix[1, 1] == omega[1] and torch.equal(matrix[2, 2:], omega[2:])


@pytest.mark.parametrize("call, message", [
    (lambda: md.mrope_frequencies(8, (1, 1, 1)), "adding up to"),
    (lambda: md.mrope_position_ids([("audio", 3)]), "'text', 'image' or 'video'"),
    (lambda: md.mrope_position_ids([("image", (2, 2, 2))]), r"an image is \(h, w\)"),
    (lambda: md.mrope_position_ids([]), "at least one segment"),
    (lambda: md.apply_mrope(torch.zeros(3, 8), torch.zeros(2, 3), (1, 1, 2)), r"shape \(3, n\)"),
    (lambda: md.axial_frequencies(6), "multiple of 4"),
    (lambda: md.grid_coordinates(0, 3), "height must be a positive integer"),
    (lambda: md.apply_grid_rotary(torch.zeros(3, 8), torch.zeros(3, 3), md.axial_frequencies(8)), "3 coordinates"),
    (lambda: md.apply_grid_rotary(torch.zeros(3, 6), torch.zeros(3, 2), md.axial_frequencies(8)), "width 6"),
])
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ---------------------------------------------------------------------------------------------------
# The grid-aware modules in the course's model


def test_the_grid_rotary_module_turns_as_apply_grid_rotary():
    position = md.GridRotaryPosition.axial(16, 2, (3, 4))
    q = torch.randn(5, 2, 12, 16)
    state = position.prepare(torch.arange(12), torch.arange(12), torch.float32)
    turned, _ = position.turn(q, q, state)
    expected = md.apply_grid_rotary(q.double(), md.grid_coordinates(3, 4), md.axial_frequencies(16)).float()
    torch.testing.assert_close(turned, expected)


@pytest.mark.parametrize("kind", ["sinusoidal", "learned", "axial", "mixed"])
def test_a_grid_model_reads_other_grids_after_set_grid(kind):
    torch.manual_seed(0)
    module = {"sinusoidal": lambda: md.SinusoidalGridTable(16, (3, 3)),
              "learned": lambda: md.LearnedGridTable(16, (3, 3)),
              "axial": lambda: md.GridRotaryPosition.axial(8, 2, (3, 3)),
              "mixed": lambda: md.GridRotaryPosition.mixed(8, 2, (3, 3))}[kind]()
    if kind in ("axial", "mixed"):
        model = TinyTransformer(8, 16, 2, 1, position=module)
    else:
        model = TinyTransformer(8, 16, 2, 1, positional=module)
    assert model(torch.zeros(2, 9, dtype=torch.long)).shape == (2, 9, 8)
    with pytest.raises(ValueError, match="3 x 3 grid|raster positions"):
        model(torch.zeros(2, 20, dtype=torch.long))
    md.set_grid(model, 4, 5)
    assert model(torch.zeros(2, 20, dtype=torch.long)).shape == (2, 20, 8)
    assert (kind == "mixed") == any(p is getattr(module, "frequency_matrix", None) for p in model.parameters())


def test_the_learned_table_is_interpolated_on_another_grid_only():
    table = md.LearnedGridTable(8, (2, 3))
    assert table(6) is table.table
    table.set_grid(4, 6)
    torch.testing.assert_close(table(24), md.interpolate_grid_table(table.table, (2, 3), (4, 6)))


def test_the_grid_shift_task_asks_for_the_token_above():
    task = md.GridShift(vocab_size=10, height=3, width=4)
    tokens, targets = task.batch(5, 12, torch.Generator().manual_seed(0))
    grid_tokens, grid_targets = tokens.view(5, 3, 4), targets.view(5, 3, 4)
    assert (grid_targets[:, 0] == IGNORE).all()
    assert torch.equal(grid_targets[:, 1:], grid_tokens[:, :-1])
    diagonal = md.GridShift(10, 3, 4, dy=1, dx=1)
    tokens, targets = diagonal.batch(2, 12, torch.Generator().manual_seed(0))
    assert torch.equal(targets.view(2, 3, 4)[:, 1:, 1:], tokens.view(2, 3, 4)[:, :-1, :-1])
    with pytest.raises(ValueError, match="12 tokens, not 16"):
        task.batch(2, 16, torch.Generator())
    with pytest.raises(ValueError, match="neighbour inside the grid"):
        md.GridShift(10, 3, 4, dy=3)
    assert task.on(5, 6).grid == (5, 6) and task.chance == 0.1


def test_a_learned_frequency_matrix_is_a_copy_of_its_own():
    start = md.axial_frequencies(8).float().expand(2, -1, -1)
    position = md.GridRotaryPosition(start, (2, 2), learned=True)
    with torch.no_grad():
        position.frequency_matrix.add_(1.0)
    assert torch.equal(start[0], md.axial_frequencies(8).float())
