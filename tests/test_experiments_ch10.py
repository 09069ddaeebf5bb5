"""posenc.experiments.ch10: chapter 10's grid experiment, its committed file and its held-out replication."""

import json
from dataclasses import asdict

import pytest
import torch

from posenc.experiments import same_setup

from posenc.experiments import ch10 as grid_sweep
from posenc.experiments import results
from posenc.experiments.registry import replication_seeds
from tests.conftest import assert_rerun_matches_file

FILE = results.RESULTS_DIR / "ch10.json"
REPLICATION = results.RESULTS_DIR / "ch10_replication.json"


@pytest.fixture(scope="module")
def committed():
    return results.load_results(FILE), results.load_results(REPLICATION)


@pytest.mark.parametrize("which", [0, 1], ids=["file", "replication"])
def test_every_direction_the_chapter_asserts_holds(committed, which):
    config, records, _ = committed[which]
    holds = grid_sweep.directions(records, config)
    assert all(holds.values()), [claim for claim, ok in holds.items() if not ok]


def test_the_replication_is_the_chapters_configuration_with_seeds_never_used(committed):
    (config, _, data), (rep_config, _, rep_data) = committed
    assert same_setup(config, grid_sweep.GridExperiment()) and same_setup(config, rep_config)
    assert len(config.seeds) >= 5 and len(rep_config.seeds) >= 5
    assert not set(config.seeds) & set(rep_config.seeds)
    assert tuple(rep_config.seeds) == replication_seeds("ch10")
    assert data["platform"] and rep_data["platform"]


def test_a_run_of_the_file_is_reproduced():
    def measures(run, records, config):
        return {"12 x 12": (float(run.by_position["by_grid"][3]), grid_sweep.grid_accuracy(records, "axial_rope",
                                                                                             (12, 12), config))}
    assert_rerun_matches_file(FILE, "axial_rope", 0, measures)


def test_for_one_seed_every_kind_starts_from_the_same_weights_but_its_position():
    config = grid_sweep.GridExperiment()
    models = {kind: config.build(kind, 3) for kind in config.kinds}
    reference = models["none"].state_dict()
    for kind, model in models.items():
        state = model.state_dict()
        for name in ("embedding.weight", "head.weight", "encoder.layers.0.self_attn.in_proj_weight"):
            assert torch.equal(state[name], reference[name]), (kind, name)


def test_reading_another_grid_leaves_the_model_on_its_training_grid():
    config = grid_sweep.GridExperiment(steps=2)
    model = config.build("learned_2d", 0)
    config.read(model, (9, 9))
    assert model.positional.grid == config.train_grid


def test_a_configuration_survives_its_file():
    config = grid_sweep.GridExperiment(seeds=(4,))
    assert grid_sweep.GridExperiment.from_dict(json.loads(json.dumps(asdict(config)))) == config


@pytest.mark.parametrize("change, message", [
    (dict(kinds=("none", "rope")), "unknown kinds"),
    (dict(test_grids=((4, 4), (9, 9))), "must include the training grid"),
])
def test_bad_configurations_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        grid_sweep.GridExperiment(**change)
