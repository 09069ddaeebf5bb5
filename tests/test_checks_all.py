"""Every exercise set, graded three ways: the worked solution gets full marks, the untouched student
notebook gets zero (each question "not attempted", or, where the stub is code to fix, failed), and the
inline check prints one line.

Then, for every set, the realistic answers of its test module ``tests/test_checks_chNN.py``, written in
one format::

    WRONG = {qid: {name: (code, words its message must contain)}}
    RIGHT = {qid: {name: code}}            # other right answers, optional

Each wrong answer must score zero with its message on every one of the grader's seeds (GRADER_SEEDS), and
each right one full marks. Every diagnosis a question can give is produced by at least one wrong answer,
and no question whose inputs can be drawn from the seed passes a table of answers memorised from the
inline check (seed 0).
"""

import importlib
import re

import numpy as np
import pytest

from posenc.exercises import SET_IDS, checker, load_set
from posenc.book.mistakes import _message as _message_of
from posenc.exercises.framework import FAILED, NOT_ATTEMPTED, PASSED, ChoiceQuestion, ValueQuestion
from posenc.exercises.probe import dumps
from tests.conftest import GRADER_SEEDS, copy_namespace, with_submission

# Questions whose student copy starts from code to repair ("find the bug"), not from a placeholder.
STUB_IS_CODE = {("ch00", "q6"), ("ch01", "q5"), ("ch05", "q6"), ("ch06", "q6"), ("ch07", "q6")}


@pytest.mark.parametrize("set_id", SET_IDS)
def test_solution_gets_full_marks(set_id):
    exercise_set = load_set(set_id)
    results = exercise_set.grade(copy_namespace(set_id, "solution"))
    assert all(r.status == PASSED for r in results), [r.line() for r in results]
    assert sum(r.points for r in results) == exercise_set.max_points > 0


@pytest.mark.parametrize("set_id", SET_IDS)
def test_untouched_exercise_gets_zero(set_id):
    results = load_set(set_id).grade(copy_namespace(set_id, "exercise"))
    assert sum(r.points for r in results) == 0
    for r in results:
        if (set_id, r.qid) in STUB_IS_CODE:
            assert r.status == FAILED and "the bug is still there" in r.message, r.line()
        else:
            assert r.status == NOT_ATTEMPTED and "not attempted" in r.message, r.line()


@pytest.mark.parametrize("set_id", SET_IDS)
def test_inline_check_prints_one_line(set_id, capsys):
    first = load_set(set_id).questions[0]
    checker(set_id)(first.qid, copy_namespace(set_id, "solution"))
    assert capsys.readouterr().out.strip() == f"[PASS] {first.qid} ({first.points:g}/{first.points:g}): correct"


def test_every_set_has_four_to_eight_questions_two_of_them_about_understanding():
    assert SET_IDS == ("ch00", "ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09", "ch10")
    for set_id in SET_IDS:
        questions = load_set(set_id).questions
        assert 4 <= len(questions) <= 8, set_id
        understanding = [q for q in questions if isinstance(q, (ChoiceQuestion, ValueQuestion))
                         or (set_id, q.qid) in STUB_IS_CODE]
        assert len(understanding) >= 2, set_id


# ---------------------------------------------------------------------------------------------------
# The realistic answers of every set's test module, on every seed


def _module(set_id):
    return importlib.import_module(f"tests.test_checks_{set_id}")


def _cases(attribute):
    return [(set_id, qid, name) for set_id in SET_IDS
            for qid, entries in getattr(_module(set_id), attribute, {}).items() for name in entries]


WRONG_CASES, RIGHT_CASES = _cases("WRONG"), _cases("RIGHT")


def _ids(cases):
    return [f"{set_id}-{qid}-{name}" for set_id, qid, name in cases]


# What feedback never shows: the checks' own classes, and reprs cut off in the middle (NumPy 2's
# "np.float64(0" under a width limit).
INTERNAL = ("TypedValue", "Outcome(", "LibObject", "np.float64(", "np.int64(")


@pytest.mark.parametrize("set_id, qid, name", WRONG_CASES, ids=_ids(WRONG_CASES))
def test_wrong_answer_fails_with_its_message_on_every_seed(set_id, qid, name):
    code, fragment = _module(set_id).WRONG[qid][name]
    question = load_set(set_id).question(qid)
    namespace = with_submission(copy_namespace(set_id, "solution"), code)
    for seed in GRADER_SEEDS:
        result = question.grade(namespace, seed)
        assert result.points == 0 and fragment in result.message, f"seed {seed}: {result.line()}"
        assert not any(leak in result.message for leak in INTERNAL), f"seed {seed}: {result.line()}"


@pytest.mark.parametrize("set_id, qid, name", RIGHT_CASES, ids=_ids(RIGHT_CASES))
def test_other_right_answer_passes_on_every_seed(set_id, qid, name):
    code = _module(set_id).RIGHT[qid][name]
    question = load_set(set_id).question(qid)
    namespace = with_submission(copy_namespace(set_id, "solution"), code)
    for seed in GRADER_SEEDS:
        result = question.grade(namespace, seed)
        assert result.passed, f"seed {seed}: {result.line()}"


@pytest.mark.parametrize("set_id", SET_IDS)
def test_every_diagnosis_is_given_to_some_wrong_answer(set_id):
    """The mistake catalogue of each question is exercised: each of its messages is what one of the
    realistic wrong answers of the test module gets (at the inline check's seed)."""
    wrong = _module(set_id).WRONG
    solution = copy_namespace(set_id, "solution")
    for question in load_set(set_id).questions:
        messages = [question.grade(with_submission(solution, code)).message
                    for code, _ in wrong.get(question.qid, {}).values()]
        for mistake in getattr(question, "mistakes", ()) or ():
            message = _message_of(mistake)
            assert any(message in m for m in messages), (question.qid, message)


# ---------------------------------------------------------------------------------------------------
# Inputs drawn from the seed: answers memorised from the inline check fail in batch grading

FIXED_INPUTS = (ValueQuestion, ChoiceQuestion)     # a value or a choice: there is nothing to draw


def _key(value):
    """A hashable fingerprint of what a student's function receives (arrays, tensors, library objects)."""
    if hasattr(value, "detach"):
        value = value.detach().numpy()
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _key(v)) for k, v in value.items()))
    if hasattr(value, "__dict__"):
        return (type(value).__name__, _key(vars(value)))
    return value


QUESTIONS = [(set_id, q.qid) for set_id in SET_IDS for q in load_set(set_id).questions]
DRAWN = [(set_id, qid) for set_id, qid in QUESTIONS
         if not isinstance(load_set(set_id).question(qid), FIXED_INPUTS)]
FUNCTIONS = [(set_id, qid) for set_id, qid in DRAWN if hasattr(load_set(set_id).question(qid), "reference")]


@pytest.mark.parametrize("set_id, qid", DRAWN, ids=[f"{s}-{q}" for s, q in DRAWN])
def test_the_probe_changes_with_the_seed(set_id, qid):
    question = load_set(set_id).question(qid)
    inline = dumps(question.probe(0))
    assert all(dumps(question.probe(seed)) != inline for seed in GRADER_SEEDS[1:])


@pytest.mark.parametrize("set_id, qid", FUNCTIONS, ids=[f"{s}-{q}" for s, q in FUNCTIONS])
def test_answers_memorised_from_the_inline_check_fail_under_the_graders_seeds(set_id, qid):
    question = load_set(set_id).question(qid)
    memorised = {}

    def recorder(*args, **kwargs):
        memorised[_key((args, kwargs))] = answer = question.reference(*args, **kwargs)
        return answer

    assert question.grade({question.name: recorder}, seed=0).passed
    lookup = {question.name: lambda *args, **kwargs: memorised[_key((args, kwargs))]}
    assert question.grade(lookup, seed=0).passed              # the inline check sees the inputs it memorised
    for seed in GRADER_SEEDS[1:]:
        result = question.grade(lookup, seed)                  # the batch grader draws others
        assert result.points == 0, f"seed {seed}: {result.line()}"


# ---------------------------------------------------------------------------------------------------
# Questions with several right letters: the feedback is no oracle for the letters

SEVERAL = [(set_id, q.qid) for set_id in SET_IDS for q in load_set(set_id).questions
           if isinstance(q, ChoiceQuestion) and not q.single]


def _subsets(letters):
    import itertools

    return ["".join(c) for size in range(len(letters) + 1) for c in itertools.combinations(letters, size)]


@pytest.mark.parametrize("set_id, qid", SEVERAL, ids=[f"{s}-{q}" for s, q in SEVERAL])
def test_a_blind_guesser_cannot_solve_a_question_with_several_answers_in_three_tries(set_id, qid):
    """Every wrong set of letters gets the same sentence (the ideas to revisit, no verdict), so a guesser who
    reads only the feedback learns one bit per try, and its tries are a fixed list: whatever the right letters
    are, 3 tries find them for at most 3 of the 2^n possible answers. Shown for the strategy the old feedback
    allowed (try "", read the letter it names, add it, ...) and for plain enumerations, over every possible
    answer; a reader who knows the answer passes at once."""
    from dataclasses import replace

    question = load_set(set_id).question(qid)
    letters = sorted(question.options)
    keys = _subsets(letters)
    assert len(keys) == 2 ** len(letters) >= 16
    wrong = {question.judge([guess])[1] for guess in keys if set(guess) != set(question.answer)}
    assert wrong == {question.not_yet()}, "the feedback differs between wrong answers: it leaks which letters"
    assert all(idea in question.not_yet() for idea in question.ideas.values())
    assert not any(word in question.not_yet() for word in ("supported", "misjudged", " is right", " is wrong:"))

    def solves_in_three(keyed, strategy):
        feedback = None
        for attempt in range(3):
            passed, feedback = keyed.judge([strategy(attempt, feedback)])
            if passed:
                return True
        return False

    def exploit(attempt, feedback):          # read letters out of the feedback, as the old messages allowed
        named = sorted(set(re.findall(r"\(([a-z])\)", feedback or "")) & set(letters))
        return "".join(named[:attempt])

    enumerations = [lambda attempt, feedback, order=order: order[attempt] for order in (keys, keys[::-1], sorted(keys))]
    for strategy in [exploit, *enumerations]:
        solved = [key for key in keys if solves_in_three(replace(question, answer=key), strategy)]
        assert len(solved) <= 3, solved
    assert question.judge([question.answer])[0]


# ---------------------------------------------------------------------------------------------------
# Every question that hands the student's code arrays or tensors forbids changing them, checks it, says so


def _receives_arrays(probe) -> bool:
    def arrays(value):
        if isinstance(value, np.ndarray) or (isinstance(value, dict) and "__tensor__" in value):
            return True
        if isinstance(value, (list, tuple)):
            return any(arrays(v) for v in value)
        return isinstance(value, dict) and any(arrays(v) for v in value.values())

    steps = [s for step in probe["steps"] for s in (step.get("steps", [step]))]
    return any(step.get("op") == "call" and arrays([step.get("args"), step.get("kwargs")]) for step in steps)


def _question_texts(set_id) -> dict[str, str]:
    """qN -> the markdown of its "## Question N" cell, in the generated exercise notebook."""
    import nbformat

    from posenc.exercises import authoring

    source = next(s for s in authoring.sources() if s.stem.split("_")[0] == set_id)
    texts = {}
    for cell in nbformat.read(authoring.targets(source)["exercise"], as_version=4).cells:
        found = re.match(r"## Question (\d+)", cell.source) if cell.cell_type == "markdown" else None
        if found:
            texts[f"q{found.group(1)}"] = cell.source
    return texts


@pytest.mark.parametrize("set_id", SET_IDS)
def test_every_question_given_arrays_checks_and_says_that_they_stay_unchanged(set_id):
    texts = _question_texts(set_id)
    for question in load_set(set_id).questions:
        probe = question.probe(0)
        if not _receives_arrays(probe):
            continue
        calls = [s for step in probe["steps"] for s in step.get("steps", [step]) if s.get("op") == "call"
                 and _receives_arrays({"steps": [s]})]
        assert all(step.get("check_inputs") for step in calls), (set_id, question.qid)
        assert "unchanged" in texts[question.qid], (set_id, question.qid)


# ---------------------------------------------------------------------------------------------------
# Messages name the student's parameters: a question's reference has the parameters its text asks for


@pytest.mark.parametrize("set_id", SET_IDS)
def test_each_function_question_names_the_parameters_the_student_writes(set_id):
    """A message about an input ("changed its input `positions` in place") takes the input's name from the
    reference's signature: it must be the name the solution (and the question's stub) uses."""
    import inspect

    solution = copy_namespace(set_id, "solution")
    for question in load_set(set_id).questions:
        if not hasattr(question, "parameter_names") or not inspect.isfunction(solution.get(question.name)):
            continue
        written = list(inspect.signature(solution[question.name]).parameters)
        assert question.parameter_names()[:len(written)] == written, (set_id, question.qid)


@pytest.mark.parametrize("set_id", SET_IDS)
def test_choice_hints_name_sections_that_exist(set_id):
    """Where several letters are right, a wrong answer is sent to the table or to a chapter's section (never
    told the statement's crux): every section a hint names is a heading of that chapter's notebook."""
    import json
    import re

    from tests.conftest import ROOT

    headings = {}
    for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"):
        cells = json.loads(path.read_text())["cells"]
        headings[int(path.name[:2])] = [line.lstrip("#").strip() for cell in cells if cell["cell_type"] == "markdown"
                                        for line in "".join(cell["source"]).splitlines() if line.startswith("#")]
    for question in load_set(set_id).questions:
        for letter, idea in getattr(question, "ideas", {}).items():
            for chapter in map(int, re.findall(r"chapter (\d+)", idea)):
                assert any(title and title in idea for title in headings[chapter][1:]), (set_id, question.qid, letter)
