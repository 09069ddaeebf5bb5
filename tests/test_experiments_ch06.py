"""Chapter 6's experiment (posenc.experiments.ch06): chapter 5's comparison for every method, rotary included,
its table read from runs and from a saved file, and one run of the committed file reproduced from the code."""

from dataclasses import replace

import numpy as np
import pytest

from posenc import experiments as ex
from posenc.experiments import ch05, ch06, registry, results
from posenc.lib.attention import METHODS
from tests.conftest import assert_rerun_matches_file


def test_inside_experiment_runs_every_method_and_saves_its_results(tmp_path):
    config = ch06.InsideExperiment()
    assert registry.experiment_class("ch06") is ch06.InsideExperiment
    assert config.kinds == METHODS and config.steps == 200 and config.measure("rope", None) == {}
    tiny = replace(config, kinds=("rope", "alibi"), steps=3, seeds=(0,))
    runs = ex.sweep(tiny, keep_models=False)
    headers, rows = ch05.inside_table(runs, tiny.kinds)
    assert headers[0] == "method" and [r[0] for r in rows] == ["rotary", "ALiBi"]
    results.save_results(tmp_path / "ch06.json", tiny, runs, "ch06")
    loaded, records, _ = results.load_results(tmp_path / "ch06.json")
    assert loaded == tiny and [r["kind"] for r in records] == ["rope", "alibi"]
    assert ch05.inside_table(records, tiny.kinds)[1][0][2] == "–"             # 3 steps: never below 0.1
    record = {"kind": "rope", "loss_every_10_steps": [2.0, 0.5, 0.09, 0.01]}
    assert ex.steps_of(record) == 29 and np.isnan(ex.steps_of({**record, "loss_every_10_steps": [1.0]}))


@pytest.mark.parametrize("elsewhere", [False, True])
def test_one_run_of_results_ch06_is_reproduced(elsewhere, monkeypatch):
    # elsewhere: as on a machine other than the file's, where the run is compared with the file's range
    from posenc.lib import reproducibility

    if elsewhere:
        monkeypatch.setattr(reproducibility, "same_platform", lambda recorded, here=None: False)
    assert_rerun_matches_file(results.RESULTS_DIR / "ch06.json", "rope")
