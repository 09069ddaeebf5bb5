"""Self-check quizzes at the end of each chapter, drawn with jupyterquiz (plain JavaScript, no kernel).

The questions live in ``book/quizzes/chNN.json`` in jupyterquiz's format: a list of questions,
each ``{"question": ..., "type": "multiple_choice", "answers": [{"answer": ..., "correct": bool,
"feedback": ...}, ...]}``. A chapter shows its quiz with one cell::

    import posenc.book.quiz
    posenc.book.quiz.show(1)

On the built site, in Jupyter and in Colab the reader clicks an answer and reads the feedback at once.
Every feedback starts with "Correct." or "Not quite.", so the verdict never rests on colour alone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from posenc.paths import QUIZZES as QUIZ_DIR

QUESTION_TYPES = ("multiple_choice", "many_choice")
VERDICTS = {True: "Correct.", False: "Not quite."}

# Okabe-Ito green and vermillion for right and wrong (the text says which, too).
COLOURS = {"--jq-correct-color": "#009E73", "--jq-incorrect-color": "#D55E00"}

__all__ = ["QUIZ_DIR", "chapters", "load", "path", "problems", "show", "html"]


def _set_id(chapter) -> str:
    """'ch01' from 1, '1', '01', 'ch01' or 'ch1'."""
    text = str(chapter).strip().lower()
    match = re.fullmatch(r"(?:ch)?0*(\d+)", text)
    if isinstance(chapter, bool) or not match:
        raise ValueError(f"chapter must be a number like 1 or an id like 'ch01', got {chapter!r}")
    return f"ch{int(match.group(1)):02d}"


def path(chapter) -> Path:
    """The quiz file of a chapter: ``book/quizzes/chNN.json``."""
    return QUIZ_DIR / f"{_set_id(chapter)}.json"


def chapters() -> list[str]:
    """The ids of the chapters that have a quiz, in order."""
    return sorted(p.stem for p in QUIZ_DIR.glob("ch[0-9][0-9].json"))


def problems(questions) -> list[str]:
    """What is wrong with a list of questions (empty when it is a valid quiz of the course)."""
    found = []
    if not isinstance(questions, list) or not questions:
        return ["a quiz is a non-empty list of questions"]
    for n, q in enumerate(questions, 1):
        where = f"question {n}"
        if not isinstance(q, dict):
            found.append(f"{where} is not an object")
            continue
        if not str(q.get("question", "")).strip():
            found.append(f"{where} has no text")
        if q.get("type") not in QUESTION_TYPES:
            found.append(f"{where}: type must be one of {QUESTION_TYPES}, got {q.get('type')!r}")
        answers = q.get("answers")
        if not isinstance(answers, list) or len(answers) < 2:
            found.append(f"{where} needs at least two answers")
            continue
        right = [a for a in answers if isinstance(a, dict) and a.get("correct") is True]
        wrong = [a for a in answers if isinstance(a, dict) and a.get("correct") is False]
        if len(right) + len(wrong) != len(answers):
            found.append(f"{where}: every answer needs \"correct\": true or false")
        if not right or not wrong:
            found.append(f"{where} needs at least one right and one wrong answer")
        if q.get("type") == "multiple_choice" and len(right) > 1:
            found.append(f"{where} is multiple_choice but has {len(right)} right answers (use many_choice)")
        for m, a in enumerate(answers, 1):
            if not isinstance(a, dict):
                continue
            if not str(a.get("answer", "")).strip():
                found.append(f"{where}, answer {m} has no text")
            feedback = str(a.get("feedback", ""))
            verdict = VERDICTS.get(a.get("correct"))
            if verdict and not feedback.startswith(verdict + " "):
                found.append(f"{where}, answer {m}: the feedback must start with {verdict!r} and explain why")
            if "$" in a.get("answer", "") + feedback + q.get("question", ""):
                found.append(f"{where}: write formulas in plain Unicode (ω, √, ·), not $...$")
    return found


def load(chapter) -> list[dict]:
    """The questions of a chapter's quiz; ValueError when the file is not a valid quiz."""
    file = path(chapter)
    if not file.exists():
        known = ", ".join(chapters()) or "none"
        raise FileNotFoundError(f"no quiz for {_set_id(chapter)}: {file} does not exist (quizzes: {known})")
    questions = json.loads(file.read_text(encoding="utf-8"))
    found = problems(questions)
    if found:
        raise ValueError(f"{file.name}: " + "; ".join(found))
    return questions


def _parts(chapter, shuffle_answers: bool = True) -> tuple[str, str]:
    """The quiz's HTML (container and styles) and its JavaScript, as jupyterquiz would display them.

    The container gets the stable id ``posenc-quiz-chNN``. Unlike jupyterquiz's own loader, the
    script waits until a MathJax that the page is still loading has started before drawing the
    questions (jupyterquiz typesets with it and fails when it is only half there).
    """
    from jupyterquiz.dynamic.renderer import build_styles, render_div

    set_id = _set_id(chapter)
    questions = load(chapter)
    div_id = f"posenc-quiz-{set_id}"
    var = "questions_" + div_id.replace("-", "_")
    colours = dict(_default_colours())
    colours.update(COLOURS)
    container = render_div(div_id, False, shuffle_answers, False, 1_000_000, 600, 10, "left")
    markup = (container + '</div>').replace(f'id="{div_id}"', f'id="{div_id}" class="posenc-quiz"', 1)
    markup += build_styles(div_id, colours)
    data = json.dumps(questions, ensure_ascii=False).replace("</", "<\\/")
    script = (f"var {var} = {data};\n"
              "if (typeof Question === 'undefined') {\n" + _jupyterquiz_js() +
              _START_JS.replace("__ID__", json.dumps(div_id)).replace("__QUESTIONS__", var) + "\n}\n")
    return markup, script


def html(chapter, shuffle_answers: bool = True) -> str:
    """The quiz as one HTML fragment with an inline script (for a plain page or a test)."""
    markup, script = _parts(chapter, shuffle_answers)
    return f"{markup}\n<script>\n{script}\n</script>"


def show(chapter, shuffle_answers: bool = True) -> None:
    """Display the self-check quiz of a chapter (1 or 'ch01'); works on the static site without a kernel."""
    from IPython.display import HTML, Javascript, display

    if not QUIZ_DIR.is_dir():   # posenc installed without the book (e.g. from git in Colab)
        display(HTML(f"<p>The self-check quiz of this chapter ({_set_id(chapter)}) is on the course's "
                     "web site, at the end of the chapter's summary.</p>"))
        return
    markup, script = _parts(chapter, shuffle_answers)
    display(HTML(markup))
    display(Javascript(script))


def _jupyterquiz_js() -> str:
    import importlib.resources

    folder = importlib.resources.files("jupyterquiz").joinpath("js")
    files = sorted((f for f in folder.iterdir() if f.name.endswith(".js")), key=lambda f: f.name)
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def _default_colours() -> dict:
    """jupyterquiz's default colour variables (its own function keeps them local)."""
    return {
        "--jq-multiple-choice-bg": "#392061", "--jq-mc-button-bg": "#fafafa",
        "--jq-mc-button-border": "#e0e0e0e0", "--jq-mc-button-inset-shadow": "#555555",
        "--jq-many-choice-bg": "#f75c03ff", "--jq-numeric-bg": "#392061ff",
        "--jq-numeric-input-bg": "#c0c0c0", "--jq-numeric-input-label": "#101010",
        "--jq-numeric-input-shadow": "#999999", "--jq-string-bg": "#4c1a57",
        "--jq-incorrect-color": "#c80202", "--jq-correct-color": "#009113",
        "--jq-text-color": "#fafafa", "--jq-link-color": "#9abafa",
    }


_START_JS = r"""
(function () {
  var waited = 0;
  function ready() {
    var mj = window.MathJax;
    if (typeof mj === "undefined") { return Promise.resolve(); }          // no MathJax on this page
    if (mj.version && mj.startup && mj.startup.promise) { return mj.startup.promise; }
    if (mj.version) { return Promise.resolve(); }
    return null;                                                            // configured, still loading
  }
  (function start() {
    var container = document.getElementById(__ID__);
    var promise = container ? ready() : null;
    if (container && container.dataset.shown) { return; }
    if (promise === null && waited < 15000) { waited += 100; setTimeout(start, 100); return; }
    if (!container) { return; }
    container.dataset.shown = "1";
    (promise || Promise.resolve()).then(function () { show_questions(__QUESTIONS__, container); });
  })();
})();
"""
