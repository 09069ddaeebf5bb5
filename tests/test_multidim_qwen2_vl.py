"""Chapter 10's M-RoPE against Hugging Face transformers' Qwen2-VL (a test dependency, pinned in requirements.txt).

Nothing is downloaded: a Qwen2-VL model with tiny random weights is built from a config, and only its
position code is used (``get_rope_index``, the rotary embedding with ``mrope_section``, ``apply_rotary_pos_emb``).
"""

import pytest
import torch
from transformers import Qwen2VLConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import (
    Qwen2VLModel,
    Qwen2VLRotaryEmbedding,
    Qwen2VLVisionRotaryEmbedding,
    apply_rotary_pos_emb,
)

from posenc.lib import multidim as md

TEXT, IMAGE, VIDEO = 0, 1, 2
MERGE = 2            # Qwen2-VL merges 2 x 2 patches into one token of the language model
SECTION = (4, 6, 6)  # 16 pairs: a head of 32 (Qwen2-VL's own is (16, 24, 24) for heads of 128)
BASE = 1e6           # Qwen2-VL's rope_theta


@pytest.fixture(scope="module")
def qwen():
    config = Qwen2VLConfig(
        text_config=dict(hidden_size=64, num_attention_heads=2, num_key_value_heads=2, num_hidden_layers=1,
                         intermediate_size=32, vocab_size=100, bos_token_id=None, eos_token_id=None,
                         rope_parameters={"rope_type": "default", "rope_theta": BASE, "mrope_section": list(SECTION)}),
        vision_config=dict(depth=1, embed_dim=16, num_heads=2, hidden_size=64, spatial_merge_size=MERGE))
    torch.manual_seed(0)
    return Qwen2VLModel(config).eval(), config


def hugging_face_ids(model, segments):
    """Qwen2-VL's (3, n) position ids of our segments, through its get_rope_index."""
    types, images, videos = [], [], []
    for kind, size in segments:
        if kind == "text":
            types += [TEXT] * size
            continue
        grid = (1, *size) if kind == "image" else tuple(size)
        types += [IMAGE if kind == "image" else VIDEO] * (grid[0] * grid[1] * grid[2])
        (images if kind == "image" else videos).append([grid[0], grid[1] * MERGE, grid[2] * MERGE])   # in patches
    types = torch.tensor([types])
    ids, _ = model.get_rope_index(torch.zeros_like(types), types,
                                  image_grid_thw=torch.tensor(images) if images else None,
                                  video_grid_thw=torch.tensor(videos) if videos else None)
    return ids[:, 0]


SEQUENCES = {
    "text, image, text": [("text", 3), ("image", (4, 6)), ("text", 5)],
    "two images": [("text", 1), ("image", (3, 2)), ("text", 2), ("image", (2, 5)), ("text", 1)],
    "image first": [("image", (5, 5)), ("text", 4)],
    "a short video": [("text", 2), ("video", (2, 3, 3)), ("text", 3)],
}


@pytest.mark.parametrize("name", SEQUENCES)
def test_position_ids_agree_with_qwen2_vl(qwen, name):
    model, _ = qwen
    assert torch.equal(md.mrope_position_ids(SEQUENCES[name]), hugging_face_ids(model, SEQUENCES[name]))


def test_transformers_starts_the_text_after_a_long_video_earlier_than_the_papers_rule(qwen):
    # Found while writing chapter 10: transformers 5.24.0 moves on by max(h, w) after a vision segment, which
    # is one past the largest id unless a video has more frames than rows and columns; then its text reuses
    # the last frames' time ids. The course follows the paper (one past the largest id so far).
    model, _ = qwen
    segments = [("text", 2), ("video", (3, 2, 2)), ("text", 2)]
    ours, theirs = md.mrope_position_ids(segments), hugging_face_ids(model, segments)
    assert torch.equal(ours[:, :-2], theirs[:, :-2])
    assert ours[:, -2:].tolist() == [[5, 6]] * 3 and theirs[:, -2:].tolist() == [[4, 5]] * 3


@pytest.mark.parametrize("name", SEQUENCES)
def test_rotated_queries_and_keys_agree_with_qwen2_vl_to_float32_rounding(qwen, name):
    _, config = qwen
    ids = md.mrope_position_ids(SEQUENCES[name])
    q, k = torch.randn(2, 1, 2, ids.shape[1], 32)                # (batch, heads, n, d_head)
    cos, sin = Qwen2VLRotaryEmbedding(config.text_config)(q, ids[:, None])
    q_hf, k_hf = apply_rotary_pos_emb(q, k, cos, sin)
    torch.testing.assert_close(md.apply_mrope(q, ids, SECTION, BASE), q_hf, atol=2e-6, rtol=0)
    torch.testing.assert_close(md.apply_mrope(k, ids, SECTION, BASE), k_hf, atol=2e-6, rtol=0)


def test_qwen2_vls_vision_encoder_is_axial_rotary_with_rows_first(qwen):
    # Its vision tower turns the first quarter of the pairs with the row, the next with the column (half
    # layout): our frequency matrix with the two axes swapped.
    _, config = qwen
    rotary = Qwen2VLVisionRotaryEmbedding(config.vision_config)
    d_head = config.vision_config.embed_dim // config.vision_config.num_heads
    coords = md.grid_coordinates(4, 6)
    cos, sin = rotary(torch.zeros(1), coords.flip(-1))              # its position ids are (row, column)
    x = torch.randn(coords.shape[0], d_head)
    theirs = x * cos + torch.cat([-x[:, d_head // 2:], x[:, :d_head // 2]], dim=-1) * sin
    base = config.vision_config.rope_parameters["rope_theta"]
    rows_first = md.axial_frequencies(d_head, base).flip(0)
    torch.testing.assert_close(md.apply_grid_rotary(x, coords, rows_first, layout="half"), theirs, atol=2e-6, rtol=0)
