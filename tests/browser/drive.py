"""Drive the explorers and quizzes of a page as a reader would, and check what they show.

Each ``check_*`` function raises AssertionError with a sentence saying what went wrong. They are used
on pages the tests write themselves (test_interactive.py) and on every page of the built site
(during the page's one inspection, pageview.py).
"""

from __future__ import annotations

import math

import numpy as np

import posenc
import posenc.book.quiz


# ---------------------------------------------------------------------------------------------------
# The heatmap explorer


def canvas_picture(tab, root: str) -> str:
    return tab.eval_on_selector(f"{root} canvas.posenc-heatmap-canvas", "c => c.toDataURL()")


def heatmap_state(tab, root: str) -> tuple[int, float, int]:
    data = tab.eval_on_selector(root, "el => [el.dataset.dModel, el.dataset.base, el.dataset.positions]")
    return int(data[0]), float(data[1]), int(data[2])


def assert_heatmap_matches_reference(tab, root: str) -> None:
    d_model, base, n = heatmap_state(tab, root)
    reference = posenc.sinusoidal_encoding(n, d_model, base)
    cells = [(0, 0), (0, 1), (n - 1, 0), (n - 1, d_model - 1), (n // 2, d_model // 2), (n // 3, d_model - 2)]
    got = tab.eval_on_selector(root, "(el, cells) => cells.map(([p, d]) => el.posencEncoding(p, d))", cells)
    want = [reference[p, d] for p, d in cells]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12,
                               err_msg=f"the explorer's formula differs from posenc at d_model={d_model}, base={base}")


def move(tab, selector: str, key: str = "ArrowRight", times: int = 1) -> None:
    slider = tab.locator(selector)
    slider.focus()
    for _ in range(times):
        slider.press(key)


def check_heatmap(tab, root: str) -> None:
    assert_heatmap_matches_reference(tab, root)
    for key, direction in (("d", "ArrowLeft"), ("base", "ArrowLeft"), ("positions", "ArrowRight")):
        before_picture, before_state = canvas_picture(tab, root), heatmap_state(tab, root)
        slider = f"{root} input.posenc-heatmap-{key}"
        edge = "min" if direction == "ArrowLeft" else "max"
        at_edge = tab.eval_on_selector(slider, f"s => +s.value === +s.{edge}")
        move(tab, slider, ("ArrowRight" if direction == "ArrowLeft" else "ArrowLeft") if at_edge else direction)
        assert heatmap_state(tab, root) != before_state, f"moving the {key} slider did not change the state"
        assert canvas_picture(tab, root) != before_picture, f"moving the {key} slider did not change the picture"
        assert_heatmap_matches_reference(tab, root)
        label = tab.eval_on_selector(f"{root} canvas", "c => c.getAttribute('aria-label')")
        d_model, base, n = heatmap_state(tab, root)
        assert f"d_model {d_model}" in label and f"{n - 1}" in label, label


# ---------------------------------------------------------------------------------------------------
# One pair on the unit circle


def circle_state(tab, root: str) -> dict:
    return tab.eval_on_selector(root, """el => {
        const p = el.querySelector("circle.posenc-circle-point"), s = el.querySelector("circle.posenc-circle-shifted");
        const cfg = JSON.parse(el.querySelector("script.posenc-config").textContent);
        return {pos: +el.dataset.position, pair: +el.dataset.pair, shift: el.dataset.shift ? +el.dataset.shift : null,
                x: +p.getAttribute("cx"), y: +p.getAttribute("cy"), d_model: cfg.d_model, base: cfg.base,
                sx: s ? +s.getAttribute("cx") : null, sy: s ? +s.getAttribute("cy") : null,
                text: el.querySelector(".posenc-readout").textContent};
    }""")


def assert_circle_matches_reference(state: dict) -> None:
    omega = posenc.frequencies(state["d_model"], state["base"])[state["pair"]]
    table = posenc.sinusoidal_encoding(state["pos"] + (state["shift"] or 0) + 1, state["d_model"], state["base"])
    sin, cos = table[state["pos"], 2 * state["pair"]], table[state["pos"], 2 * state["pair"] + 1]
    # The chapter's picture: sine across, cosine up (SVG's y axis points down).
    assert math.isclose(state["x"], sin, abs_tol=1e-9) and math.isclose(state["y"], -cos, abs_tol=1e-9), state
    assert f"pos = {state['pos']}," in state["text"] and f"\u03c9\u1d62 = {omega:.3f}"[:8] in state["text"], state["text"]
    if state["shift"] is not None:
        later = table[state["pos"] + state["shift"]]
        assert math.isclose(state["sx"], later[2 * state["pair"]], abs_tol=1e-9)
        assert math.isclose(state["sy"], -later[2 * state["pair"] + 1], abs_tol=1e-9)


def turn_angle(state: dict) -> float:
    """The angle from PE(pos) to PE(pos + k) as drawn."""
    return (math.atan2(state["sx"], -state["sy"]) - math.atan2(state["x"], -state["y"])) % (2 * math.pi)


def check_circle(tab, root: str) -> None:
    start = circle_state(tab, root)
    assert_circle_matches_reference(start)
    position = f"{root} input.posenc-circle-position"
    at_end = tab.eval_on_selector(position, "s => +s.value === +s.max")
    move(tab, position, "ArrowLeft" if at_end else "ArrowRight", times=3)
    moved = circle_state(tab, root)
    assert moved["pos"] == start["pos"] + (-3 if at_end else 3)
    assert (moved["x"], moved["y"]) != (start["x"], start["y"]), "the point did not move with the position"
    assert_circle_matches_reference(moved)
    if start["shift"] is not None:
        assert math.isclose(turn_angle(start), turn_angle(moved), abs_tol=1e-9), "the turn from pos to pos + k depends on pos"
        omega = posenc.frequencies(start["d_model"], start["base"])[start["pair"]]
        assert math.isclose(turn_angle(start), (omega * start["shift"]) % (2 * math.pi), abs_tol=1e-9), \
            "the drawn turn from pos to pos + k is not omega_i k"
    pair = f"{root} input.posenc-circle-pair"
    at_end = tab.eval_on_selector(pair, "s => +s.value === +s.max")
    move(tab, pair, "ArrowLeft" if at_end else "ArrowRight")
    other = circle_state(tab, root)
    assert other["pair"] != moved["pair"]
    assert_circle_matches_reference(other)


# ---------------------------------------------------------------------------------------------------
# Quizzes


def check_quiz(tab, root: str, questions: list[dict], how_many: int | None = None) -> None:
    tab.wait_for_selector(f"{root} .Quiz", timeout=15_000)
    wrappers = tab.locator(f"{root} .Quiz")
    assert wrappers.count() == len(questions), f"{root}: {wrappers.count()} questions shown, {len(questions)} in the file"
    for index in range(how_many or len(questions)):
        wrapper = wrappers.nth(index)
        asked = wrapper.locator("[id^=quizQn]").inner_text().strip()
        question = next(q for q in questions if q["question"].strip() == asked)
        feedback_of = {a["answer"].strip(): a["feedback"] for a in question["answers"]}
        for correct, verdict in ((False, "incorrect"), (True, "correct")):
            button = wrapper.locator(f"label.MCButton[data-correct='{str(correct).lower()}']").first
            answer = button.inner_text().strip()
            button.click()
            box = wrapper.locator(".Feedback")
            assert verdict in (box.get_attribute("class") or "").split(), f"{root}: clicking {answer!r} gave no {verdict} verdict"
            assert box.inner_text().strip() == feedback_of[answer].strip(), f"{root}: wrong feedback for {answer!r}"


def drive_page(tab) -> list[tuple[str, str | None]]:
    """Use every explorer and the first question of every quiz on the page: [(element id, problem or None)]."""
    results = []
    checks = [(".posenc-heatmap", check_heatmap), (".posenc-circle", check_circle)]
    for selector, check in checks:
        for element_id in tab.eval_on_selector_all(selector, "els => els.map(e => e.id)"):
            results.append((element_id, _attempt(check, tab, f"#{element_id}")))
    for element_id in tab.eval_on_selector_all(".posenc-quiz", "els => els.map(e => e.id)"):
        chapter = element_id.removeprefix("posenc-quiz-")
        results.append((element_id, _attempt(check_quiz, tab, f"#{element_id}", posenc.book.quiz.load(chapter), 1)))
    return results


def _attempt(check, *args) -> str | None:
    try:
        check(*args)
    except AssertionError as exc:
        return str(exc) or f"{check.__name__} failed"
    except Exception as exc:  # noqa: BLE001 - a timeout or a missing element is a finding too
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return None
