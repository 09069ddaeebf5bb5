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


def _answer(chapter, question_words, answer_start):
    question = next(q for q in quiz.load(chapter) if question_words in q["question"])
    return next(a for a in question["answers"] if a["answer"].startswith(answer_start))


def test_ch03_tokens_also_cross_the_few_directions_of_position():
    """Quiz ch03 Q4: the 6 directions that hold 99% of the variation of 16 positions at d = 512 are not
    reserved for position: a random token vector puts about 6/512 of its energy there (chapter 3 measures it)."""
    from posenc.lib import combining

    feedback = _answer("ch03", "adding PE", "In high dimension")["feedback"]
    assert "6/512 of its energy" in feedback and combining.effective_dimension(16, 512) == 6
    pe = sinusoidal_encoding(16, 512)
    directions = np.linalg.svd(pe - pe.mean(axis=0), full_matrices=False)[2][:6]
    tokens = np.random.default_rng(0).normal(size=(2000, 512))
    share = np.sum((tokens @ directions.T) ** 2) / np.sum(tokens ** 2)
    assert abs(share / (6 / 512) - 1) < 0.1


def test_ch05_slopes_question_names_the_code_and_the_papers_rule():
    """Quiz ch05 Q4: the 6-head slopes are those of the authors' reference code (get_slopes, which
    posenc.lib.relative.alibi_slopes follows); 2^(-8h/n) is the rule of the paper's text for every n, and the
    wrong option's feedback must say so rather than call it a power-of-two formula."""
    from fractions import Fraction

    from posenc.lib.relative import alibi_slopes

    question = next(q for q in quiz.load("ch05") if "6 heads" in q["question"])
    assert "reference code" in question["question"]
    right = next(a["answer"] for a in question["answers"] if a["correct"])
    typed = [Fraction(x) for x in re.findall(r"1/\d+", right)]
    assert typed == [Fraction(s).limit_denominator(1024) for s in alibi_slopes(6).tolist()]
    geometric = _answer("ch05", "6 heads", "2^(−8h/6)")["feedback"]
    assert "paper's text" in geometric and "section 3" in geometric


def test_ch06_bfloat16_feedback_matches_the_rounding_of_the_angle():
    """Quiz ch06 Q4: bfloat16 numbers between 32 and 64 are 0.25 apart; rounding the angle pos * theta_i alone
    (exact frequencies) is off by more than 0.1 rad before position 100; theta_i itself is off by up to 0.4 %."""
    import torch

    from posenc.lib.rotary import rotary_frequencies

    feedback = _answer("ch06", "bfloat16", "In float32")["feedback"]
    assert "0.25 apart" in feedback and "0.1 rad within the first hundred positions" in feedback and "0.4 %" in feedback
    pair = torch.tensor([32.0, 64.0], dtype=torch.bfloat16)
    assert float(torch.nextafter(pair[0], pair[1]) - pair[0]) == 0.25
    theta = rotary_frequencies(128)
    exact = torch.arange(100, dtype=torch.float64)[:, None] * theta
    assert (exact.to(torch.bfloat16).double() - exact).abs().max() > 0.1
    assert round(100 * float(((theta.to(torch.bfloat16).double() - theta) / theta).abs().max()), 1) == 0.4
