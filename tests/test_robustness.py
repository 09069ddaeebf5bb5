"""The chapters' claims about live runs hold for other seeds: results/robustness.json is complete, all-true
and current (``make robustness`` writes it; posenc.book.robustness), and the seed shift it relies on works."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

from posenc.book import robustness
from posenc.lib import reproducibility as rep
from tests.conftest import ROOT

DATA = json.loads(robustness.RESULTS_FILE.read_text()) if robustness.RESULTS_FILE.is_file() else {}
ENTRIES = DATA.get("chapters", {})
FIX = "run `make robustness CHAPTERS={chapter}` (python -m posenc.book.robustness {chapter}) and commit the file"


def test_the_file_exists():
    assert ENTRIES, f"{robustness.RESULTS_FILE} is missing: run `make robustness` and commit it"


@pytest.mark.parametrize("chapter", robustness.TRAINING_CHAPTERS)
def test_every_training_chapter_ran_on_ten_other_seed_sets_and_went_through(chapter):
    entry = ENTRIES.get(chapter)
    assert entry, f"{chapter} has no entry in {robustness.RESULTS_FILE.name}: " + FIX.format(chapter=chapter)
    shifts = {run["shift"] for run in entry["runs"]}
    assert len(shifts) >= 10 and 0 not in shifts, f"{chapter}: shifts {sorted(shifts)} (10 besides the book's own)"
    failed = [f"shift {run['shift']}:\n{run.get('error', '')[-800:]}" for run in entry["runs"] if not run["ok"]]
    assert not failed and entry["all_ok"], f"{chapter} stops with other seeds:\n" + "\n".join(failed)


@pytest.mark.parametrize("chapter", robustness.TRAINING_CHAPTERS)
def test_each_entry_says_how_many_executions_ran_at_a_time_and_under_what_load(chapter):
    """Its seconds (every-machine.md's table) mean little without them; and how long the whole run took."""
    entry = ENTRIES.get(chapter) or pytest.fail(f"{chapter} has no entry: " + FIX.format(chapter=chapter))
    assert entry.get("jobs", 0) >= 1 and entry.get("load_average_at_start", -1) >= 0, FIX.format(chapter=chapter)
    assert entry.get("run_seconds", 0) > 0 and chapter in entry.get("run_chapters", ()), FIX.format(chapter=chapter)


@pytest.mark.parametrize("chapter", robustness.TRAINING_CHAPTERS)
def test_no_shifted_execution_calls_its_values_outside_the_file_more_than_chance(chapter):
    """The calibration of posenc.lib.reproducibility.ALARM: make robustness's executions have shifted torch seeds
    (they share the file's batches) and nothing else changed, so none may tell the reader to look for a cause.
    A re-made file can fail this by chance (about 1 time in 440 if the methods are independent, a few times in
    100 if the methods of one seed correlate, mostly in ch07's 21): read a failure as a question about that
    correlation first."""
    entry = ENTRIES.get(chapter) or pytest.fail(f"{chapter} has no entry: " + FIX.format(chapter=chapter))
    alarmed = [run["shift"] for run in entry["runs"]
               if any("look at the library versions" in value for value in run.get("glued", {}).values())]
    assert not alarmed, f"{chapter}: shifts {alarmed} say their values lie outside the file's range beyond chance"
    assert all(any("the range of the file's seeds" in value for value in run.get("glued", {}).values())
               for run in entry["runs"]), \
        f"{chapter}: an execution recorded no agreement sentence"


@pytest.mark.parametrize("chapter", robustness.TRAINING_CHAPTERS)
def test_the_entry_describes_todays_code(chapter):
    entry = ENTRIES.get(chapter)
    if not entry:
        pytest.fail(f"{chapter} has no entry: " + FIX.format(chapter=chapter))
    assert entry["modules"], f"{chapter}: no course module recorded"
    reasons = robustness.stale_reasons(chapter, entry)
    assert not reasons, f"{chapter}'s entry is stale ({'; '.join(reasons)}): " + FIX.format(chapter=chapter)


TRAINS = re.compile(r"\b(sweep|run_one|train|fine_tune|finetune)\s*\(")


def test_no_other_notebook_trains_a_model():
    training = set(robustness.TRAINING_CHAPTERS.values())
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
        if TRAINS.search(code):
            assert str(path.relative_to(ROOT)) in training, f"{path.name} trains a model: add it to TRAINING_CHAPTERS"


def test_the_fingerprint_ignores_the_install_cell_and_markdown(tmp_path):
    path = ROOT / robustness.TRAINING_CHAPTERS["ch04"]
    notebook = nbformat.read(path, as_version=4)
    before = robustness.code_fingerprint(path)
    for cell in notebook.cells:
        if cell.get("id") == robustness.INSTALL_CELL_ID:
            cell.source += "\n# a fork's own URL"
        elif cell.cell_type == "markdown":
            cell.source += " More words."
    (tmp_path / "notebooks").mkdir()
    copy = tmp_path / robustness.TRAINING_CHAPTERS["ch04"]
    nbformat.write(notebook, copy)
    assert robustness.code_fingerprint(copy) == before
    notebook.cells[-1].source += "\n" if notebook.cells[-1].cell_type == "code" else ""
    code_cells = [c for c in notebook.cells if c.cell_type == "code" and c.get("id") != robustness.INSTALL_CELL_ID]
    code_cells[-1].source += "\nx = 1"
    nbformat.write(notebook, copy)
    assert robustness.code_fingerprint(copy) != before


def test_package_relative_names_a_module_wherever_it_is_installed():
    assert robustness.package_relative("/x/site-packages/posenc/lib/models.py") == "posenc/lib/models.py"
    assert robustness.package_relative("/home/me/posenc/posenc/lib/models.py") == "posenc/lib/models.py"
    assert robustness.package_relative("/usr/lib/python3/json/__init__.py") is None


def test_the_seed_shift_moves_every_torch_seed_by_the_same_constant(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    exec(robustness.SHIFT_CELL.format(shift=1000), {})
    try:
        rep.seed_torch(3)
        shifted = torch.rand(4)
    finally:
        del rep.os.environ[rep.SEED_SHIFT_VARIABLE]
    torch.manual_seed(1003)
    assert torch.equal(torch.rand(4), shifted)
    rep.seed_torch(3)
    assert not torch.equal(torch.rand(4), shifted)           # no shift once the variable is gone


SEEDS_TORCH = re.compile(r"\btorch\.(random\.)?manual_seed\(")


def test_seed_torch_is_the_only_place_that_seeds_torch_for_a_run():
    """A run's torch seed goes through posenc.lib.reproducibility.seed_torch, where make robustness shifts it:
    no other module of the package, and no chapter's code, calls torch.manual_seed (a data generator's
    ``torch.Generator().manual_seed`` is not a torch seed: no shift moves the data)."""
    package = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "posenc").rglob("*.py"))
               if SEEDS_TORCH.search(path.read_text()) and path.name != "reproducibility.py"]
    chapters = [path.name for path in sorted((ROOT / "notebooks").glob("*.ipynb"))
                if any(SEEDS_TORCH.search(c.source) for c in nbformat.read(path, as_version=4).cells
                       if c.cell_type == "code")]
    assert not package and not chapters, (package, chapters)


def test_the_fingerprint_covers_the_library_and_the_harness():
    assert set(robustness.DECIDING_CODE) == {"posenc/lib/", "posenc/experiments/"}
    notebook = nbformat.v4.new_notebook()
    listed = ["/x/posenc/lib/models.py", "/x/posenc/experiments/ch04.py", "/x/posenc/book/style.py"]
    notebook.cells.append(nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
        "stream", name="stdout", text=robustness.MODULES_MARK + json.dumps(listed))]))
    assert robustness.imported_modules(notebook) == ["posenc/experiments/ch04.py", "posenc/lib/models.py"]


# ---------------------------------------------------------------------------------------------------
# posenc.lib.reproducibility: the words a chapter uses when a live run meets the file

HERE = {"cpu": "AMD EPYC", "machine": "x86_64", "python": "3.11.7", "torch": "2.13.0+cpu", "numpy": "2.4.6"}
ELSEWHERE = {**HERE, "cpu": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"}


def test_on_the_files_platform_equal_runs_are_called_reproduced(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([(0.98, 0.98)], {"t5": [0.98]}, {"t5": [0.97, 0.99]}, HERE, here=HERE)
    assert result.reproduced and "digit for digit" in result.sentence


def test_on_the_files_platform_a_difference_points_at_changed_code(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([(0.95, 0.98)], {"t5": [0.95]}, {"t5": [0.97, 0.99]}, HERE, here=HERE)
    assert not result.reproduced and "code or the run's settings have changed" in result.sentence
    assert "or this CPU differs from the file's in a way its name does not show" in result.sentence
    assert "Your value of accuracy for t5 lies outside the range of the file's seeds: 0.950 against 0.970–0.990." \
        in result.sentence


def test_on_another_platform_ranges_are_compared_and_the_difference_is_named(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([(0.957, 1.0)], {"t5": [0.957], "alibi": [0.99]}, {"t5": [0.99, 1.0], "alibi": [0.98, 1.0]},
                           ELSEWHERE, here=HERE)
    assert not result.same_platform and not result.reproduced
    assert "Another CPU rounds the same sums differently" in result.sentence
    assert "Of your 2 values of accuracy, 1 lies within" in result.sentence
    assert "t5: 0.957 (file 0.990–1.000)" in result.sentence
    unrecorded = rep.agreement([], {"t5": [0.99]}, {"t5": [0.98, 1.0]}, None, here=HERE)
    assert "The file does not record the platform it was made on" in unrecorded.sentence
    assert "Your value of accuracy lies within the range" in unrecorded.sentence
    assert "Another the" not in unrecorded.sentence


def test_a_value_just_outside_the_range_is_printed_with_the_digits_that_show_it(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([], {"sin": [0.99912]}, {"sin": [0.989, 0.9991]}, ELSEWHERE, here=HERE)
    assert "for sin lies outside the range of the file's seeds: 0.99912 against 0.98900–0.99910." in result.sentence


def test_names_and_units_keep_their_capitals(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([], {"ALiBi": [3.9]}, {"ALiBi": [2.8, 2.9]}, ELSEWHERE, here=HERE, what="bits at 8L")
    assert "Your value of bits at 8L for ALiBi lies outside the range of the file's seeds: 3.900 against" \
        in result.sentence


def test_a_run_with_shifted_seeds_is_not_blamed_on_changed_code(monkeypatch):
    monkeypatch.setenv(rep.SEED_SHIFT_VARIABLE, "3000")
    result = rep.agreement([(0.95, 0.98)], {"t5": [0.95]}, {"t5": [0.97, 0.99]}, HERE, here=HERE)
    assert "shifted by 3000" in result.sentence and "code" not in result.sentence and not result.reproduced
    assert "it shares the file's seed numbers and batches, not its starting weights" in result.sentence
    assert "not quite new seeds" not in result.sentence          # the opening says what it shares
    assert "run of the same seed" not in result.sentence         # no partner: its weights are another seed's
    given_seeds = rep.agreement([(0.95, 0.98)], {"t5": {0: 0.95}}, {"t5": {0: 0.97, 1: 0.99}}, ELSEWHERE, here=HERE)
    assert "shifted by 3000" in given_seeds.sentence and "run of the same seed" not in given_seeds.sentence
    many = rep.agreement([(0.95, 0.98)], {"t5": {0: 0.95, 1: 0.5}}, {"t5": {0: 0.97, 1: 0.99}}, ELSEWHERE, here=HERE)
    assert "new seeds" in many.sentence and "these do" not in many.sentence and "same seeds as" not in many.sentence


def test_margins_grow_with_the_seed_spread_and_shrink_with_more_seeds():
    assert rep.margin([1.0, 1.0, 1.0]) == 0.0
    spread = [0.90, 0.96, 0.99, 0.93, 0.97]
    assert rep.margin(spread) > rep.margin(spread * 4) > 0
    assert rep.clearly_above([0.99, 1.0, 1.0], 0.95) and not rep.clearly_above(spread, 0.95)
    assert rep.clearly_below([0.1, 0.12, 0.11], 0.3) and not rep.clearly_below([0.1, 0.5, 0.2], 0.3)
    assert rep.clearly_apart([0.9, 0.92, 0.95], [0.5, 0.52, 0.56])
    assert not rep.clearly_apart([0.9, 0.5, 0.95], [0.5, 0.52, 0.56])
    assert not rep.clearly_above([float("nan")] * 3, 0.0)


def test_result_files_record_the_platform(tmp_path):
    pytest.importorskip("torch")
    from posenc.experiments import ch04, results, sweep

    config = ch04.LengthExperiment(seeds=(0,), steps=2, kinds=("none",), n_eval=4, eval_length=20)
    runs = sweep(config, keep_models=False)
    data = results.save_results(tmp_path / "x.json", config, runs, "ch04")
    assert data["platform"] == rep.platform_signature() and rep.same_platform(data["platform"])


def test_runs_that_agree_exactly_say_so_in_words_not_in_a_zero_exponent(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    exact = rep.agreement([(0.98, 0.98), (float("nan"), float("nan"))], {"t5": [0.98]}, {"t5": [0.97, 0.99]},
                          HERE, here=HERE)
    assert exact.reproduced and "and your runs of the file's seeds reproduce its values of accuracy digit for " \
        "digit." in exact.sentence
    assert "e+00" not in exact.sentence
    close = rep.agreement([(0.98, 0.98 + 3e-12)], {}, {}, HERE, here=HERE, what="bits")
    assert close.reproduced and f"reproduce its values of bits to within {rep.SAME_RUN_TOLERANCE:g}, up to rounding " \
        "in the last digits." in close.sentence
    assert "digit for digit" not in close.sentence          # the digits may differ where the values are within it


def test_a_value_that_is_nan_in_one_run_only_is_a_difference_whatever_the_order(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    nan = float("nan")
    for pairs in ([(nan, 0.98), (0.9, 0.9)], [(0.9, 0.9), (0.98, nan)]):
        result = rep.agreement(pairs, {}, {}, HERE, here=HERE)
        assert not result.reproduced and result.largest_gap == float("inf")
        assert "differ (1 of the values compared is NaN in one and a number in the other)" in result.sentence
        elsewhere = rep.agreement(pairs, {}, {}, ELSEWHERE, here=HERE)
        assert "(here 1 of the values compared is NaN in one and a number in the other)" in elsewhere.sentence
    both = rep.agreement([(0.95, 0.98), (nan, 1.0), (2.0, nan)], {}, {}, HERE, here=HERE)
    assert "differ by up to 0.03, and 2 of the values compared are NaN" in both.sentence   # the gap is kept
    assert "(here by up to 0.03)" in rep.agreement([(0.95, 0.98)], {}, {}, ELSEWHERE, here=HERE).sentence


def test_a_live_value_that_is_nan_is_not_within_the_files_range(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([], {"t5": [float("nan")], "alibi": [0.99]}, {"t5": [0.97, 0.99], "alibi": [0.98, 1.0]},
                           ELSEWHERE, here=HERE)
    assert "Your value of accuracy lies within the range" in result.sentence     # the NaN is not counted in
    assert "Your run gave NaN (not a number) for t5." in result.sentence


def test_on_the_files_platform_a_run_that_shares_no_run_is_not_called_another_machine(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([], {"t5": [0.98]}, {"t5": [0.97, 0.99]}, HERE, here=HERE)
    assert "matches the platform the file was made on, but your run shares no run with it" in result.sentence
    assert "Another" not in result.sentence and not result.reproduced


def test_on_another_platform_runs_that_happen_to_agree_do_not_read_by_up_to_zero(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([(0.9, 0.9)], {}, {}, ELSEWHERE, here=HERE)
    assert "(here the runs you share with the file happen to agree exactly)" in result.sentence and "up to 0" not in result.sentence


def test_every_live_value_is_counted_and_those_outside_are_set_against_how_many_chance_puts_there(monkeypatch):
    """Chapters 3 to 6 pass three seeds per method: the count is of values, each one outside is named under its
    label, and the caveat gives how many chance alone puts outside, on average and 19 times in 20."""
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    ten = [0.97, 1.0, 0.98, 0.99, 0.975, 0.985, 0.99, 0.995, 0.97, 0.98]
    kinds = ("none", "sin", "t5", "alibi", "shaw", "rope")
    live = {kind: [0.99, 0.985, 0.98] for kind in kinds} | {"t5": [0.96, 0.99, 0.95]}
    labels = {"t5": "T5 bias"}
    shared = [(0.99, 0.985)]                                      # the runs it shares with the file
    result = rep.agreement(shared, live, {kind: ten for kind in kinds}, ELSEWHERE, here=HERE, labels=labels)
    assert "Of your 18 values of accuracy, 16 lie within the range of the file's seeds. Outside it: T5 bias: " \
           "0.960, 0.950 (file 0.970–1.000)." in result.sentence
    assert "A new seed lands outside the range of 10 seeds 2 times in 11, so new seeds would put 3.3 of your 18 " \
           "values outside on average, and at most 6 in 19 repeats out of 20 (taking the methods as independent). Your " \
           "runs are not quite new seeds: each starts from the same seeds, for its weights and its batches, as the " \
           "file's run of its seed number, so they can lie outside more often, most easily past a value that run " \
           "holds at an edge of the range." in result.sentence
    assert "Of the values outside, these do" not in result.sentence      # no seeds given: nothing to say which
    assert "New seeds put" not in result.sentence and "says little" not in result.sentence
    unpartnered = rep.agreement([], live, {kind: ten for kind in kinds}, ELSEWHERE, here=HERE).sentence
    assert "not quite new seeds" not in unpartnered          # no run of the same seed to share anything with
    assert "not quite new seeds" not in rep.agreement([], live, {k: ten for k in kinds}, HERE, here=HERE).sentence
    many = rep.agreement([], {kind: [0.5, 0.6, 0.98] for kind in kinds}, {kind: ten for kind in kinds}, ELSEWHERE,
                         here=HERE)
    assert "New seeds put 12 or more outside less than 1 time in 10,000 (taking the methods as independent): look " \
           "at the library versions and the code." in many.sentence
    more = rep.agreement([], {kind: [0.5, 0.985, 0.98] for kind in kinds}, {kind: ten for kind in kinds}, ELSEWHERE,
                         here=HERE)
    assert "less than 1 time in 20" not in more.sentence      # 6 is "at most 6"
    seven = rep.agreement([], {kind: [0.5, 0.985, 0.98] for kind in kinds} | {"t5": [0.5, 0.4, 0.98]},
                          {kind: ten for kind in kinds}, ELSEWHERE, here=HERE)
    assert "New seeds put 7 or more outside less than 1 time in 20." in seven.sentence
    every = rep.agreement([], {"a": [0.1] * 3, "b": [0.1] * 3}, {"a": ten, "b": ten}, ELSEWHERE, here=HERE)
    assert "New seeds put all 6 outside" in every.sentence
    assert "none: 0.500, 0.600 (file 0.970–1.000); sin: 0.500, 0.600" in many.sentence      # grouped by kind
    two_out = rep.agreement([], {"sin": [0.5, 0.6]}, {"sin": [0.97, 1.0, 0.98]}, ELSEWHERE, here=HERE)
    assert "Of your 2 values of accuracy, none lies within the range of the file's seeds. Outside it: sin: 0.500, " \
           "0.600 (file 0.970–1.000)." in two_out.sentence
    assert "3 seeds half the time, so new seeds would put 1 of your 2 values outside on average." \
           in two_out.sentence          # a whole mean as one, and no "at most 2 of your 2"


def test_the_count_outside_by_chance_is_that_of_exchangeable_seeds():
    """P(k of m new values outside the range of n): exact, checked against drawing seeds, and convolved."""
    import numpy as np

    for n, m in ((10, 3), (3, 4), (2, 1)):
        exact = rep.outside_count_probabilities([(n, m)])
        assert exact.sum() == pytest.approx(1) and exact @ np.arange(m + 1) == pytest.approx(2 * m / (n + 1))
        draws = np.random.default_rng(0).standard_normal((40_000, n + m))
        file, new = draws[:, :n], draws[:, n:]
        counts = ((new < file.min(1, keepdims=True)) | (new > file.max(1, keepdims=True))).sum(1)
        np.testing.assert_allclose(np.bincount(counts, minlength=m + 1) / len(draws), exact, atol=0.01)
    both = rep.outside_count_probabilities([(10, 3), (3, 1)])
    np.testing.assert_allclose(both, np.convolve(rep.outside_count_probabilities([(10, 3)]), [0.5, 0.5]))
    assert list(rep.outside_count_probabilities([(1, 2)])) == [0, 0, 1]       # one seed: no range to fall in


def test_one_value_outside_says_little_and_a_range_of_one_value_is_said_so(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    near = rep.agreement([(2.575, 2.58)], {"irope": [2.575]}, {"irope": [2.58, 2.60, 2.611]}, ELSEWHERE, here=HERE,
                         what="bits")
    assert "Your value of bits for irope lies outside the range of the file's seeds: 2.575 against 2.580–2.611. A " \
           "new seed lands outside the range of 3 seeds half the time, so one value outside says little on its own, " \
           "and less where the file's run of the same seed number, which starts from the same seeds for its " \
           "weights and its batches, holds the file's lowest or highest value." in near.sentence
    alone = rep.agreement([], {"irope": [2.575]}, {"irope": [2.58, 2.60, 2.611]}, ELSEWHERE, here=HERE).sentence
    assert "says little on its own." in alone and "the same seeds" not in alone
    ceiling = rep.agreement([], {"shaw": [0.9998]}, {"shaw": [1.0] * 10}, ELSEWHERE, here=HERE)
    assert "for shaw differs from the file's value on every seed: 0.9998 against 1.0000." in ceiling.sentence
    two = rep.agreement([], {"shaw": [0.9998, 1.0]}, {"shaw": [1.0] * 10}, ELSEWHERE, here=HERE)
    assert "Outside it: shaw: 0.9998 (1.0000 on every seed of the file)." in two.sentence
    close = rep.agreement([], {"a": [0.99]}, {"a": [0.9997, 0.9999, 1.0]}, ELSEWHERE, here=HERE)
    assert "for a lies outside the range of the file's seeds: 0.9900 against 0.9997–1.0000." \
        in close.sentence                                                                                  # not 1.000
    single = rep.agreement([], {"a": [0.5, 0.6]}, {"a": [0.7]}, ELSEWHERE, here=HERE)
    assert "A new seed differs from the file's one seed almost every time" in single.sentence
    missing = rep.agreement([], {"a": [0.5], "b": [0.7, float("nan")]}, {"a": [0.4, 0.6]}, ELSEWHERE, here=HERE)
    assert "The file has no values of accuracy to compare with for b." in missing.sentence


def test_the_rate_uses_each_method_s_own_seed_count(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    in_file = {"a": [0.97, 1.0, 0.98], "b": [0.90 + i / 100 for i in range(10)]}
    result = rep.agreement([], {"a": [0.965], "b": [0.99]}, in_file, ELSEWHERE, here=HERE)
    assert "2 times in n + 1 (the file has 3 to 10 seeds per method)" in result.sentence
    assert "new seeds would put 0.7 of your 2 values outside on average" in result.sentence          # 2/4 + 2/11
    assert result.outside == {"a": [(0.965, 0.97, 1.0)]}


def test_how_often_a_new_seed_lands_outside_the_range_is_said_reduced():
    assert [rep._how_often(n) for n in (1, 2, 3, 5, 9, 10)] == [
        "almost every time", "2 times in 3", "half the time", "1 time in 3", "1 time in 5", "2 times in 11"]


def test_a_cpu_with_another_instruction_set_is_another_platform_where_both_files_record_it():
    with_avx2, with_avx512 = {**HERE, rep.CAPABILITY: "AVX2"}, {**HERE, rep.CAPABILITY: "AVX512"}
    assert not rep.same_platform(with_avx2, with_avx512)
    assert rep.differences(with_avx2, with_avx512) == ["instruction set"]
    assert rep.same_platform(HERE, with_avx512) and rep.same_platform(with_avx512, HERE)      # older files lack it
    assert rep.describe(with_avx512) == "AMD EPYC (x86_64, AVX512), torch 2.13.0+cpu, numpy 2.4.6"
    assert rep.describe(HERE) == "AMD EPYC (x86_64), torch 2.13.0+cpu, numpy 2.4.6"
    pytest.importorskip("torch")
    import torch
    assert rep.platform_signature()[rep.CAPABILITY] == torch.backends.cpu.get_cpu_capability()
    differ = rep.agreement([(0.95, 0.98)], {}, {}, with_avx512, here=with_avx512)
    assert "in a way its name and instruction set do not show" in differ.sentence
    assert "(x86_64), torch" in rep.describe({**HERE, rep.CAPABILITY: "DEFAULT"})      # no vector extension


def test_without_get_cpu_capability_the_torch_version_is_still_recorded(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delattr(torch.backends.cpu, "get_cpu_capability")
    signature = rep.platform_signature()
    assert signature["torch"] == torch.__version__ and signature[rep.CAPABILITY] is None


def test_several_differences_are_listed_with_and_and_a_plural_verb(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    other = {**ELSEWHERE, "torch": "2.9.0", "numpy": "2.0.2"}
    assert "Another CPU, torch version and numpy version round the same sums" in \
        rep.agreement([], {}, {}, other, here=HERE).sentence
    same = rep.agreement([(float("inf"), float("inf")), (0.5, 0.5)], {}, {}, HERE, here=HERE)
    assert same.reproduced and "()" not in same.sentence


def test_listed_joins_items_as_a_sentence_does_and_accepts_none():
    """How these sentences and chapter 6's list names: nothing, one, two, or commas and then "and"."""
    assert [rep.listed(items) for items in ([], ["a"], ["a", "b"], ["a", "b", "c"])] == \
        ["", "a", "a and b", "a, b and c"]


def test_on_another_platform_training_may_take_another_path_even_when_the_shared_runs_agree(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    assert "so training may take another path" in rep.agreement([(0.9, 0.9)], {}, {}, ELSEWHERE, here=HERE).sentence
    assert "so training takes another path" in rep.agreement([(0.9, 0.8)], {}, {}, ELSEWHERE, here=HERE).sentence
    nothing_shared = rep.agreement([], {"t5": [0.99]}, {"t5": [0.98, 1.0]}, ELSEWHERE, here=HERE).sentence
    assert "so training may take another path" in nothing_shared
    unrecorded = rep.agreement([(0.9, 0.8)], {}, {}, None, here=HERE).sentence
    assert "may round the same sums differently, so training may take another path" in unrecorded


def test_given_seeds_the_sentence_says_whether_the_file_s_run_of_the_same_seed_holds_the_edge(monkeypatch):
    """With {seed: value} on both sides, the sentence says how far a value outside lies from the file's run of
    the same seed where that run holds the edge it lies past (the value is partnered with that run, so it says
    less), which values do where there are several, and that none does. A value farther past the range than the
    seeds span is never put down to its partner (one such value is given with its distance, several are only
    counted); a seed the file lacks is a new seed; a range of one value names no partner; without seeds the
    sentence stays general."""
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    in_file = {"irope": {0: 2.58, 1: 2.586, 2: 2.611}}
    partnered = rep.agreement([(2.575, 2.58)], {"irope": {0: 2.575}}, in_file, ELSEWHERE, here=HERE, what="bits",
                              labels={"irope": "rotary + no position (iRoPE)"}).sentence
    assert "Your value of bits for rotary + no position (iRoPE) lies outside the range of the file's seeds: 2.575 " \
           "against 2.580–2.611. A new seed lands outside the range of 3 seeds half the time, so one value outside " \
           "says little on its own, and less here: the file's lowest value is its run of seed 0, your run's seed, " \
           "and yours lies only 0.005 below it." in partnered
    other_edge = rep.agreement([(2.575, 2.58)], {"irope": {2: 2.575}}, in_file, ELSEWHERE, here=HERE).sentence
    assert other_edge.endswith("so one value outside says little on its own.")        # seed 2 holds the highest
    above = rep.agreement([(2.62, 2.611)], {"irope": {2: 2.62}}, in_file, ELSEWHERE, here=HERE).sentence
    assert "and less here: the file's highest value is its run of seed 2, your run's seed, and yours lies only " \
           "0.009 above it." in above
    far = rep.agreement([(2.2, 2.58)], {"irope": {0: 2.2}}, in_file, ELSEWHERE, here=HERE).sentence
    assert "says little on its own; it lies 0.380 below the range, more than the 0.031 that the file's seeds " \
           "span, as new seeds now and then do." in far and "and less here" not in far
    unshared = rep.agreement([], {"irope": {0: 2.575}}, in_file, ELSEWHERE, here=HERE).sentence
    assert unshared.endswith("says little on its own.")                 # no run shared: a new seed
    new_seed = rep.agreement([(2.6, 2.58)], {"irope": {7: 2.575}}, in_file, ELSEWHERE, here=HERE).sentence
    assert new_seed.endswith("says little on its own.")                 # the file has no run of seed 7
    ceiling = rep.agreement([(0.99, 1.0)], {"a": {0: 0.99}}, {"a": {0: 1.0, 1: 1.0}}, ELSEWHERE, here=HERE).sentence
    assert ceiling.endswith("says little on its own.")                  # every run holds that value
    changed = rep.agreement([(2.575, 2.58)], {"irope": {0: 2.575}}, in_file, HERE, here=HERE).sentence
    assert "have changed" in changed and changed.endswith("says little on its own.")   # the batches may differ too

    ten = dict(enumerate([0.97, 1.0, 0.98, 0.99, 0.975, 0.985, 0.99, 0.995, 0.971, 0.98]))
    live = {"a": {0: 0.96, 1: 0.99, 2: 0.95}, "b": {0: 0.99, 1: 0.985, 2: 0.98}, "c": {0: 0.965, 8: 0.968}}
    shared = [(0.99, 0.985)]
    many = rep.agreement(shared, live, {"a": ten, "b": ten, "c": ten}, ELSEWHERE, here=HERE).sentence
    assert "Outside it: a: 0.960 (seed 0), 0.950 (seed 2) (file 0.970–1.000); c: 0.965 (seed 0), 0.968 (seed 8) " \
           "(file 0.970–1.000)." in many                                 # which value is which seed's
    assert "Your runs are not quite new seeds: each starts from the same seeds, for its weights and its batches, " \
           "as the file's run of that seed number and tends to land near it, so it lies outside most easily past " \
           "an edge that run holds, as do your values for a (seed 0) and c (seed 0)." in many   # 0.97: seed 0's, not 8's
    labelled = rep.agreement(shared, {"a": {0: 0.96, 1: 0.99}, "c": {0: 0.965, 1: 1.001}}, {"a": ten, "c": ten},
                             ELSEWHERE, here=HERE, labels={"c": "ALiBi, 8-head slopes"}).sentence
    assert "as do your values for a (seed 0) and ALiBi, 8-head slopes (seeds 0 and 1)." in labelled
    three = rep.agreement(shared, {"a": {0: 0.96}, "c": {1: 1.001, 0: 0.965}, "d": {0: 0.96}},
                          {"a": ten, "c": ten, "d": ten}, ELSEWHERE, here=HERE,
                          labels={"c": "ALiBi, 8-head slopes"}).sentence
    assert "as do your values for a (seed 0); ALiBi, 8-head slopes (seeds 0 and 1); and d (seed 0)." in three
    copy = rep.agreement(shared, {"learned": {0: 0.96, 1: 0.99}}, {"learned": ten}, ELSEWHERE, here=HERE,
                         labels={"learned": "learned on copy"}).sentence                 # chapter 7's labels
    assert "learned on copy: 0.960 (seed 0) (file" in copy and "as does your value for learned on copy (seed 0)." in copy
    far = rep.agreement(shared, {"a": {0: 0.96, 1: 0.99}, "c": {0: 0.5, 1: 0.99}}, {"a": ten, "c": ten},
                        ELSEWHERE, here=HERE, labels={"c": "ALiBi"}).sentence
    assert far.endswith("as does your value for a (seed 0).") and "ALiBi (seed" not in far   # not a partner's edge
    only_far = rep.agreement(shared, {"c": {0: 0.5, 1: 0.99}}, {"c": ten}, ELSEWHERE, here=HERE).sentence
    assert "same seeds" not in only_far and "not quite new seeds" not in only_far
    none = rep.agreement(shared, {"a": {2: 0.96, 3: 0.99}, "b": {4: 1.001, 5: 0.98}}, {"a": ten, "b": ten},
                         ELSEWHERE, here=HERE).sentence
    assert "Your runs start from the same seeds as the file's runs of their seed numbers, but none of the values " \
           "outside lies past an edge that run holds, so sharing seeds does not explain them." in none
    assert "not quite new seeds" not in none
    one = rep.agreement(shared, {"a": {2: 0.96, 3: 0.99}}, {"a": ten}, ELSEWHERE, here=HERE).sentence
    assert "so sharing seeds does not explain it." in one
    strangers = rep.agreement(shared, {"a": {17: 0.96, 1: 0.99}}, {"a": ten}, ELSEWHERE, here=HERE).sentence
    assert "same seeds" not in strangers and "not quite new seeds" not in strangers      # seed 17: a new seed
    ceiling = rep.agreement(shared, {"a": {0: 0.99, 1: 0.98}}, {"a": {s: 1.0 for s in range(10)}}, ELSEWHERE,
                            here=HERE).sentence
    assert "same seeds" not in ceiling and "New seeds put both outside less than 1 time in 20." in ceiling
    assert "past an edge" not in rep.agreement([], live, {"a": ten, "b": ten, "c": ten}, ELSEWHERE, here=HERE).sentence
    lists = rep.agreement(shared, {k: list(v.values()) for k, v in live.items()},
                          {k: list(ten.values()) for k in live}, ELSEWHERE, here=HERE).sentence
    assert "as your value" not in lists and "not quite new seeds" in lists and "(seed" not in lists


def test_a_few_values_within_the_range_are_shown_beside_it(monkeypatch):
    """Where every value lies within the range and there are at most FEW of them, each is given beside its range,
    so that a reader can see how near an edge it lies (the page shows the file's mean and spread only); more are
    only counted."""
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    in_file = {"sin": [4.404, 4.6, 4.889], "alibi": [2.693, 2.7, 2.724]}
    both = rep.agreement([], {"sin": [4.417], "alibi": [2.697]}, in_file, ELSEWHERE, here=HERE,
                         labels={"sin": "sinusoidal", "alibi": "ALiBi"}).sentence
    assert "Both your values of accuracy lie within the range of the file's seeds: sinusoidal: 4.417 (file " \
           "4.404–4.889); ALiBi: 2.697 (file 2.693–2.724)." in both
    grouped = rep.agreement([], {"sin": [4.417, 4.5]}, in_file, ELSEWHERE, here=HERE).sentence
    assert "within the range of the file's seeds: sin: 4.417, 4.500 (file 4.404–4.889)." in grouped
    many = rep.agreement([], {"sin": [4.5] * (rep.FEW + 1)}, in_file, ELSEWHERE, here=HERE).sentence
    assert many.endswith(f"All {rep.FEW + 1} of your values of accuracy lie within the range of the file's seeds.")


def test_by_seed_reads_one_value_per_seed_from_runs_or_records():
    import math

    from posenc import experiments as ex

    records = [{"kind": "a", "seed": 3, "accuracy": 0.5, "by_position": {"x": [1.0, None]}},
               {"kind": "b", "seed": 3, "accuracy": 0.7, "by_position": {"x": [3.0, 4.0]}},
               {"kind": "a", "seed": 1, "accuracy": 0.25, "by_position": {"x": [5.0, 6.0]}}]
    assert ex.by_seed(records, "a") == {3: 0.5, 1: 0.25}
    assert ex.by_seed(records, "b", lambda r: r["by_position"]["x"][-1]) == {3: 4.0}
    assert ex.by_seed(records, "c") == {}
    nan = ex.by_seed(records, "a", lambda r: r["by_position"]["x"][-1])        # a record keeps NaN as None
    assert math.isnan(nan[3]) and nan[1] == 6.0
    said = rep.agreement([], {"a": nan}, {"a": {3: 5.0, 1: 7.0}}, ELSEWHERE, here=HERE).sentence
    assert "Your run gave NaN (not a number) for a." in said

    class Run:                                      # what a sweep returns: its record() is read
        def __init__(self, record):
            self._record = record

        def record(self):
            return self._record

    assert ex.by_seed([Run(r) for r in records], "a") == {3: 0.5, 1: 0.25}
    with pytest.raises(ValueError, match="two runs of 'a' with seed 3"):
        ex.by_seed(records + records[:1], "a")


def _comparison_cells() -> dict[str, list[str]]:
    """chapter -> the code cells of its notebook that call reproducibility.agreement."""
    return {chapter: [cell.source for cell in nbformat.read(ROOT / path, as_version=4).cells
                      if cell.cell_type == "code" and "agreement(" in cell.source]
            for chapter, path in robustness.TRAINING_CHAPTERS.items()}


def test_every_training_chapter_passes_its_values_by_seed():
    """Without {seed: value} the sentence cannot say which run of the file a value is partnered with, and a
    chapter that went back to lists would lose that without any other test failing."""
    for chapter, calls in _comparison_cells().items():
        assert calls, f"{chapter}: no call of reproducibility.agreement"
        assert all(c.count("by_seed(") >= 2 for c in calls), f"{chapter}: pass the live and the file's values " \
            "as {seed: value} (posenc.experiments.by_seed)"


def test_every_training_chapter_echoes_its_comparison_where_no_book_shows_the_prose():
    """The comparison reaches a page through its prose; a notebook opened in Colab or make lab shows only cell
    outputs, so the glue that carries the sentence must print it there (posenc.glue(..., echo=True))."""
    for chapter, calls in _comparison_cells().items():
        assert calls and all(re.search(r"posenc\.glue\([^)]*\.sentence, echo=True\)", c) for c in calls), chapter
