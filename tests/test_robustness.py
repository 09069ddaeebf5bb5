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
    """Its seconds (every-machine.md's table) mean little without them."""
    entry = ENTRIES.get(chapter) or pytest.fail(f"{chapter} has no entry: " + FIX.format(chapter=chapter))
    assert entry.get("jobs", 0) >= 1 and entry.get("load_average_at_start", -1) >= 0, FIX.format(chapter=chapter)


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
    assert not result.reproduced and "code or the run's settings have changed" in result.sentence and "outside it: t5" in result.sentence


def test_on_another_platform_ranges_are_compared_and_the_difference_is_named(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([(0.957, 1.0)], {"t5": [0.957], "alibi": [0.99]}, {"t5": [0.99, 1.0], "alibi": [0.98, 1.0]},
                           ELSEWHERE, here=HERE)
    assert not result.same_platform and not result.reproduced
    assert "Another CPU" in result.sentence and "Of your 2 accuracy values, 1 lies within" in result.sentence
    assert "t5 0.957 (file 0.990–1.000)" in result.sentence
    unrecorded = rep.agreement([], {"t5": [0.99]}, {"t5": [0.98, 1.0]}, None, here=HERE)
    assert "The file does not record the platform it was made on" in unrecorded.sentence
    assert "Of your 1 accuracy value, 1 lies within" in unrecorded.sentence and "Another the" not in unrecorded.sentence


def test_a_value_just_outside_the_range_is_printed_with_the_digits_that_show_it(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([], {"sin": [0.99912]}, {"sin": [0.989, 0.9991]}, ELSEWHERE, here=HERE)
    assert "sin 0.99912 (file 0.98900–0.99910)" in result.sentence


def test_names_and_units_keep_their_capitals(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([], {"ALiBi": [3.9]}, {"ALiBi": [2.8, 2.9]}, ELSEWHERE, here=HERE, what="bits at 8L")
    assert "Of your 1 bits at 8L value," in result.sentence and "ALiBi 3.900" in result.sentence


def test_a_run_with_shifted_seeds_is_not_blamed_on_changed_code(monkeypatch):
    monkeypatch.setenv(rep.SEED_SHIFT_VARIABLE, "3000")
    result = rep.agreement([(0.95, 0.98)], {"t5": [0.95]}, {"t5": [0.97, 0.99]}, HERE, here=HERE)
    assert "shifted by 3000" in result.sentence and "code" not in result.sentence and not result.reproduced


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
    assert exact.reproduced and "give exactly the file's accuracy values: they are reproduced digit for digit" \
        in exact.sentence
    assert "e+00" not in exact.sentence
    close = rep.agreement([(0.98, 0.98 + 3e-12)], {}, {}, HERE, here=HERE, what="bits")
    assert close.reproduced and f"the file's bits values to within {rep.SAME_RUN_TOLERANCE:g}" in close.sentence


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
    assert "Of your 2 accuracy values, 1 lies within the range" in result.sentence
    assert "not a number (NaN): t5" in result.sentence


def test_on_the_files_platform_a_run_that_shares_no_run_is_not_called_another_machine(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([], {"t5": [0.98]}, {"t5": [0.97, 0.99]}, HERE, here=HERE)
    assert "matches the platform the file was made on, but your run shares no run with it" in result.sentence
    assert "Another" not in result.sentence and not result.reproduced


def test_on_another_platform_runs_that_happen_to_agree_do_not_read_by_up_to_zero(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    result = rep.agreement([(0.9, 0.9)], {}, {}, ELSEWHERE, here=HERE)
    assert "(here the runs you share happen to agree exactly)" in result.sentence and "up to 0" not in result.sentence


def test_every_live_value_is_counted_and_one_outside_is_set_against_how_often_that_happens(monkeypatch):
    """Chapters 3 to 6 pass three seeds per method: the count is of values, and each one outside is named."""
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    live = {"sin": [0.99, 0.98, 0.5], "t5": [0.99, 0.995, 1.0], "alibi": [0.9, 0.91, 0.92], "none": [0.3] * 3}
    in_file = {"sin": [0.97, 1.0], "t5": [0.97, 1.0], "alibi": [0.89, 0.95], "none": [0.2, 0.4]}
    result = rep.agreement([], live, in_file, ELSEWHERE, here=HERE)
    assert "Of your 12 accuracy values, 11 lie within the range of the file's seeds" in result.sentence
    assert "outside it: sin 0.500 (file 0.970–1.000) (a run with a new seed falls outside the range of 2 seeds " \
           "with probability 2/3, about 67%" in result.sentence
    two_out = rep.agreement([], {"sin": [0.5, 0.6]}, {"sin": [0.97, 1.0, 0.98]}, ELSEWHERE, here=HERE)
    assert "sin 0.500 (file 0.970–1.000), sin 0.600 (file 0.970–1.000)" in two_out.sentence and "2/4" in two_out.sentence


def test_on_another_platform_runs_that_happen_to_agree_only_may_take_another_path(monkeypatch):
    monkeypatch.delenv(rep.SEED_SHIFT_VARIABLE, raising=False)
    assert "so training may take another path" in rep.agreement([(0.9, 0.9)], {}, {}, ELSEWHERE, here=HERE).sentence
    assert "so training takes another path" in rep.agreement([(0.9, 0.8)], {}, {}, ELSEWHERE, here=HERE).sentence
