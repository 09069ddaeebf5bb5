"""posenc.book.quiz and the quiz files book/quizzes/chNN.json (their clicks are tested in tests/browser)."""

import copy
import json
import re

import numpy as np
import pytest

import posenc.book.quiz as quiz
from posenc import frequencies, sinusoidal_encoding

CHAPTERS = ["ch00", "ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07"]


def test_every_chapter_has_a_quiz():
    assert [c for c in CHAPTERS if c not in quiz.chapters()] == []


@pytest.mark.parametrize("chapter", quiz.chapters())
def test_quiz_file_is_valid(chapter):
    questions = json.loads(quiz.path(chapter).read_text(encoding="utf-8"))
    assert quiz.problems(questions) == []
    assert 3 <= len(questions) <= 6, "a few conceptual questions per chapter"
    texts = [q["question"] for q in questions]
    assert len(set(texts)) == len(texts), "questions must differ (the browser test finds them by text)"
    for q in questions:
        answers = [a["answer"].strip() for a in q["answers"]]
        assert len(set(answers)) == len(answers), q["question"]


def test_problems_names_what_is_wrong():
    good = quiz.load(1)[:1]
    assert quiz.problems(good) == []
    two_right = copy.deepcopy(good)
    for a in two_right[0]["answers"]:
        a["correct"], a["feedback"] = True, "Correct. Yes."
    assert any("right answers" in p for p in quiz.problems(two_right))
    no_verdict = copy.deepcopy(good)
    no_verdict[0]["answers"][0]["feedback"] = "Because."
    assert any("must start with" in p for p in quiz.problems(no_verdict))
    dollars = copy.deepcopy(good)
    dollars[0]["question"] = "What is $x$?"
    assert any("Unicode" in p for p in quiz.problems(dollars))
    assert quiz.problems([]) and quiz.problems({"question": "x"})


@pytest.mark.parametrize("spelling", [1, "1", "01", "ch01", "ch1", " CH01 "])
def test_chapter_spellings(spelling):
    assert quiz.path(spelling).name == "ch01.json"


@pytest.mark.parametrize("bad", ["one", True, "ch", None])
def test_bad_chapter_is_refused(bad):
    with pytest.raises(ValueError):
        quiz.path(bad)


def test_missing_quiz_says_which_exist():
    with pytest.raises(FileNotFoundError, match="ch00"):
        quiz.load(99)


def test_show_displays_the_container_and_its_script(monkeypatch):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs: shown.extend(objs))
    quiz.show("ch02")
    markup, script = shown[0].data, shown[1].data
    assert type(shown[0]).__name__ == "HTML" and type(shown[1]).__name__ == "Javascript"
    assert 'id="posenc-quiz-ch02"' in markup and 'class="posenc-quiz"' in markup
    assert "show_questions" in script and "function check_mc" in script
    assert quiz.load(2)[0]["question"] in script


def test_html_fragment_has_no_external_scripts():
    fragment = quiz.html(0)
    assert not re.search(r"<script[^>]*\bsrc=", fragment)
    assert fragment.count("<script>") == 1 and fragment.count("</script>") == 1, "the data cannot end the script"


def test_show_without_the_book_folder_points_to_the_site(monkeypatch, tmp_path):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objs: shown.extend(objs))
    monkeypatch.setattr(quiz, "QUIZ_DIR", tmp_path / "missing")
    quiz.show(1)
    assert len(shown) == 1 and "web site" in shown[0].data


# Claims a review of the chapters found false, with the fact that refutes them: no quiz may make them again.
REFUTED = {
    "separate position channels": "over a short sequence the slow pairs are a near-constant bias (chapter 3)",
    "necessary for extrapolation": "without any positional encoding, NoPE models generalised best (chapter 4)",
}


def test_no_quiz_repeats_a_refuted_claim():
    for chapter in quiz.chapters():
        text = json.dumps(quiz.load(chapter), ensure_ascii=False).lower()
        found = {phrase: why for phrase, why in REFUTED.items() if phrase in text}
        assert not found, f"{chapter} repeats a refuted claim: {found}"


def correct_answer(chapter, words):
    """The answer marked correct of the question that contains ``words``."""
    question = next(q for q in quiz.load(chapter) if words in q["question"])
    return next(a["answer"] for a in question["answers"] if a["correct"])


def test_ch03_addition_answer_matches_where_position_lives():
    """Over 16 positions at d_model = 512 the slow half of the pairs barely moves (a near-constant bias)
    and the fast pairs carry the variation, yet about half of the coordinates move: position lives in a few
    directions (posenc.lib.combining.effective_dimension), not in a few pairs. The quiz's correct answer
    must say so, with the numbers the chapter computes."""
    import re

    from posenc.lib import combining

    pe = sinusoidal_encoding(16, 512)
    variance = pe.var(axis=0)
    assert variance[256:].sum() < 1e-3 * variance.sum() and np.ptp(pe[:, 256:], axis=0).max() < 0.2
    assert frequencies(512)[128] * 15 < 0.2          # the slow half turns by less than 0.2 rad over the sequence
    answer = correct_answer("ch03", "adding PE")
    typed = re.search(r"99% of the variation of (\d+) positions lies within (\d+) directions", answer)
    assert typed and "d = 512" in answer and "half of the coordinates move" in answer and "pairs" not in answer
    assert combining.effective_dimension(int(typed[1]), 512) == int(typed[2])
    assert 0.4 < 1 - combining.nearly_constant_fraction(int(typed[1]), 512) < 0.6


def test_ch03_logit_question_uses_two_positions_and_the_chapters_matrix():
    """Quiz ch03 Q2 writes the logit as (x_i + p_i)ᵀ A (x_j + p_j) with A = W_Q W_Kᵀ: the chapter's logits
    (posenc.lib.combining.logit_terms, rows of x and p as positions) are exactly that bilinear form."""
    from posenc.lib import combining

    question = next(q for q in quiz.load("ch03") if "attention logit" in q["question"])["question"]
    assert "(x_i + p_i)ᵀ A (x_j + p_j)" in question and "A = W_Q W_Kᵀ" in question
    rng = np.random.default_rng(0)
    x, p, w_q, w_k = rng.normal(size=(4, 5, 5))
    h, a = x + p, w_q @ w_k.T
    logits = sum(combining.logit_terms(x, p, w_q, w_k))
    assert np.allclose(logits, [[h[i] @ a @ h[j] for j in range(5)] for i in range(5)])
