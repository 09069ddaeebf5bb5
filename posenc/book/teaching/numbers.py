"""The numbers the teaching guide's entries quote, computed when the book is built.

An entry (``book/teaching/chNN.yml``) writes a computed number as ``{{name}}`` or ``{{name:.3f}}``; the
chapter's function here returns it, computed by the course's own code (``posenc.lib``, the exercise checks'
references) or read from the committed multi-seed files of ``results/``, so a number in an answer key or a
rubric is the number the chapter and the grader use. A setting an entry types (a width, a base) must be one
the chapter states (``posenc.book.teaching.entry``).
"""

from __future__ import annotations

import functools

__all__ = ["VALUES", "claim", "values"]


def ch01() -> dict:
    import numpy as np

    from posenc.lib.encoding import sinusoidal_encoding, wavelengths

    small, wide = wavelengths(8), wavelengths(512)
    table = sinusoidal_encoding(2, 64)
    return {
        "step_5": 1 / (5 - 1), "step_50": 1 / (50 - 1),
        "small_first": small[0], "small_last": small[-1], "small_ratio": small[1] / small[0],
        "wide_last": wide[-1], "wide_ratio": wide[1] / wide[0],
        "bits_16_positions": 2 ** 16, "bits_16_last": 2 ** 16 - 1,
        "neighbour_64": float(np.linalg.norm(table[1] - table[0])),
        "neighbour_squared_64": float(np.sum((table[1] - table[0]) ** 2)),
        "squared_norm_64": float(table[1] @ table[1]),
    }


def ch02() -> dict:
    import numpy as np

    from posenc.lib.encoding import frequencies
    from posenc.lib.rotation import dot_product_profile

    offsets = np.arange(0, 5001)
    profile = dot_product_profile(offsets, 64)
    omega = frequencies(64)[2]
    return {
        "first_rise": int(offsets[1:][np.diff(profile) > 0][0]),
        "first_negative": int(offsets[profile < 0][0]),
        "last_positive": int(offsets[profile <= 0][0]) - 1,        # positive at every offset up to it
        "sine_only_slope": float(np.cos(omega * 7)),
        "sine_only_rms": float(abs(np.sin(omega * 7)) / np.sqrt(2)),
    }


def _file(set_id: str):
    """(configuration, records) of a chapter's committed multi-seed file, results/chNN.json."""
    from posenc.experiments import results

    config, records, _ = results.load_results(results.RESULTS_DIR / f"{set_id}.json")
    return config, records


def claim(holds: bool, what: str) -> None:
    """A sentence of an entry about trained models rests on the committed file: stop the build when the file
    no longer supports it."""
    if not holds:
        raise ValueError(f"the teaching guide says {what}, and the committed results no longer show it: "
                         "rewrite the entry's sentence")


def ch03() -> dict:
    import math

    import numpy as np

    from posenc.experiments import summaries
    from posenc.lib import combining

    config, records = _file("ch03")
    steps = {kind: np.array([summaries.block_steps(r) for r in records if r["kind"] == kind])
             for kind in ("add", "concat")}
    claim(steps["concat"].max() < steps["add"].min(), "that concatenation got below 0.1 before addition on "
           "every seed of the file")
    add, wide = combining.encoder_layer_params(512, 2048), combining.encoder_layer_params(1024, 2048)
    return {
        "layer_add": add, "layer_wide": wide, "wider_ratio": wide / add,
        "share_t2t": combining.position_share(512, 512 ** -0.5, math.sqrt(512)),
        "share_torch": combining.position_share(512, 1.0, math.sqrt(512)),
        "entry_std_torch": math.sqrt(512),
        "cos_spread_512": 1 / math.sqrt(512),
        "file_seeds": len(config.seeds),
        "steps_add": float(np.mean(steps["add"])), "steps_concat": float(np.mean(steps["concat"])),
    }


def ch04() -> dict:
    import numpy as np

    from posenc.experiments import summaries
    from posenc.lib import reproducibility as rep

    config, records = _file("ch04")
    L = config.train_length
    accuracy = {kind: summaries.in_distribution(records, kind) for kind in config.kinds}
    steps = {kind: np.array([summaries.block_steps(r) for r in records if r["kind"] == kind]) for kind in config.kinds}
    curves = {kind: summaries.position_curves(records, kind) for kind in ("sinusoidal", "learned")}
    mean = {kind: summaries.band(curve)[0] for kind, curve in curves.items()}
    claim(rep.clearly_below(np.abs(accuracy["sinusoidal"] - accuracy["learned"]), 0.02),
           "that the two tables are equally accurate inside the training length")
    claim(rep.clearly_apart(steps["learned"], steps["sinusoidal"])
           and steps["learned_pe_scale"].max() < steps["learned"].min(),
           "that the learned table is slower, and its control at PE's scale faster on every seed")
    claim(rep.clearly_below(curves["sinusoidal"][:, L + 3], 0.3), "that the sinusoidal model falls within a few "
           "positions past L")
    return {
        "file_seeds": len(config.seeds), "train_length": L, "max_len": config.max_len,
        "untrained_rows": config.max_len - L,
        "last_trained_row": L - 1, "chance": config.task().chance,
        "acc_sin": float(accuracy["sinusoidal"].mean()), "acc_learned": float(accuracy["learned"].mean()),
        "steps_sin": float(steps["sinusoidal"].mean()), "steps_learned": float(steps["learned"].mean()),
        "steps_control": float(steps["learned_pe_scale"].mean()),
        "sin_L0": float(mean["sinusoidal"][L]), "sin_L1": float(mean["sinusoidal"][L + 1]),
        "sin_L3": float(mean["sinusoidal"][L + 3]),
        "learned_L0": float(mean["learned"][L]), "learned_L1": float(mean["learned"][L + 1]),
        "bert_rows": 512 * 768,
    }


def ch05() -> dict:
    import numpy as np
    import torch

    from posenc.experiments import summaries
    from posenc.experiments.published import PUBLISHED
    from posenc.lib import reproducibility as rep
    from posenc.lib.attention import METHODS
    from posenc.lib.relative import alibi_slopes, t5_bucket

    config, records = _file("ch05")
    accuracy = {kind: summaries.in_distribution(records, kind) for kind in config.kinds}
    gain = accuracy["alibi-steep"] - accuracy["alibi"]          # paired: the same seeds, in the same order
    claim(rep.clearly_above(gain, 0.0) and (gain > 0).all(),
           "that steeper ALiBi slopes make the two-head model more accurate, on every seed of the file")
    offsets = [0, -3, 3, -8, -12, -20, -50, -91, -200, 50]
    both, causal = t5_bucket(torch.tensor(offsets)).tolist(), t5_bucket(torch.tensor(offsets), bidirectional=False).tolist()
    distances = torch.arange(0, 200)
    last = {name: int(distances[t5_bucket(-distances, bidirectional=flag) == t5_bucket(-distances, bidirectional=flag).max()][0])
            for name, flag in (("bi", True), ("causal", False))}
    k = PUBLISHED["shaw2018"]["k_base"]
    values = {f"t5_{n}": b for n, b in zip(["0", "m3", "p3", "m8", "m12", "m20", "m50", "m91", "m200", "p50"], both)}
    values.update({f"t5c_{n}": b for n, b in zip(["0", "m3", "p3", "m8", "m12", "m20"], causal)})
    slopes_2, slopes_6 = alibi_slopes(2).tolist(), alibi_slopes(6).tolist()
    values.update({
        "last_bi": last["bi"], "last_causal": last["causal"],
        "shaw_k": k, "shaw_vectors": 2 * k + 1, "shaw_params": 2 * (2 * k + 1) * 64,
        "alibi2_first": slopes_2[0], "alibi2_second": slopes_2[1],
        "alibi6": ", ".join(f"1/{round(1 / s)}" for s in slopes_6),
        "file_seeds": len(config.seeds),
        "acc_alibi": float(accuracy["alibi"].mean()), "acc_steep": float(accuracy["alibi-steep"].mean()),
        "acc_t5": float(accuracy["t5"].mean()), "acc_shaw": float(accuracy["shaw"].mean()),
        "gain": float(np.mean(gain)), "gain_min": float(np.min(gain)),
    })
    return values


def ch06() -> dict:
    import numpy as np
    import torch

    from posenc.experiments import summaries
    from posenc.lib import reproducibility as rep
    from posenc.lib.rotary import layout_permutation
    from posenc.lib.rotary_analysis import angle_error, turning_pairs

    config, records = _file("ch06")
    steps = {kind: np.array([summaries.block_steps(r) for r in records if r["kind"] == kind])
             for kind in ("sinusoidal", "learned", "t5", "rope")}
    claim(all(rep.clearly_apart(steps[kind], steps["rope"]) and steps[kind].mean() > steps["rope"].mean()
               for kind in ("sinusoidal", "learned", "t5")),
           "that rotary attention learns chapter 4's task sooner than the added tables and T5's bias")
    errors = angle_error(np.arange(0, 8193), 128, dtype=torch.bfloat16)
    around_32 = torch.tensor([32.0, 64.0], dtype=torch.bfloat16)
    return {
        "turning_small": turning_pairs(4096, 128), "turning_large": turning_pairs(4096, 128, 5e5),
        "perm_8": ", ".join(str(i) for i in layout_permutation(8).tolist()),
        "bf16_spacing": float(torch.nextafter(around_32[0], around_32[1]) - around_32[0]),
        "bf16_cent": int(np.argmax(errors > 0.01)), "bf16_tenth": int(np.argmax(errors > 0.1)),
        "fp16_max": float(torch.finfo(torch.float16).max),
        "file_seeds": len(config.seeds),
        "steps_rope": float(steps["rope"].mean()), "steps_sin": float(steps["sinusoidal"].mean()),
        "steps_t5": float(steps["t5"].mean()),
    }


def ch07() -> dict:
    import numpy as np
    import torch

    from posenc.experiments import ch07 as benchmark
    from posenc.lib import extension

    config, records = _file("ch07")
    directions = {d.claim: d for d in benchmark.extrapolation_directions(records, config)}
    for direction in ("local max, L..2L: rotary above 0.95", "local max, 2L..4L: rotary below 0.6",
                  "first token, 2L..4L: rotary below 0.3", "local max, 2L..4L: Shaw, T5 and ALiBi above 0.85",
                  "mean reciprocal rank: rotary below T5, ALiBi and NoPE",
                  "local max, s = 2, zero-shot: NTK-aware above interpolation and YaRN by more than 0.2",
                  "first token, s = 2, zero-shot: interpolation and YaRN above plain RoPE"):
        claim(direction in directions and directions[direction].clear, f"{direction!r}, as chapter 7 asserts")
    bins = {kind: {name: float(np.mean(v)) for name, v in per_bin.items()}
            for kind, per_bin in benchmark.bin_table(records, config).items()}
    mrr = benchmark.mean_reciprocal_rank(records, config)
    zero = {(task, method): float(np.mean(benchmark.zero_shot(records, config, task, method, 2)))
            for task, methods in (("local", ("pi", "ntk", "yarn")), ("first", ("none", "pi", "ntk", "yarn")))
            for method in methods}
    omega = extension.rotary_frequencies(128)
    turns = 4096 * omega / (2 * np.pi)
    kept, interpolated = int((turns > 32).sum()), int((turns < 1).sum())
    values = {
        "file_seeds": len(config.seeds), "train_length": config.train_length,
        "local_rope_near": bins["local/rope"]["L..2L"], "local_rope_far": bins["local/rope"]["2L..4L"],
        "local_sin_near": bins["local/sinusoidal"]["L..2L"], "first_rope_far": bins["first/rope"]["2L..4L"],
        "local_alibi_far": bins["local/alibi"]["2L..4L"], "first_alibi_far": bins["first/alibi"]["2L..4L"],
        "mrr_rope": mrr["rope"], "mrr_t5": mrr["t5"], "mrr_alibi": mrr["alibi"], "mrr_none": mrr["none"],
        "pi_1000": float(extension.interpolated_positions(torch.tensor([1000]), 4096, 4 * 4096)[0]),
        "pi_1001": float(extension.interpolated_positions(torch.tensor([1001]), 4096, 4 * 4096)[0]),
        "pi_last": float(extension.interpolated_positions(torch.tensor([4 * 4096 - 1]), 4096, 4 * 4096)[0]),
        "ntk_base_2": extension.ntk_base(10000.0, 2, 128), "yarn_logit_16": extension.yarn_logit_scale(16),
        "yarn_q_16": extension.yarn_attention_factor(16),
        "yarn_last_kept": kept - 1, "yarn_first_interpolated": len(turns) - interpolated,
        "our_turns": float(config.train_length / (2 * np.pi)),
    }
    values.update({f"zero_{task}_{method}": value for (task, method), value in zero.items()})
    return values


def ch08() -> dict:
    import math

    import numpy as np
    import torch

    from posenc.experiments import ch08 as text
    from posenc.experiments.published import PUBLISHED
    from posenc.experiments.summaries import LABELS
    from posenc.lib import reproducibility as rep
    from posenc.lib.attention import METHODS
    from posenc.lib.relative import alibi_slopes, t5_bucket

    config, records = _file("ch08")
    L, last = config.train_length, len(config.eval_factors) - 1
    at_2l = config.eval_factors.index(2)
    at_l = {kind: text.bits_curves(records, kind)[:, 0] for kind in config.kinds}
    grow = {kind: text.growth(records, kind, last) for kind in config.kinds}
    grow_2l = {kind: text.growth(records, kind, at_2l) for kind in config.kinds}
    sliding = text.growth(records, "alibi", last, "sliding")
    # Each sentence the entry says of the file is a direction chapter 8 asserts, held to its margin.
    holds, within = text.text_directions(records, config), text.HOLDS_WITHIN
    behind = (f"at L ALiBi with the paper's slopes is behind {LABELS[kind]}" for kind in text.ALIBI_TRAILS)
    for direction in (*behind,
                      "without position information the model is the worst at L",
                      "Shaw's clipped offsets read 8L better than L",
                      "with sliding windows ALiBi (the paper's slopes) reads 8L worse than L",
                      "T5's bias (32 buckets to 128) gets worse already at 2L",
                      "at 2L rotary has lost less than the sinusoidal table",
                      "at L ALiBi with scaled slopes beats the sinusoidal table",
                      "ALiBi with scaled slopes reads 2L better than L",
                      "ALiBi with scaled slopes reads 8L better than L",
                      f"with sliding windows ALiBi with scaled slopes reads 8L within {within} bits of L",
                      "at 2L T5 with 32 buckets to 32 has lost less than with 32 to 128",
                      f"T5 with 16 buckets to 16 reads 2L within {within} bits of L",
                      "T5 with 32 buckets to 32 gets worse at 8L", "T5 with 16 buckets to 16 gets worse at 8L"):
        claim(holds.get(direction, False), f"{direction!r}, as chapter 8 asserts")
    claim(rep.clearly_above(grow["t5"], 0.0), "that T5's bias gets worse at 8L")
    claim(0.35 < np.mean(grow_2l["t5-32-32"]) / np.mean(grow_2l["t5"]) < 0.65,
          "that with every bucket reached T5 loses about half as much at 2L as its default")
    paper = PUBLISHED["press2022"]
    claim(paper["t5"][1] < paper["t5"][0] < paper["t5"][2], "that the paper's T5 improves at about 2L and is "
           "worse than at L by about 7L")
    distances = torch.arange(config.eval_lengths[-1])
    buckets = t5_bucket(-distances, bidirectional=False)
    ours, theirs = (alibi_slopes(config.n_heads) * L).tolist(), (alibi_slopes(8) * paper["lengths"][0]).tolist()
    values = {
        "file_seeds": len(config.seeds), "train_length": L, "paper_L": paper["lengths"][0],
        "nats_example": 1.2 / math.log(2), "ppl_example": math.exp(1.2),
        "paper_sin_ratio": paper["sinusoidal"][2] / paper["sinusoidal"][0],
        "paper_rope_ratio": paper["rotary"][2] / paper["rotary"][0],
        "paper_t5_2l": paper["t5"][1] / paper["t5"][0], "paper_t5_7l": paper["t5"][2] / paper["t5"][0],
        "paper_alibi_ratio": paper["alibi"][2] / paper["alibi"][0],
        "penalties_ours": ", ".join(f"{p:g}" for p in ours), "penalties_paper_low": min(theirs),
        "slope_factor": paper["lengths"][0] / L,
        "untrained_buckets": len(set(buckets.tolist()) - set(buckets[:L].tolist())),
        "sliding_alibi": float(np.mean(sliding)),
    }
    values.update({f"bits_{kind}": float(np.mean(at_l[kind])) for kind in METHODS})
    values.update({f"grow_{kind}": float(np.mean(grow[kind])) for kind in ("sinusoidal", "rope", "t5", "alibi", "shaw", "none")})
    values.update({f"grow2_{kind}": float(np.mean(grow_2l[kind])) for kind in ("sinusoidal", "rope", "t5")})
    # The arms that change one setting of a relative method (ALiBi's slopes scaled to L, T5's buckets).
    for kind in (kind for kind in config.kinds if kind not in METHODS):
        name = kind.replace("-", "_")
        values.update({f"bits_{name}": float(np.mean(at_l[kind])), f"grow_{name}": float(np.mean(grow[kind])),
                       f"grow2_{name}": float(np.mean(grow_2l[kind]))})
        if kind.startswith("alibi"):
            values[f"sliding_{name}"] = float(np.mean(text.growth(records, kind, last, "sliding")))
    return values


def ch09() -> dict:
    import math

    import numpy as np

    from posenc.experiments import ch09 as today
    from posenc.experiments.ch08 import growth
    from posenc.lib import rotary_variants as rv
    from posenc.lib.rotary import rotary_frequencies

    config, records = _file("ch09")
    holds = today.today_directions(records, config)
    for direction in ("rotary gets worse past L", "at 8L p-RoPE (p = 0.25) has lost less than rotary",
                      "at 8L partial rotary has lost less than p-RoPE (p = 0.25), which turns as many pairs",
                      "at 8L iRoPE read in chunks of L has lost less than read whole",
                      f"Llama 4's temperature moves iRoPE's chunked reading at 8L by less than {today.HOLDS_WITHIN} bits"):
        claim(holds.get(direction, False), f"{direction!r}, as chapter 9 asserts")
    last = len(config.eval_factors) - 1
    # Llama 3.1's scaling of three pairs of the activity, by their wavelengths in positions.
    wavelength = np.array([500.0, 4000.0, 20000.0])
    omega = 2 * math.pi / wavelength
    scaled = rv.llama3_frequencies(omega, 8, 1, 4, 8192).numpy()
    turns = rv.turns(omega, 8192).numpy()
    llama = rv.llama3_frequencies(rotary_frequencies(128, 500000.0), 8, 1, 4, 8192).numpy()
    llama_omega = rotary_frequencies(128, 500000.0).numpy()
    ratio = llama_omega / llama
    scale = rv.llama4_query_scale([2000, 8190, 8191, 131071]).numpy()
    return {
        "file_seeds": len(config.seeds),
        **{f"wavelength_{name}": int(w) for name, w in zip(("fast", "mid", "slow"), wavelength)},
        "turns_500": float(turns[0]), "turns_4000": float(turns[1]), "turns_20000": float(turns[2]),
        "weight_4000": float((scaled[1] / omega[1] - 1 / 8) / (1 - 1 / 8)),      # the ramp's weight on the kept one
        "slowdown_4000": float(omega[1] / scaled[1]),
        "slowdown_20000": float(omega[2] / scaled[2]),
        "llama_kept": int(np.isclose(ratio, 1).sum()), "llama_slowed": int(np.isclose(ratio, 8).sum()),
        "llama_ramp": int((~np.isclose(ratio, 1) & ~np.isclose(ratio, 8)).sum()),
        "partial_base": rv.partial_as_p_rope_base(10000.0, 0.25),
        "neox_pairs": rv.kept_pairs(96, 0.25),
        "scale_2000": float(scale[0]), "scale_8190": float(scale[1]), "scale_8191": float(scale[2]),
        "scale_128k": float(scale[3]),
        "lost_rope": float(np.mean(growth(records, "rope", last))),
        "lost_p_rope": float(np.mean(growth(records, "p_rope", last))),
        "lost_partial": float(np.mean(growth(records, "partial", last))),
        "lost_irope": float(np.mean(growth(records, "irope", last))),
        "lost_irope_chunked": float(np.mean(growth(records, "irope", last, "chunked"))),
    }


def ch10() -> dict:
    import numpy as np

    from posenc.experiments import ch10 as grids
    from posenc.lib import multidim as md
    from posenc.lib.reproducibility import clearly_apart

    config, records = _file("ch10")
    holds = grids.directions(records, config)
    for direction in ("raster-order rotary is at chance on every other grid, on every seed",
                      f"mixed rotary holds above {grids.HOLDS} on every grid",
                      "mixed rotary beats axial rotary on every larger grid",
                      "axial rotary beats raster order at 9 x 9",
                      "mixed rotary started axial beats fixed axial rotary at 9 x 9",
                      "axial rotary loses accuracy on the larger grids",
                      "on the smaller grid the 2-D sinusoidal table and axial rotary hold",
                      "the resized learned table loses accuracy on every other grid",
                      "the resized learned table reads the wider grid better than the 9 x 9 grid"):
        claim(holds.get(direction, False), f"{direction!r}, as chapter 10 asserts")

    def accuracy(kind, grid):
        return float(np.mean(grids.grid_accuracy(records, kind, grid, config)))

    claim(clearly_apart(grids.grid_accuracy(records, "learned_2d", (6, 12), config),
                        grids.grid_accuracy(records, "learned_2d", (12, 12), config)),
          "that the resized learned table reads the grid that is only wider better than 12 x 12")

    # The poll: a head that learned the offset of the patch above on a 14-wide grid, read on a 24-wide one.
    trained_width, new_width = 14, 24
    above = int(md.raster_index(np.array([[3, 2]]), trained_width)[0] - md.raster_index(np.array([[3, 3]]),
                                                                                        trained_width)[0])
    columns_right = new_width + above
    mrope = md.mrope_position_ids([("text", 3), ("image", (4, 6)), ("text", 2)])
    image = mrope[:, 3:3 + 24]
    return {
        "file_seeds": len(config.seeds), "train_grid": "{} by {}".format(*config.train_grid),
        "chance": config.task().chance,
        "learned_2d_trained": accuracy("learned_2d", config.train_grid),
        "learned_2d_12": accuracy("learned_2d", (12, 12)), "learned_2d_wide": accuracy("learned_2d", (6, 12)),
        "axial_rope_small": accuracy("axial_rope", (4, 4)), "axial_rope_12": accuracy("axial_rope", (12, 12)),
        "mixed_rope_12": accuracy("mixed_rope", (12, 12)), "mixed_rope_9": accuracy("mixed_rope", (9, 9)),
        "axial_rope_9": accuracy("axial_rope", (9, 9)), "axial_rope_learned_9": accuracy("axial_rope_learned", (9, 9)),
        "axial_rope_learned_12": accuracy("axial_rope_learned", (12, 12)),
        "raster_above": above, "raster_right": columns_right,
        # queries in columns -above .. new_width - 1 keep the offset inside their own row: -above to the left
        "raster_up_last": -above - 1, "raster_same_row_first": -above, "raster_same_row_last": new_width - 1, "raster_left": -above,
        "resize_first": float(md.interpolated_coordinate(0, 14, 28)),
        "resize_step": float(md.interpolated_coordinate(1, 14, 28) - md.interpolated_coordinate(0, 14, 28)),
        "resize_last": float(md.interpolated_coordinate(27, 14, 28)), "resize_last_cell": 27,
        "resize_last_aligned": 27 * (14 - 1) / (28 - 1),        # align_corners=True: corners on corners
        "mrope_image_time": int(image[0].max()), "mrope_image_last": int(image.max()),
        "mrope_after": int(mrope[0, 3 + 24]), "mrope_after_wrong": 3 + 24,
        "cos_six": float(np.cos(6 * float(md.axial_frequencies(16)[0, 0]))),
    }


VALUES = {
    "ch01": ch01,
    "ch02": ch02,
    "ch03": ch03,
    "ch04": ch04,
    "ch05": ch05,
    "ch06": ch06,
    "ch07": ch07,
    "ch08": ch08,
    "ch09": ch09,
    "ch10": ch10,
}


@functools.lru_cache(maxsize=None)
def values(set_id: str) -> dict:
    """The chapter's numbers (an empty dict for a chapter whose entry quotes none)."""
    function = VALUES.get(set_id)
    return dict(function()) if function else {}
